// What one nested repository's carve-out costs the helper in the kernel, and what the kernel's
// other ways would cost (issue 36; numbers in bench/RESULTS.md, thirty-ninth session, pmount39).
// Each iteration forks a child that makes its own user and mount namespace (mounts made private
// first: nothing reaches the host's table), binds WORKSPACE onto itself as bwrap does, then times
// (thread CPU and wall) the carve-outs of WORKSPACE/deps/rI/.git, I < N, made read-only:
//   cur      as helper/src/read_only.rs does: the O_PATH open from an anchor (deps), fstat,
//            open_tree_attr (a read-only recursive copy), then every move_mount, one close_range
//   nofstat  the same without the fstat (what the identity check costs)
//   full     the open by the whole path instead of from the anchor
//   clone    the carve-outs made untimed first, then timed: one recursive copy of the workspace's
//            bind with all N inside and one move_mount (what one clone of a prepared tree costs)
//   reval    as clone, after N identity checks by name (fstatat from the anchor): a prepared tree
//            cannot skip them (a carve-out on a directory renamed or replaced since is a hole)
// Also the child's whole CPU (rusage) and the wall from its report to its reaping (its exit: the
// namespace's teardown with N more mounts). SPLIT=1 prints each call's share per repository.
// Medians over ITER. Needs root or unprivileged user namespaces, Linux 6.15+ (open_tree_attr).
//   gcc -O2 -o /tmp/mount-costs bench/kernel/mount-costs.c && /tmp/mount-costs WORKSPACE N ITER VARIANT
// A workspace with N repositories: as bench/compare-builds.js --repos N makes them (deps/rI/.git).
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/mount.h>
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif
static double now(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static void die(const char *w) { perror(w); _exit(99); }
static int N; static const char *W; static double acc[5];
static void carve(int fstat_too, int full) {
  char dep[4096]; snprintf(dep, sizeof dep, "%s/deps", W);
  int anchor = open(dep, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int below[N], tree[N];
  struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
  for (int i = 0; i < N; i++) {
    char p[4096];
    double a0 = now(CLOCK_MONOTONIC);
    if (full) { snprintf(p, sizeof p, "%s/deps/r%d/.git", W, i); below[i] = openat(AT_FDCWD, p, O_PATH | O_NOFOLLOW | O_CLOEXEC); }
    else { snprintf(p, sizeof p, "r%d/.git", i); below[i] = openat(anchor, p, O_PATH | O_NOFOLLOW | O_CLOEXEC); }
    if (below[i] < 0) die("open");
    double a1 = now(CLOCK_MONOTONIC); acc[0] += a1 - a0;
    struct stat st; if (fstat_too && fstat(below[i], &st)) die("fstat");
    double a2 = now(CLOCK_MONOTONIC); acc[1] += a2 - a1;
    tree[i] = syscall(SYS_open_tree_attr, below[i], "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH, &a, sizeof a);
    if (tree[i] < 0) die("open_tree_attr");
    acc[2] += now(CLOCK_MONOTONIC) - a2;
  }
  double m0 = now(CLOCK_MONOTONIC);
  for (int i = 0; i < N; i++)
    if (syscall(SYS_move_mount, tree[i], "", below[i], "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) die("move_mount");
  double m1 = now(CLOCK_MONOTONIC); acc[3] += m1 - m0;
  if (N) syscall(SYS_close_range, below[0] < tree[0] ? below[0] : tree[0], ~0U, 0);
  close(anchor);
  acc[4] += now(CLOCK_MONOTONIC) - m1;
  if (getenv("SPLIT")) fprintf(stderr, "open %.2f fstat %.2f open_tree_attr %.2f move_mount %.2f close %.1f (us per repo; close total)\n", acc[0]/N, acc[1]/N, acc[2]/N, acc[3]/N, acc[4]);
}
static void child(const char *variant, int pipefd) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) die("unshare");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("private");
  if (mount(W, W, NULL, MS_BIND | MS_REC, NULL)) die("bind");
  double t0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
  if (!strcmp(variant, "cur")) carve(1, 0);
  else if (!strcmp(variant, "nofstat")) carve(0, 0);
  else if (!strcmp(variant, "full")) carve(1, 1);
  else if (!strcmp(variant, "clone") || !strcmp(variant, "reval")) {
    carve(1, 0);  // the prepared tree, untimed
    t0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    if (!strcmp(variant, "reval")) {  // each carve-out's path checked again by name (identity, kind)
      char dep[4096]; snprintf(dep, sizeof dep, "%s/deps", W);
      int anchor = open(dep, O_PATH | O_DIRECTORY | O_CLOEXEC);
      for (int i = 0; i < N; i++) { char p[64]; struct stat st; snprintf(p, sizeof p, "r%d/.git", i); if (fstatat(anchor, p, &st, AT_SYMLINK_NOFOLLOW)) die("fstatat"); }
      close(anchor);
    }
    int ws = open(W, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int t = syscall(SYS_open_tree, ws, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
    if (t < 0) die("open_tree W");
    if (syscall(SYS_move_mount, t, "", ws, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) die("move W");
    close(t); close(ws);
  }
  double r[2] = { now(CLOCK_THREAD_CPUTIME_ID) - t0, now(CLOCK_MONOTONIC) - w0 };
  if (write(pipefd, r, sizeof r) != sizeof r) die("write");
  _exit(0);
}
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  W = argv[1]; N = atoi(argv[2]); int iters = atoi(argv[3]); const char *variant = argv[4];
  double cpu[iters], wall[iters], exitcpu[iters], reap[iters];
  for (int k = 0; k < iters; k++) {
    int p[2]; if (pipe(p)) die("pipe");
    pid_t pid = fork();
    if (!pid) { close(p[0]); child(variant, p[1]); }
    close(p[1]);
    double r[2]; if (read(p[0], r, sizeof r) != sizeof r) die("read");
    double w1 = now(CLOCK_MONOTONIC);
    int st; struct rusage ru; wait4(pid, &st, 0, &ru);
    reap[k] = now(CLOCK_MONOTONIC) - w1;
    close(p[0]);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "child failed\n"); return 1; }
    cpu[k] = r[0]; wall[k] = r[1];
    exitcpu[k] = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
  }
  qsort(cpu, iters, sizeof *cpu, cmp); qsort(wall, iters, sizeof *wall, cmp); qsort(exitcpu, iters, sizeof *exitcpu, cmp); qsort(reap, iters, sizeof *reap, cmp);
  printf("%-8s N=%-4d timed cpu %8.1f us  wall %8.1f us | child total cpu %8.1f us | write->reaped wall %8.1f us\n", variant, N, cpu[iters/2], wall[iters/2], exitcpu[iters/2], reap[iters/2]);
  return 0;
}
