//! Verdicts of the generated filters, checked with the interpreter (`run`).

use super::*;
use super::bpf::check_block;

const X86: u32 = 0xc000_003e;
const ARM: u32 = 0xc000_00b7;
const ARCHES: [(Arch, u32); 2] = [(Arch::X86_64, X86), (Arch::Aarch64, ARM)];
const ALL_SOCKETS: [Sockets; 4] = [Sockets::None, Sockets::UnixOnly, Sockets::Inet, Sockets::InetAndUnix];
const ALL_SYS: [Sys; 113] = [
    Sys::Mmap, Sys::MemfdCreate, Sys::Fadvise64, Sys::Sync, Sys::Syncfs, Sys::Quotactl, Sys::QuotactlFd, Sys::Madvise, Sys::ProcessMadvise, Sys::Setrlimit,
    Sys::Socket, Sys::Socketpair, Sys::Bind, Sys::Setsockopt, Sys::Ioctl, Sys::Clone, Sys::Clone3, Sys::Unshare, Sys::Setns, Sys::Keyctl, Sys::AddKey, Sys::RequestKey,
    Sys::Bpf, Sys::PerfEventOpen, Sys::Userfaultfd, Sys::IoSetup, Sys::IoUringSetup, Sys::IoUringEnter, Sys::IoUringRegister,
    Sys::NameToHandleAt, Sys::OpenByHandleAt, Sys::Mount, Sys::Umount2, Sys::PivotRoot, Sys::OpenTree, Sys::OpenTreeAttr, Sys::MoveMount,
    Sys::Fsopen, Sys::Fsconfig, Sys::Fsmount, Sys::Fspick, Sys::MountSetattr, Sys::KexecLoad, Sys::KexecFileLoad,
    Sys::InitModule, Sys::FinitModule, Sys::DeleteModule, Sys::Ptrace, Sys::ProcessVmReadv, Sys::ProcessVmWritev,
    Sys::PidfdGetfd, Sys::Kill, Sys::Tkill, Sys::Tgkill, Sys::RtSigqueueinfo, Sys::RtTgsigqueueinfo, Sys::PidfdOpen,
    Sys::PidfdSendSignal, Sys::Fcntl, Sys::Prlimit64, Sys::Chmod, Sys::ModifyLdt, Sys::MemfdSecret, Sys::Seccomp, Sys::Prctl, Sys::Futex, Sys::FutexRequeue, Sys::Fchmod, Sys::Fchmodat, Sys::Fchmodat2, Sys::Chown,
    Sys::Fchown, Sys::Lchown, Sys::Fchownat, Sys::Setxattr, Sys::Lsetxattr, Sys::Fsetxattr, Sys::Setxattrat, Sys::Removexattr,
    Sys::Lremovexattr, Sys::Fremovexattr, Sys::Removexattrat, Sys::Shmget, Sys::Shmat, Sys::Shmctl, Sys::Shmdt, Sys::Semget,
    Sys::Semop, Sys::Semctl, Sys::Semtimedop, Sys::Msgget, Sys::Msgsnd, Sys::Msgrcv, Sys::Msgctl, Sys::MqOpen, Sys::MqUnlink,
    Sys::MqTimedsend, Sys::MqTimedreceive, Sys::MqNotify, Sys::MqGetsetattr, Sys::Setpriority, Sys::SchedSetparam,
    Sys::SchedSetscheduler, Sys::SchedSetaffinity, Sys::SchedSetattr, Sys::IoprioSet, Sys::Open, Sys::Openat, Sys::Openat2,
    Sys::Creat, Sys::Mknod, Sys::Mknodat, Sys::Pipe2,
];

fn filters() -> Vec<Filter> {
    ALL_SOCKETS.iter().flat_map(|&sockets| [Tracing::OwnTree, Tracing::Denied].map(|tracing| Filter { sockets, tracing, shield: None })).collect()
}

#[test]
fn encoding_is_8_bytes_native_endian() {
    let bytes = encode(&[(0x15, 1, 2, 0x0102_0304)]);
    let mut expect = 0x15u16.to_ne_bytes().to_vec();
    expect.extend([1, 2]);
    expect.extend(0x0102_0304u32.to_ne_bytes());
    assert_eq!(bytes, expect);
}

/// The numbers of the native architecture are the C library's (the other one's were checked
/// against the `libc` crate's aarch64 table when written).
#[test]
fn native_numbers_are_the_c_librarys() {
    let Some(arch) = Arch::native() else { return };
    let libc_numbers: [(Sys, libc::c_long); 90] = [
        (Sys::Setrlimit, libc::SYS_setrlimit), (Sys::Quotactl, libc::SYS_quotactl), (Sys::QuotactlFd, libc::SYS_quotactl_fd), (Sys::Mmap, libc::SYS_mmap), (Sys::MemfdCreate, libc::SYS_memfd_create), (Sys::Fadvise64, libc::SYS_fadvise64), (Sys::Sync, libc::SYS_sync), (Sys::Syncfs, libc::SYS_syncfs), (Sys::Madvise, libc::SYS_madvise), (Sys::ProcessMadvise, libc::SYS_process_madvise),
        (Sys::Socket, libc::SYS_socket), (Sys::Socketpair, libc::SYS_socketpair), (Sys::Bind, libc::SYS_bind), (Sys::Setsockopt, libc::SYS_setsockopt), (Sys::Ioctl, libc::SYS_ioctl), (Sys::Clone, libc::SYS_clone), (Sys::Clone3, libc::SYS_clone3),
        (Sys::Unshare, libc::SYS_unshare), (Sys::Setns, libc::SYS_setns), (Sys::Keyctl, libc::SYS_keyctl), (Sys::AddKey, libc::SYS_add_key),
        (Sys::RequestKey, libc::SYS_request_key), (Sys::Bpf, libc::SYS_bpf), (Sys::PerfEventOpen, libc::SYS_perf_event_open),
        (Sys::Userfaultfd, libc::SYS_userfaultfd), (Sys::IoSetup, libc::SYS_io_setup), (Sys::IoUringSetup, libc::SYS_io_uring_setup), (Sys::IoUringEnter, libc::SYS_io_uring_enter),
        (Sys::IoUringRegister, libc::SYS_io_uring_register), (Sys::NameToHandleAt, libc::SYS_name_to_handle_at),
        (Sys::OpenByHandleAt, libc::SYS_open_by_handle_at), (Sys::Mount, libc::SYS_mount), (Sys::Umount2, libc::SYS_umount2),
        (Sys::PivotRoot, libc::SYS_pivot_root), (Sys::OpenTree, libc::SYS_open_tree), (Sys::MoveMount, libc::SYS_move_mount),
        (Sys::Fsopen, libc::SYS_fsopen), (Sys::Fsconfig, libc::SYS_fsconfig), (Sys::Fsmount, libc::SYS_fsmount), (Sys::Fspick, libc::SYS_fspick),
        (Sys::MountSetattr, libc::SYS_mount_setattr), (Sys::KexecLoad, libc::SYS_kexec_load), (Sys::KexecFileLoad, libc::SYS_kexec_file_load),
        (Sys::InitModule, libc::SYS_init_module), (Sys::FinitModule, libc::SYS_finit_module), (Sys::DeleteModule, libc::SYS_delete_module),
        (Sys::Ptrace, libc::SYS_ptrace), (Sys::ProcessVmReadv, libc::SYS_process_vm_readv), (Sys::ProcessVmWritev, libc::SYS_process_vm_writev),
        (Sys::PidfdGetfd, libc::SYS_pidfd_getfd), (Sys::Kill, libc::SYS_kill), (Sys::Tkill, libc::SYS_tkill),
        (Sys::Tgkill, libc::SYS_tgkill), (Sys::RtSigqueueinfo, libc::SYS_rt_sigqueueinfo),
        (Sys::RtTgsigqueueinfo, libc::SYS_rt_tgsigqueueinfo), (Sys::PidfdOpen, libc::SYS_pidfd_open),
        (Sys::PidfdSendSignal, libc::SYS_pidfd_send_signal), (Sys::Fcntl, libc::SYS_fcntl), (Sys::Prlimit64, libc::SYS_prlimit64),
        (Sys::Shmget, libc::SYS_shmget), (Sys::Shmat, libc::SYS_shmat), (Sys::Shmctl, libc::SYS_shmctl), (Sys::Shmdt, libc::SYS_shmdt),
        (Sys::Semget, libc::SYS_semget), (Sys::Semop, libc::SYS_semop), (Sys::Semctl, libc::SYS_semctl), (Sys::Semtimedop, libc::SYS_semtimedop),
        (Sys::Msgget, libc::SYS_msgget), (Sys::Msgsnd, libc::SYS_msgsnd), (Sys::Msgrcv, libc::SYS_msgrcv), (Sys::Msgctl, libc::SYS_msgctl),
        (Sys::MqOpen, libc::SYS_mq_open), (Sys::MqUnlink, libc::SYS_mq_unlink), (Sys::MqTimedsend, libc::SYS_mq_timedsend),
        (Sys::MqTimedreceive, libc::SYS_mq_timedreceive), (Sys::MqNotify, libc::SYS_mq_notify), (Sys::MqGetsetattr, libc::SYS_mq_getsetattr),
        (Sys::Setpriority, libc::SYS_setpriority), (Sys::SchedSetparam, libc::SYS_sched_setparam),
        (Sys::SchedSetscheduler, libc::SYS_sched_setscheduler), (Sys::SchedSetaffinity, libc::SYS_sched_setaffinity),
        (Sys::SchedSetattr, libc::SYS_sched_setattr), (Sys::IoprioSet, libc::SYS_ioprio_set),
        (Sys::Openat, libc::SYS_openat), (Sys::Openat2, libc::SYS_openat2), (Sys::Mknodat, libc::SYS_mknodat),
        (Sys::Seccomp, libc::SYS_seccomp), (Sys::Prctl, libc::SYS_prctl), (Sys::Futex, libc::SYS_futex), (Sys::Pipe2, libc::SYS_pipe2),
    ];
    // The metadata calls (aarch64 has no chmod, chown or lchown; the `*xattrat` forms are newer
    // than the libc crate's tables: 463 and 466 on every architecture).
    let mut metadata: Vec<(Sys, libc::c_long)> = vec![
        (Sys::Fchmod, libc::SYS_fchmod), (Sys::Fchmodat, libc::SYS_fchmodat), (Sys::Fchown, libc::SYS_fchown),
        (Sys::Fchownat, libc::SYS_fchownat), (Sys::Setxattr, libc::SYS_setxattr), (Sys::Lsetxattr, libc::SYS_lsetxattr),
        (Sys::Fsetxattr, libc::SYS_fsetxattr), (Sys::Removexattr, libc::SYS_removexattr), (Sys::Lremovexattr, libc::SYS_lremovexattr),
        (Sys::Fremovexattr, libc::SYS_fremovexattr), (Sys::Fchmodat2, 452), (Sys::Setxattrat, 463), (Sys::Removexattrat, 466),
        // Newer than the libc crate's tables too (Linux 6.15), the same number everywhere.
        (Sys::OpenTreeAttr, 467),
        // The same number on x86_64 and aarch64 (the generic table).
        (Sys::MemfdSecret, 447),
        // Futex2's requeue (Linux 6.7), newer than the libc crate's tables.
        (Sys::FutexRequeue, 456),
    ];
    #[cfg(target_arch = "x86_64")]
    metadata.extend([(Sys::Chmod, libc::SYS_chmod), (Sys::Chown, libc::SYS_chown), (Sys::Lchown, libc::SYS_lchown), (Sys::ModifyLdt, libc::SYS_modify_ldt)]);
    // Creating calls aarch64 has only in their *at forms.
    #[cfg(target_arch = "x86_64")]
    metadata.extend([(Sys::Open, libc::SYS_open), (Sys::Creat, libc::SYS_creat), (Sys::Mknod, libc::SYS_mknod)]);
    for (sys, nr) in libc_numbers.into_iter().chain(metadata) {
        assert_eq!(sys.number(arch) as libc::c_long, nr, "{sys:?}");
    }
    assert_eq!(libc_numbers.len() + 23, ALL_SYS.len());
}

#[test]
fn every_baseline_rule_says_why() {
    for (sys, _, why) in BASELINE {
        assert!(why.len() > 10, "{sys:?}");
    }
}

#[test]
fn baseline_verdicts_in_every_filter() {
    for (arch, audit) in ARCHES {
        for f in filters() {
            let p = program(arch, f);
            let v = |sys: Sys, a0: u64, a1: u64| run(&p, audit, sys.number(arch), [a0, a1]);
            for (sys, check, _) in BASELINE {
                if let Check::Ret(ret) = check {
                    // A syscall this architecture lacks (modify_ldt on aarch64) is past the table.
                    let ret = if sys.number(arch) > NEWEST_JUDGED { RET_ENOSYS } else { *ret };
                    assert_eq!(v(*sys, 0, 0), ret, "{sys:?} in {f:?}");
                }
            }
            assert_eq!(v(Sys::MemfdSecret, 0, 0), RET_EPERM, "memfd_secret splits the host's direct map");
            assert_eq!(v(Sys::IoSetup, 65536, 0), RET_ENOSYS, "io_setup takes from the machine's aio-max-nr");
            assert_eq!(v(Sys::Clone3, 0, 0), RET_ENOSYS, "clone3 falls back to clone");
            assert_eq!(v(Sys::Clone, 0x0120_0011, 0), RET_ALLOW, "fork-style clone");
            assert_eq!(v(Sys::Clone, 0x003d_0f00, 0), RET_ALLOW, "thread-style clone");
            // rev43: a process sharing its parent's descriptor table (CLONE_FILES without
            // CLONE_THREAD) forges a POSIX lock whose owner reads as pid 0 (see the baseline).
            assert_eq!(v(Sys::Clone, 0x400 | 0x11, 0), RET_EPERM, "clone CLONE_FILES, not a thread");
            assert_eq!(v(Sys::Clone, 0xffff_ffff_0000_0000 | 0x400 | 0x11, 0), RET_EPERM, "high bits ignored");
            assert_eq!(v(Sys::Clone, 0x4111, 0), RET_ALLOW, "vfork-style clone (posix_spawn)");
            assert_eq!(v(Sys::Clone, 0x0001_0400, 0), RET_ALLOW, "CLONE_FILES with CLONE_THREAD");
            for flag in [0x80, 0x2_0000, 0x200_0000, 0x400_0000, 0x800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000] {
                assert_eq!(v(Sys::Clone, 0x11 | flag, 0), RET_EPERM, "clone CLONE_NEW* {flag:#x}");
                assert_eq!(v(Sys::Unshare, flag, 0), RET_EPERM, "unshare {flag:#x}");
                assert_eq!(v(Sys::Unshare, 0xffff_ffff_0000_0000 | flag, 0), RET_EPERM, "high bits ignored");
            }
            assert_eq!(v(Sys::Unshare, 0x400, 0), RET_ALLOW, "unshare(CLONE_FILES)");
            assert_eq!(v(Sys::Ioctl, 0, TIOCSTI as u64), RET_EPERM, "TIOCSTI");
            assert_eq!(v(Sys::Ioctl, 0, 0xffff_ffff_0000_0000 | TIOCSTI as u64), RET_EPERM, "TIOCSTI, high bits ignored");
            assert_eq!(v(Sys::Ioctl, 0, TIOCLINUX as u64), RET_EPERM, "TIOCLINUX");
            assert_eq!(v(Sys::Ioctl, 0, 0x5401), RET_ALLOW, "TCGETS");
            let zero = if arch == Arch::X86_64 { RET_ALLOW } else { RET_ENOSYS };
            assert_eq!(run(&p, audit, 0, [0, 0]), zero, "read (x86_64, allowed) / io_setup (aarch64, refused)");
            assert_eq!(run(&p, audit, 63, [0, 0]), RET_ALLOW, "read (aarch64) / uname (x86_64)");
            assert_eq!(run(&p, audit + 1, 0, [0, 0]), RET_EPERM, "foreign arch");
            assert_eq!(run(&p, 0x4000_0003, 0, [0, 0]), RET_EPERM, "i386");
        }
    }
}

/// Socket filters: found by an attacker's review, a command attached a classic BPF filter to each of
/// ~8,000 sockets and used up the machine's BPF JIT budget (`net.core.bpf_jit_limit`), and every
/// later run's seccomp filter and every unprivileged host user's failed with ENOTSUPP. The options
/// that attach a program at `SOL_SOCKET` are refused in every filter; the same numbers at other
/// levels (26 is `IPV6_V6ONLY`), and the harmless options (detach, lock), are not.
#[test]
fn socket_filters_refused_in_every_filter() {
    const SOL_SOCKET: u64 = 1;
    const IPPROTO_IPV6: u64 = 41;
    for (arch, audit) in ARCHES {
        for f in filters() {
            let p = program(arch, f);
            let v = |level: u64, opt: u64| run3(&p, audit, Sys::Setsockopt.number(arch), [3, level, opt]);
            for (opt, name) in [(26, "SO_ATTACH_FILTER"), (50, "SO_ATTACH_BPF"), (51, "SO_ATTACH_REUSEPORT_CBPF"), (52, "SO_ATTACH_REUSEPORT_EBPF")] {
                assert_eq!(v(SOL_SOCKET, opt), RET_EPERM, "{name} in {f:?}");
                assert_eq!(v(0xffff_ffff_0000_0000 | SOL_SOCKET, 0xffff_ffff_0000_0000 | opt), RET_EPERM, "{name}, high halves ignored as the kernel's ints");
            }
            for (opt, name) in [(2, "SO_REUSEADDR"), (15, "SO_REUSEPORT"), (27, "SO_DETACH_FILTER"), (44, "SO_LOCK_FILTER")] {
                assert_eq!(v(SOL_SOCKET, opt), RET_ALLOW, "{name} in {f:?}");
            }
            assert_eq!(v(IPPROTO_IPV6, 26), RET_ALLOW, "IPV6_V6ONLY");
        }
    }
}

/// Multicast joins (found by an attacker's review, kern32): each join adds its group to the
/// interface's list, and closing a socket leaves its groups with RTNL held, walking that list for
/// each; a command with many sockets held the machine's networking lock 90 to 190 ms per socket
/// closed. The joining options are refused at both IP levels, in every filter; the sending options
/// and the same numbers at other levels are not.
#[test]
fn multicast_joins_refused_in_every_filter() {
    const SOL_SOCKET: u64 = 1;
    const IPPROTO_IP: u64 = 0;
    const IPPROTO_IPV6: u64 = 41;
    for (arch, audit) in ARCHES {
        for f in filters() {
            let p = program(arch, f);
            let v = |level: u64, opt: u64| run3(&p, audit, Sys::Setsockopt.number(arch), [3, level, opt]);
            for (opt, name) in [(35, "IP_ADD_MEMBERSHIP"), (39, "IP_ADD_SOURCE_MEMBERSHIP"), (42, "MCAST_JOIN_GROUP"), (46, "MCAST_JOIN_SOURCE_GROUP")] {
                assert_eq!(v(IPPROTO_IP, opt), RET_EPERM, "{name} in {f:?}");
                assert_eq!(v(0xffff_ffff_0000_0000 | IPPROTO_IP, 0xffff_ffff_0000_0000 | opt), RET_EPERM, "{name}, high halves ignored as the kernel's ints");
            }
            for (opt, name) in [(20, "IPV6_ADD_MEMBERSHIP"), (42, "MCAST_JOIN_GROUP"), (46, "MCAST_JOIN_SOURCE_GROUP")] {
                assert_eq!(v(IPPROTO_IPV6, opt), RET_EPERM, "IPv6 {name} in {f:?}");
            }
            for (level, opt, name) in [(IPPROTO_IP, 33, "IP_MULTICAST_TTL"), (IPPROTO_IP, 34, "IP_MULTICAST_LOOP"), (IPPROTO_IP, 36, "IP_DROP_MEMBERSHIP"), (IPPROTO_IP, 2, "IP_TTL"), (IPPROTO_IPV6, 18, "IPV6_MULTICAST_HOPS"), (IPPROTO_IPV6, 21, "IPV6_DROP_MEMBERSHIP"), (IPPROTO_IPV6, 26, "IPV6_V6ONLY"), (SOL_SOCKET, 20, "SO_RCVLOWAT"), (6, 42, "TCP_QUICKACK... (42 at IPPROTO_TCP)")] {
                assert_eq!(v(level, opt), RET_ALLOW, "{name} in {f:?}");
            }
        }
    }
}

/// The host's huge page pool (found by an attacker's review, kern32): one budget for the whole
/// machine that no rlimit or memory cgroup counts; a default run took all of it. MAP_HUGETLB (in
/// mmap's flags), MFD_HUGETLB and SHM_HUGETLB get ENOMEM, what a host without a pool answers, in
/// every filter (the Landlock mode refuses shmget whole, EPERM); the same calls without them pass.
#[test]
fn huge_pages_refused_in_every_filter() {
    const ENOMEM: u32 = 0x0005_0000 | 12;
    const MAP_HUGETLB: u64 = 0x40000;
    const MAP_PRIVATE_ANON: u64 = 0x02 | 0x20;
    const MFD_HUGETLB: u64 = 4;
    const SHM_HUGETLB: u64 = 0o4000;
    let (mmap, memfd, shmget) = (libc::SYS_mmap as u32, libc::SYS_memfd_create as u32, libc::SYS_shmget as u32);
    let native = Arch::native().expect("a filtered arch");
    let audit = ARCHES.iter().find(|(a, _)| *a == native).map(|(_, audit)| *audit).unwrap();
    for f in filters() {
        let p = program(native, f);
        assert_eq!(run4(&p, audit, mmap, [0, 2 << 20, 3, MAP_PRIVATE_ANON | MAP_HUGETLB]), ENOMEM, "mmap MAP_HUGETLB in {f:?}");
        assert_eq!(run4(&p, audit, mmap, [0, 2 << 20, 3, 0xffff_ffff_0000_0000 | MAP_PRIVATE_ANON | MAP_HUGETLB | (21 << 26)]), ENOMEM, "with a size in the flags, in {f:?}");
        assert_eq!(run4(&p, audit, mmap, [0, 2 << 20, 3, MAP_PRIVATE_ANON]), RET_ALLOW, "an ordinary mmap in {f:?}");
        assert_eq!(run(&p, audit, memfd, [0, MFD_HUGETLB | 1]), ENOMEM, "memfd_create MFD_HUGETLB in {f:?}");
        assert_eq!(run(&p, audit, memfd, [0, 1]), RET_ALLOW, "memfd_create in {f:?}");
        let (huge, plain) = (run3(&p, audit, shmget, [0, 2 << 20, 0o1000 | SHM_HUGETLB | 0o600]), run3(&p, audit, shmget, [0, 4096, 0o1000 | 0o600]));
        match f.tracing {
            Tracing::OwnTree => assert_eq!((huge, plain), (ENOMEM, RET_ALLOW), "shmget in {f:?}"),
            Tracing::Denied => assert_eq!((huge, plain), (RET_EPERM, RET_EPERM), "the Landlock mode refuses shmget whole"),
        }
    }
}

/// The host's page cache (found by an attacker's review, kern33): posix_fadvise's DONTNEED and
/// madvise's and process_madvise's MADV_COLD and MADV_PAGEOUT drop pages every process shares, of
/// files the command may only read; each is answered 0 without the call in every filter, the high
/// half of the advice ignored as the kernel ignores it; other advice passes.
#[test]
fn page_cache_drops_answered_done_in_every_filter() {
    const DONE: u32 = 0x0005_0000;
    let native = Arch::native().expect("a filtered arch");
    let audit = ARCHES.iter().find(|(a, _)| *a == native).map(|(_, audit)| *audit).unwrap();
    let fadvise = Sys::Fadvise64.number(native);
    let (madvise, process_madvise) = (libc::SYS_madvise as u32, libc::SYS_process_madvise as u32);
    for f in filters() {
        let p = program(native, f);
        for high in [0, 0xffff_ffff_0000_0000] {
            assert_eq!(run4(&p, audit, fadvise, [3, 0, 0, high | 4]), DONE, "POSIX_FADV_DONTNEED in {f:?}");
            assert_eq!(run3(&p, audit, madvise, [0x1000, 4096, high | 21]), DONE, "MADV_PAGEOUT in {f:?}");
            assert_eq!(run3(&p, audit, madvise, [0x1000, 4096, high | 20]), DONE, "MADV_COLD in {f:?}");
            assert_eq!(run4(&p, audit, process_madvise, [3, 0x1000, 1, high | 21]), DONE, "process_madvise MADV_PAGEOUT in {f:?}");
        }
        for advice in [0, 1, 2, 3, 5] {
            assert_eq!(run4(&p, audit, fadvise, [3, 0, 0, advice]), RET_ALLOW, "posix_fadvise {advice} in {f:?}");
        }
        for advice in [4, 8, 14, 25] {
            assert_eq!(run3(&p, audit, madvise, [0x1000, 4096, advice]), RET_ALLOW, "madvise {advice} in {f:?}");
        }
    }
}

/// The host's core helper (found by an attacker's review, kern33): RLIMIT_CORE stays the 1 byte every
/// run sets, which alone keeps the kernel from piping a crash to a root program of the host.
/// setrlimit of it is answered 0 without the call; prlimit64 of the caller's, given a new limit,
/// too (both halves of the pointer judged), or EPERM when the old one is asked for as well;
/// reading it and every other limit pass; another process's pass in the bwrap modes and are
/// refused in the Landlock mode, as before.
#[test]
fn core_limit_kept_in_every_filter() {
    const DONE: u32 = 0x0005_0000;
    const CORE: u64 = 4;
    let native = Arch::native().expect("a filtered arch");
    let audit = ARCHES.iter().find(|(a, _)| *a == native).map(|(_, audit)| *audit).unwrap();
    let (setrlimit, prlimit) = (libc::SYS_setrlimit as u32, libc::SYS_prlimit64 as u32);
    for f in filters() {
        let p = program(native, f);
        assert_eq!(run(&p, audit, setrlimit, [CORE, 0x7fff_0000_1000]), DONE, "setrlimit(RLIMIT_CORE) in {f:?}");
        assert_eq!(run(&p, audit, setrlimit, [0xffff_ffff_0000_0000 | CORE, 0x1000]), DONE, "the resource's high half ignored, in {f:?}");
        assert_eq!(run(&p, audit, setrlimit, [7, 0x1000]), RET_ALLOW, "setrlimit(RLIMIT_NOFILE) in {f:?}");
        for new in [0x1000, 0x7f00_0000_0000] {
            assert_eq!(run4(&p, audit, prlimit, [0, CORE, new, 0]), DONE, "prlimit64 setting RLIMIT_CORE at {new:#x} in {f:?}");
            assert_eq!(run4(&p, audit, prlimit, [0, CORE, new, 0x7f00_0000_0000]), RET_EPERM, "with the old one asked for, in {f:?}");
            assert_eq!(run4(&p, audit, prlimit, [0, CORE, new, 0x2000]), RET_EPERM, "with the old one asked for, in {f:?}");
        }
        assert_eq!(run4(&p, audit, prlimit, [0, CORE, 0, 0x2000]), RET_ALLOW, "reading RLIMIT_CORE in {f:?}");
        assert_eq!(run4(&p, audit, prlimit, [0, 7, 0x1000, 0x2000]), RET_ALLOW, "another limit of its own in {f:?}");
        let other = run4(&p, audit, prlimit, [42, 7, 0x1000, 0]);
        match f.tracing {
            Tracing::OwnTree => assert_eq!(other, RET_ALLOW, "another process's limits under bwrap"),
            Tracing::Denied => assert_eq!(other, RET_EPERM, "another process's limits in the Landlock mode"),
        }
    }
}

/// RLIMIT_CORE set through prlimit64 with a pid that is not 0 (found by an attacker's review,
/// rfix33): the command's own pid (`prlimit(getpid(), ...)`) or a child's names the same process
/// tree a pid of 0 does, and the filter cannot tell them from another's; lowered to 0 that way, the
/// next crash was piped to the host's core helper (8.7 MB of a Python's core streamed into a root
/// process). Setting it for any pid but 0 is refused; reading it and every other limit's setting of
/// another process pass under bwrap as before.
#[test]
fn core_limit_kept_through_a_pid() {
    const CORE: u64 = 4;
    let native = Arch::native().expect("a filtered arch");
    let audit = ARCHES.iter().find(|(a, _)| *a == native).map(|(_, audit)| *audit).unwrap();
    let prlimit = libc::SYS_prlimit64 as u32;
    for f in filters() {
        let p = program(native, f);
        for pid in [1, 42, 0xffff_ffff] {
            assert_eq!(run4(&p, audit, prlimit, [pid, CORE, 0x1000, 0]), RET_EPERM, "prlimit64({pid}, RLIMIT_CORE, new, NULL) in {f:?}");
            assert_eq!(run4(&p, audit, prlimit, [pid, CORE, 0x7f00_0000_0000, 0x2000]), RET_EPERM, "prlimit64({pid}, RLIMIT_CORE, new, old) in {f:?}");
        }
        let read = run4(&p, audit, prlimit, [42, CORE, 0, 0x2000]);
        match f.tracing {
            Tracing::OwnTree => assert_eq!(read, RET_ALLOW, "reading another process's RLIMIT_CORE under bwrap"),
            Tracing::Denied => assert_eq!(read, RET_EPERM, "another process's limits in the Landlock mode"),
        }
    }
}

/// The families `socket()` may create in each mode (found by an attacker's review: AF_VSOCK passed
/// with the network off and with an allow-list): an allow-list, the high half of the domain ignored
/// as the kernel ignores it.
#[test]
fn socket_rules() {
    const VSOCK: u64 = 40;
    for (arch, audit) in ARCHES {
        let nr = Sys::Socket.number(arch);
        let verdict = |sockets: Sockets, family: u64| run(&program(arch, Filter { sockets, tracing: Tracing::OwnTree, shield: None }), audit, nr, [family, 1]);
        for family in [1, 0x1_0000_0001] {
            assert_eq!(verdict(Sockets::None, family), RET_EPERM);
            assert_eq!(verdict(Sockets::UnixOnly, family), RET_ALLOW, "the kernel sees AF_UNIX");
            assert_eq!(verdict(Sockets::Inet, family), RET_EPERM, "AF_UNIX, high bits ignored by the kernel");
            assert_eq!(verdict(Sockets::InetAndUnix, family), RET_ALLOW);
        }
        for family in [2, 10, 16, 0x1_0000_0002] {
            assert_eq!(verdict(Sockets::None, family), RET_EPERM, "{family}");
            assert_eq!(verdict(Sockets::UnixOnly, family), RET_EPERM, "{family}");
            assert_eq!(verdict(Sockets::Inet, family), RET_ALLOW, "{family}");
            assert_eq!(verdict(Sockets::InetAndUnix, family), RET_ALLOW, "{family}");
        }
        // Every other family up to AF_MAX and beyond: vsock, packet, ALG, CAN, Bluetooth, TIPC...
        for family in (0..64).chain([VSOCK | 0x1_0000_0000, 0x8000_0000]).filter(|f| ![1, 2, 10, 16].contains(&(f & 0xffff_ffff))) {
            for sockets in ALL_SOCKETS {
                assert_eq!(verdict(sockets, family), RET_EPERM, "{sockets:?} family {family:#x}");
            }
        }
    }
}

/// The protocols `socket()` may ask for in the families it may create (found by an attacker's
/// review, kern27: any protocol passed, and on a host that autoloads modules an unregistered one
/// makes the kernel load its module for good, SCTP's, DCCP's, nfnetlink's...). The rest get
/// EPROTONOSUPPORT, what a kernel without them answers; the high half of the protocol is ignored as
/// the kernel ignores it (an `int`), and so are the type's flags.
#[test]
fn socket_protocols() {
    const EPROTONOSUPPORT: u32 = 0x0005_0000 | 93;
    const INET_ALLOWED: [u64; 6] = [0, 6, 17, 1, 58, 262];
    const NETLINK_ALLOWED: [u64; 2] = [0, 15];
    const FLAGS: u64 = 0x800 | 0x8_0000; // SOCK_NONBLOCK | SOCK_CLOEXEC
    for (arch, audit) in ARCHES {
        let nr = Sys::Socket.number(arch);
        for f in filters() {
            let p = program(arch, f);
            let v = |family: u64, kind: u64, protocol: u64| run3(&p, audit, nr, [family, kind, protocol]);
            let inet = matches!(f.sockets, Sockets::Inet | Sockets::InetAndUnix);
            for family in [2, 10, 0x1_0000_0002, 0xffff_ffff_0000_000a] {
                for protocol in 0..300u64 {
                    for high in [0, 0x1_0000_0000, 0xffff_ffff_0000_0000] {
                        let expect = match (inet, INET_ALLOWED.contains(&protocol)) {
                            (false, _) => RET_EPERM,
                            (true, true) => RET_ALLOW,
                            (true, false) => EPROTONOSUPPORT,
                        };
                        for kind in [1, 2, 3, 1 | FLAGS] {
                            assert_eq!(v(family, kind, high | protocol), expect, "{f:?} family {family:#x} type {kind:#x} protocol {:#x}", high | protocol);
                        }
                    }
                }
                assert_eq!(v(family, 1, 0x8000_0000), if inet { EPROTONOSUPPORT } else { RET_EPERM }, "{f:?} a negative protocol");
            }
            for family in [16, 0x1_0000_0010] {
                for protocol in (0..40u64).chain([0x1_0000_0009, 0xffff_ffff_0000_0015, 0x1_0000_0000, 0xffff_ffff]) {
                    let expect = match (inet, NETLINK_ALLOWED.contains(&(protocol & 0xffff_ffff))) {
                        (false, _) => RET_EPERM,
                        (true, true) => RET_ALLOW,
                        (true, false) => EPROTONOSUPPORT,
                    };
                    for kind in [3, 2, 3 | FLAGS] {
                        assert_eq!(v(family, kind, protocol), expect, "{f:?} netlink type {kind:#x} protocol {protocol:#x}");
                    }
                }
            }
            // AF_UNIX: its protocol is the kernel's to judge (0 or PF_UNIX); it loads no module.
            let unix = matches!(f.sockets, Sockets::UnixOnly | Sockets::InetAndUnix);
            for protocol in [0, 1, 132] {
                assert_eq!(v(1, 1, protocol), if unix { RET_ALLOW } else { RET_EPERM }, "{f:?} AF_UNIX protocol {protocol}");
            }
            // Other families stay EPERM whatever the protocol.
            for protocol in [0, 6, 132] {
                assert_eq!(v(40, 1, protocol), RET_EPERM, "{f:?} AF_VSOCK protocol {protocol}");
            }
        }
    }
}

/// The types an Internet socket may be of (found by an attacker's review, kern28): the kernel turns
/// `socket(AF_INET, SOCK_PACKET, p)` into a packet socket (`__sock_create`'s "compatibility"
/// remap to `PF_PACKET`, before the family's module is looked up), so the family allow-list was
/// passed with protocol 0: the kernel reached `packet_create` (its EPERM for want of CAP_NET_RAW
/// was all that answered) and, where `af_packet` is a module, loaded it first, for good. And
/// `socket(AF_INET or AF_INET6, SOCK_DCCP, 0)` asks for `net-pf-2-proto-0-type-6`, an alias of the
/// `dccp` module (CVE-2017-6074's), which the protocol rule never saw. Only stream, datagram and raw
/// sockets pass; every other type gets ESOCKTNOSUPPORT, the kernel's answer for a type it lacks.
/// The type's flags and its high half are ignored as the kernel ignores them.
#[test]
fn socket_types() {
    const ESOCKTNOSUPPORT: u32 = 0x0005_0000 | 94;
    const FLAGS: u64 = 0x800 | 0x8_0000; // SOCK_NONBLOCK | SOCK_CLOEXEC
    for (arch, audit) in ARCHES {
        let nr = Sys::Socket.number(arch);
        for f in filters().into_iter().filter(|f| matches!(f.sockets, Sockets::Inet | Sockets::InetAndUnix)) {
            let p = program(arch, f);
            let v = |family: u64, kind: u64, protocol: u64| run3(&p, audit, nr, [family, kind, protocol]);
            for family in [2, 10, 0x1_0000_0002] {
                for high in [0, 0x1_0000_0000] {
                    for kind in [1, 2, 3] {
                        for flags in [0, FLAGS] {
                            assert_eq!(v(family, high | kind | flags, 0), RET_ALLOW, "{f:?} family {family:#x} type {:#x}", high | kind | flags);
                        }
                    }
                    // SOCK_RDM, SOCK_SEQPACKET (SCTP), SOCK_DCCP, SOCK_PACKET (a packet socket).
                    for kind in [4, 5, 6, 10, 0] {
                        for flags in [0, FLAGS] {
                            for protocol in [0, 6] {
                                assert_eq!(v(family, high | kind | flags, protocol), ESOCKTNOSUPPORT, "{f:?} family {family:#x} type {:#x} protocol {protocol}", high | kind | flags);
                            }
                        }
                    }
                }
            }
            // Netlink's and Unix's types are their own kernel code's to judge; they load nothing.
            assert_eq!(v(16, 2, 0), RET_ALLOW, "{f:?} netlink datagram");
            if f.sockets == Sockets::InetAndUnix {
                assert_eq!(v(1, 5, 0), RET_ALLOW, "{f:?} Unix seqpacket");
            }
        }
    }
}

/// Found by an attacker's review: with Unix sockets refused, `socketpair(AF_UNIX, SOCK_DGRAM)` was
/// allowed, and its sockets sent to any datagram socket of the host by path. Stream and seqpacket
/// pairs stay allowed (connected to each other, they reach nobody); with Unix sockets allowed,
/// every type; no other domain ever.
#[test]
fn socketpair_rules() {
    const NONBLOCK_CLOEXEC: u64 = 0x800 | 0x8_0000;
    for (arch, audit) in ARCHES {
        let nr = Sys::Socketpair.number(arch);
        for sockets in ALL_SOCKETS {
            let p = program(arch, Filter { sockets, tracing: Tracing::Denied, shield: None });
            let verdict = |domain: u64, kind: u64| run(&p, audit, nr, [domain, kind]);
            let unix = matches!(sockets, Sockets::UnixOnly | Sockets::InetAndUnix);
            for kind in [1, 5, 1 | NONBLOCK_CLOEXEC, 5 | NONBLOCK_CLOEXEC, 0xffff_ffff_0000_0001] {
                assert_eq!(verdict(1, kind), RET_ALLOW, "{sockets:?} AF_UNIX type {kind:#x}");
                assert_eq!(verdict(0x1_0000_0001, kind), RET_ALLOW, "{sockets:?} high bits of the domain");
            }
            for kind in [2, 3, 2 | NONBLOCK_CLOEXEC, 3 | 0x800, 0xffff_ffff_0000_0002] {
                assert_eq!(verdict(1, kind), if unix { RET_ALLOW } else { RET_EPERM }, "{sockets:?} AF_UNIX type {kind:#x}");
            }
            for domain in [2, 10, 16, 30, 40] {
                assert_eq!(verdict(domain, 1), RET_EPERM, "{sockets:?} domain {domain}");
            }
        }
    }
}

#[test]
fn tracing_rules() {
    for (arch, audit) in ARCHES {
        for sockets in ALL_SOCKETS {
            let own = program(arch, Filter { sockets, tracing: Tracing::OwnTree, shield: None });
            let denied = program(arch, Filter { sockets, tracing: Tracing::Denied, shield: None });
            for sys in [Sys::Ptrace, Sys::ProcessVmReadv, Sys::ProcessVmWritev, Sys::PidfdGetfd] {
                assert_eq!(run(&own, audit, sys.number(arch), [0, 0]), RET_ALLOW, "{sys:?}: debuggers of the own tree");
                assert_eq!(run(&denied, audit, sys.number(arch), [0, 0]), RET_EPERM, "{sys:?}");
            }
        }
    }
}

#[test]
fn x32_is_refused_whole() {
    for f in filters() {
        let p = program(Arch::X86_64, f);
        assert_eq!(run(&p, X86, X32_SYSCALL_BIT | 41, [2, 0]), RET_EPERM, "x32 socket");
        assert_eq!(run(&p, X86, X32_SYSCALL_BIT, [0, 0]), RET_EPERM, "x32 anything");
        assert_eq!(run(&program(Arch::Aarch64, f), ARM, X32_SYSCALL_BIT, [0, 0]), RET_ENOSYS, "no x32 on aarch64: a number past the table");
    }
}

/// Found by an attacker's review: `open_tree_attr` (Linux 6.15) was not in the table and gave the
/// command an `O_PATH` descriptor of the mount API. It is refused now, and any syscall newer than the
/// table gets ENOSYS, as on a kernel without it.
#[test]
fn syscalls_newer_than_the_table_are_not_allowed() {
    for f in filters() {
        for (arch, audit) in [(Arch::X86_64, X86), (Arch::Aarch64, ARM)] {
            let p = program(arch, f);
            assert_eq!(run(&p, audit, 467, [0, 0]), RET_EPERM, "open_tree_attr");
            for nr in [NEWEST_JUDGED + 1, 468, 469, 470, 500, 1023, 0x3fff_ffff] {
                assert_eq!(run(&p, audit, nr, [0, 0]), RET_ENOSYS, "{arch:?} {nr}");
            }
            assert_eq!(run(&p, audit, 462, [0, 0]), RET_ALLOW, "{arch:?}: mseal, older than the table's newest");
        }
        assert_eq!(run(&program(Arch::X86_64, f), X86, 154, [1, 0]), RET_EPERM, "modify_ldt");
    }
}

#[test]
fn sockets_words_round_trip() {
    for s in ALL_SOCKETS {
        assert_eq!(Sockets::from_word(s.word()), Some(s));
    }
    assert_eq!(Sockets::from_word("tcp"), None);
}

/// The start of the x86_64 program, pinned: the arch check, the x32 check, the first split.
#[test]
fn x86_64_program_start_pinned() {
    let p = program(Arch::X86_64, Filter { sockets: Sockets::Inet, tracing: Tracing::OwnTree, shield: None });
    assert_eq!(
        p[..6],
        [(0x20, 0, 0, 4), (0x15, 1, 0, 0xc000_003e), (0x06, 0, 0, 0x0005_0001), (0x20, 0, 0, 0), (0x45, 0, 1, 0x4000_0000), (0x06, 0, 0, 0x0005_0001)]
    );
    assert_eq!(p[6].0, 0x35, "a binary search by number");
}

/// Every syscall number, against a plain linear reading of the rules: the search finds the same
/// verdict, and takes few steps.
#[test]
fn the_search_agrees_with_the_rules_for_every_number() {
    for (arch, audit) in ARCHES {
        for f in filters() {
            let p = program(arch, f);
            let rules = rules(f);
            for nr in 0..600u32 {
                for args in [[0, 0], [1, 0], [2, 0], [1, 1], [1, 2], [40, 1], [0x5000_0011, 0], [0, TIOCSTI as u64]] {
                    let expect = match rules.iter().find(|(sys, _)| sys.number(arch) == nr) {
                        _ if nr > NEWEST_JUDGED => RET_ENOSYS,
                        None => RET_ALLOW,
                        Some((_, check)) => run(&check_block(*check, arch), audit, nr, args),
                    };
                    assert_eq!(run(&p, audit, nr, args), expect, "{arch:?} {f:?} nr {nr} args {args:?}");
                }
            }
        }
    }
    let longest = ALL_SOCKETS.map(|sockets| program(Arch::X86_64, Filter { sockets, tracing: Tracing::Denied, shield: Some(4_000_000) }).len()).into_iter().max().unwrap_or(0);
    // The Landlock mode's, with the shield: 225 when written, 278 with the IPC rules, 337 with the
    // scheduling and inode-attribute ones, 388 with the socket filters', 419 with the network on
    // and its sockets' protocols, 438 with their types (and a long jump past the lower half), 456
    // with the seccomp filters' two rules, 468 with the futex requeues' (kern30), 484 with the
    // multicast joins' and 501 with the huge pages' (kern32), 524 with the page cache's three (kern33), and sync's and syncfs' (kern34), 572 with the quota syncs' two (kern39), 575 with the allocation map's and btrfs's two snapshots (kern39, kern40), 602 with KSM's (kern45) and the notification pipes' (kern45b). Whatever its length, a syscall costs the binary search's few
    // comparisons; what grows is the kernel's emulation of it for every number when it is
    // installed. The bound catches a runaway rule.
    assert!(longest < 650, "{longest} instructions");
}

/// The Landlock mode below ABI 6: no signal reaches the supervisor from the command, in any form;
/// every other process, its own group and the command's tree stay signalable.
#[test]
fn the_shield_refuses_every_way_to_signal_the_supervisor_and_nothing_else() {
    let sup: u32 = 4242;
    for (arch, audit) in ARCHES {
        let shielded = program(arch, Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(sup) });
        let open = program(arch, Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: None });
        let verdict = |p: &[Insn], sys: Sys, arg0: u32| run(p, audit, sys.number(arch), [u64::from(arg0), 9]);
        for sys in [Sys::Kill, Sys::Tkill, Sys::Tgkill, Sys::RtSigqueueinfo, Sys::RtTgsigqueueinfo, Sys::PidfdOpen] {
            assert_eq!(verdict(&shielded, sys, sup), RET_EPERM, "{sys:?} to the supervisor");
            assert_eq!(verdict(&shielded, sys, sup + 1), RET_ALLOW, "{sys:?} to another process");
            assert_eq!(verdict(&open, sys, sup), RET_ALLOW, "{sys:?} without the shield");
        }
        assert_eq!(verdict(&shielded, Sys::Kill, sup.wrapping_neg()), RET_EPERM, "its process group");
        assert_eq!(verdict(&shielded, Sys::Kill, u32::MAX), RET_EPERM, "kill(-1)");
        assert_eq!(verdict(&shielded, Sys::Kill, 0), RET_ALLOW, "the command's own group");
        assert_eq!(verdict(&shielded, Sys::Kill, (sup + 1).wrapping_neg()), RET_ALLOW, "another group");
        assert_eq!(verdict(&shielded, Sys::PidfdSendSignal, 3), RET_EPERM, "any pidfd");
        assert_eq!(verdict(&shielded, Sys::Prlimit64, sup), RET_EPERM, "its limits");
        assert_eq!(verdict(&shielded, Sys::Prlimit64, 0), RET_ALLOW, "the command's own limits");
        // The kernel signals a descriptor's owner: no owner can be set (fcntl's and ioctl's forms).
        let second = |p: &[Insn], sys: Sys, arg1: u32| run(p, audit, sys.number(arch), [3, u64::from(arg1)]);
        for (sys, request) in [(Sys::Fcntl, 8), (Sys::Fcntl, 15), (Sys::Ioctl, 0x8901), (Sys::Ioctl, 0x8902), (Sys::Ioctl, TIOCSTI)] {
            assert_eq!(second(&shielded, sys, request), RET_EPERM, "{sys:?} {request:#x}");
        }
        for (sys, request) in [(Sys::Fcntl, 1), (Sys::Fcntl, 10), (Sys::Ioctl, 0x5401)] {
            assert_eq!(second(&shielded, sys, request), RET_ALLOW, "{sys:?} {request:#x}");
        }
        assert_eq!(second(&open, Sys::Fcntl, 8), RET_ALLOW, "F_SETOWN without the shield");
        assert_eq!(second(&open, Sys::Ioctl, 0x8901), RET_ALLOW, "FIOSETOWN without the shield");
    }
}

/// Found by an attacker's review: Landlock (to ABI 7) governs no owners or extended attributes,
/// so in the Landlock mode a command could give away a file or make a binary capable outside every
/// writable root, and could `prlimit` the host process to death. The Landlock filter refuses them;
/// the bwrap filter (its mounts refuse them with EROFS) does not. Set-ID modes are refused in every
/// filter (`every_filter_refuses_set_id_modes`).
#[test]
fn the_landlock_filter_refuses_what_landlock_does_not_govern() {
    for (arch, audit) in ARCHES {
        let landlock = program(arch, Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: None });
        let bwrap = program(arch, Filter { sockets: Sockets::InetAndUnix, tracing: Tracing::OwnTree, shield: None });
        for (sys, _, why) in LANDLOCK_GAPS {
            assert!(why.len() > 10, "{sys:?}");
            let nr = sys.number(arch);
            if nr == u32::MAX {
                continue;
            }
            // The mode is the second argument of chmod and fchmod, the third of the *at forms.
            assert_eq!(run3(&landlock, audit, nr, [4242, 0o4755, 0o2755]), RET_EPERM, "{sys:?}");
            assert_eq!(run3(&bwrap, audit, nr, [4242, 0o4755, 0o2755]), RET_ALLOW, "{sys:?} under bwrap");
        }
        // Plain modes stay settable (git gives a lock file its config's mode).
        for sys in [Sys::Fchmod, Sys::Fchmodat, Sys::Fchmodat2] {
            assert_eq!(run3(&landlock, audit, sys.number(arch), [3, 0o755, 0o644]), RET_ALLOW, "{sys:?}");
        }
        assert_eq!(run(&landlock, audit, Sys::Prlimit64.number(arch), [0, 0]), RET_ALLOW, "the command's own limits");
    }
}

/// Found by an attacker's review: the Landlock mode shares the host's IPC namespace, and the
/// command read, rewrote and removed a host process's SysV objects and POSIX message queues. Its
/// filter refuses every IPC syscall; the bwrap filter leaves them to the sandbox's own namespace.
#[test]
fn the_landlock_filter_refuses_the_ipc_syscalls() {
    let ipc = [
        Sys::Shmget, Sys::Shmat, Sys::Shmctl, Sys::Shmdt, Sys::Semget, Sys::Semop, Sys::Semctl, Sys::Semtimedop, Sys::Msgget, Sys::Msgsnd,
        Sys::Msgrcv, Sys::Msgctl, Sys::MqOpen, Sys::MqUnlink, Sys::MqTimedsend, Sys::MqTimedreceive, Sys::MqNotify, Sys::MqGetsetattr,
    ];
    for (arch, audit) in ARCHES {
        for sockets in ALL_SOCKETS {
            let landlock = program(arch, Filter { sockets, tracing: Tracing::Denied, shield: None });
            let bwrap = program(arch, Filter { sockets, tracing: Tracing::OwnTree, shield: None });
            for sys in ipc {
                assert_eq!(run(&landlock, audit, sys.number(arch), [0x5a5a_0001, 0]), RET_EPERM, "{sys:?}");
                assert_eq!(run(&bwrap, audit, sys.number(arch), [0x5a5a_0001, 0]), RET_ALLOW, "{sys:?} in the sandbox's own IPC namespace");
            }
        }
    }
}

/// Found by an attacker's review: a command took a file lease (`fcntl(F_SETLEASE)`) on a file of
/// the user's it could read (`~/.bashrc` from a read-only run: a lease is on the inode, past every
/// mount) and every host process that opened it for writing waited `fs.lease-break-time` (45 s),
/// again and again. And (kern42) `fcntl(F_SET_RW_HINT)` wrote a write-lifetime hint on a host
/// file's inode through a descriptor opened for reading and a read-only mount, kept after the run.
/// And (kern43) `fcntl(F_SETPIPE_SZ)` shrank a host FIFO's buffer through a descriptor opened for
/// reading, kept while the host held it; and `F_SETDELEG` (Linux 6.19) takes a lease by another
/// door (`FL_DELEG`, on a directory too). All are refused in every filter, with the shield's fcntl
/// rule too; other fcntl commands (locks, flags, reading the hint and the size) stay allowed.
#[test]
fn file_leases_and_write_hints_are_refused_in_every_filter() {
    const F_SETLEASE: u64 = 1024;
    const F_SETPIPE_SZ: u64 = 1031;
    const F_GETPIPE_SZ: u64 = 1032;
    const F_GET_RW_HINT: u64 = 1035;
    const F_SET_RW_HINT: u64 = 1036;
    const F_GETDELEG: u64 = 1039;
    const F_SETDELEG: u64 = 1040;
    for (arch, audit) in ARCHES {
        let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let fcntl = |cmd: u64| run(&p, audit, Sys::Fcntl.number(arch), [3, cmd]);
            assert_eq!(fcntl(F_SETLEASE), RET_EPERM, "{f:?}");
            assert_eq!(fcntl(0xffff_ffff_0000_0000 | F_SETLEASE), RET_EPERM, "{f:?}: high bits ignored as the kernel ignores them");
            assert_eq!(fcntl(F_SET_RW_HINT), RET_EPERM, "{f:?}");
            assert_eq!(fcntl(0xffff_ffff_0000_0000 | F_SET_RW_HINT), RET_EPERM, "{f:?}");
            assert_eq!(fcntl(F_SETPIPE_SZ), RET_EPERM, "{f:?}");
            assert_eq!(fcntl(0xffff_ffff_0000_0000 | F_SETPIPE_SZ), RET_EPERM, "{f:?}");
            assert_eq!(fcntl(F_SETDELEG), RET_EPERM, "{f:?}");
            assert_eq!(fcntl(0xffff_ffff_0000_0000 | F_SETDELEG), RET_EPERM, "{f:?}");
            for cmd in [1, 2, 4, 6, 7, 36, 37, 38, 1025, 1030, F_GETPIPE_SZ, F_GET_RW_HINT, F_GETDELEG] {
                assert_eq!(fcntl(cmd), RET_ALLOW, "{f:?} fcntl {cmd}");
            }
        }
    }
}

/// Found by an attacker's review (kern44): a regular file among a plan's inherited stdio (a host
/// whose stdout is a log file, under `stdio: 'inherit'`) is the caller's open file, and the
/// command's `fcntl(1, F_SETFL, O_DIRECT)` outlived the run: the caller's next write from an
/// unaligned buffer got `EINVAL` (its Node threw). Turning `O_DIRECT` on through `F_SETFL` is
/// answered `EINVAL` in every filter (the bit is the architecture's: 0o40000 on x86_64, 0o200000 on
/// aarch64, where 0o40000 is `O_DIRECTORY`); every other flag, and `F_SETFL` without it, pass.
#[test]
fn direct_io_cannot_be_turned_on_through_f_setfl_in_every_filter() {
    const F_GETFL: u64 = 3;
    const F_SETFL: u64 = 4;
    const O_NONBLOCK: u64 = 0o4000;
    const O_APPEND: u64 = 0o2000;
    const RET_EINVAL: u32 = 0x0005_0000 | 22;
    for (arch, audit, o_direct, o_directory) in [(Arch::X86_64, X86, 0o40000u64, 0o200000u64), (Arch::Aarch64, ARM, 0o200000, 0o40000)] {
        let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let fcntl = |cmd: u64, arg: u64| run3(&p, audit, Sys::Fcntl.number(arch), [1, cmd, arg]);
            assert_eq!(fcntl(F_SETFL, o_direct), RET_EINVAL, "{arch:?} {f:?}");
            assert_eq!(fcntl(F_SETFL, O_APPEND | O_NONBLOCK | o_direct), RET_EINVAL, "{arch:?} {f:?}");
            assert_eq!(fcntl(0xffff_ffff_0000_0000 | F_SETFL, 0xffff_ffff_0000_0000 | o_direct), RET_EINVAL, "{arch:?} {f:?}: high halves ignored as the kernel ignores them");
            for arg in [0, O_NONBLOCK, O_APPEND | O_NONBLOCK, o_directory, 0xffff_ffff_0000_0000] {
                assert_eq!(fcntl(F_SETFL, arg), RET_ALLOW, "{arch:?} {f:?} F_SETFL {arg:#o}");
            }
            assert_eq!(fcntl(F_GETFL, o_direct), RET_ALLOW, "{arch:?} {f:?}: another command's argument is not judged");
        }
    }
}

/// Found by an attacker's review: in the Landlock mode with the network off (no `socket()` at all),
/// a command bound a name in the host's abstract Unix socket namespace on one end of a
/// `socketpair` and held it for the run: a host program binding the same name (X11's
/// `@/tmp/.X11-unix/X0`, single-instance locks) failed with EADDRINUSE. A pair's end never needs a
/// name, so with no sockets `bind` is refused whole; where sockets are allowed it is theirs.
#[test]
fn bind_is_refused_where_no_socket_may_be_made() {
    for (arch, audit) in ARCHES {
        for f in filters() {
            let verdict = run(&program(arch, f), audit, Sys::Bind.number(arch), [3, 0]);
            assert_eq!(verdict, if f.sockets == Sockets::None { RET_EPERM } else { RET_ALLOW }, "{f:?}");
        }
    }
}

/// Found by an attacker's review: in the Landlock mode a command set nice 19, SCHED_IDLE, one CPU
/// and the idle I/O class on any process of its user (its supervisor and the host program that
/// started it included), by pid, process group or user; Landlock has no hook for any of it. The
/// Landlock filter keeps these calls to the caller itself (pid 0; `PRIO_PROCESS`/
/// `IOPRIO_WHO_PROCESS` with who 0), judging the arguments as the kernel reads them: `int`s, whose
/// high half it drops. The bwrap filter leaves them to the PID namespace.
#[test]
fn the_landlock_filter_keeps_scheduling_calls_to_the_caller() {
    const HIGH: u64 = 0xffff_ffff_0000_0000;
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let verdict = |sys: Sys, a0: u64, a1: u64| run3(&p, audit, sys.number(arch), [a0, a1, 19]);
            let landlock = f.tracing == Tracing::Denied;
            let refused = if landlock { RET_EPERM } else { RET_ALLOW };
            for sys in [Sys::SchedSetscheduler, Sys::SchedSetparam, Sys::SchedSetattr, Sys::SchedSetaffinity] {
                for own in [0, HIGH] {
                    assert_eq!(verdict(sys, own, 5), RET_ALLOW, "{sys:?} {own:#x} in {f:?}: the caller itself");
                }
                for other in [1, 4242, 0xffff_ffff, 0x1_0000_1092, HIGH | 4242] {
                    assert_eq!(verdict(sys, other, 5), refused, "{sys:?} pid {other:#x} in {f:?}");
                }
            }
            // setpriority(which, who, nice): PRIO_PROCESS 0, PRIO_PGRP 1, PRIO_USER 2.
            // ioprio_set(which, who, ioprio): IOPRIO_WHO_PROCESS 1, _PGRP 2, _USER 3.
            for (sys, process) in [(Sys::Setpriority, 0), (Sys::IoprioSet, 1)] {
                assert_eq!(verdict(sys, process, 0), RET_ALLOW, "{sys:?} of the caller in {f:?}");
                assert_eq!(verdict(sys, HIGH | process, HIGH), RET_ALLOW, "{sys:?} of the caller, high halves dropped, in {f:?}");
                for which in [0, 1, 2, 3, 4].into_iter().filter(|w| *w != process) {
                    for who in [0, 1000, 4242] {
                        assert_eq!(verdict(sys, which, who), refused, "{sys:?} which {which} who {who} in {f:?}");
                    }
                    assert_eq!(verdict(sys, HIGH | which, 0), refused, "{sys:?} which {which}, high half set, in {f:?}");
                }
                for who in [1, 4242, 0xffff_ffff, 0x1_0000_1092, HIGH | 1] {
                    assert_eq!(verdict(sys, process, who), refused, "{sys:?} of process {who:#x} in {f:?}");
                }
            }
        }
    }
}

/// Found by an attacker's review: in the Landlock mode, which governs no ioctl on regular files, a
/// command set the sync, nodump and noatime flags (`FS_IOC_SETFLAGS`, `FS_IOC_FSSETXATTR`) of host
/// files it could only read; the generation, fs-verity (a file made read-only for good) and an
/// encryption policy (a directory made unusable) are set the same way. And (revo42) a host file's
/// extents (`FIDEDUPERANGE`, its destination a descriptor opened for reading, on btrfs and XFS):
/// the owner's dedupe replaced a read-only host file's blocks with the workspace file's, shared.
/// The Landlock filter refuses
/// them, with the baseline's and the shield's requests; other requests (reading the same flags
/// included) stay allowed, and the bwrap filter leaves them to its read-only mounts.
#[test]
fn the_landlock_filter_refuses_inode_attribute_ioctls() {
    const SETS: [u64; 8] = [0x4008_6602, 0x4004_6602, 0x401c_5820, 0x4008_7602, 0x4008_6604, 0x4080_6685, 0x800c_6613, 0xc018_9436];
    const READS: [u64; 6] = [0x8008_6601, 0x801c_581f, 0x8008_7601, 0x5401, 0x541b, 0xc020_660b];
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let ioctl = |request: u64| run(&p, audit, Sys::Ioctl.number(arch), [3, request]);
            let landlock = f.tracing == Tracing::Denied;
            for request in SETS {
                let expect = if landlock { RET_EPERM } else { RET_ALLOW };
                assert_eq!(ioctl(request), expect, "{request:#x} in {f:?}");
                assert_eq!(ioctl(0xffff_ffff_0000_0000 | request), expect, "{request:#x}, high bits ignored as the kernel ignores them, in {f:?}");
            }
            for request in READS {
                assert_eq!(ioctl(request), RET_ALLOW, "{request:#x} in {f:?}");
            }
            assert_eq!(ioctl(TIOCSTI as u64), RET_EPERM, "the baseline's TIOCSTI in {f:?}");
            assert_eq!(ioctl(FIOSETOWN as u64), if f.shield.is_some() { RET_EPERM } else { RET_ALLOW }, "the shield's FIOSETOWN in {f:?}");
        }
    }
}

/// fscrypt's keys are per filesystem, not per file or mount: any descriptor on a filesystem (one
/// opened for reading is enough) adds a key to its keyring or removes the user's claim to one (as
/// root, every user's), which locks or unlocks host files the command was never given; bwrap's
/// read-only mounts do not stop it. Every filter refuses the three requests; asking a key's status
/// stays allowed.
#[test]
fn every_filter_refuses_fscrypt_key_ioctls() {
    const ADD_AND_REMOVE: [u64; 3] = [0xc050_6617, 0xc040_6618, 0xc040_6619];
    const KEY_STATUS: u64 = 0xc080_661a;
    every_filter_refuses_these_ioctls(Sockets::None, &ADD_AND_REMOVE, &[KEY_STATUS]);
}

/// Every filter, and a shielded Landlock one with `sockets`, refuses each of `refused` (its high
/// half ignored, as the kernel ignores it) and allows each of `allowed`.
fn every_filter_refuses_these_ioctls(sockets: Sockets, refused: &[u64], allowed: &[u64]) {
    let shielded = Filter { sockets, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let ioctl = |request: u64| run(&p, audit, Sys::Ioctl.number(arch), [3, request]);
            for &request in refused {
                assert_eq!(ioctl(request), RET_EPERM, "{request:#x} in {f:?}");
                assert_eq!(ioctl(0xffff_ffff_0000_0000 | request), RET_EPERM, "{request:#x}, high bits ignored, in {f:?}");
            }
            for &request in allowed {
                assert_eq!(ioctl(request), RET_ALLOW, "{request:#x} in {f:?}");
            }
        }
    }
}

/// Found by an attacker's review (kern38): btrfs's `BTRFS_IOC_SYNC` writes back every dirty page of
/// the filesystem from any descriptor on it, as the `syncfs` the baseline answers, and
/// `BTRFS_IOC_START_SYNC` commits it. Every filter refuses both; btrfs's queries (its space info,
/// `FICLONE`'s neighbour numbers) and `BTRFS_IOC_WAIT_SYNC`, which only waits, stay allowed.
#[test]
fn every_filter_refuses_whole_filesystem_sync_ioctls() {
    const SYNCS: [u64; 2] = [0x9408, 0x8008_9418];
    const ALLOWED: [u64; 3] = [0xc010_9414, 0x4004_9409, 0x4008_9416]; // BTRFS_IOC_SPACE_INFO, FICLONE, BTRFS_IOC_WAIT_SYNC
    every_filter_refuses_these_ioctls(Sockets::None, &SYNCS, &ALLOWED);
}

/// Found by an attacker's review (kern39): `quotactl_fd(fd, QCMD(Q_SYNC, type))` on a descriptor
/// opened for reading ran ext4's `sync_fs` and wrote back its block device, past the `syncfs` rule;
/// `quotactl` does the same by a device's path or for every filesystem with quotas on. Every filter
/// refuses the three types' `Q_SYNC` (the high half ignored, as the kernel takes an unsigned int)
/// and keeps the queries (`Q_GETFMT`, `Q_GETINFO`, `Q_GETQUOTA`).
#[test]
fn every_filter_refuses_quota_syncs() {
    const QUERIES: [u64; 3] = [0x8000_0400, 0x8000_0500, 0x8000_0700];
    for (arch, audit) in ARCHES {
        for f in filters() {
            let p = program(arch, f);
            let fd_form = |cmd: u64| run(&p, audit, Sys::QuotactlFd.number(arch), [3, cmd]);
            let path_form = |cmd: u64| run(&p, audit, Sys::Quotactl.number(arch), [cmd, 0]);
            for cmd in [0x8000_0100u64, 0x8000_0101, 0x8000_0102] {
                for high in [0, 0xffff_ffff_0000_0000] {
                    assert_eq!(fd_form(high | cmd), RET_EPERM, "quotactl_fd {cmd:#x} in {f:?}");
                    assert_eq!(path_form(high | cmd), RET_EPERM, "quotactl {cmd:#x} in {f:?}");
                }
            }
            for cmd in QUERIES {
                assert_eq!(fd_form(cmd), RET_ALLOW, "quotactl_fd {cmd:#x} in {f:?}");
                assert_eq!(path_form(cmd), RET_ALLOW, "quotactl {cmd:#x} in {f:?}");
            }
        }
    }
}

/// Left by kern38's review, proved by kern39's: ext4 answers `FS_IOC_GETFSMAP` on any descriptor by
/// walking every block group's bitmap, the whole filesystem's free space and metadata. Every filter
/// refuses it; the per-file extent map (`FS_IOC_FIEMAP`) and the filesystem's label and UUID stay.
#[test]
fn every_filter_refuses_the_allocation_map() {
    const ALLOWED: [u64; 3] = [0xc020_660b, 0x8100_9431, 0x8011_1500]; // FS_IOC_FIEMAP, FS_IOC_GETFSLABEL, FS_IOC_GETFSUUID
    every_filter_refuses_these_ioctls(Sockets::None, &[0xc0c0_583b], &ALLOWED);
}

/// Found by an attacker's review (kern40): btrfs's `BTRFS_IOC_SNAP_CREATE` and `_V2` copied a
/// subvolume the caller owns, named by a descriptor opened for reading, into the workspace, the
/// files `denyRead` hid included. Every filter refuses both; an empty subvolume's creation
/// (`BTRFS_IOC_SUBVOL_CREATE`, `_V2`) and the subvolume queries stay allowed.
#[test]
fn every_filter_refuses_subvolume_snapshots() {
    const SNAPSHOTS: [u64; 2] = [0x5000_9401, 0x5000_9417];
    const ALLOWED: [u64; 3] = [0x5000_940e, 0x5000_9418, 0x81f8_943c]; // BTRFS_IOC_SUBVOL_CREATE, _V2, BTRFS_IOC_GET_SUBVOL_INFO
    every_filter_refuses_these_ioctls(Sockets::None, &SNAPSHOTS, &ALLOWED);
}

/// Found by an attacker's review (left40): ext4's `EXT4_IOC_CLEAR_ES_CACHE` (`_IO('f', 40)`) drops
/// the extent status cache of any inode the user owns, on a descriptor opened for reading through a
/// read-only mount (no write access is asked): a read-only run cleared a host file's, and the host's
/// next walk of its 100,000 extents took 0.47 s instead of 0.08 to 0.15 s (under load), the
/// `POSIX_FADV_DONTNEED` the baseline answers for the page cache, at the extents' level. Every filter
/// refuses it; `EXT4_IOC_PRECACHE_EXTENTS` (`_IO('f', 18)`), which only fills that cache as reading
/// the file and `FS_IOC_FIEMAP` with `FIEMAP_FLAG_CACHE` do, and `FS_IOC_FIEMAP` stay allowed.
#[test]
fn every_filter_refuses_clearing_the_extent_cache() {
    const ALLOWED: [u64; 2] = [0x6612, 0xc020_660b]; // EXT4_IOC_PRECACHE_EXTENTS, FS_IOC_FIEMAP
    every_filter_refuses_these_ioctls(Sockets::None, &[0x6628], &ALLOWED);
}

/// Found while closing kern27's protocols: a socket `ioctl` of the bridge's or 802.1Q's makes the
/// kernel load `bridge` or `8021q` when absent (`request_module` in `sock_ioctl`, with no capability
/// check), on any socket, a Unix one included, and the module stays loaded; so do Frame Relay's
/// SIOCADDDLCI and SIOCDELDLCI (`dlci`, on kernels before 6.0: found by an attacker's review, fix28).
/// Every filter refuses the eight requests; the interface ioctls programs make (SIOCGIFCONF,
/// SIOCGIFFLAGS...) stay allowed.
#[test]
fn every_filter_refuses_module_loading_socket_ioctls() {
    const BRIDGE_VLAN_AND_DLCI: [u64; 8] = [0x8940, 0x8941, 0x89a0, 0x89a1, 0x8982, 0x8983, 0x8980, 0x8981];
    const ALLOWED: [u64; 4] = [0x8912, 0x8913, 0x8933, 0x541b]; // SIOCGIFCONF, SIOCGIFFLAGS, SIOCGIFINDEX, FIONREAD
    every_filter_refuses_these_ioctls(Sockets::InetAndUnix, &BRIDGE_VLAN_AND_DLCI, &ALLOWED);
}

/// The search obeys one rule per syscall number (the first block it reaches returns), so a rule
/// added for a syscall another already judges (the Landlock mode's ioctl requests, the shield's)
/// must be merged into it, never listed beside it.
#[test]
fn every_filter_has_one_rule_per_syscall() {
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for f in filters().into_iter().chain([shielded]) {
        let rules = rules(f);
        for (i, (sys, _)) in rules.iter().enumerate() {
            assert!(rules[i + 1..].iter().all(|(other, _)| other != sys), "{sys:?} twice in {f:?}");
        }
        // The merged ioctl rule keeps every request the baseline's table names.
        let Some((_, Check::ArgIn(_, listed), _)) = BASELINE.iter().find(|(sys, ..)| *sys == Sys::Ioctl) else { panic!("no ioctl rule") };
        assert!(listed.iter().all(|r| super::baseline::ioctl_requests(f).contains(r)), "{f:?}");
    }
}

/// Found by an attacker's review: in the default bwrap mode (workspace-write), as root, `cp
/// /bin/bash rootsh && chmod 4755 rootsh` in the workspace succeeded and left a setuid-root shell on
/// the host (the sandbox's `nosuid` mount does not follow the file out); as an ordinary user it
/// lends that user's identity to every other local user. Every filter now refuses a set-ID bit
/// (0o6000) whether set by the chmod family or given at creation (`open`/`openat` with `O_CREAT` or
/// `O_TMPFILE`, `creat`, `mknod`, `mknodat`); `openat2`, whose mode seccomp cannot read, gets
/// ENOSYS. A mode without those flags is garbage the kernel never reads, and is never judged.
#[test]
fn every_filter_refuses_set_id_modes() {
    const HIGH: u64 = 0xffff_ffff_0000_0000;
    const AT_FDCWD: u64 = (-100i64) as u64;
    const O_CREAT: u64 = 0o100;
    const O_WRONLY_TRUNC: u64 = 0o1 | 0o1000;
    const O_CLOEXEC: u64 = 0o2000000;
    const O_PATH: u64 = 0o10000000;
    const S_IFREG: u64 = 0o100000;
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (sys, _, why) in SET_ID_MODES {
        assert!(why.len() > 10, "{sys:?}");
    }
    for (arch, audit) in ARCHES {
        // O_TMPFILE is __O_TMPFILE | O_DIRECTORY, and O_DIRECTORY differs between the two.
        let o_tmpfile: u64 = 0o20000000 | if arch == Arch::X86_64 { 0o200000 } else { 0o40000 };
        let x86 = arch == Arch::X86_64;
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let v = |sys: Sys, args: [u64; 4]| run4(&p, audit, sys.number(arch), args);
            // Every call that sets or creates with `mode` (the x86_64-only ones there alone).
            let setting = |mode: u64| {
                let mut calls = vec![
                    (Sys::Fchmod, [3, mode, 0, 0]),
                    (Sys::Fchmodat, [AT_FDCWD, 0x1000, mode, 0]),
                    (Sys::Fchmodat2, [AT_FDCWD, 0x1000, mode, 0]),
                    (Sys::Openat, [AT_FDCWD, 0x1000, O_CREAT | O_WRONLY_TRUNC | O_CLOEXEC, mode]),
                    (Sys::Openat, [AT_FDCWD, 0x1000, HIGH | O_CREAT, mode]),
                    (Sys::Openat, [3, 0x1000, o_tmpfile | 0o2, mode]),
                    (Sys::Mknodat, [AT_FDCWD, 0x1000, S_IFREG | mode, 0]),
                ];
                if x86 {
                    calls.extend([
                        (Sys::Chmod, [0x1000, mode, 0, 0]),
                        (Sys::Open, [0x1000, O_CREAT | O_WRONLY_TRUNC, mode, 0]),
                        (Sys::Creat, [0x1000, mode, 0, 0]),
                        (Sys::Mknod, [0x1000, S_IFREG | mode, 0, 0]),
                    ]);
                }
                calls
            };
            for mode in [0o4755, 0o2755, 0o6755, 0o4000, 0o2000, HIGH | 0o4755, 0o104755] {
                for (sys, args) in setting(mode) {
                    assert_eq!(v(sys, args), RET_EPERM, "{sys:?} {args:?} in {f:?}");
                }
                // Without O_CREAT or O_TMPFILE the kernel never reads the mode: whatever is there passes.
                for flags in [0, O_WRONLY_TRUNC | O_CLOEXEC, O_PATH, 0o200000, 0o40000, O_CREAT << 32] {
                    assert_eq!(v(Sys::Openat, [AT_FDCWD, 0x1000, flags, mode]), RET_ALLOW, "openat {flags:#o} {mode:#o} in {f:?}");
                    if x86 {
                        assert_eq!(v(Sys::Open, [0x1000, flags, mode, 0]), RET_ALLOW, "open {flags:#o} {mode:#o} in {f:?}");
                    }
                }
            }
            // Plain modes, the sticky bit included, stay settable and creatable.
            for mode in [0o755, 0o644, 0o600, 0o1777, 0o777, 0] {
                for (sys, args) in setting(mode) {
                    assert_eq!(v(sys, args), RET_ALLOW, "{sys:?} {args:?} in {f:?}");
                }
            }
            assert_eq!(v(Sys::Openat2, [AT_FDCWD, 0x1000, 0x2000, 24]), RET_ENOSYS, "openat2 in {f:?}: callers fall back to openat");
        }
    }
}

/// Found by an attacker's review (fixes18/excl.sh): a command given the caller's terminal (`stdio:
/// 'inherit'`) made it exclusive (`TIOCEXCL`), which outlives the run: every later run given that
/// terminal failed setup (the helper's reopen of it got EBUSY) and, as an ordinary user, the user's
/// own programs could no longer open their terminal by name, until someone cleared the flag. Every
/// filter refuses it, the high half ignored as the kernel ignores it; clearing it (`TIOCNXCL`) and
/// asking it (`TIOCGEXCL`) stay allowed.
#[test]
fn every_filter_refuses_making_a_terminal_exclusive() {
    const TIOCEXCL: u64 = 0x540c;
    const TIOCNXCL: u64 = 0x540d;
    const TIOCGEXCL: u64 = 0x8004_5440;
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let ioctl = |request: u64| run(&p, audit, Sys::Ioctl.number(arch), [0, request]);
            assert_eq!(ioctl(TIOCEXCL), RET_EPERM, "TIOCEXCL in {f:?}");
            assert_eq!(ioctl(0xffff_ffff_0000_0000 | TIOCEXCL), RET_EPERM, "TIOCEXCL, high bits ignored, in {f:?}");
            assert_eq!(ioctl(TIOCNXCL), RET_ALLOW, "TIOCNXCL in {f:?}");
            assert_eq!(ioctl(TIOCGEXCL), RET_ALLOW, "TIOCGEXCL in {f:?}");
        }
    }
}

/// Found by an attacker's review (fixes19/ldisc.py, tcooff.py): a command given the caller's
/// terminal set its line discipline (`TIOCSETD` to N_NULL), which outlives the run: the terminal
/// took no input and refused `tcgetattr`, and the caller, Node, aborted in its `ResetStdio`;
/// `tcflow(TCOOFF)` (`TCXONC`) stopped the terminal's output past the run, so the caller's next
/// write blocked. Every filter refuses both, the high half ignored; asking the discipline
/// (`TIOCGETD`) stays allowed.
#[test]
fn every_filter_refuses_changing_a_terminals_discipline_or_flow() {
    const TIOCSETD: u64 = 0x5423;
    const TIOCGETD: u64 = 0x5424;
    const TCXONC: u64 = 0x540a;
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let ioctl = |request: u64| run(&p, audit, Sys::Ioctl.number(arch), [0, request]);
            for (name, request) in [("TIOCSETD", TIOCSETD), ("TCXONC", TCXONC)] {
                assert_eq!(ioctl(request), RET_EPERM, "{name} in {f:?}");
                assert_eq!(ioctl(0xffff_ffff_0000_0000 | request), RET_EPERM, "{name}, high bits ignored, in {f:?}");
            }
            assert_eq!(ioctl(TIOCGETD), RET_ALLOW, "TIOCGETD in {f:?}");
        }
    }
}

/// The kernel takes the longest filter, whose lower half is jumped over with BPF_JA (the Landlock
/// mode's with its shield), and it answers as the interpreter does: installed in a child, a packet
/// socket through AF_INET gets ESOCKTNOSUPPORT and a TCP socket is made.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_kernel_takes_the_long_jump() {
    let filter = Filter { sockets: Sockets::InetAndUnix, tracing: Tracing::Denied, shield: Some(4_000_000) };
    let prog = program(Arch::X86_64, filter);
    assert!(prog.iter().any(|i| i.0 == 0x05), "no long jump in a filter of {} instructions", prog.len());
    let insns: Vec<libc::sock_filter> = prog.iter().map(|&(code, jt, jf, k)| libc::sock_filter { code, jt, jf, k }).collect();
    let fprog = libc::sock_fprog { len: u16::try_from(insns.len()).expect("short"), filter: insns.as_ptr().cast_mut() };
    let _forks = crate::forks(false);
    // SAFETY: the child makes only raw system calls and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        // SAFETY: as above; fprog outlives the calls.
        unsafe {
            let code = if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog as *const libc::sock_fprog) != 0 {
                10
            } else if libc::socket(libc::AF_INET, 10, 0) != -1 || *libc::__errno_location() != libc::ESOCKTNOSUPPORT {
                11
            } else if libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) < 0 {
                12
            } else {
                0
            };
            libc::_exit(code);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status), "the child died: {status:#x}");
    assert_eq!(libc::WEXITSTATUS(status), 0, "10: the kernel refused the filter; 11: the packet socket was not refused as planned; 12: TCP was refused");
}

/// Found by an attacker's review (kern30): the command's own seccomp filters are compiled by the BPF
/// JIT into 2 MiB packs of 512 separate pages, each made read-only and executable, which splits the
/// host kernel's direct map there into 4 KiB pages until the host reboots (memfd_secret's harm): 50
/// processes stacking 4 filters of 4,000 instructions took DirectMap4k from 28 MiB to 540 MiB and
/// split 17 of the host's 24 GiB pages, and they drew on the machine's `net.core.bpf_jit_limit`.
/// Installing a filter is refused in every filter, through `seccomp()` and `prctl()` alike, the
/// operation judged as the kernel reads it (an `unsigned int`; prctl's option an `int`; its mode
/// is compared whole, so a high half only makes the kernel refuse it too). Strict mode and the
/// queries stay allowed, and so does every other prctl.
#[test]
fn every_filter_refuses_installing_a_seccomp_filter() {
    const HIGH: u64 = 0xffff_ffff_0000_0000;
    const SET_MODE_STRICT: u64 = 0;
    const SET_MODE_FILTER: u64 = 1;
    const PR_SET_SECCOMP: u64 = 22;
    const PR_GET_SECCOMP: u64 = 21;
    const MODE_STRICT: u64 = 1;
    const MODE_FILTER: u64 = 2;
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        let (seccomp_nr, prctl_nr) = if arch == Arch::X86_64 { (317, 157) } else { (277, 167) };
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let seccomp = |op: u64| run(&p, audit, seccomp_nr, [op, 0]);
            let prctl = |option: u64, mode: u64| run(&p, audit, prctl_nr, [option, mode]);
            assert_eq!(seccomp(SET_MODE_FILTER), RET_EPERM, "{f:?}: seccomp(SECCOMP_SET_MODE_FILTER)");
            assert_eq!(seccomp(HIGH | SET_MODE_FILTER), RET_EPERM, "{f:?}: high half ignored as the kernel ignores it");
            for op in [SET_MODE_STRICT, 2, 3] {
                assert_eq!(seccomp(op), RET_ALLOW, "{f:?}: seccomp op {op}");
            }
            assert_eq!(prctl(PR_SET_SECCOMP, MODE_FILTER), RET_EPERM, "{f:?}: prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)");
            assert_eq!(prctl(HIGH | PR_SET_SECCOMP, MODE_FILTER), RET_EPERM, "{f:?}: the option is an int");
            assert_eq!(prctl(PR_SET_SECCOMP, MODE_STRICT), RET_ALLOW, "{f:?}: strict mode");
            assert_eq!(prctl(PR_GET_SECCOMP, 0), RET_ALLOW, "{f:?}: PR_GET_SECCOMP");
            for option in [15, 16, 38, 0x5359_4d41] {
                assert_eq!(prctl(option, MODE_FILTER), RET_ALLOW, "{f:?}: prctl {option:#x}");
            }
        }
    }
}

/// Found by an attacker's review (kern30): a process-shared futex in a mapped file is keyed by the
/// file's inode, and the requeues ask only read access of it, so a command that could read the file
/// moved a host thread waiting there onto a word of its own: the host's wake found no one and the
/// thread slept for good. The shared `FUTEX_REQUEUE` and `FUTEX_CMP_REQUEUE` (and, rfix30, the
/// requeue-PI pair) are refused (the
/// operation an `int`, judged on its low half), futex2's `futex_requeue` (flags in memory) gets
/// ENOSYS; the private forms, the waits, the wakes and the PI calls (which need write access)
/// stay allowed.
#[test]
fn every_filter_refuses_requeueing_shared_futexes() {
    const HIGH: u64 = 0xffff_ffff_0000_0000;
    const PRIVATE: u64 = 128;
    let shielded = Filter { sockets: Sockets::None, tracing: Tracing::Denied, shield: Some(4242) };
    for (arch, audit) in ARCHES {
        let futex_nr = if arch == Arch::X86_64 { 202 } else { 98 };
        for f in filters().into_iter().chain([shielded]) {
            let p = program(arch, f);
            let futex = |op: u64| run(&p, audit, futex_nr, [0x1000, op]);
            for (op, name) in [(3, "FUTEX_REQUEUE"), (4, "FUTEX_CMP_REQUEUE")] {
                assert_eq!(futex(op), RET_EPERM, "{f:?}: {name}");
                assert_eq!(futex(HIGH | op), RET_EPERM, "{f:?}: {name}, high half ignored as the kernel's int");
                assert_eq!(futex(PRIVATE | op), RET_ALLOW, "{f:?}: {name}_PRIVATE");
            }
            // Found by an attacker's review (rfix30): a requeue-PI waiter asks write access of its
            // PI target only, and a queue holding one makes every FUTEX_WAKE of the host's word
            // fail (EINVAL) and wake no one past it. Its CLOCK_REALTIME form (256) is accepted by
            // the kernel too; the requeue to PI moves requeue-PI waiters.
            for (op, name) in [(11, "FUTEX_WAIT_REQUEUE_PI"), (256 | 11, "FUTEX_WAIT_REQUEUE_PI | FUTEX_CLOCK_REALTIME"), (12, "FUTEX_CMP_REQUEUE_PI")] {
                assert_eq!(futex(op), RET_EPERM, "{f:?}: {name}");
                assert_eq!(futex(HIGH | op), RET_EPERM, "{f:?}: {name}, high half ignored as the kernel's int");
                assert_eq!(futex(PRIVATE | op), RET_ALLOW, "{f:?}: {name} private");
            }
            // WAIT, WAKE, FD, WAKE_OP, LOCK_PI, UNLOCK_PI, TRYLOCK_PI, WAIT_BITSET, WAKE_BITSET,
            // LOCK_PI2, shared and private.
            for op in [0, 1, 2, 5, 6, 7, 8, 9, 10, 13] {
                assert_eq!(futex(op), RET_ALLOW, "{f:?}: futex op {op}");
                assert_eq!(futex(PRIVATE | op), RET_ALLOW, "{f:?}: futex op {op} private");
            }
            assert_eq!(run(&p, audit, 456, [0x1000, 0]), RET_ENOSYS, "{f:?}: futex_requeue");
            for nr in [449, 454, 455] {
                assert_eq!(run(&p, audit, nr, [0x1000, 0]), RET_ALLOW, "{f:?}: futex_waitv, futex_wake, futex_wait ({nr})");
            }
        }
    }
}

/// Found by an attacker's review (kern45): with KSM running, a default read-only run made 256 pages
/// mergeable (`madvise(MADV_MERGEABLE)`), each a copy of a host process's mergeable page with
/// another guess of its unknown byte, and read the byte from which of them ksmd merged. Marking
/// memory mergeable is answered `EINVAL` in every filter, by `madvise` and by `prctl`'s
/// `PR_SET_MEMORY_MERGE` (a whole process), as a kernel without KSM answers; the reclaiming advice
/// is still answered 0 without the call, every other advice and option passes, and
/// `PR_SET_SECCOMP`'s filter mode is still refused.
#[test]
fn memory_cannot_be_made_mergeable_in_every_filter() {
    const RET_EINVAL: u32 = 0x0005_0000 | 22;
    const RET_DONE: u32 = 0x0005_0000;
    // (advice, answer): MADV_MERGEABLE, the same as an int with a high half, MADV_PAGEOUT,
    // MADV_DONTNEED, MADV_UNMERGEABLE.
    let advice = [(12, RET_EINVAL), (0xffff_ffff_0000_000c, RET_EINVAL), (21, RET_DONE), (4, RET_ALLOW), (13, RET_ALLOW)];
    // (option, argument, answer): PR_SET_MEMORY_MERGE on and off, PR_SET_SECCOMP's filter and
    // strict modes, PR_GET_MEMORY_MERGE, PR_SET_NAME (with 67 as its argument too).
    let options = [(67, 1, RET_EINVAL), (67, 0, RET_EINVAL), (22, 2, RET_EPERM), (22, 1, RET_ALLOW), (68, 0, RET_ALLOW), (15, 2, RET_ALLOW), (15, 67, RET_ALLOW)];
    for (arch, audit) in ARCHES {
        for f in filters() {
            let p = program(arch, f);
            for (a, want) in advice {
                assert_eq!(run3(&p, audit, Sys::Madvise.number(arch), [0x1000, 4096, a]), want, "{arch:?} {f:?} madvise advice {a:#x}");
            }
            for (option, arg, want) in options {
                assert_eq!(run(&p, audit, Sys::Prctl.number(arch), [option, arg]), want, "{arch:?} {f:?} prctl({option}, {arg})");
            }
        }
    }
}

/// Found by an attacker's review (kern45b): `pipe2(O_NOTIFICATION_PIPE)` creates a watch queue,
/// the kernel's notification pipes, which no build needs and which had a privilege escalation
/// (CVE-2022-0995, through its IOC_WATCH_QUEUE_SET_FILTER ioctl; the ioctls act only on such a
/// pipe). Asking for one is answered `ENOPKG` in every filter, what a kernel without
/// CONFIG_WATCH_QUEUE answers; pipe2's other flags (`O_CLOEXEC`, `O_NONBLOCK`, `O_DIRECT`, each
/// architecture's) pass. The flags are an int: a high half changes nothing.
#[test]
fn notification_pipes_refused_in_every_filter() {
    const ENOPKG: u32 = 0x0005_0000 | 65;
    // O_NOTIFICATION_PIPE is O_EXCL, 0o200 on both; O_CLOEXEC and O_NONBLOCK the same on both.
    const NOTIFICATION: u64 = 0o200;
    const CLOEXEC_NONBLOCK: u64 = 0o2000000 | 0o4000;
    // (arch, audit, pipe2's number, O_DIRECT)
    for (arch, audit, pipe2, o_direct) in [(Arch::X86_64, X86, 293, 0o40000), (Arch::Aarch64, ARM, 59, 0o200000)] {
        for f in filters() {
            let p = program(arch, f);
            let flags = [
                (NOTIFICATION, ENOPKG),
                (NOTIFICATION | CLOEXEC_NONBLOCK, ENOPKG),
                (0xffff_ffff_0000_0000 | NOTIFICATION, ENOPKG),
                (0, RET_ALLOW),
                (CLOEXEC_NONBLOCK, RET_ALLOW),
                (CLOEXEC_NONBLOCK | o_direct, RET_ALLOW),
                (0xffff_ffff_0000_0000 | CLOEXEC_NONBLOCK, RET_ALLOW),
            ];
            for (flag, want) in flags {
                assert_eq!(run(&p, audit, pipe2, [0x1000, flag]), want, "{arch:?} {f:?} pipe2 flags {flag:#x}");
            }
        }
    }
}
