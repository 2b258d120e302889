#define _GNU_SOURCE
// The host's huge page pool, taken from inside (see kernel-surface.test.js). Each line:
// "<name> ok" or "<name> <ERRNO>". `hold N`: map N huge pages, touch them, say how many, then sleep
// until killed (the pool stays taken while it lives).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#define HUGE (2UL << 20)

static const char *name_of(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENOMEM: return "ENOMEM";
    case EINVAL: return "EINVAL";
    default: return strerror(err);
  }
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "hold") == 0) {
    long n = atol(argv[2]);
    char *p = mmap(NULL, n * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    printf("hold %s\n", p == MAP_FAILED ? name_of(errno) : "ok");
    fflush(stdout);
    if (p != MAP_FAILED) for (long i = 0; i < n; i++) p[i * HUGE] = 1;
    printf("held\n");
    fflush(stdout);
    for (;;) pause();
  }
  void *m = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
  printf("mmap-hugetlb %s\n", m == MAP_FAILED ? name_of(errno) : "ok");
  int fd = memfd_create("probe", MFD_HUGETLB);
  printf("memfd-hugetlb %s\n", fd < 0 ? name_of(errno) : "ok");
  int id = shmget(IPC_PRIVATE, HUGE, IPC_CREAT | SHM_HUGETLB | 0600);
  printf("shmget-hugetlb %s\n", id < 0 ? name_of(errno) : "ok");
  if (id >= 0) shmctl(id, IPC_RMID, NULL);
  // Ordinary memory stays: a private mapping, a memfd, a SysV segment.
  void *plain = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  printf("mmap %s\n", plain == MAP_FAILED ? name_of(errno) : "ok");
  int mfd = memfd_create("plain", MFD_CLOEXEC);
  printf("memfd %s\n", mfd < 0 ? name_of(errno) : "ok");
  int sid = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  printf("shmget %s\n", sid < 0 ? name_of(errno) : "ok");
  if (sid >= 0) shmctl(sid, IPC_RMID, NULL);
  return 0;
}
