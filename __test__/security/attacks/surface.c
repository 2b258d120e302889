// Calls each syscall of the baseline filter (issue 27) once with arguments that do nothing, and
// prints "<name> <result>": "ok" or the errno's name. Without the filter each gives a result other
// than the filter's (EPERM, or ENOSYS for clone3), so a missing rule shows.
#define _GNU_SOURCE
#include <linux/aio_abi.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/filter.h>
#include <linux/fsmap.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "report.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif

// A clone with CLONE_NEWUSER through the raw syscall (a child that exits at once).
static long clone_newuser(void) {
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, NULL, 0);
  return pid;
}

// pipe2 with these flags; the pipe, if made, closed at once.
static long pipe_with(int flags) {
  int fds[2];
  long r = syscall(SYS_pipe2, fds, flags);
  if (r == 0) { close(fds[0]); close(fds[1]); }
  return r;
}

// A read lease on this program's own file (a regular file the caller can read), let go at once.
static long read_lease(const char *self) {
  int fd = open(self, O_RDONLY);
  if (fd < 0) return -1;
  long r = fcntl(fd, F_SETLEASE, F_RDLCK);
  int saved = errno;
  if (r == 0) fcntl(fd, F_SETLEASE, F_UNLCK);
  close(fd);
  errno = saved;
  return r;
}

// A read delegation (F_SETDELEG, Linux 6.19: a lease by another door, on a directory too) on this
// program's own file, let go at once. The struct is <linux/fcntl.h>'s `struct delegation`.
static long read_delegation(const char *self) {
  struct { unsigned int d_flags; unsigned short d_type, pad; } deleg = { 0, F_RDLCK, 0 };
  int fd = open(self, O_RDONLY);
  if (fd < 0) return -1;
  long r = fcntl(fd, 1024 + 16 /* F_SETDELEG */, &deleg);
  int saved = errno;
  if (r == 0) { deleg.d_type = F_UNLCK; fcntl(fd, 1024 + 16, &deleg); }
  close(fd);
  errno = saved;
  return r;
}

// A one-instruction classic BPF program ("accept") attached to a fresh UDP socket with `opt`, which
// is closed at once: the kernel's JIT charge (net.core.bpf_jit_limit) goes with it. For the eBPF
// options `prog_fd` is -1: EBADF without the filter, and nothing is ever loaded.
static long attach(int opt, int reuseport) {
  struct sock_filter accept[1] = { BPF_STMT(BPF_RET | BPF_K, 0xffff) };
  struct sock_fprog prog = { .len = 1, .filter = accept };
  int prog_fd = -1, one = 1;
  int ebpf = opt == SO_ATTACH_BPF || opt == SO_ATTACH_REUSEPORT_EBPF;
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (s < 0) return -1;
  // SO_ATTACH_REUSEPORT_CBPF wants a socket that may share its port (EINVAL otherwise).
  if (reuseport) setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  long r = ebpf ? setsockopt(s, SOL_SOCKET, opt, &prog_fd, sizeof prog_fd) : setsockopt(s, SOL_SOCKET, opt, &prog, sizeof prog);
  int saved = errno;
  close(s);
  errno = saved;
  return r;
}

// An ordinary option at another level with a socket filter's number (26 is IPV6_V6ONLY).
static long v6only(void) {
  int s = socket(AF_INET6, SOCK_DGRAM, 0), one = 1;
  if (s < 0) return -1;
  long r = setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  close(s);
  return r;
}

int main(void) {
  report("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3, 0));
  report("add_key", syscall(SYS_add_key, "user", "x", "x", 1, -3));
  report("request_key", syscall(SYS_request_key, "user", "sandspawn-surface-none", NULL, 0));
  report("bpf", syscall(SYS_bpf, 0, NULL, 0));                 // EFAULT/EINVAL without the filter
  report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));  // EFAULT
  report("userfaultfd", syscall(SYS_userfaultfd, -1));         // EINVAL
  report("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));  // EINVAL/EFAULT
  report("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0));  // EFAULT
  report("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));  // EBADF/EPERM
  report("unshare-user", syscall(SYS_unshare, CLONE_NEWUSER));
  report("unshare-ns", syscall(SYS_unshare, CLONE_NEWNS));
  report("clone-newuser", clone_newuser());
  report("clone3", syscall(SYS_clone3, NULL, 0));              // EINVAL/EFAULT without the filter
  report("setns", syscall(SYS_setns, -1, 0));                  // EBADF
  report("mount", syscall(SYS_mount, NULL, "/nonexistent-sandspawn", NULL, 0, NULL));
  report("open_tree", syscall(SYS_open_tree, -1, "", 0));     // EBADF
  report("fsopen", syscall(SYS_fsopen, NULL, 0));              // EFAULT
  report("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
  report("init_module", syscall(SYS_init_module, NULL, 0, ""));
  // A flag no kernel knows: EINVAL (or ENOSYS where secretmem is off) without the filter, and
  // nothing made, so the probe never splits the host's direct map itself.
  report("memfd_secret", syscall(SYS_memfd_secret, 0x40000000));
  // Zero events: EINVAL without the filter, and no context taken from the machine's aio-max-nr.
  aio_context_t aio = 0;
  report("io_setup", syscall(SYS_io_setup, 0, &aio));
  int null = open("/dev/null", O_RDONLY);
  char c = 'x';
  report("ioctl-tiocsti", ioctl(null, TIOCSTI, &c));           // ENOTTY on /dev/null
  report("ioctl-tioclinux", ioctl(null, TIOCLINUX, &c));       // ENOTTY
  report("ioctl-tiocexcl", ioctl(null, TIOCEXCL));             // ENOTTY
  report("ioctl-tcgets", ioctl(null, TCGETS, NULL));           // ENOTTY (allowed: not a rule)
  report("fcntl-setlease", read_lease("/proc/self/exe"));     // ok (or EACCES, not its owner) without the filter
  report("fcntl-setdeleg", read_delegation("/proc/self/exe"));  // EINVAL before Linux 6.19, ok (or EACCES) from it
  report("so-attach-filter", attach(SO_ATTACH_FILTER, 0));    // ok without the filter
  report("so-attach-reuseport-cbpf", attach(SO_ATTACH_REUSEPORT_CBPF, 1));  // ok
  report("so-attach-bpf", attach(SO_ATTACH_BPF, 0));          // EBADF
  report("so-attach-reuseport-ebpf", attach(SO_ATTACH_REUSEPORT_EBPF, 1));  // EBADF
  report("ipv6-v6only", v6only());                             // ok (allowed: not a rule)
  // The bridge's and 802.1Q's socket ioctls load `bridge` and `8021q` when absent, with no
  // capability check. Zeroed arguments: BRCTL_GET_VERSION, ADD_VLAN_CMD of the device "" (ENODEV
  // before its capability check), so never EPERM without the filter: ok, ENODEV or ENOPKG.
  unsigned long zeros[16] = { 0 };
  int any = socket(AF_UNIX, SOCK_STREAM, 0);
  if (any < 0) any = socket(AF_INET, SOCK_DGRAM, 0);  // Unix sockets refused
  report("ioctl-siocgifbr", ioctl(any, 0x8940 /* SIOCGIFBR */, zeros));
  report("ioctl-siocgifvlan", ioctl(any, 0x8982 /* SIOCGIFVLAN */, zeros));
  // btrfs's filesystem syncs, on a descriptor of the root (found by an attacker's review, kern38:
  // BTRFS_IOC_SYNC writes back every dirty page of the filesystem, as the syncfs the filter
  // answers). ENOTTY on any other filesystem without the filter; on btrfs the sync itself.
  int root = open("/", O_RDONLY | O_DIRECTORY);
  unsigned long long transid = 0;
  report("ioctl-btrfs-sync", ioctl(root, 0x9408 /* BTRFS_IOC_SYNC */));
  report("ioctl-btrfs-start-sync", ioctl(root, 0x80089418 /* BTRFS_IOC_START_SYNC */, &transid));
  // btrfs's snapshots (found by an attacker's review, kern40: a snapshot of a subvolume the user
  // owns, made in a writable root, copies its whole tree there, the files denyRead hides included).
  // On a zeroed request: ENOTTY on any other filesystem without the filter; on btrfs EROFS (the
  // read-only root is no place for one), never a snapshot.
  static char vol_args[4096];
  report("ioctl-btrfs-snap-create", ioctl(root, 0x50009401 /* BTRFS_IOC_SNAP_CREATE */, vol_args));
  report("ioctl-btrfs-snap-create-v2", ioctl(root, 0x50009417 /* BTRFS_IOC_SNAP_CREATE_V2 */, vol_args));
  // The filesystem's allocation map (FS_IOC_GETFSMAP; kern39): ext4's walks every block group's
  // bitmap, read from the disk, for the free space and metadata of the whole filesystem. One record
  // of the first MiB: ok on ext4 and XFS without the filter, ENOTTY or EOPNOTSUPP elsewhere.
  struct fsmap_head *map = calloc(1, sizeof *map + sizeof(struct fsmap));
  map->fmh_count = 1;
  map->fmh_keys[1].fmr_device = ~0U;
  map->fmh_keys[1].fmr_physical = 1 << 20;
  report("ioctl-getfsmap", ioctl(root, FS_IOC_GETFSMAP, map));
  free(map);
  // ext4's EXT4_IOC_CLEAR_ES_CACHE (left40): drops the cached extents of an inode the user owns, on
  // a descriptor opened for reading through a read-only mount. On the cwd (the test's own
  // directory): ok on ext4 without the filter, ENOTTY elsewhere.
  int cwd = open(".", O_RDONLY | O_DIRECTORY);
  report("ioctl-ext4-clear-es-cache", ioctl(cwd, 0x6628 /* EXT4_IOC_CLEAR_ES_CACHE */));
  close(cwd);
  // Quota syncs (found by an attacker's review, kern39: on ext4 without its quota feature Q_SYNC runs
  // the filesystem's sync_fs and writes back its block device, as the syncfs the filter answers).
  // Without the filter: ok on ext4, ENOSYS where the filesystem has no quota_sync (XFS, btrfs).
  report("quotactl_fd-sync", syscall(443 /* quotactl_fd */, root, 0x80000100 /* QCMD(Q_SYNC, USRQUOTA) */, 0, NULL));
  report("quotactl-sync", syscall(SYS_quotactl, 0x80000100, NULL, 0, NULL));  // ok: only quota-active ones
  // Installing a seccomp filter (found by an attacker's review, kern30: each is compiled into the
  // BPF JIT's packs, whose pages split the host's direct map for good). No program: EFAULT
  // without the filter, and nothing is compiled. Asking what an action does is no rule.
  report("seccomp-filter", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL));
  report("prctl-seccomp-filter", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0));
  unsigned int action = SECCOMP_RET_ALLOW;
  report("seccomp-action-avail", syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action));
  // A notification pipe, a watch queue (found by an attacker's review, kern45b: CVE-2022-0995's
  // code, which no build needs). O_NOTIFICATION_PIPE is O_EXCL's bit: ok where the kernel has
  // CONFIG_WATCH_QUEUE, ENOPKG where it has not (so the probe cannot always tell: the filter's
  // unit test can). Ordinary flags are no rule.
  report("pipe2-notification-pipe", pipe_with(O_EXCL));
  report("pipe2-cloexec-nonblock", pipe_with(O_CLOEXEC | O_NONBLOCK));
  report("fork", (long)({ pid_t p = fork(); if (p == 0) _exit(0); if (p > 0) waitpid(p, NULL, 0); p; }));
  return 0;
}
