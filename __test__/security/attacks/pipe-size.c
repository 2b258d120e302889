// A host FIFO's buffer size (fcntl F_SETPIPE_SZ), changed through a descriptor opened for reading.
// The size is the pipe's, not the open file's: every opener of the FIFO shares it while any of them
// holds it open, and the kernel asks nothing of the caller but a descriptor on the pipe (no write
// access, no ownership, no mount's). A command that can read a host FIFO (one outside its writable
// roots opens for reading: README's FIFOs under bwrap) shrinks the buffer a host writer and reader
// use to one page, and it stays so after the run while the host holds the FIFO.
//   pipe-size set FIFO BYTES   prints "set ok" or "set <errno name>"
//   pipe-size get FIFO         prints the FIFO's buffer size (only while another opener holds it)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *name(int e) {
  return e == EPERM ? "EPERM" : e == EBUSY ? "EBUSY" : e == EINVAL ? "EINVAL" : e == EBADF ? "EBADF" : strerror(e);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  // O_NONBLOCK: a FIFO opens for reading at once, with or without a writer.
  int fd = open(argv[2], O_RDONLY | O_NONBLOCK);
  if (fd < 0) { printf("open %s\n", name(errno)); return 0; }
  if (strcmp(argv[1], "get") == 0) {
    printf("%d\n", fcntl(fd, F_GETPIPE_SZ));
    return 0;
  }
  if (strcmp(argv[1], "set") == 0 && argc == 4) {
    if (fcntl(fd, F_SETPIPE_SZ, atoi(argv[3])) < 0) printf("set %s\n", name(errno));
    else printf("set ok\n");
    return 0;
  }
  return 2;
}
