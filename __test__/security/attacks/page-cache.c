#define _GNU_SOURCE
// The host's page cache of a file the command can only read, dropped from inside (see
// kernel-surface.test.js). `resident PATH`: how many of the file's pages are in the page cache
// (mincore of a read-only mapping; run by the host). `drop PATH`: each way to drop them, one line
// each, "<name> ok" or "<name> <ERRNO>" (the call's own answer); the host then counts what is
// left. Each way reads the file first, so its pages are cached when the call comes.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static const char *name_of(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    default: return strerror(err);
  }
}

static char *map(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) { perror(path); exit(2); }
  *size = st.st_size;
  char *p = mmap(NULL, *size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) { perror("mmap"); exit(2); }
  return p;
}

static void touch(const char *p, size_t size) {
  volatile char sum = 0;
  for (size_t off = 0; off < size; off += 4096) sum += p[off];
}

static long resident(const char *path) {
  size_t size;
  char *p = map(path, &size);
  size_t pages = (size + 4095) / 4096;
  unsigned char *vec = malloc(pages);
  if (mincore(p, size, vec) != 0) { perror("mincore"); exit(2); }
  long n = 0;
  for (size_t i = 0; i < pages; i++) n += vec[i] & 1;
  return n;
}

static void say(const char *name, long ret) {
  printf("%s %s\n", name, ret == 0 ? "ok" : name_of(errno));
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "resident") == 0) {
    printf("%ld\n", resident(argv[2]));
    return 0;
  }
  if (argc != 4 || strcmp(argv[1], "drop") != 0) {
    fprintf(stderr, "usage: page-cache resident PATH | drop WAY PATH\n");
    return 2;
  }
  const char *way = argv[2], *path = argv[3];
  size_t size;
  char *p = map(path, &size);
  touch(p, size);
  if (strncmp(way, "fadvise-", 8) == 0) munmap(p, size); // a mapped page is not dropped by fadvise
  if (strcmp(way, "fadvise-dontneed") == 0) {
    int fd = open(path, O_RDONLY);
    int err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); // returns the error, not -1
    errno = err;
    say(way, err);
  } else if (strcmp(way, "madvise-pageout") == 0) {
    say(way, madvise(p, size, MADV_PAGEOUT));
  } else if (strcmp(way, "madvise-cold") == 0) {
    say(way, madvise(p, size, MADV_COLD));
  } else if (strcmp(way, "process-madvise-pageout") == 0) {
    int pidfd = syscall(SYS_pidfd_open, getpid(), 0);
    struct iovec iov = { p, size };
    long r = pidfd < 0 ? -1 : syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_PAGEOUT, 0);
    say(way, r < 0 ? -1 : 0);
  } else if (strcmp(way, "fadvise-willneed") == 0) {
    int fd = open(path, O_RDONLY);
    int err = posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    errno = err;
    say(way, err);
  } else {
    fprintf(stderr, "no way %s\n", way);
    return 2;
  }
  return 0;
}
