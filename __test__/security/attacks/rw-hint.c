// A file's write-lifetime hint (fcntl F_SET_RW_HINT), set through a descriptor opened for reading.
// The hint is kept on the inode, not the open file: the kernel asks only that the caller own the
// file (inode_owner_or_capable) and no write access to it or its mount, so a read-only mount is no
// bar. Every later write to the file, the host's own, carries it to the block device (ext4's and
// XFS's bios: bi_write_hint), which a device with data placement (NVMe FDP, SCSI lifetime hints)
// places by.
//   rw-hint set FILE HINT   prints "set ok" or "set <errno name>"
//   rw-hint get FILE        prints the file's hint
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef F_GET_RW_HINT
#define F_GET_RW_HINT (1024 + 11)
#define F_SET_RW_HINT (1024 + 12)
#endif

static const char *name(int e) {
  return e == EPERM ? "EPERM" : e == EINVAL ? "EINVAL" : e == EBADF ? "EBADF" : strerror(e);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int fd = open(argv[2], O_RDONLY);
  if (fd < 0) { perror(argv[2]); return 1; }
  if (strcmp(argv[1], "get") == 0) {
    uint64_t hint = 0;
    if (fcntl(fd, F_GET_RW_HINT, &hint) != 0) { printf("get %s\n", name(errno)); return 1; }
    printf("%llu\n", (unsigned long long)hint);
    return 0;
  }
  if (strcmp(argv[1], "set") == 0 && argc == 4) {
    uint64_t hint = strtoull(argv[3], NULL, 10);
    if (fcntl(fd, F_SET_RW_HINT, &hint) != 0) printf("set %s\n", name(errno));
    else printf("set ok\n");
    return 0;
  }
  return 2;
}
