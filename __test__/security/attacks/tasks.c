// The host's pids a command takes (found by an attacker's review, kern41): every task of the
// sandbox also takes a pid of the host's namespace, one budget for the whole machine
// (kernel.pid_max, 32,768 here), and a default run's threads took all that was left.
//
// Usage: tasks N [SECONDS]. Makes sleeping threads (64 KiB stacks) until N or the kernel refuses
// one; prints "tasks N" and "stop WHY" (WHY: "target" or the error), holds them SECONDS (0 unless
// given), then exits, ending them all.
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *sleeper(void *a) { (void)a; pause(); return NULL; }
int main(int argc, char **argv) {
  long target = argc > 1 ? atol(argv[1]) : 1000, n = 0;
  pthread_attr_t at; pthread_attr_init(&at); pthread_attr_setstacksize(&at, 65536);
  const char *why = "target";
  while (n < target) { pthread_t t; int e = pthread_create(&t, &at, sleeper, NULL); if (e) { why = e == EAGAIN ? "EAGAIN" : strerror(e); break; } n++; }
  printf("tasks %ld\nstop %s\n", n, why); fflush(stdout);
  if (argc > 2) sleep((unsigned)atoi(argv[2]));
  return 0;
}
