// Can a run's fresh user and mount namespace take carve-outs prepared elsewhere, in one call
// (issue 36; bench/RESULTS.md, thirty-ninth session, pmount39)? A "keeper" (its own user and mount
// namespace, as a long-lived process of the host's would be) clones WORKSPACE's bind detached and
// attaches N read-only carve-outs (deps/rI/.git) to it, then keeps a template (its own bind with the
// same carve-outs) and makes a fresh detached copy of it, timed. A "run" (forked from the host before
// the keeper unshares, then its own user and mount namespace, as each run's bwrap) receives both
// trees over a socket, checks N identities by name (timed), and tries: move_mount of the fresh
// copy onto WORKSPACE (timed), open_tree(OPEN_TREE_CLONE) of the keeper's first tree, move_mount of
// it. Everything happens in the two private namespaces; nothing reaches the host's mount table.
//   gcc -O2 -o /tmp/mount-handoff bench/kernel/mount-handoff.c && /tmp/mount-handoff WORKSPACE N
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/mount.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static void sendfd(int s, int fd) {
  char c = 0; struct iovec io = { &c, 1 }; char buf[CMSG_SPACE(sizeof fd)]; memset(buf, 0, sizeof buf);
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof buf };
  struct cmsghdr *h = CMSG_FIRSTHDR(&m); h->cmsg_level = SOL_SOCKET; h->cmsg_type = SCM_RIGHTS; h->cmsg_len = CMSG_LEN(sizeof fd);
  memcpy(CMSG_DATA(h), &fd, sizeof fd); sendmsg(s, &m, 0);
}
static int recvfd(int s) {
  char c; struct iovec io = { &c, 1 }; char buf[CMSG_SPACE(sizeof(int))];
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof buf };
  if (recvmsg(s, &m, 0) <= 0) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
  return fd;
}
int main(int argc, char **argv) {
  const char *W = argv[1];
  int sp[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
  pid_t pid = fork();
  if (!pid) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) { perror("run unshare"); _exit(1); }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) perror("run private");
    if (mount(W, W, NULL, MS_BIND | MS_REC, NULL)) perror("run bind");
    int P = recvfd(sp[1]);
    int N = atoi(argv[2]);
    double t0 = now();
    char dep[4096]; snprintf(dep, sizeof dep, "%s/deps", W);
    int anchor = open(dep, O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < N; i++) { char p[64]; struct stat st; snprintf(p, sizeof p, "r%d/.git", i); if (fstatat(anchor, p, &st, AT_SYMLINK_NOFOLLOW)) perror("fstatat"); }
    double t1 = now();
    int Q = recvfd(sp[1]);
    double t2 = now();
    int mm = syscall(SYS_move_mount, Q, "", AT_FDCWD, W, MOVE_MOUNT_F_EMPTY_PATH);
    double t3 = now();
    printf("run: %d identities checked by name %.1f us, one move_mount of a %d-carve-out tree %.1f us (%s)\n", N, t1 - t0, N, t3 - t2, mm ? strerror(errno) : "ok");
    int C = syscall(SYS_open_tree, P, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH);
    printf("run: open_tree(CLONE) of the keeper's prepared tree: %s\n", C < 0 ? strerror(errno) : "ok");
    int m = syscall(SYS_move_mount, P, "", AT_FDCWD, W, MOVE_MOUNT_F_EMPTY_PATH);
    printf("run: move_mount of the keeper's prepared tree itself: %s\n", m ? strerror(errno) : "ok");
    fflush(stdout); _exit(0);
  }
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) { perror("keeper unshare"); return 1; }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) { perror("private"); return 1; }
  int ws = open(W, O_PATH | O_DIRECTORY);
  int P = syscall(SYS_open_tree, ws, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH);
  printf("keeper: open_tree clone of ws: %s\n", P < 0 ? strerror(errno) : "ok");
  int rc = 0, N = atoi(argv[2]);
  for (int i = 0; i < N && !rc; i++) {
    char p[64]; snprintf(p, sizeof p, "deps/r%d/.git", i);
    int e = openat(P, p, O_PATH | O_NOFOLLOW);
    struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
    int T = syscall(467, e, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH, &a, sizeof a);
    rc = syscall(SYS_move_mount, T, "", e, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
    close(T); close(e);
  }
  printf("keeper: carve-out onto the detached tree: %s\n", rc ? strerror(errno) : "ok");
  fflush(stdout);
  sendfd(sp[0], P);
  // A template kept in the keeper's namespace (attached at a scratch point would do; here P's own
  // clone, made after the send): a fresh detached copy per run.
  int ws2 = open(W, O_PATH | O_DIRECTORY);
  mount(W, W, NULL, MS_BIND | MS_REC, NULL);
  for (int i = 0; i < N; i++) {  /* the same carve-outs on the keeper's own bind */
    char p[4096]; snprintf(p, sizeof p, "%s/deps/r%d/.git", W, i);
    int e = open(p, O_PATH | O_NOFOLLOW);
    struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
    int T = syscall(467, e, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH, &a, sizeof a);
    syscall(SYS_move_mount, T, "", e, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH); close(T); close(e);
  }
  int wsb = open(W, O_PATH | O_DIRECTORY);
  double k0 = now();
  int Q = syscall(SYS_open_tree, wsb, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH);
  double k1 = now();
  printf("keeper: a fresh detached clone of its %d-carve-out template: %.1f us (%s)\n", N, k1 - k0, Q < 0 ? strerror(errno) : "ok"); fflush(stdout);
  sendfd(sp[0], Q); (void)ws2;
  waitpid(pid, NULL, 0);
  return 0;
}
