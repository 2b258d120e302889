//! Resource limits the helper sets on itself before it execs the command (the `--rlimit` step); in
//! the Landlock mode, the command's process forked by the supervisor, never the supervisor, which
//! must outlast the command's tree to end it. Pure: names, values and their argument form.
//! `main.rs` makes the `setrlimit` calls.
//!
//! Why inside the sandbox and not on bwrap: `RLIMIT_NPROC` set before bwrap creates the user
//! namespace stops bwrap itself ("Creating new namespace failed"), while set inside it counts the
//! sandbox's own processes only (Linux >= 5.14 per-namespace counts); the others are simply
//! inherited by everything the command starts. The per-user budgets (`PER_USER_BUDGETS`) are
//! counted the same way: per user namespace, and each level's count charged to its parent's.

/// The resources sandspawn limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    /// CPU seconds per process (SIGXCPU at the soft limit, SIGKILL at the hard one).
    Cpu,
    /// Bytes per file written (SIGXFSZ, or EFBIG when the program ignores SIGXFSZ).
    Fsize,
    /// Bytes of private writable memory per process (not address space: runtimes reserve far more
    /// than they use, and Node, the JVM and wasm refuse to start under a small RLIMIT_AS).
    Data,
    /// Tasks (processes and threads) of this uid in this user namespace.
    Nproc,
    /// Descriptors per process.
    Nofile,
    /// Core dump size: 0 with any limit, or SIGXCPU/SIGXFSZ would dump core into the cwd.
    Core,
    /// Queued signals (each POSIX timer reserves one) of this uid in this user namespace: a
    /// per-user budget, lowered for every bwrap run (`per_user_budgets`). Linux only.
    Sigpending,
    /// Bytes of POSIX message queues of this uid in this user namespace: likewise. Linux only.
    Msgqueue,
    /// Bytes of locked memory: per process for `mlock`, per user for what `SHM_LOCK`, zerocopy
    /// sends and io_uring buffers pin (`shares`).
    Memlock,
    /// The highest real-time priority an unprivileged process may take (`NO_PRIORITY_RAISE`).
    /// Linux only.
    Rtprio,
    /// The ceiling on lowering one's nice value, as `20 - nice` (`NO_PRIORITY_RAISE`). Linux only.
    Nice,
}

const ALL: [(Resource, &str); 11] = [
    (Resource::Cpu, "cpu"),
    (Resource::Fsize, "fsize"),
    (Resource::Data, "data"),
    (Resource::Nproc, "nproc"),
    (Resource::Nofile, "nofile"),
    (Resource::Core, "core"),
    (Resource::Sigpending, "sigpending"),
    (Resource::Msgqueue, "msgqueue"),
    (Resource::Memlock, "memlock"),
    (Resource::Rtprio, "rtprio"),
    (Resource::Nice, "nice"),
];

impl Resource {
    pub fn name(self) -> &'static str {
        ALL.iter().find(|(r, _)| *r == self).map(|(_, n)| *n).unwrap_or("?")
    }

    pub fn from_name(name: &str) -> Option<Resource> {
        ALL.iter().find(|(_, n)| *n == name).map(|(r, _)| *r)
    }

    /// The C library's resource number.
    pub fn raw(self) -> RawResource {
        match self {
            Resource::Cpu => libc::RLIMIT_CPU,
            Resource::Fsize => libc::RLIMIT_FSIZE,
            Resource::Data => libc::RLIMIT_DATA,
            Resource::Nproc => libc::RLIMIT_NPROC,
            Resource::Nofile => libc::RLIMIT_NOFILE,
            Resource::Core => libc::RLIMIT_CORE,
            Resource::Memlock => libc::RLIMIT_MEMLOCK,
            #[cfg(target_os = "linux")]
            Resource::Sigpending => libc::RLIMIT_SIGPENDING,
            #[cfg(target_os = "linux")]
            Resource::Msgqueue => libc::RLIMIT_MSGQUEUE,
            #[cfg(target_os = "linux")]
            Resource::Rtprio => libc::RLIMIT_RTPRIO,
            #[cfg(target_os = "linux")]
            Resource::Nice => libc::RLIMIT_NICE,
            // No such limits elsewhere: a number no resource has, so the helper's `getrlimit`
            // fails with EINVAL and the run with it (never sent there: `per_user_budgets`,
            // `NO_PRIORITY_RAISE` are Linux plans' only).
            #[cfg(not(target_os = "linux"))]
            Resource::Sigpending | Resource::Msgqueue | Resource::Rtprio | Resource::Nice => RawResource::MAX,
        }
    }
}

/// What every bwrap run's command may take of its user's queued signals and POSIX message-queue
/// bytes (found by an attacker's review: a run's 96,368 POSIX timers, each reserving a queued
/// signal, left the user's other programs unable to make a timer or `sigqueue`; its message queues
/// likewise took all of `RLIMIT_MSGQUEUE`). Set inside the sandbox's user namespace: since Linux
/// 5.14 the kernel counts these per (user namespace, uid), compares the namespace's own count
/// with the task's limit, and charges it to the parent levels too, so the run's whole take is
/// bounded while the host user keeps the rest of its budget. Soft and hard alike: raising a hard
/// limit needs `CAP_SYS_RESOURCE` in the host's namespace, which the sandbox never has, and a user
/// namespace the command makes itself takes the lowered limit as its parent level's bound.
/// The values are far above what real programs use (a handful of timers; message queues are rare)
/// and far below the usual host budgets (`RLIMIT_SIGPENDING` is about max_threads / 2, tens of
/// thousands; `RLIMIT_MSGQUEUE` 819,200 bytes): 4,096 queued signals, and 256 KiB of queues, three
/// of the default size (10 messages of 8 KiB). Never above the host's own limit (`within`).
pub const PER_USER_BUDGETS: [Rlimit; 2] = [
    Rlimit { resource: Resource::Sigpending, soft: 4096, hard: 4096 },
    Rlimit { resource: Resource::Msgqueue, soft: 256 * 1024, hard: 256 * 1024 },
];

/// No real-time scheduling and no nice value below the one the command starts with, in every
/// bwrap and Landlock run (reported by an attacker's review, kern32): the helper's limits were
/// the caller's, and where the user has an `RLIMIT_RTPRIO` (limits.d for an `audio` or `pipewire`
/// group, systemd's `LimitRTPRIO`, `docker --ulimit rtprio=`) `sched_setscheduler(SCHED_FIFO)`
/// needs no capability: a spinning FIFO thread per CPU leaves the host's own processes about 5%
/// of each CPU (`sched_rt_runtime_us`) for as long as the run lives; an `RLIMIT_NICE` above 0
/// lets it rank itself above them. Both 0 (most systems' defaults): the command may still raise
/// its nice value and use `SCHED_IDLE`/`SCHED_BATCH`. Lowering a limit needs no privilege.
pub const NO_PRIORITY_RAISE: [Rlimit; 2] = [
    Rlimit { resource: Resource::Rtprio, soft: 0, hard: 0 },
    Rlimit { resource: Resource::Nice, soft: 0, hard: 0 },
];

/// No core dump of any kind from the command's processes, in every bwrap and Landlock run: an
/// `RLIMIT_CORE` of one byte, soft and hard (found by an attacker's review, kern33). Where the
/// host's `kernel.core_pattern` is a pipe (systemd-coredump's, apport's: most distributions'), the
/// kernel hands each crash to that program, started as root in the host's namespaces, and streams
/// the whole core into it whatever the limit says, unless it is exactly 1, the kernel's sign for a
/// core helper's own crash: 0 stops a core file, never the pipe. A default run's crashes started
/// a host root process each and streamed 273 MB into them for one 256 MiB Python. One byte is
/// also below a core file's smallest (one page): none is written. The command cannot lower it to
/// 0 again: the filter answers its `setrlimit` and `prlimit64` of `RLIMIT_CORE` (`seccomp`). A host
/// whose hard limit is 0 cannot be raised to 1 (`within`): the pipe stays there, and the run says so
/// (the runner's `limits::core_dump`).
/// `limits`' own `RLIMIT_CORE` of 0 (against a core file in the cwd) gives way to it on Linux.
pub const NO_CORE_DUMP: Rlimit = Rlimit { resource: Resource::Core, soft: 1, hard: 1 };

/// The limits of a Linux run: those asked for, but `RLIMIT_CORE` (`NO_CORE_DUMP` stands for it,
/// last), then `every_run`'s.
pub fn linux_run(asked: &[Rlimit], every_run: &[Rlimit]) -> Vec<Rlimit> {
    asked.iter().filter(|l| l.resource != Resource::Core).chain(every_run).chain([&NO_CORE_DUMP]).copied().collect()
}

/// What every bwrap run's command may take of its user's locked memory: a quarter of the limit
/// the helper inherited (found by an attacker's review: a run `SHM_LOCK`ed the user's whole 8 MiB,
/// and its `MSG_ZEROCOPY` sends on the sandbox's loopback pinned 7.4 MB of the user's `locked_vm`;
/// the user's own `SHM_LOCK` and zerocopy sends failed while it lived). `SHM_LOCK` is counted per
/// user namespace like the message queues; zerocopy sends, io_uring buffers and perf buffers add
/// to one count of the user's, checked against the sender's own limit, so every run together
/// stays within one run's quarter. `mlock` is counted per process: 2 MiB of the usual 8 MiB is far
/// above the tens of KiB gpg or ssh-agent lock. Unlimited stays unlimited (nothing to share).
pub fn memlock_share(inherited_hard: u64) -> u64 {
    if inherited_hard == u64::MAX {
        return inherited_hard;
    }
    inherited_hard / 4
}

/// Descriptors kept below the helper's own `RLIMIT_NOFILE` for the command's hard limit.
pub const NOFILE_RESERVE: u64 = 512;

/// The command's hard `RLIMIT_NOFILE` in every bwrap run: `NOFILE_RESERVE` below the limit the
/// helper inherited (half of it when that is small). Why: the kernel refuses an SCM_RIGHTS send
/// when the user's count of descriptors in flight (one count per real uid, across every namespace)
/// exceeds the sender's soft `RLIMIT_NOFILE`, unless the sender is privileged in the host's
/// namespace, which no helper is. A command can raise that count to its own limit plus one
/// message's 253: found by an attacker's review, a run filled it to 20,240 and every other run's
/// network bridge (`listen.rs`, which hands its listener to the host that way) failed while it
/// lived. With every command's limit this far below, a helper sending at its inherited hard limit
/// is never refused by another run (the 512 cover one more message and many helpers' sends at once).
pub fn nofile_share(inherited_hard: u64) -> u64 {
    if inherited_hard < 2 * NOFILE_RESERVE {
        return inherited_hard / 2;
    }
    inherited_hard - NOFILE_RESERVE
}

/// The type `getrlimit`/`setrlimit` take the resource as: glibc has its own enum type.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub type RawResource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub type RawResource = libc::c_int;

/// One limit: `--rlimit=NAME:SOFT:HARD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    pub resource: Resource,
    pub soft: u64,
    pub hard: u64,
}

impl Rlimit {
    pub fn to_arg(&self) -> String {
        format!("--rlimit={}:{}:{}", self.resource.name(), self.soft, self.hard)
    }

    /// Parses the text after `--rlimit=`. The soft limit may not exceed the hard one.
    pub fn parse(text: &str) -> Option<Rlimit> {
        let mut parts = text.split(':');
        let resource = Resource::from_name(parts.next()?)?;
        let soft = parts.next()?.parse().ok()?;
        let hard = parts.next()?.parse().ok()?;
        if parts.next().is_some() || soft > hard {
            return None;
        }
        Some(Rlimit { resource, soft, hard })
    }

    /// What to set, given the current hard limit: never above it. Raising a hard limit needs
    /// privilege, and a lower existing limit is already at least as strict as the one asked for.
    pub fn within(&self, current_hard: u64) -> (u64, u64) {
        let hard = self.hard.min(current_hard);
        (self.soft.min(hard), hard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (r, n) in ALL {
            assert_eq!(Resource::from_name(n), Some(r));
            assert_eq!(r.name(), n);
        }
        assert_eq!(Resource::from_name("as"), None, "address space is deliberately not offered");
    }

    #[test]
    fn parse_and_format() {
        let l = Rlimit { resource: Resource::Cpu, soft: 2, hard: 3 };
        assert_eq!(l.to_arg(), "--rlimit=cpu:2:3");
        assert_eq!(Rlimit::parse("cpu:2:3"), Some(l));
        for bad in ["", "cpu", "cpu:2", "cpu:3:2", "cpu:2:3:4", "cpu:-1:3", "cpu:x:3", "stack:1:1"] {
            assert_eq!(Rlimit::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn shares_of_the_inherited_limits() {
        assert_eq!(memlock_share(8 << 20), 2 << 20);
        assert_eq!(memlock_share(64 << 10), 16 << 10);
        assert_eq!(memlock_share(u64::MAX), u64::MAX, "unlimited: nothing to share");
        // One message of 253 descriptors more than the command's limit still leaves room for helpers.
        for hard in [20_000, 1024, 524_288, 1_048_576, 600] {
            let command = nofile_share(hard);
            assert!(command + 253 < hard, "{hard}: {command}");
            assert!(command >= hard / 2, "{hard}: {command}");
        }
    }

    #[test]
    fn never_above_the_current_hard_limit() {
        let l = Rlimit { resource: Resource::Nofile, soft: 64, hard: 64 };
        assert_eq!(l.within(1024), (64, 64));
        assert_eq!(l.within(32), (32, 32));
        let cpu = Rlimit { resource: Resource::Cpu, soft: 2, hard: 3 };
        assert_eq!(cpu.within(u64::MAX), (2, 3));
        assert_eq!(cpu.within(2), (2, 2));
    }
}
