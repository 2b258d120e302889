//! What the filters refuse: the reviewed baseline every plan gets, the socket rule of the
//! policy, and the tracing rules of the Landlock mode. Each baseline entry says why it is there.

use super::filter::{EXT4_IOC_CLEAR_ES_CACHE, FS_IOC_GETFSMAP, Q_SYNCS, BTRFS_IOC_SNAP_CREATE, BTRFS_IOC_SNAP_CREATE_V2, BTRFS_IOC_START_SYNC, BTRFS_IOC_SYNC, Check, Family, Filter, Sockets, Tracing, AF_INET, AF_INET6, AF_NETLINK, AF_UNIX, CLONE_FILES, CLONE_NEW_MASK, CLONE_THREAD, EXT4_IOC_SETVERSION, FIDEDUPERANGE, FIOSETOWN, FS_IOC32_SETFLAGS, FS_IOC_ENABLE_VERITY, FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_FSSETXATTR, FS_IOC_REMOVE_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, FS_IOC_SETFLAGS, FS_IOC_SETVERSION, FS_IOC_SET_ENCRYPTION_POLICY, FUTEX_CMP_REQUEUE, FUTEX_CMP_REQUEUE_PI, FUTEX_WAIT_REQUEUE_PI, FUTEX_WAIT_REQUEUE_PI_REALTIME, FUTEX_REQUEUE, F_SETDELEG, F_SETLEASE, F_SETPIPE_SZ, F_SET_RW_HINT, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_IP, IPPROTO_IPV6, IPPROTO_MPTCP, IPV6_ADD_MEMBERSHIP, IP_ADD_MEMBERSHIP, MAP_HUGETLB, MFD_HUGETLB, O_NOTIFICATION_PIPE, RET_ENOMEM, RET_ENOPKG, SHM_HUGETLB, IP_ADD_SOURCE_MEMBERSHIP, MCAST_JOIN_GROUP, MCAST_JOIN_SOURCE_GROUP, IPPROTO_TCP, IPPROTO_UDP, NETLINK_KOBJECT_UEVENT, NETLINK_ROUTE, F_SETOWN, F_SETOWN_EX, IOPRIO_WHO_PROCESS, RLIMIT_CORE, MADV_COLD, MADV_MERGEABLE, MADV_PAGEOUT, POSIX_FADV_DONTNEED, PR_SET_MEMORY_MERGE, RET_DONE, RET_EINVAL, OFF_ARG0_LO, OFF_ARG1_LO, OFF_ARG2_LO, OFF_ARG3_LO, CREATING_FLAGS, PRIO_PROCESS, PR_SET_SECCOMP, RET_ENOSYS, SECCOMP_MODE_FILTER, SECCOMP_SET_MODE_FILTER, RET_EPERM, SET_ID_BITS, SIOCADDDLCI, SIOCBRADDBR, SIOCBRDELBR, SIOCDELDLCI, SIOCGIFBR, SIOCGIFVLAN, SIOCSIFBR, SIOCSIFVLAN, SIOCSPGRP, SOL_SOCKET, SO_ATTACH_BPF, SO_ATTACH_FILTER, SO_ATTACH_REUSEPORT_CBPF, SO_ATTACH_REUSEPORT_EBPF, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET, SOCK_STREAM, TCXONC, TIOCEXCL, TIOCLINUX, TIOCSETD, TIOCSTI};
use super::syscalls::Sys;

/// The `ioctl`s on a terminal whose effect outlives the run on a terminal the caller shares.
const TERMINAL_STATE: [u32; 5] = [TIOCSTI, TIOCLINUX, TIOCEXCL, TIOCSETD, TCXONC];

/// The `setsockopt` options (at `SOL_SOCKET`) that attach a BPF program to a socket.
const SOCKET_PROGRAMS: [u32; 4] = [SO_ATTACH_FILTER, SO_ATTACH_REUSEPORT_CBPF, SO_ATTACH_BPF, SO_ATTACH_REUSEPORT_EBPF];

/// The `setsockopt` options that join a multicast group, at `IPPROTO_IP` (an `AF_INET6` socket takes
/// them too) and at `IPPROTO_IPV6`.
const IPV4_JOINS: [u32; 4] = [IP_ADD_MEMBERSHIP, IP_ADD_SOURCE_MEMBERSHIP, MCAST_JOIN_GROUP, MCAST_JOIN_SOURCE_GROUP];
const IPV6_JOINS: [u32; 3] = [IPV6_ADD_MEMBERSHIP, MCAST_JOIN_GROUP, MCAST_JOIN_SOURCE_GROUP];

/// What `setsockopt` refuses, by level: the socket programs and the multicast joins.
const REFUSED_OPTIONS: [(u32, &[u32]); 3] = [(SOL_SOCKET, &SOCKET_PROGRAMS), (IPPROTO_IP, &IPV4_JOINS), (IPPROTO_IPV6, &IPV6_JOINS)];

/// The `fcntl` commands that change what every opener of an inode shares, past every mount (see
/// the baseline's fcntl rule): a lease (and a delegation, a lease by another door), a write-lifetime
/// hint, a FIFO's buffer size.
const INODE_FCNTLS: [u32; 4] = [F_SETLEASE, F_SETDELEG, F_SET_RW_HINT, F_SETPIPE_SZ];

/// With a shield, those and the commands naming a descriptor's owner (see `shield`). Both lists go
/// to `Check::FcntlOf`, which also answers `F_SETFL` turning `O_DIRECT` on (see the baseline's rule).
const SHIELDED_FCNTLS: [u32; 6] = join(INODE_FCNTLS, [F_SETOWN, F_SETOWN_EX]);

/// The `madvise` advice that reclaims the pages it names, page cache included (see `filter.rs`).
const RECLAIMING_ADVICE: [u32; 2] = [MADV_COLD, MADV_PAGEOUT];

/// `madvise`'s answers: the reclaiming advice done without the call, and memory made mergeable
/// refused as a kernel without KSM refuses it (see the baseline's rule).
const MADVISE_ANSWERS: [(u32, u32); 3] = [(MADV_COLD, RET_DONE), (MADV_PAGEOUT, RET_DONE), (MADV_MERGEABLE, RET_EINVAL)];

/// `prctl`'s options answered as a kernel without them answers (see the baseline's rule).
const PRCTL_ANSWERS: [(u32, u32); 1] = [(PR_SET_MEMORY_MERGE, RET_EINVAL)];

/// The baseline every plan gets, whatever its network and sockets: syscalls a command never needs
/// and the kernel has had escapes through (compare Docker's default profile and Codex's filter).
/// Each entry: the syscall, what is refused, and why.
pub const BASELINE: &[(Sys, Check, &str)] = &[
    // First the rules that look at arguments of frequent calls, so those run the shortest program.
    (Sys::Ioctl, Check::ArgIn(OFF_ARG1_LO, &TERMINAL_STATE), "TIOCSTI/TIOCLINUX type into, or take over, a terminal the command shares with its caller (CVE-2017-5226); TIOCEXCL makes it exclusive past the run: every later run given it failed setup (its reopen got EBUSY), and the user's own programs could not open it by name; TIOCSETD (N_NULL) left it taking no input and no termios, and the caller's Node aborted at exit; TCXONC (TCOOFF) left its output stopped, the caller's next write blocked (found by attackers' reviews). Line disciplines are also kernel code (and modules) a build never needs"),
    (Sys::Futex, Check::ArgIn(OFF_ARG1_LO, &[FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAIT_REQUEUE_PI, FUTEX_WAIT_REQUEUE_PI_REALTIME, FUTEX_CMP_REQUEUE_PI]), "a process-shared futex in a mapped file is keyed by the file's inode, and the shared requeues ask read access alone of it: a command that could read the file moved a host thread waiting there (a process-shared mutex or condition variable in a mapped file: LMDB's lock file, Berkeley DB's regions) onto a word of its own, the host's wake found no one, and the thread slept for good (found by an attacker's review, kern30). So did a requeue-PI waiter of the command's on the host's word (it asks write access of its own PI target only): every FUTEX_WAKE of a queue holding one fails with EINVAL and wakes no one past it (found by an attacker's review, rfix30); no C library uses requeue-PI since glibc 2.25's condition variables. The C libraries requeue private futexes only (FUTEX_PRIVATE_FLAG), which stay allowed with the waits, the wakes and the PI locks (those need write access); the operation is an int, judged on its low half"),
    (Sys::FutexRequeue, Check::Ret(RET_ENOSYS), "futex2's requeue (Linux 6.7) does the same with each word's flags in memory seccomp cannot read; ENOSYS, as on older kernels: no C library calls it"),
    (Sys::Fcntl, Check::FcntlOf(&INODE_FCNTLS), "a file lease is taken on an inode, past every read-only mount, on any file of the user's the command can open: every host process that opens it for writing (an editor's save, a shell's >>) then waits fs.lease-break-time, 45 s, again and again (found by an attacker's review); builds and tests take none. F_SETDELEG (Linux 6.19) takes the same lease by another door (FL_DELEG, through the same do_fcntl_add_lease), on a directory too (whose delegation the kernel breaks when its entries change): refused with it (found by an attacker's review, kern43, from the kernel's source; not run, this host's 6.18 answers EINVAL). F_SET_RW_HINT writes a write-lifetime hint on the inode of any file the user owns (as root every root-owned file), through a descriptor opened for reading and a read-only mount (the kernel asks neither write access nor the mount's): a default read-only run set a host file's, which stayed after the run, and every later write of the host's to that file carries it to the block device, which a device with data placement (NVMe FDP, SCSI lifetime hints) places by (found by an attacker's review, kern42). Only RocksDB and fio set one, and both go on without it; F_GET_RW_HINT stays. F_SETPIPE_SZ sets the buffer size of the pipe a descriptor is on, asking nothing more of the caller, and a FIFO's pipe is shared by every opener: a default read-only run opened a host FIFO outside its workspace for reading (what a read-only view allows) and shrank its buffer from 64 KiB to one page, and after the run the host's non-blocking writer fitted 4,096 bytes where it had fitted 65,536, for as long as the host held it (found by an attacker's review, kern43). EPERM is what the kernel answers an unprivileged caller past fs.pipe-max-size, so its callers (pv, Python's subprocess pipesize, which raises) expect it; F_GETPIPE_SZ stays. And F_SETFL turning O_DIRECT on: the status flags are the open file's, and a regular file among a plan's inherited stdio is the caller's open file, left as given (opened again, its offset would be the command's own, and a shell's `{ plan; echo after; } > log` would write over the command's output): a default read-only run given its caller's log file as stdout (stdio 'inherit') turned O_DIRECT on, and after the run every write of the caller's from an unaligned buffer got EINVAL (its Node threw, uncaught; the shell's echo failed) for as long as it held the file (found by an attacker's review, kern44). Answered EINVAL, what a file without direct I/O answers (a tmpfs before 6.6), which InnoDB's O_DIRECT flush method and dd's iflag=direct on stdin take as such; files opened with O_DIRECT keep it, and every other flag (O_NONBLOCK, O_APPEND) passes"),
    (Sys::Setsockopt, Check::OptionsIn(&REFUSED_OPTIONS), "a socket filter is a BPF program the kernel compiles (always, with CONFIG_BPF_JIT_ALWAYS_ON) and charges to ONE machine-wide budget, net.core.bpf_jit_limit, for every caller without CAP_BPF on the host: found by an attacker's review, ~8,000 sockets with a large classic filter each used it up, and while the run lived every later run failed setup (its seccomp filter is compiled from the same budget, ENOTSUPP) and so did every unprivileged seccomp or socket-filter user of the host. Builds and tests rarely attach one (tcpdump and DHCP clients do, on packet sockets, refused anyway); a server steering SO_REUSEPORT with a program gets EPERM. The eBPF forms need a program from bpf(), refused below, and are refused here too, at no cost. Detaching and SO_LOCK_FILTER attach nothing and stay allowed; the numbers at other levels (26 is IPV6_V6ONLY) are other options. And the multicast joins (IP_ADD_MEMBERSHIP, IP_ADD_SOURCE_MEMBERSHIP, MCAST_JOIN_GROUP, MCAST_JOIN_SOURCE_GROUP, IPV6_ADD_MEMBERSHIP): each adds its group to the interface's list (the sandbox's own loopback with the network off, the host's interfaces with it on), and closing a socket leaves its groups holding the machine's one networking lock, RTNL, each leave walking that whole list twice; 20 groups a socket and no bound on sockets, so the list and each walk grow as the command likes (found by an attacker's review, kern32: 10,000 sockets' 200,000 groups on the sandbox's loopback, 27 s to join, held RTNL 0.8 to 1.2 s for each socket closed and a host process's own RTNL call waited up to 834 ms; a killed process closes its descriptors oldest first, the worst order, so the run's end would have held it for over an hour (estimated, not run). IPv6's leaves walk under the interface's own lock since Linux 6.16, still at about 1.5 s a socket of 2,000 groups). Sending to a group and its options (IP_MULTICAST_TTL, IP_MULTICAST_LOOP, IPV6_MULTICAST_HOPS) join nothing and stay allowed; the options that change a membership's sources need a join first"),
    (Sys::Clone, Check::ArgMaskOrWithout(OFF_ARG0_LO, CLONE_NEW_MASK, (CLONE_FILES, CLONE_THREAD)), "new namespaces after setup: a new user namespace hands the command capabilities, and with them kernel surface (mounts, netfilter) behind most container escapes. And a process (not a thread) sharing its parent's descriptor table (CLONE_FILES without CLONE_THREAD): a POSIX lock it takes lives on with the table after it ends, and the kernel then names the lock's owner pid 0 in every pid namespace but the first, as it does a plan's held outside one; a command hid such a lock on its workspace's top behind 72,000 descriptors of its own processes (past the placeholders' look for a visible holder), and with sandspawn in a pid namespace of its own the .envrc it planted stayed on the host for the whole run (found by an attacker's review, rev43). Threads, fork, vfork and posix_spawn share no table this way; only LinuxThreads-era code did"),
    (Sys::Unshare, Check::ArgMask(OFF_ARG0_LO, CLONE_NEW_MASK), "new namespaces after setup (as clone)"),
    (Sys::Clone3, Check::Ret(RET_ENOSYS), "clone3's flags are in memory seccomp cannot read; ENOSYS makes the C libraries fall back to clone, whose flags are checked"),
    (Sys::Setns, Check::Ret(RET_EPERM), "joining another namespace: the sandbox's are all it may use"),
    (Sys::Keyctl, Check::Ret(RET_EPERM), "kernel keyrings are not namespaced: the keys of the session that started the sandbox would be readable and writable"),
    (Sys::AddKey, Check::Ret(RET_EPERM), "keyrings (as keyctl)"),
    (Sys::RequestKey, Check::Ret(RET_EPERM), "keyrings (as keyctl); it can also make the kernel run a host upcall"),
    (Sys::IoUringSetup, Check::Ret(RET_EPERM), "io_uring performs socket, open and more past this filter, and has been a rich source of kernel escapes"),
    (Sys::IoUringEnter, Check::Ret(RET_EPERM), "io_uring (as io_uring_setup)"),
    (Sys::IoUringRegister, Check::Ret(RET_EPERM), "io_uring (as io_uring_setup)"),
    (Sys::IoSetup, Check::Ret(RET_ENOSYS), "native AIO contexts are charged to ONE machine-wide budget, fs.aio-max-nr (65,536 events by default), with no exemption for root or a user namespace: found by an attacker's review, one io_setup(65536) took all of it, and while the run lived every process of every user (root's too, and every other run) got EAGAIN from io_setup: InnoDB, qemu's aio=native, libaio and fio fail. A bound on the argument would not do (the command calls it again). ENOSYS is what a kernel without AIO gives: libaio's users fall back to threads, and io_submit and the rest need a context from here"),
    (Sys::Bpf, Check::Ret(RET_EPERM), "eBPF verifier bugs are a recurring privilege escalation; no build or test tool needs it"),
    (Sys::PerfEventOpen, Check::Ret(RET_EPERM), "a long history of kernel escapes and side channels; profiling is not sandbox work"),
    (Sys::Userfaultfd, Check::Ret(RET_EPERM), "stalls the kernel in the middle of a copy: the usual way to win a kernel race"),
    (Sys::NameToHandleAt, Check::Ret(RET_EPERM), "file handles name inodes past the mount table (the 'shocker' container escape uses open_by_handle_at)"),
    (Sys::OpenByHandleAt, Check::Ret(RET_EPERM), "opens any inode of a filesystem by number, past every mount the sandbox is made of"),
    (Sys::Mount, Check::Ret(RET_EPERM), "the mounts are the sandbox's boundary: the command holds no capability to change them, and the filter keeps it so"),
    (Sys::Umount2, Check::Ret(RET_EPERM), "mounts (as mount): unmounting a mask would reveal what it hides"),
    (Sys::PivotRoot, Check::Ret(RET_EPERM), "mounts (as mount)"),
    (Sys::OpenTree, Check::Ret(RET_EPERM), "mounts (as mount), the new mount API"),
    (Sys::OpenTreeAttr, Check::Ret(RET_EPERM), "mounts (as open_tree, with attributes; Linux 6.15): it gave the command an O_PATH descriptor past the filter (found by an attacker's review)"),
    (Sys::MoveMount, Check::Ret(RET_EPERM), "mounts (as mount), the new mount API"),
    (Sys::Fsopen, Check::Ret(RET_EPERM), "mounts (as mount), the new mount API; also filesystem parsers reachable without a device"),
    (Sys::Fsconfig, Check::Ret(RET_EPERM), "mounts (as fsopen)"),
    (Sys::Fsmount, Check::Ret(RET_EPERM), "mounts (as fsopen)"),
    (Sys::Fspick, Check::Ret(RET_EPERM), "mounts (as fsopen)"),
    (Sys::MountSetattr, Check::Ret(RET_EPERM), "mounts (as mount): clearing a read-only flag"),
    (Sys::KexecLoad, Check::Ret(RET_EPERM), "replacing the running kernel"),
    (Sys::KexecFileLoad, Check::Ret(RET_EPERM), "replacing the running kernel"),
    (Sys::InitModule, Check::Ret(RET_EPERM), "loading kernel code"),
    (Sys::FinitModule, Check::Ret(RET_EPERM), "loading kernel code"),
    (Sys::DeleteModule, Check::Ret(RET_EPERM), "unloading kernel code"),
    (Sys::ModifyLdt, Check::Ret(RET_EPERM), "x86 segment descriptors: a past source of kernel escapes (Docker's profile refuses it too); only 16-bit and old Wine code needs it"),
    (Sys::Seccomp, Check::ArgIn(OFF_ARG0_LO, &[SECCOMP_SET_MODE_FILTER]), "a seccomp filter of the command's is compiled by the BPF JIT (always, with CONFIG_BPF_JIT_ALWAYS_ON) into 2 MiB packs of 512 separate pages made read-only and executable, which splits the host kernel's direct map there into 4 KiB pages until the host reboots, as memfd_secret does (found by an attacker's review, kern30: 50 processes stacking 4 filters of 4,000 instructions took DirectMap4k from 28 MiB to 540 MiB and split 17 of the host's 24 GiB pages), and each draws on the machine's one net.core.bpf_jit_limit, past which every later run's filter fails (ENOTSUPP). Builds and tests do not sandbox themselves; Chromium, Firefox and libseccomp take any answer but EFAULT as a kernel without seccomp filters, and Chromium here runs with --no-sandbox anyway (no user namespaces, nosuid). Strict mode and the queries stay"),
    (Sys::Prctl, Check::ArgIsThenIn((OFF_ARG0_LO, PR_SET_SECCOMP), (OFF_ARG1_LO, &[SECCOMP_MODE_FILTER]), &PRCTL_ANSWERS), "installing a seccomp filter (as seccomp()), through PR_SET_SECCOMP; its mode is an unsigned long the kernel compares whole, so a high half only makes it refuse too. And PR_SET_MEMORY_MERGE, which makes all of the process's memory mergeable by KSM (as madvise's MADV_MERGEABLE below), answered EINVAL, what a kernel without KSM or before 6.4 answers; the helper turns it off before the command starts, since a process keeps it across exec and the host's may have it (systemd's MemoryKSM=yes). Every other prctl stays"),
    (Sys::Mmap, Check::ArgMaskAnswers(OFF_ARG3_LO, MAP_HUGETLB, RET_ENOMEM), "the machine's huge page pool (vm.nr_hugepages: a database's, DPDK's, reserved at boot) is one budget for every process, and MAP_HUGETLB takes from it with no capability, no rlimit and, by default, no memory cgroup counting the pages: a default workspace-write run took the whole pool and the host's own mmap(MAP_HUGETLB) got ENOMEM while it lived (found by an attacker's review, kern32). ENOMEM is what a host without a pool answers (the usual case), which the JVM's large pages and the allocators that try them take as 'none here'. mmap is no longer answered by the kernel's seccomp cache: each call runs the filter's search"),
    (Sys::MemfdCreate, Check::ArgMaskAnswers(OFF_ARG1_LO, MFD_HUGETLB, RET_ENOMEM), "huge pages from the machine's pool (as mmap's MAP_HUGETLB), through a memfd"),
    (Sys::Setrlimit, Check::ArgInAnswers(OFF_ARG0_LO, &[RLIMIT_CORE], RET_DONE), "RLIMIT_CORE stays the 1 byte every run sets (rlimit::NO_CORE_DUMP): where the host's kernel.core_pattern is a pipe (systemd-coredump's, apport's), the kernel starts that program as root in the host's namespaces for each crash and streams the whole core into it unless the limit is exactly 1, and 0 stops only a core file: a default run's crashes started a host root process each, 273 MB streamed for one 256 MiB Python (found by an attacker's review, kern33). Setting it is answered 0 without the call (bash's ulimit -c 0, Python's crash-report suppression: no core either way), and so is prlimit64's setting of it (below), or EPERM when that call asks for the old limit too, which it could not be given; reading it passes. The resource is an unsigned int"),
    (Sys::Prlimit64, Check::OwnLimitsKeeping(RLIMIT_CORE, false), "RLIMIT_CORE (as setrlimit, below), through prlimit64 with pid 0: answered 0 without the call when the old limit is not asked for, EPERM when it is (it could not be given); setting it through any other pid is EPERM, the command's own getpid() or a child's being one the filter cannot tell from another's (lowered to 0 so, a crash reached the host's core helper: found by an attacker's review, rfix33). Reading it passes, and so does every other limit; another process's other limits pass here (the sandbox's own pid namespace), the Landlock mode refuses them (LANDLOCK_GAPS)"),
    (Sys::Fadvise64, Check::ArgInAnswers(OFF_ARG3_LO, &[POSIX_FADV_DONTNEED], RET_DONE), "the page cache is the machine's, one copy of a file's pages for every process, and POSIX_FADV_DONTNEED drops a file's clean, unmapped pages given a descriptor opened for reading alone, through a read-only mount too: a default workspace-write run dropped a 256 MiB host file it could only read from the cache, all of it, and the host's next read took 896 ms instead of 141 ms (found by an attacker's review, kern33), a drop_caches aimed at the host's files (its repositories, toolchains, /usr) from a run that may write none of them. Answered 0, done, without the call: it is advice, which a kernel may ignore, and the callers that give it (rsync --drop-cache, dd's nocache, databases on their own files) go on as if it had been taken, their pages left cached. The advice is an int, judged on its low half"),
    (Sys::Sync, Check::Ret(RET_DONE), "sync() writes back every dirty page of every filesystem of the machine, the host's files and other users' included, none of which the command opened: a default workspace-write run's sync loop (1,740 calls in 12 s) while a host process rewrote a 16 MiB file ten times a second made the host's disk write 2,608 MiB in 10 s against 73 MiB without it, each rewrite written out instead of the last one after 30 s (found by an attacker's review, kern34). Answered 0 without the call (coreutils' sync succeeds, as after a sync with nothing to write); fsync and fdatasync of a file the command opens still write that file"),
    (Sys::Syncfs, Check::Ret(RET_DONE), "syncfs() writes back every dirty page of the filesystem a descriptor lies on (any descriptor: one opened for reading, on a read-only mount, will do), the host's whole root filesystem among them (as sync above); answered 0 likewise (sync -f)"),
    (Sys::QuotactlFd, Check::ArgIn(OFF_ARG1_LO, &Q_SYNCS), "Q_SYNC needs no privilege, and quotactl_fd asks no write access for it, so any descriptor on a filesystem will do, one opened for reading through a read-only mount included: on ext4 without its quota feature (mke2fs's default) it is dquot_quota_sync, the filesystem's sync_fs (a journal commit, or without a journal its dirty metadata), sync_blockdev (every dirty buffer of its device) and a cache flush, the syncfs() answered above, on the host's filesystem: found by an attacker's review, kern39, a read-only run's loop (2,546 calls in 10 s) while a host process touched 2,000 files made the host's disk write 874 MiB, against 0 MiB without it and 21 MiB for a run's fsync loop on a file of its own. Only quotasync and repquota ask it; EPERM, what any other quota change gives an unprivileged caller. Q_GETQUOTA, Q_GETINFO and Q_GETFMT stay; the command is an unsigned int"),
    (Sys::Quotactl, Check::ArgIn(OFF_ARG0_LO, &Q_SYNCS), "Q_SYNC (as quotactl_fd), by a block device's path (the Landlock mode sees the host's /dev) or, with none, of every filesystem with quotas on"),
    (Sys::Madvise, Check::ArgAnswers(OFF_ARG2_LO, &MADVISE_ANSWERS), "MADV_PAGEOUT reclaims the pages of a mapped file that no other process maps, page cache the host shares, of any file the user owns or could write by its mode (as root every root-owned file, through a read-only mount and a read-only mapping): a default run dropped a 256 MiB host file from the cache (found by an attacker's review, kern33, as posix_fadvise's DONTNEED); MADV_COLD puts the same pages first in line for reclaim. Answered 0, done, as that advice (only Android's memory managers give it); madvise is no longer answered by the kernel's seccomp cache: each call (allocators' MADV_DONTNEED and MADV_FREE) runs the filter's search. And MADV_MERGEABLE, answered EINVAL, what a kernel without KSM answers: kernel same-page merging merges identical pages of every mapping so marked, whatever process or namespace it belongs to, and a process sees which of its own pages were merged (smaps' KSM field, or a write's copy-on-write time), an oracle on the memory of every host process whose pages are mergeable (QEMU's guests, a service with systemd's MemoryKSM=yes): with KSM running, a default read-only run mapped 256 copies of a host process's page, each with another guess of its one unknown byte, and read the byte in about a second (found by an attacker's review, kern45). Only QEMU and a few allocators' options ask it, and go on without it; MADV_UNMERGEABLE stays. Every other advice stays"),
    (Sys::ProcessMadvise, Check::ArgInAnswers(OFF_ARG3_LO, &RECLAIMING_ADVICE, RET_DONE), "the same advice as madvise's, given through the command's own pidfd (another process's needs CAP_SYS_NICE, which the command lacks); answered 0, done, likewise"),
    (Sys::Shmget, Check::ArgMaskAnswers(OFF_ARG2_LO, SHM_HUGETLB, RET_ENOMEM), "huge pages from the machine's pool (as mmap's MAP_HUGETLB), through a SysV segment: root's group is hugetlb_shm_group by default. The Landlock mode refuses shmget whole (LANDLOCK_GAPS)"),
    (Sys::Pipe2, Check::ArgMaskAnswers(OFF_ARG1_LO, O_NOTIFICATION_PIPE, RET_ENOPKG), "O_NOTIFICATION_PIPE makes the pipe a watch queue, the kernel's notification pipes (key and mount notifications), whose code had a privilege escalation (CVE-2022-0995: an out-of-bounds write through its IOC_WATCH_QUEUE_SET_FILTER ioctl, with no privilege) and which no build or test uses; its ioctls act only on such a pipe (ENODEV on any other). Answered ENOPKG, what a kernel without CONFIG_WATCH_QUEUE answers (found by an attacker's review, kern45b). The flags are an int; O_CLOEXEC, O_NONBLOCK and O_DIRECT pass"),
    (Sys::MemfdSecret, Check::Ret(RET_EPERM), "its pages are taken out of the kernel's direct map, which splits the host's 1 GiB and 2 MiB pages there into 4 KiB ones for good, until the host reboots: a lasting TLB cost on every process of the machine, from each run that calls it (found by an attacker's review: DirectMap4k grew tenfold in three runs). Only secret-keeping daemons use it, no build or test"),
];

/// Set-ID modes, refused in every mode (part of the baseline: `rules` adds them to every filter).
/// A file is set-ID on the host's filesystem whatever mount the sandbox saw it through (its
/// `nosuid` stops nothing outside): found by an attacker's review, a bwrap run as root made a copy
/// of `bash` in the workspace 4755, a setuid-root shell for every local user, and as an ordinary
/// user such a copy lends that user's identity. In the Landlock mode it was any binary of the host.
/// Only the set-ID bits: refusing chmod whole broke `git init` and every `git config` (git gives
/// the lock file the config's mode). A mode given at creation is refused too, but only with the
/// flags under which the kernel reads it (`CREATING_FLAGS`): without them the register is garbage.
/// `mkdir` needs no rule: Linux never gives a directory S_ISUID from its mode, and S_ISGID only
/// from a setgid parent (a directory's set-ID bits grant nothing when run). `openat2` carries
/// its mode in memory seccomp cannot read: ENOSYS, and callers fall back to `openat` (C libraries'
/// `open` never use it).
pub const SET_ID_MODES: &[(Sys, Check, &str)] = &[
    (Sys::Chmod, Check::ArgMask(OFF_ARG1_LO, SET_ID_BITS), "a setuid or setgid file stays so on the host: a setuid-root shell planted in the workspace"),
    (Sys::Fchmod, Check::ArgMask(OFF_ARG1_LO, SET_ID_BITS), "set-ID modes (as chmod): a descriptor opened for reading is enough"),
    (Sys::Fchmodat, Check::ArgMask(OFF_ARG2_LO, SET_ID_BITS), "set-ID modes (as chmod)"),
    (Sys::Fchmodat2, Check::ArgMask(OFF_ARG2_LO, SET_ID_BITS), "set-ID modes (as chmod)"),
    (Sys::Open, Check::ArgsMask([(OFF_ARG1_LO, CREATING_FLAGS), (OFF_ARG2_LO, SET_ID_BITS)]), "set-ID modes (as chmod), given when the file is created"),
    (Sys::Openat, Check::ArgsMask([(OFF_ARG2_LO, CREATING_FLAGS), (OFF_ARG3_LO, SET_ID_BITS)]), "set-ID modes (as open)"),
    (Sys::Creat, Check::ArgMask(OFF_ARG1_LO, SET_ID_BITS), "set-ID modes (as open): creat always creates"),
    (Sys::Mknod, Check::ArgMask(OFF_ARG1_LO, SET_ID_BITS), "set-ID modes (as open): a regular file made by mknod"),
    (Sys::Mknodat, Check::ArgMask(OFF_ARG2_LO, SET_ID_BITS), "set-ID modes (as mknod)"),
    (Sys::Openat2, Check::Ret(RET_ENOSYS), "its mode is in a struct seccomp cannot read, so a set-ID one could not be refused; ENOSYS makes callers fall back to openat"),
];

/// What the Landlock mode's filter adds (it is the mode `Tracing::Denied` marks): what Landlock
/// does not govern (up to ABI 7) but a mount namespace did, for a command that shares the host's
/// file system and processes (found by an attacker's review). Each: the syscall, the check, why.
pub const LANDLOCK_GAPS: &[(Sys, Check, &str)] = &[
    // Modes: the set-ID bits are the baseline's (`SET_ID_MODES`), in every mode; the rest is
    // reported (`file-modes`).
    (Sys::Chown, Check::Ret(RET_EPERM), "Landlock does not govern owners: as root (a container) any file of the host could be given away"),
    (Sys::Fchown, Check::Ret(RET_EPERM), "owners (as chown)"),
    (Sys::Lchown, Check::Ret(RET_EPERM), "owners (as chown)"),
    (Sys::Fchownat, Check::Ret(RET_EPERM), "owners (as chown)"),
    (Sys::Setxattr, Check::Ret(RET_EPERM), "Landlock does not govern extended attributes: as root, security.capability gives a host binary capabilities, as setuid would"),
    (Sys::Lsetxattr, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    (Sys::Fsetxattr, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    (Sys::Setxattrat, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    (Sys::Removexattr, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    (Sys::Lremovexattr, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    (Sys::Fremovexattr, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    (Sys::Removexattrat, Check::Ret(RET_EPERM), "extended attributes (as setxattr)"),
    // IPC: the Landlock mode shares the host's IPC namespace and cannot make one of its own (bwrap
    // gives every plan one: `--unshare-ipc`); Landlock governs none of these objects (found by an
    // attacker's review: a host process's segments, queues and semaphores were read, rewritten and
    // removed by key or id, and a run left segments behind that outlived it).
    (Sys::Shmget, Check::Ret(RET_EPERM), "SysV shared memory is per IPC namespace, not per file: the host's segments are found by key and attached by id (IPC_STAT lists them), whatever Landlock allows"),
    (Sys::Shmat, Check::Ret(RET_EPERM), "SysV shared memory (as shmget): attaching a host segment by its id"),
    (Sys::Shmctl, Check::Ret(RET_EPERM), "SysV shared memory (as shmget): listing, re-permitting or removing a host segment"),
    (Sys::Shmdt, Check::Ret(RET_EPERM), "SysV shared memory (as shmget), refused whole with it"),
    (Sys::Semget, Check::Ret(RET_EPERM), "SysV semaphores (as shmget): the host's sets, by key"),
    (Sys::Semop, Check::Ret(RET_EPERM), "SysV semaphores (as semget): operating a host set by its id"),
    (Sys::Semtimedop, Check::Ret(RET_EPERM), "SysV semaphores (as semop)"),
    (Sys::Semctl, Check::Ret(RET_EPERM), "SysV semaphores (as semget): setting or removing a host set by its id"),
    (Sys::Msgget, Check::Ret(RET_EPERM), "SysV message queues (as shmget): the host's queues, by key"),
    (Sys::Msgsnd, Check::Ret(RET_EPERM), "SysV message queues (as msgget): writing a host queue by its id"),
    (Sys::Msgrcv, Check::Ret(RET_EPERM), "SysV message queues (as msgget): taking a host queue's messages by its id"),
    (Sys::Msgctl, Check::Ret(RET_EPERM), "SysV message queues (as msgget): listing or removing a host queue"),
    (Sys::MqOpen, Check::Ret(RET_EPERM), "POSIX message queues live in the IPC namespace's own mqueue mount: creating one leaves it behind the run, and the host's are there by name"),
    (Sys::MqUnlink, Check::Ret(RET_EPERM), "POSIX message queues (as mq_open): removing a host queue by name"),
    (Sys::MqTimedsend, Check::Ret(RET_EPERM), "POSIX message queues (as mq_open)"),
    (Sys::MqTimedreceive, Check::Ret(RET_EPERM), "POSIX message queues (as mq_open)"),
    (Sys::MqNotify, Check::Ret(RET_EPERM), "POSIX message queues (as mq_open)"),
    (Sys::MqGetsetattr, Check::Ret(RET_EPERM), "POSIX message queues (as mq_open)"),
    (Sys::Prlimit64, Check::OwnLimitsKeeping(RLIMIT_CORE, true), "another process's limits: a process of the same user may set them, and Landlock's signal scope does not cover it (a CPU limit below what the host process used makes the kernel kill it); a process's own (pid 0) stay settable, but RLIMIT_CORE (the baseline's rule, which this one stands for here)"),
    // Scheduling: Landlock has no hook for it, its signal scope does not cover it, and a process may
    // lower another's of the same user (found by an attacker's review: the command lowered its
    // supervisor's, the host program's found through /proc, and every process of its user's, for
    // their whole life). Only the caller's own stays settable: pid 0, or PRIO_PROCESS and
    // IOPRIO_WHO_PROCESS with who 0, as `nice`, `chrt`, `taskset`, `ionice` and the runtimes pass.
    // A thread's id is refused too, the caller's own included: glibc passes it for the pthread_*
    // forms (`pthread_setschedparam`, `pthread_setaffinity_np`, a thread created with such attributes).
    (Sys::Setpriority, Check::ArgsNot([(OFF_ARG0_LO, PRIO_PROCESS), (OFF_ARG1_LO, 0)]), "another process's nice value, or every one of a process group or user (PRIO_PGRP, PRIO_USER): nice 19 cannot be undone without CAP_SYS_NICE, which the user does not have"),
    (Sys::SchedSetscheduler, Check::ArgNot(OFF_ARG0_LO, 0), "another process's scheduling policy (as setpriority): SCHED_IDLE cannot be undone without CAP_SYS_NICE"),
    (Sys::SchedSetparam, Check::ArgNot(OFF_ARG0_LO, 0), "another process's scheduling parameters (as sched_setscheduler)"),
    (Sys::SchedSetattr, Check::ArgNot(OFF_ARG0_LO, 0), "another process's policy and nice value in one call (as sched_setscheduler)"),
    (Sys::SchedSetaffinity, Check::ArgNot(OFF_ARG0_LO, 0), "another process's CPUs (as setpriority): the host program pinned to one CPU until someone notices"),
    (Sys::IoprioSet, Check::ArgsNot([(OFF_ARG0_LO, IOPRIO_WHO_PROCESS), (OFF_ARG1_LO, 0)]), "another process's I/O priority, or every one of a process group or user (as setpriority): the idle class, served only when the disk has nothing else to do"),
];

/// The `ioctl` requests a Landlock-mode command may not make: the inode attributes (`chattr`'s
/// flags, the extended flags and project, the generation, fs-verity, an encryption policy; see
/// `filter.rs`), which Landlock does not govern on regular files (`IOCTL_DEV` covers devices only)
/// and which a descriptor opened for reading is enough to change, on any file the user owns (as
/// root, every root-owned file of the host): found by an attacker's review. The bwrap modes' mounts
/// refuse them outside the writable roots (EROFS); this filter cannot tell paths apart, so it
/// refuses them in the writable roots too. Linux 6.17's `file_setattr` is past the filter's table
/// (ENOSYS). And a file's extents (`FIDEDUPERANGE`, btrfs and XFS): its destination may be a
/// descriptor opened for reading of a file the user owns, and an owner's dedupe replaced a host
/// file's blocks, which Landlock let it only read, with its workspace file's, shared from then on
/// (found by an attacker's review, revo42). Cloning (`FICLONE`) needs a descriptor open for writing.
const INODE_ATTRIBUTES: [u32; 8] = [FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION, EXT4_IOC_SETVERSION, FS_IOC_ENABLE_VERITY, FS_IOC_SET_ENCRYPTION_POLICY, FIDEDUPERANGE];

/// The `ioctl` requests of fscrypt's keys (see `filter.rs`), refused in every mode: a filesystem has
/// one keyring for every file on it, so a key added or removed through any descriptor on it (one
/// opened for reading will do, and bwrap's read-only mounts refuse nothing here) unlocks or locks
/// the host's encrypted files the command was never given. Asking a key's status stays allowed.
const ENCRYPTION_KEYS: [u32; 3] = [FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS];

/// The socket `ioctl` requests that load a module (see `filter.rs`), refused in every mode: on any
/// socket, a Unix one included, `sock_ioctl` calls `request_module("bridge")` or `("8021q")` when
/// the module is absent, with no capability check, and it stays loaded for every later run and the
/// host (found while closing kern27's protocols, `INET_PROTOCOLS`); `("dlci")` for Frame Relay's
/// two, on kernels before 6.0 (found by an attacker's review, fix28). Only `brctl`'s, `vconfig`'s and
/// `dlcicfg`'s old interfaces use them (`ip` speaks netlink); the interface queries programs make
/// stay allowed.
const MODULE_LOADING: [u32; 8] = [SIOCGIFBR, SIOCSIFBR, SIOCBRADDBR, SIOCBRDELBR, SIOCGIFVLAN, SIOCSIFVLAN, SIOCADDDLCI, SIOCDELDLCI];

/// The `ioctl` requests that write back or commit a whole filesystem (see `filter.rs`), refused in
/// every mode as `sync` and `syncfs` are answered (the baseline's): btrfs's `BTRFS_IOC_SYNC` wrote
/// back every dirty page of the filesystem from any descriptor on it, one opened for reading through
/// a read-only mount included (found by an attacker's review, kern38: one call from a default
/// workspace-write run left none of a host file's 16,384 dirty pages on a btrfs it only read, where
/// its `sync -f` left all of them). Only `btrfs filesystem sync` and `btrfs subvolume delete -c`
/// make them; refused, they fail with `EPERM`.
const FILESYSTEM_SYNCS: [u32; 2] = [BTRFS_IOC_SYNC, BTRFS_IOC_START_SYNC];

/// The `ioctl` request that reads a filesystem's allocation map, refused in every mode: ext4 answers
/// `FS_IOC_GETFSMAP` on any descriptor, one opened for reading through a read-only mount included,
/// with no capability check, by walking every block group's bitmap (read from the disk when not
/// cached) for the free space and metadata of the whole filesystem, the walk of `/proc/fs`'s
/// `mb_groups` that bwrap plans hide (`kernel_masks`): left by kern38's review, proved by kern39's,
/// a read-only run read the host's 252 GB root whole, 18,245 records in 1.85 s cold, 0.53 s warm,
/// again and again. Only `e2freefrag` on a mounted filesystem, `xfs_io`'s and `xfs_spaceman`'s
/// `fsmap` ask it (XFS answers an unprivileged caller with its free space alone); refused, they fail
/// with `EPERM`.
const ALLOCATION_MAP: [u32; 1] = [FS_IOC_GETFSMAP];

/// The `ioctl` requests that snapshot a subvolume, refused in every mode: btrfs's
/// `BTRFS_IOC_SNAP_CREATE` and `_V2` copy the whole tree of the subvolume a descriptor names (one
/// opened for reading through bwrap's read-only mount will do) into the directory the call is made
/// on, with no capability check, only that the caller owns the subvolume (as root every root-owned
/// one, the filesystem's top included; as a user the ones the user made). Found by an attacker's
/// review (kern40): a default workspace-write run snapshotted a btrfs's top subvolume into its
/// workspace and read there the file `denyRead` hid (mounts cover a path, never the copy), and the
/// copy outlived the run, holding every old version of the host's files from then on. Only `btrfs
/// subvolume snapshot`, snapper and container tools on btrfs storage make them; refused, they fail
/// with `EPERM`. An empty subvolume (`btrfs subvolume create`) copies nothing and stays allowed.
const SUBVOLUME_SNAPSHOTS: [u32; 2] = [BTRFS_IOC_SNAP_CREATE, BTRFS_IOC_SNAP_CREATE_V2];

/// The `ioctl` request that drops a file's cached extents, refused in every mode: ext4 answers
/// `EXT4_IOC_CLEAR_ES_CACHE` on a descriptor opened for reading through a read-only mount, for any
/// inode the user owns, the host's files among them, as `POSIX_FADV_DONTNEED` drops their pages
/// (answered by the baseline): found by an attacker's review, left40, a read-only run cleared a host
/// file's, and the host's next walk of its 100,000 extents took 0.47 s instead of 0.08 to 0.15 s.
/// Only xfstests clears it; refused, it fails with `EPERM`. Filling that cache
/// (`EXT4_IOC_PRECACHE_EXTENTS`) stays: reading a file and `FS_IOC_FIEMAP` with `FIEMAP_FLAG_CACHE`,
/// whose flag the filter cannot read, fill it the same.
const EXTENT_CACHE: [u32; 1] = [EXT4_IOC_CLEAR_ES_CACHE];

/// The rules of a filter: the socket rule, the baseline and its set-ID modes, and the tracing rules
/// when denied.
pub fn rules(f: Filter) -> Vec<(Sys, Check)> {
    let mut rules = socket_rules(f.sockets);
    // One rule per syscall (the search obeys only one): with a shield, the baseline's leases plus
    // the requests that make the kernel signal a process (see `shield`); its ioctl rule grows with
    // those and, in the Landlock mode, the inode attributes' and keys' (`ioctl_requests`).
    let widened = |sys: Sys, check: Check| match (sys, f.shield) {
        (Sys::Ioctl, _) => Check::ArgIn(OFF_ARG1_LO, ioctl_requests(f)),
        (Sys::Fcntl, Some(_)) => Check::FcntlOf(&SHIELDED_FCNTLS),
        _ => check,
    };
    // A syscall the Landlock mode refuses whole keeps that rule alone (shmget), and so does one whose
    // Landlock rule holds the baseline's (prlimit64's, which refuses other processes too).
    let refused_whole = |sys: &Sys| f.tracing == Tracing::Denied && LANDLOCK_GAPS.iter().any(|(gap, check, _)| gap == sys && matches!(check, Check::Ret(_) | Check::OwnLimitsKeeping(_, true)));
    rules.extend(BASELINE.iter().filter(|(sys, ..)| !refused_whole(sys)).map(|(sys, check, _)| (*sys, widened(*sys, *check))));
    rules.extend(SET_ID_MODES.iter().map(|(sys, check, _)| (*sys, *check)));
    if f.tracing == Tracing::Denied {
        for sys in [Sys::Ptrace, Sys::ProcessVmReadv, Sys::ProcessVmWritev, Sys::PidfdGetfd] {
            rules.push((sys, Check::Ret(RET_EPERM)));
        }
        rules.extend(LANDLOCK_GAPS.iter().map(|(sys, check, _)| (*sys, *check)));
    }
    if let Some(pid) = f.shield {
        rules.extend(shield(pid));
    }
    rules
}

/// The `ioctl` requests refused: the baseline's terminal ones, fscrypt's keys, the socket ones that
/// load a module, the whole-filesystem syncs, the allocation map, the subvolume snapshots and the extent cache's clearing, with a shield the ones naming a descriptor's owner,
/// in the Landlock mode the inode attributes. A rule's list is static, so each case is one constant,
/// joined at compile time.
pub(super) fn ioctl_requests(f: Filter) -> &'static [u32] {
    const EVERY_MODE: [u32; 22] = join(join::<19, 2, 21>(join::<18, 1, 19>(join::<16, 2, 18>(join::<8, 8, 16>(join::<5, 3, 8>(TERMINAL_STATE, ENCRYPTION_KEYS), MODULE_LOADING), FILESYSTEM_SYNCS), ALLOCATION_MAP), SUBVOLUME_SNAPSHOTS), EXTENT_CACHE);
    const SHIELDED: [u32; 24] = join(EVERY_MODE, [FIOSETOWN, SIOCSPGRP]);
    const LANDLOCK: [u32; 30] = join(EVERY_MODE, INODE_ATTRIBUTES);
    const LANDLOCK_SHIELDED: [u32; 32] = join(SHIELDED, INODE_ATTRIBUTES);
    match (f.shield.is_some(), f.tracing == Tracing::Denied) {
        (false, false) => &EVERY_MODE,
        (true, false) => &SHIELDED,
        (false, true) => &LANDLOCK,
        (true, true) => &LANDLOCK_SHIELDED,
    }
}

/// `a` then `b`, as one array (`N` must be their total length: checked when compiled).
const fn join<const A: usize, const B: usize, const N: usize>(a: [u32; A], b: [u32; B]) -> [u32; N] {
    assert!(A + B == N);
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}

/// The protocols an Internet socket may ask for, the commonest first: what ordinary programs ask
/// for by number, all built into every kernel that has the family (MPTCP is never a module). Any
/// other is refused because a protocol the kernel has not registered yet makes it load the module
/// behind it (`request_module("net-pf-2-proto-132")` in `inet_create`), with no capability check,
/// on every host that autoloads modules, and the module stays loaded for every later run and the
/// host (found by an attacker's review, kern27): SCTP, DCCP (CVE-2017-6074's), L2TP, IPPROTO_SMC,
/// the kernel surface distributions blacklist for this reason. UDP-Lite is built in but refused:
/// deprecated, unused, and unlike the rest kernel code no build or test reaches. Raw sockets of
/// other protocols go too (they need CAP_NET_RAW, which the command lacks under bwrap).
const INET_PROTOCOLS: [u32; 6] = [IPPROTO_IP, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_MPTCP];

/// The types an Internet socket may be of: stream, datagram and raw, the only ones of the protocols
/// above. Any other is refused (found by an attacker's review, kern28): `SOCK_PACKET` under
/// `AF_INET` is a packet socket to the kernel, which remaps the family to `PF_PACKET` in
/// `__sock_create` before it looks the family up, so the family list was passed (`packet_create`
/// ran, and on a host where `af_packet` is a module it was loaded first, for good); and
/// `SOCK_DCCP` with protocol 0 asks for `net-pf-2-proto-0-type-6` (and `net-pf-10-...`), aliases of
/// the `dccp` module, which the protocol rule never sees. `SOCK_SEQPACKET` (SCTP) and `SOCK_RDM`
/// have no protocol left above.
const INET_TYPES: [u32; 3] = [SOCK_STREAM, SOCK_DGRAM, SOCK_RAW];

/// The protocols a netlink socket may ask for: `NETLINK_ROUTE`, whatever the C libraries use
/// (glibc's and musl's `getifaddrs`, `if_nameindex`, `getaddrinfo`'s AI_ADDRCONFIG; Node's, Go's,
/// Python's and the JDK's interface lists through them or on their own; `ip`), and the kernel's
/// device events (`NETLINK_KOBJECT_UEVENT`: libudev's monitors, Chromium's), both always built in.
/// The rest load modules as the Internet ones do (`net-pf-16-proto-N`: nfnetlink, xfrm_user,
/// crypto_user, the RDMA and iSCSI cores...), or lead to them: `NETLINK_GENERIC`'s family lookup by
/// name loads any module with a family alias (tipc, wireguard, openvswitch, l2tp, nbd...), and
/// `NETLINK_SOCK_DIAG` each family's `*_diag` module; no build or test tool uses them (`ss` falls
/// back to `/proc/net`, `ethtool` to its ioctls). Audit, SELinux and the connector are built in
/// but refused with them: libaudit's callers take EPROTONOSUPPORT as "no audit in this kernel".
const NETLINK_PROTOCOLS: [u32; 2] = [NETLINK_ROUTE, NETLINK_KOBJECT_UEVENT];

/// The families `socket()` may create (see `Sockets`), and the pairs `socketpair()` may make: with
/// Unix sockets refused, no datagram pair, whose ends reach any socket path of the host. With no
/// `socket()` at all (the Landlock mode, network off), no `bind` either: a pair's end needs no
/// name, and one bound in the host's abstract namespace (shared in that mode) took the name from a
/// host program for the run's life (found by an attacker's review).
fn socket_rules(sockets: Sockets) -> Vec<(Sys, Check)> {
    const INET: &[Family] = &[(AF_INET, Some(&INET_PROTOCOLS), Some(&INET_TYPES)), (AF_INET6, Some(&INET_PROTOCOLS), Some(&INET_TYPES)), (AF_NETLINK, Some(&NETLINK_PROTOCOLS), None)];
    const INET_AND_UNIX: &[Family] = &[(AF_INET, Some(&INET_PROTOCOLS), Some(&INET_TYPES)), (AF_INET6, Some(&INET_PROTOCOLS), Some(&INET_TYPES)), (AF_NETLINK, Some(&NETLINK_PROTOCOLS), None), (AF_UNIX, None, None)];
    const CONNECTED_PAIRS: &[u32] = &[SOCK_STREAM, SOCK_SEQPACKET];
    const ANY_PAIR: &[u32] = &[SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET];
    let (socket, pairs) = match sockets {
        Sockets::None => (Check::Ret(RET_EPERM), CONNECTED_PAIRS),
        Sockets::UnixOnly => (Check::ArgNot(OFF_ARG0_LO, AF_UNIX), ANY_PAIR),
        Sockets::Inet => (Check::SocketOf(INET), CONNECTED_PAIRS),
        Sockets::InetAndUnix => (Check::SocketOf(INET_AND_UNIX), ANY_PAIR),
    };
    let mut rules = vec![(Sys::Socket, socket), (Sys::Socketpair, Check::UnixPairOf(pairs))];
    if sockets == Sockets::None {
        rules.push((Sys::Bind, Check::Ret(RET_EPERM)));
    }
    rules
}

/// No signal reaches process `pid` from the command: not by its pid (`kill`, the thread and queued
/// forms), not to its process group (`kill(-pid)`: it leads its own), not as one of "every process
/// I may signal" (`kill(-1)`), not through a pidfd (`pidfd_open` of it; `pidfd_send_signal` is
/// refused whole, since a `/proc/PID` directory descriptor serves as a pidfd and seccomp cannot tell
/// whose it is). The C libraries and runtimes fall back to `kill` without pidfds. Nor from the
/// kernel on the command's behalf: a descriptor's owner (`F_SETOWN`, `F_SETOWN_EX`, and the ioctl
/// forms above) is signalled when it is ready, with any signal `F_SETSIG` chose, SIGSTOP included
/// (found by a review of this shield); those are refused whole (`F_SETOWN_EX` passes a pointer
/// seccomp cannot read), in the baseline's fcntl and ioctl rules (`rules`). Its limits (`prlimit`) are kept by `LANDLOCK_GAPS`, for every process.
fn shield(pid: u32) -> [(Sys, Check); 7] {
    let by_pid = Check::ArgIs(OFF_ARG0_LO, pid);
    [
        (Sys::Kill, Check::ArgAmong(OFF_ARG0_LO, [pid, pid.wrapping_neg(), u32::MAX])),
        (Sys::Tkill, by_pid),
        (Sys::Tgkill, by_pid),
        (Sys::RtSigqueueinfo, by_pid),
        (Sys::RtTgsigqueueinfo, by_pid),
        (Sys::PidfdOpen, by_pid),
        (Sys::PidfdSendSignal, Check::Ret(RET_EPERM)),
    ]
}

