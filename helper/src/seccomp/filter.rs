//! What a filter is asked to do (`Filter`: architecture, socket rule, tracing) and the words its
//! rules are written in (`Check`, return values, the offsets and flags they test).

/// Architectures we can filter. Others cannot get the filter, so the plan builder refuses to run
/// a sandbox there instead of silently running without its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    pub fn native() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::Aarch64)
        } else {
            None
        }
    }

    /// `O_DIRECT`, whose bit differs: on aarch64 x86_64's is `O_DIRECTORY` (`asm/fcntl.h`).
    pub(crate) fn o_direct(self) -> u32 {
        match self {
            Arch::X86_64 => 0o40000,
            Arch::Aarch64 => 0o200000,
        }
    }

    /// `AUDIT_ARCH_*`: what the kernel reports in `seccomp_data.arch`.
    pub(crate) fn audit_arch(self) -> u32 {
        match self {
            Arch::X86_64 => 0xc000_003e,
            Arch::Aarch64 => 0xc000_00b7,
        }
    }
}

/// Which sockets the command may create. Families are an allow-list (as Docker's profile refuses
/// AF_VSOCK): the Internet ones, netlink (interface and route queries: `getaddrinfo`'s
/// AI_ADDRCONFIG, `ip`) and `AF_UNIX` when the policy allows it. Nothing else: AF_VSOCK is not
/// network-namespaced (on a VM host the command reached the hypervisor's services past the proxy,
/// found by an attacker's review), and the rarer families (packet, Bluetooth, CAN, TIPC, RDS, ALG,
/// XDP...) are kernel surface no build or test needs. `socketpair` is `AF_UNIX` only, and with
/// Unix sockets refused only of the stream and seqpacket types: a datagram socket, even one of a
/// pair, can `sendto()` or `connect()` any socket path of the host (journald, `/dev/log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sockets {
    /// No `socket()` at all (the Landlock mode with the network off).
    #[default]
    None,
    /// `AF_UNIX` only (the Landlock mode, `allowUnixSockets: true` with the network off).
    UnixOnly,
    /// The Internet families and netlink, not `AF_UNIX` (bwrap with the network off: its network
    /// namespace has only its own loopback, but a socket *file* of the host, Docker's or
    /// ssh-agent's, is reachable by path through the read-only root).
    Inet,
    /// The Internet families, netlink and `AF_UNIX` (`network: true`, or `allowUnixSockets: true`
    /// under bwrap).
    InetAndUnix,
}

impl Sockets {
    /// The word of the helper's command line.
    pub fn word(self) -> &'static str {
        match self {
            Sockets::None => "none",
            Sockets::UnixOnly => "unix",
            Sockets::Inet => "inet",
            Sockets::InetAndUnix => "inet-unix",
        }
    }

    pub fn from_word(word: &str) -> Option<Sockets> {
        [Sockets::None, Sockets::UnixOnly, Sockets::Inet, Sockets::InetAndUnix].into_iter().find(|s| s.word() == word)
    }
}

/// Whether the command may trace processes (`ptrace`, `process_vm_readv/writev`, `pidfd_getfd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracing {
    /// Under bwrap: the command runs in a user namespace of its own, below the one of bwrap's pid 1
    /// and of everything else that runs without this filter, and the kernel refuses every access of
    /// the ptrace family across that boundary (no CAP_SYS_PTRACE in the parent namespace). What is
    /// left to trace is the command's own tree, so debuggers keep working.
    OwnTree,
    /// The Landlock mode: the command shares the host's pid and user namespaces with the user's
    /// other processes. Landlock already refuses tracing outside the command's domain; the filter
    /// is a second wall, at the price of debuggers.
    Denied,
}

/// What a filter allows beyond the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filter {
    pub sockets: Sockets,
    pub tracing: Tracing,
    /// A process the command may not signal: the Landlock mode's supervisor where Landlock cannot
    /// scope signals (ABI < 6). Killed, it would end nothing: `setsid` daemons of the command
    /// outlived the run (found by an attacker's review).
    pub shield: Option<u32>,
}

/// What one rule does once the syscall number matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Always this return value.
    Ret(u32),
    /// EPERM when `arg & mask != 0`.
    ArgMask(u32, u32),
    /// EPERM when `arg & mask != 0`, or when the argument has a bit of the first of the pair and
    /// none of the second (`clone`: `CLONE_FILES` without `CLONE_THREAD`): `(offset, mask, (has, lacks))`.
    ArgMaskOrWithout(u32, u32, (u32, u32)),
    /// This return value (not EPERM) when `arg & mask != 0`: `(offset, mask, return)`.
    ArgMaskAnswers(u32, u32, u32),
    /// EPERM when the argument equals one of these.
    ArgIn(u32, &'static [u32]),
    /// This return value (not EPERM) when the argument equals one of these: `(offset, values,
    /// return)`.
    ArgInAnswers(u32, &'static [u32], u32),
    /// Each value its own return value, when the argument equals it: `(offset, [(value, return)])`.
    ArgAnswers(u32, &'static [(u32, u32)]),
    /// EPERM when the argument equals one of these three (values known when the filter is made).
    ArgAmong(u32, [u32; 3]),
    /// EPERM when the argument equals this.
    ArgIs(u32, u32),
    /// EPERM unless the argument equals this.
    ArgNot(u32, u32),
    /// EPERM unless both arguments, each `(offset, value)`, equal their values.
    ArgsNot([(u32, u32); 2]),
    /// EPERM when both arguments, each `(offset, mask)`, have a bit of their mask set (`open`'s
    /// creating flags and a set-ID mode).
    ArgsMask([(u32, u32); 2]),
    /// EPERM when the first argument `(offset, value)` equals its value and the second, at its
    /// offset, is one of these; when the first differs, it is answered as `ArgAnswers` (`prctl`'s
    /// option and mode, and the options answered as a kernel without them).
    ArgIsThenIn((u32, u32), (u32, &'static [u32]), &'static [(u32, u32)]),
    /// `prlimit64`: when the pid (the first argument) is not 0, the caller, EPERM if `true`, else
    /// allowed; then, when the resource is this one and a new limit is given (the third argument,
    /// a pointer: both halves), `RET_DONE` without the call, or EPERM when the old limit is asked
    /// for too (the fourth: it could not be written), or when the pid is not 0 (the caller's own
    /// pid or a child's cannot be told from another's). Reading any limit, and setting the others,
    /// pass.
    OwnLimitsKeeping(u32, bool),
    /// `setsockopt`: EPERM when the level (the second argument) is one of these levels and the
    /// option (the third) is among that level's options.
    OptionsIn(&'static [(u32, &'static [u32])]),
    /// `socketpair`: EPERM unless the domain is `AF_UNIX` and the type, without its flags
    /// (`SOCK_TYPE_MASK`), is one of these.
    UnixPairOf(&'static [u32]),
    /// `fcntl(fd, cmd, arg)`: EPERM when the command is one of these; `RET_EINVAL` when it is
    /// `F_SETFL` and the flags hold `O_DIRECT` (the architecture's bit, `Arch::o_direct`).
    FcntlOf(&'static [u32]),
    /// `socket`: EPERM unless the domain is one of these families; ESOCKTNOSUPPORT when the family
    /// lists its types and the type (without its flags) is not among them; EPROTONOSUPPORT when
    /// the family lists its protocols and the protocol is not among them.
    SocketOf(&'static [Family]),
}

/// A family `socket()` may create: its domain, the protocols it may ask for and the types it may
/// be of, each `None` for any (`AF_UNIX`, whose protocol and type name no module; netlink's types).
pub type Family = (u32, Option<&'static [u32]>, Option<&'static [u32]>);

pub const RET_ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
pub const RET_EPERM: u32 = 0x0005_0000 | 1; // SECCOMP_RET_ERRNO | EPERM
pub const RET_ENOSYS: u32 = 0x0005_0000 | 38; // SECCOMP_RET_ERRNO | ENOSYS
/// What a host without huge pages in its pool answers a request for one (the same number on x86_64
/// and aarch64).
pub const RET_ENOMEM: u32 = 0x0005_0000 | 12; // SECCOMP_RET_ERRNO | ENOMEM
/// Done, without the call: 0, the answer of a call that did what it was asked (`SECCOMP_RET_ERRNO`
/// with no errno returns 0). For advice a kernel is free to ignore (`posix_fadvise`, `madvise`),
/// whose callers go on as if it had been taken.
pub const RET_DONE: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO | 0
/// What a file without direct I/O answers `fcntl(F_SETFL, O_DIRECT)` (the same number on x86_64 and
/// aarch64): a tmpfs before Linux 6.6, a FUSE mount without it.
pub const RET_EINVAL: u32 = 0x0005_0000 | 22; // SECCOMP_RET_ERRNO | EINVAL
/// What a kernel without CONFIG_WATCH_QUEUE answers `pipe2(O_NOTIFICATION_PIPE)` (the same
/// number on x86_64 and aarch64).
pub const RET_ENOPKG: u32 = 0x0005_0000 | 65; // SECCOMP_RET_ERRNO | ENOPKG
/// What a kernel without a protocol answers `socket()` (the same number on x86_64 and aarch64):
/// programs that probe for one (Go's MPTCP, libaudit's callers) take it as "not here" and go on.
pub const RET_EPROTONOSUPPORT: u32 = 0x0005_0000 | 93; // SECCOMP_RET_ERRNO | EPROTONOSUPPORT
/// What a kernel answers `socket()` for a type its family lacks (the same number on x86_64 and
/// aarch64).
pub const RET_ESOCKTNOSUPPORT: u32 = 0x0005_0000 | 94; // SECCOMP_RET_ERRNO | ESOCKTNOSUPPORT

// Offsets in `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }`.
pub(crate) const OFF_NR: u32 = 0;
pub(crate) const OFF_ARCH: u32 = 4;
/// Low 32 bits of args[0] (both supported arches are little-endian). The kernel truncates
/// `socket`'s `int domain`, `clone`'s and `unshare`'s flags to 32 bits where it matters, so the
/// high half must NOT be checked: `domain = 0x1_0000_0001` is AF_UNIX to the kernel.
pub(crate) const OFF_ARG0_LO: u32 = 16;
/// Low 32 bits of args[1] (`ioctl`'s request is an `unsigned int` to the kernel).
pub(crate) const OFF_ARG1_LO: u32 = 24;
/// Low 32 bits of args[2] (`fchmodat`'s mode is a `umode_t` to the kernel, `socket`'s protocol an
/// `int`). The scheduling calls' arguments (`setpriority`'s and `ioprio_set`'s `which` and `who`,
/// the `sched_*` calls' pid) are `int`s to the kernel too: their low halves are what it acts on.
pub(crate) const OFF_ARG2_LO: u32 = 32;
/// Low 32 bits of args[3] (`openat`'s mode, a `umode_t` to the kernel).
pub(crate) const OFF_ARG3_LO: u32 = 40;
/// High 32 bits of args[2] and args[3]: a pointer is NULL only when both halves are 0.
pub(crate) const OFF_ARG2_HI: u32 = 36;
pub(crate) const OFF_ARG3_HI: u32 = 44;
/// `RLIMIT_CORE`'s number (the same on x86_64 and aarch64).
pub(crate) const RLIMIT_CORE: u32 = 4;
/// The set-user-ID and set-group-ID bits of a mode.
pub(crate) const SET_ID_BITS: u32 = 0o6000;
/// The `open` flags with which the kernel reads the mode argument (its `WILL_CREATE`): `O_CREAT`
/// and `__O_TMPFILE` (part of `O_TMPFILE`), the same on x86_64 and aarch64. Without either the
/// mode register holds whatever the caller left there, and is never judged.
pub(crate) const CREATING_FLAGS: u32 = 0o100 | 0o20000000;

pub(crate) const AF_UNIX: u32 = 1;
pub(crate) const AF_INET: u32 = 2;
pub(crate) const AF_INET6: u32 = 10;
pub(crate) const AF_NETLINK: u32 = 16;
/// The protocols of the Internet families programs ask for by number (`netinet/in.h`): ICMP (ping
/// sockets), TCP, UDP, ICMPv6 and MPTCP. Zero is each type's default (TCP for a stream, UDP for a
/// datagram).
pub(crate) const IPPROTO_IP: u32 = 0;
pub(crate) const IPPROTO_ICMP: u32 = 1;
pub(crate) const IPPROTO_TCP: u32 = 6;
pub(crate) const IPPROTO_UDP: u32 = 17;
pub(crate) const IPPROTO_ICMPV6: u32 = 58;
pub(crate) const IPPROTO_MPTCP: u32 = 262;
/// Netlink's protocols: routes, addresses and links (`linux/netlink.h`), and the kernel's device
/// events.
pub(crate) const NETLINK_ROUTE: u32 = 0;
pub(crate) const NETLINK_KOBJECT_UEVENT: u32 = 15;
/// A socket type without `SOCK_NONBLOCK` and `SOCK_CLOEXEC` (the kernel's mask).
pub(crate) const SOCK_TYPE_MASK: u32 = 0xf;
pub(crate) const SOCK_STREAM: u32 = 1;
pub(crate) const SOCK_DGRAM: u32 = 2;
pub(crate) const SOCK_RAW: u32 = 3;
pub(crate) const SOCK_SEQPACKET: u32 = 5;
/// `setsockopt`'s socket level, and its options that attach a BPF program to a socket: a classic
/// one (`SO_ATTACH_FILTER`, `SO_ATTACH_REUSEPORT_CBPF`), or an eBPF one by descriptor
/// (`SO_ATTACH_BPF`, `SO_ATTACH_REUSEPORT_EBPF`). The same numbers on x86_64 and aarch64 (the
/// generic `asm/socket.h`); both arguments are `int`s to the kernel.
pub(crate) const SOL_SOCKET: u32 = 1;
pub(crate) const SO_ATTACH_FILTER: u32 = 26;
pub(crate) const SO_ATTACH_BPF: u32 = 50;
pub(crate) const SO_ATTACH_REUSEPORT_CBPF: u32 = 51;
pub(crate) const SO_ATTACH_REUSEPORT_EBPF: u32 = 52;
/// The `setsockopt` options that join a multicast group (`linux/in.h`, `linux/in6.h`; the same
/// numbers on x86_64 and aarch64): at `IPPROTO_IP`, any-source and source-specific, in the old
/// forms and the protocol-independent `MCAST_*` ones; at `IPPROTO_IPV6`, `IPV6_ADD_MEMBERSHIP`
/// (`IPV6_JOIN_GROUP`) and the same `MCAST_*` numbers. The options that only change an existing
/// membership's sources (`IP_MSFILTER`, `MCAST_MSFILTER`, the block and unblock ones) need a join
/// first.
pub(crate) const IPPROTO_IPV6: u32 = 41;
/// The flags that take pages from the machine's huge page pool (`vm.nr_hugepages`): `mmap`'s
/// `MAP_HUGETLB` (its flags are an `unsigned long`; the page size lies in bits 26 to 31, the flag
/// below them), `memfd_create`'s `MFD_HUGETLB` and `shmget`'s `SHM_HUGETLB`; the same numbers on
/// x86_64 and aarch64.
pub(crate) const MAP_HUGETLB: u32 = 0x40000;
pub(crate) const MFD_HUGETLB: u32 = 4;
pub(crate) const SHM_HUGETLB: u32 = 0o4000;
/// The advice that drops a file's cached pages, which are the machine's, not the caller's:
/// `posix_fadvise`'s `POSIX_FADV_DONTNEED` (clean, unmapped pages of any file the caller can read)
/// and `madvise`'s (and `process_madvise`'s) `MADV_COLD` (moved to the first to be reclaimed) and
/// `MADV_PAGEOUT` (reclaimed at once) of a mapped file the caller owns or could write by its mode;
/// the same numbers on x86_64 and aarch64 (`POSIX_FADV_DONTNEED` is 6 on s390x alone).
pub(crate) const POSIX_FADV_DONTNEED: u32 = 4;
pub(crate) const MADV_COLD: u32 = 20;
pub(crate) const MADV_PAGEOUT: u32 = 21;
/// Marking memory for kernel same-page merging (KSM), which merges identical pages of every
/// process so marked, the host's included: `madvise`'s advice and `prctl`'s option for a whole
/// process (Linux 6.4); the same numbers on x86_64 and aarch64.
pub(crate) const MADV_MERGEABLE: u32 = 12;
pub(crate) const PR_SET_MEMORY_MERGE: u32 = 67;
/// `pipe2`'s flag asking for a notification pipe, a watch queue (`O_EXCL`'s bit, 0o200 on x86_64
/// and aarch64 alike).
pub(crate) const O_NOTIFICATION_PIPE: u32 = 0o200;
pub(crate) const IP_ADD_MEMBERSHIP: u32 = 35;
pub(crate) const IP_ADD_SOURCE_MEMBERSHIP: u32 = 39;
pub(crate) const MCAST_JOIN_GROUP: u32 = 42;
pub(crate) const MCAST_JOIN_SOURCE_GROUP: u32 = 46;
pub(crate) const IPV6_ADD_MEMBERSHIP: u32 = 20;
/// The highest syscall number the filter's rules were written against (Linux 6.15's
/// `open_tree_attr`, the same number on x86_64 and aarch64): every higher one gets ENOSYS.
pub(crate) const NEWEST_JUDGED: u32 = 467;

/// The x32 ABI on x86_64 shares AUDIT_ARCH_X86_64 but sets this bit in the syscall number.
pub(crate) const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// A child that shares its parent's descriptor table, and a thread of the caller's process.
pub(crate) const CLONE_FILES: u32 = 0x0000_0400;
pub(crate) const CLONE_THREAD: u32 = 0x0001_0000;
/// Every `CLONE_NEW*` flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
pub(crate) const CLONE_NEW_MASK: u32 = 0x0000_0080 | 0x0002_0000 | 0x0200_0000 | 0x0400_0000 | 0x0800_0000 | 0x1000_0000 | 0x2000_0000 | 0x4000_0000;
pub(crate) const TIOCSTI: u32 = 0x5412;
pub(crate) const TIOCLINUX: u32 = 0x541c;
/// Makes a terminal exclusive: only root may open it again until `TIOCNXCL`.
pub(crate) const TIOCEXCL: u32 = 0x540c;
/// Sets a terminal's line discipline (N_NULL takes no input and no termios).
pub(crate) const TIOCSETD: u32 = 0x5423;
/// `tcflow`: TCOOFF stops the terminal's output until a TCOON.
pub(crate) const TCXONC: u32 = 0x540a;
/// Who gets SIGIO/SIGURG for a socket (the ioctl forms of `F_SETOWN`).
pub(crate) const FIOSETOWN: u32 = 0x8901;
pub(crate) const SIOCSPGRP: u32 = 0x8902;
/// The socket ioctls of the bridge (`brctl`'s old interface: get and set, add and delete a bridge)
/// and of 802.1Q VLANs (`vconfig`'s), which `sock_ioctl` hands to the module's hook, loading the
/// module first when it is absent.
pub(crate) const SIOCGIFBR: u32 = 0x8940;
pub(crate) const SIOCSIFBR: u32 = 0x8941;
pub(crate) const SIOCBRADDBR: u32 = 0x89a0;
pub(crate) const SIOCBRDELBR: u32 = 0x89a1;
pub(crate) const SIOCGIFVLAN: u32 = 0x8982;
pub(crate) const SIOCSIFVLAN: u32 = 0x8983;
/// btrfs's filesystem syncs (`BTRFS_IOCTL_MAGIC` 0x94): `BTRFS_IOC_SYNC` (`_IO(0x94, 8)`) writes back
/// every dirty page of the filesystem and commits it, as `syncfs` does, and `BTRFS_IOC_START_SYNC`
/// (`_IOR(0x94, 24, __u64)`) starts a commit of the whole filesystem; both on any descriptor there,
/// one opened for reading included, with no capability check. No other driver uses these numbers.
pub(crate) const BTRFS_IOC_SYNC: u32 = 0x9408;
pub(crate) const BTRFS_IOC_START_SYNC: u32 = 0x8008_9418;
/// btrfs's snapshots: `BTRFS_IOC_SNAP_CREATE` (`_IOW(0x94, 1, struct btrfs_ioctl_vol_args)`) and
/// `BTRFS_IOC_SNAP_CREATE_V2` (`_IOW(0x94, 23, struct btrfs_ioctl_vol_args_v2)`), both 4,096 bytes on
/// every architecture: a copy of the subvolume a descriptor names (any descriptor, one opened for
/// reading included), made in the directory the call is on, asking only that the caller own the
/// subvolume. Creating an empty subvolume (`BTRFS_IOC_SUBVOL_CREATE`, 14 and 24) copies nothing.
pub(crate) const BTRFS_IOC_SNAP_CREATE: u32 = 0x5000_9401;
pub(crate) const BTRFS_IOC_SNAP_CREATE_V2: u32 = 0x5000_9417;
/// The filesystem's allocation map (`_IOWR('X', 59, struct fsmap_head)`, 192 bytes): ext4 answers it
/// on any descriptor, with no capability check, by walking every block group's bitmap.
pub(crate) const FS_IOC_GETFSMAP: u32 = 0xc0c0_583b;
/// ext4's `EXT4_IOC_CLEAR_ES_CACHE` (`_IO('f', 40)`): drops the extent status cache of the inode, on
/// any descriptor of an inode the caller owns, one opened for reading through a read-only mount
/// included (no write access is asked). Only ext4 answers it (xfstests' `xfs_io` is its one user).
pub(crate) const EXT4_IOC_CLEAR_ES_CACHE: u32 = 0x6628;
/// `quotactl`'s and `quotactl_fd`'s `Q_SYNC` command, `QCMD(Q_SYNC, type)` (`Q_SYNC` 0x800001 shifted
/// by `SUBCMDSHIFT` 8, with the quota type, user, group or project, in the low byte: any other type
/// is `EINVAL` before the command is looked at). It needs no privilege, and `quotactl_fd` asks no
/// write access for it: on ext4 without its quota feature it runs the filesystem's `sync_fs`, then
/// `sync_blockdev` and a cache flush (`dquot_quota_sync`).
pub(crate) const Q_SYNCS: [u32; 3] = [0x8000_0100, 0x8000_0101, 0x8000_0102];
/// Frame Relay's (`dlci`, removed in Linux 6.0): `sock_ioctl` loads the module for them the same way.
pub(crate) const SIOCADDDLCI: u32 = 0x8980;
pub(crate) const SIOCDELDLCI: u32 = 0x8981;
/// Installing a seccomp filter: `seccomp()`'s operation, and `prctl()`'s option with its mode (the
/// same numbers on x86_64 and aarch64). Strict mode and the queries install nothing the JIT
/// compiles.
pub(crate) const SECCOMP_SET_MODE_FILTER: u32 = 1;
pub(crate) const PR_SET_SECCOMP: u32 = 22;
pub(crate) const SECCOMP_MODE_FILTER: u32 = 2;
/// `futex`'s requeues, in their shared forms (without `FUTEX_PRIVATE_FLAG`, 128): they move the
/// waiters of a word to another, asking read access alone of both.
pub(crate) const FUTEX_REQUEUE: u32 = 3;
pub(crate) const FUTEX_CMP_REQUEUE: u32 = 4;
/// The requeue-PI pair, shared: a `FUTEX_WAIT_REQUEUE_PI` waiter asks read access alone of the word
/// it waits on (write access of its PI target only), and the kernel's `FUTEX_WAKE` of a word whose
/// queue holds one fails (`EINVAL`) and wakes no one queued past it. Its `FUTEX_CLOCK_REALTIME`
/// form (256) is one the kernel accepts; `FUTEX_CMP_REQUEUE_PI`'s would be refused (`ENOSYS`).
pub(crate) const FUTEX_WAIT_REQUEUE_PI: u32 = 11;
pub(crate) const FUTEX_WAIT_REQUEUE_PI_REALTIME: u32 = 256 | 11;
pub(crate) const FUTEX_CMP_REQUEUE_PI: u32 = 12;
/// `fcntl`'s setting of a descriptor's status flags, those of its open file (shared by every
/// descriptor a dup or a fork made of it, the caller's inherited stdio among them).
pub(crate) const F_SETFL: u32 = 4;
/// `fcntl` commands naming the process the kernel signals when a descriptor is ready.
pub(crate) const F_SETOWN: u32 = 8;
pub(crate) const F_SETOWN_EX: u32 = 15;
/// `fcntl`'s file lease: the holder is told, and every other opener waits, when the file is opened.
pub(crate) const F_SETLEASE: u32 = 1024;
/// `fcntl`'s write-lifetime hint of a file (`F_LINUX_SPECIFIC_BASE + 12`): kept on the inode.
pub(crate) const F_SET_RW_HINT: u32 = 1036;
/// `fcntl`'s buffer size of a pipe (`F_LINUX_SPECIFIC_BASE + 7`): kept on the pipe, which every
/// opener of a FIFO shares.
pub(crate) const F_SETPIPE_SZ: u32 = 1031;
/// `fcntl`'s delegation (`F_LINUX_SPECIFIC_BASE + 16`, Linux 6.19): a lease (`FL_DELEG`) on a file
/// or a directory; before 6.19 the kernel answers `EINVAL`.
pub(crate) const F_SETDELEG: u32 = 1040;
/// `setpriority`'s and `ioprio_set`'s `which` for a single process (with who 0: the caller).
pub(crate) const PRIO_PROCESS: u32 = 0;
pub(crate) const IOPRIO_WHO_PROCESS: u32 = 1;
/// `ioctl` requests that change a file's inode attributes through any descriptor, one opened for
/// reading included: its flags (`chattr`: `FS_IOC_SETFLAGS` and the request of its 32-bit `int`
/// form), its extended flags and project (`FS_IOC_FSSETXATTR`), its generation (`FS_IOC_SETVERSION`
/// and ext4's own request), fs-verity (the file read-only for good) and an encryption policy (an
/// empty directory usable only with a key).
pub(crate) const FS_IOC_SETFLAGS: u32 = 0x4008_6602;
pub(crate) const FS_IOC32_SETFLAGS: u32 = 0x4004_6602;
pub(crate) const FS_IOC_FSSETXATTR: u32 = 0x401c_5820;
pub(crate) const FS_IOC_SETVERSION: u32 = 0x4008_7602;
pub(crate) const EXT4_IOC_SETVERSION: u32 = 0x4008_6604;
pub(crate) const FS_IOC_ENABLE_VERITY: u32 = 0x4080_6685;
pub(crate) const FS_IOC_SET_ENCRYPTION_POLICY: u32 = 0x800c_6613;
/// A file's extents shared with another's of the same data (`FIDEDUPERANGE`, `_IOWR(0x94, 54,
/// struct file_dedupe_range)`): its destination needs only a descriptor opened for reading when
/// the caller owns the file (`may_dedupe_file`), and only the mount's write access stops it.
pub(crate) const FIDEDUPERANGE: u32 = 0xc018_9436;
/// fscrypt's keys, which are per filesystem (its keyring), not per file or mount: adding one, and
/// removing the caller's claim to one (or, as root, every user's), through a descriptor of any file
/// on that filesystem, one opened for reading included.
pub(crate) const FS_IOC_ADD_ENCRYPTION_KEY: u32 = 0xc050_6617;
pub(crate) const FS_IOC_REMOVE_ENCRYPTION_KEY: u32 = 0xc040_6618;
pub(crate) const FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS: u32 = 0xc040_6619;
