// A pid hopper: every generation forks and exits at once, so the live process is a new pid each
// time and each one is re-parented to the Landlock supervisor (a subreaper) as its parent exits.
// `hopper SECONDS GENERATIONS PAUSE_US`: each generation waits PAUSE_US microseconds, then forks.
// The chain stops by itself after SECONDS (CLOCK_MONOTONIC, counted from the first generation) or
// after GENERATIONS forks, whichever comes first: GENERATIONS bounds every process the chain ever
// makes (zombies included), so a supervisor that cannot end it leaves a test slow, never a host
// without pids (RLIMIT_NPROC cannot bound it: it never limits root, in any user namespace).
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  double end = now() + atof(argv[1]);
  long left = atol(argv[2]);
  useconds_t pause = (useconds_t)atol(argv[3]);
  while (now() < end && left-- > 0) {
    if (pause) usleep(pause);
    if (fork() > 0) _exit(0);
  }
  return 0;
}
