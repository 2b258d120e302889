// A host process's futex waiters from inside, with read access alone (found by an attacker's
// review, kern30): a process-shared futex in a mapped file is keyed by the file's inode and offset,
// and the kernel lets anyone who can map the file for reading requeue its waiters
// (FUTEX_CMP_REQUEUE asks read access of both words) onto a word nobody will ever wake.
//
//   host-futex host FILE   a host process: one thread waits on a shared futex word at the start of
//       FILE (as a process-shared mutex or condition variable in a mapped file does). Prints
//       "ready" once it sleeps there, waits for EOF on stdin, then sets the word and wakes it:
//       "host-woken N" (waiters the wake found) and "host-waiter woke" or "host-waiter stuck" (not
//       awake 2 s later; the process exits anyway, which ends the thread).
//   host-futex probe FILE  the command: map FILE read-only and requeue the word's waiters to a
//       word of its own ("<name> <result>" lines; "futex-requeued N" when it moved some); then
//       wait on the word as a requeue-PI waiter (rfix30), and wake it as the host would: a queue
//       holding such a waiter makes every FUTEX_WAKE there fail (EINVAL) and wake no one past it.
#include "report.h"  // first: it defines _GNU_SOURCE

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_futex_requeue
#define SYS_futex_requeue 456
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif

static volatile uint32_t *word;
static volatile int woke;
static volatile pid_t waiter_tid;
static uint32_t *pi_target;
static volatile long pi_waited;
static volatile int pi_errno;

static void *waiter(void *arg) {
  (void)arg;
  waiter_tid = (pid_t)syscall(SYS_gettid);
  while (__atomic_load_n(word, __ATOMIC_SEQ_CST) == 0) syscall(SYS_futex, word, FUTEX_WAIT, 0, NULL, NULL, 0);
  woke = 1;
  return NULL;
}

// Whether thread `tid` sleeps in futex(2): its state S and syscall number in /proc.
static int sleeps_in_futex(pid_t tid) {
  char path[64], buf[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int in_futex = fgets(buf, sizeof buf, f) && atoi(buf) == SYS_futex;
  fclose(f);
  return in_futex;
}

static int host(const char *file) {
  int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, 4096) != 0) { perror("host-futex host"); return 1; }
  word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (word == MAP_FAILED) { perror("host-futex host: mmap"); return 1; }
  pthread_t t;
  pthread_create(&t, NULL, waiter, NULL);
  while (waiter_tid == 0 || !sleeps_in_futex(waiter_tid)) usleep(10000);
  usleep(50000);
  printf("ready\n");
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {}
  // The probe's own wake of this word (a spurious wake, allowed) sends the waiter round its loop;
  // under load it may not be asleep again yet, and the wake below would then find no one although
  // nothing was taken ("host-woken 0", a flaky failure seen at load 18). Wait until it sleeps in
  // futex(2) again, 2 s at most: a waiter requeued elsewhere sleeps there too, so the wake below
  // still finds none and it stays stuck.
  for (int i = 0; i < 200 && !sleeps_in_futex(waiter_tid); i++) usleep(10000);
  __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
  long found = syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  for (int i = 0; i < 200 && !woke; i++) usleep(10000);
  printf("host-woken %ld\nhost-waiter %s\n", found, woke ? "woke" : "stuck");
  fflush(stdout);
  _exit(0);
}

// The command's thread: a requeue-PI waiter on the host's word (read access of it alone; the PI
// target is the command's own), for a second at most.
static void *requeue_pi_waiter(void *arg) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += 1;
  pi_waited = syscall(SYS_futex, arg, FUTEX_WAIT_REQUEUE_PI, 0, &until, pi_target, 0);
  pi_errno = errno;
  return NULL;
}

static int probe(const char *file) {
  int fd = open(file, O_RDONLY);
  uint32_t *theirs = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  uint32_t *mine = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  uint32_t *own = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (theirs == MAP_FAILED || mine == MAP_FAILED || own == MAP_FAILED) { perror("host-futex probe"); return 1; }
  // Moves none (nr_requeue 0): "ok" without the filter.
  report("futex-requeue-shared", syscall(SYS_futex, theirs, FUTEX_REQUEUE, 0, (void *)0L, mine, 0));
  long moved = syscall(SYS_futex, theirs, FUTEX_CMP_REQUEUE, 0, (void *)(long)INT_MAX, mine, 0);
  report("futex-cmp-requeue-shared", moved);
  if (moved > 0) printf("futex-requeued %ld\n", moved);
  // Futex2's requeue, flags in memory: two waiters, the first the host's word, shared.
  struct futex_waitv two[2] = {
    { .val = 0, .uaddr = (uintptr_t)theirs, .flags = FUTEX2_SIZE_U32 },
    { .val = 0, .uaddr = (uintptr_t)mine, .flags = FUTEX2_SIZE_U32 },
  };
  long moved2 = syscall(SYS_futex_requeue, two, 0, 0, INT_MAX);
  report("futex_requeue", moved2);
  if (moved2 > 0) printf("futex-requeued %ld\n", moved2);
  // Not rules: the private forms, on its own memory (condition variables of the C libraries).
  report("futex-cmp-requeue-private", syscall(SYS_futex, own, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)(long)INT_MAX, own + 1, 0));
  report("futex-wake-shared", syscall(SYS_futex, mine + 1, FUTEX_WAKE, 1, NULL, NULL, 0));
  // Found by an attacker's review (rfix30): a requeue-PI waiter of the command's on the host's word.
  pi_target = mine + 2;
  pthread_t t;
  pthread_create(&t, NULL, requeue_pi_waiter, theirs);
  usleep(200000);
  // What the host's own wake (an unlock, a post) meets while the command waits there: "ok", or
  // EINVAL when the command's waiter made it wake no one.
  report("futex-wake-host-word", syscall(SYS_futex, theirs, FUTEX_WAKE, INT_MAX, NULL, NULL, 0));
  pthread_join(t, NULL);
  errno = pi_errno;
  report("futex-wait-requeue-pi-shared", pi_waited);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "host") == 0) return host(argv[2]);
  if (argc == 3 && strcmp(argv[1], "probe") == 0) return probe(argv[2]);
  fprintf(stderr, "usage: host-futex host FILE | probe FILE\n");
  return 2;
}
