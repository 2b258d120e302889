// A process that ends its main thread (pthread_exit) while another thread runs: its
// /proc/<pid>/stat then says 'Z' (the leader's state) though the process lives, and waitpid cannot
// reap it until its last thread exits. `leader-exits FILE`: the command's process exits at once;
// its child A (setsid, re-parented to the Landlock supervisor) and A's child B both end their main
// thread, and B's worker appends a line to FILE every 100 ms. Bounded: the workers stop by
// themselves after 60 s, so a supervisor that cannot end them leaves a test slow, never a host
// with a writer for good.
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static const char *path;

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 600; i++) {
    if (path) {
      int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        char line[64];
        int n = snprintf(line, sizeof line, "%d alive %d\n", getpid(), i);
        if (write(fd, line, n) < 0) {}
        close(fd);
      }
    }
    usleep(100000);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  pthread_t t;
  if (fork() != 0) return 0;
  setsid();
  if (fork() == 0) path = argv[1];  // B writes, A only lives
  pthread_create(&t, 0, worker, 0);
  pthread_exit(0);
}
