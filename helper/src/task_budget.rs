//! The sandbox's bound on the tasks (processes and threads) alive in it at once: its pid
//! namespace's own `kernel.pid_max` (Linux 6.14 and later).
//!
//! Why: every task of the sandbox also takes a pid of the host's namespace, one budget for the
//! whole machine (`kernel.pid_max`, 32,768 by default below 32 CPUs without systemd's raise), and
//! nothing bounded a run's share of it but `limits.processes`, which is refused for root and is
//! not a default: found by an attacker's review (kern41), a default read-only run's threads took
//! every pid the host had left, and every `fork` and `pthread_create` of every user on the host
//! failed with `EAGAIN` while it lived. Since 6.14 a pid namespace has a `pid_max` of its own, and a
//! pid is allocated only where every level's allows it: set here, in the sandbox's namespace (whose
//! owner the helper is until it drops its capabilities), it bounds every process of the run,
//! whatever namespaces they make below. The command cannot raise it (its `/proc/sys` is read-only,
//! and it does not own the namespace).
//!
//! Before 6.14 the file is the host's one global `pid_max`, which the helper, as the host's root,
//! could write through its copy of proc: it is left alone there.

use sandspawn_helper::kernel_release;
use sandspawn_helper::report::{setup, Failure};

use crate::describe;
use crate::private_mounts::write_file;

/// At most this many pids in the sandbox's namespace: a quarter of the smallest default
/// `pid_max`, far above what a build or a test suite runs at once. A value already lower stays.
pub const TASKS: u64 = 8192;

/// Lower `kernel/pid_max` under `sys` (a writable proc's `sys`, of the sandbox's pid namespace)
/// where the kernel keeps one per namespace; elsewhere nothing is bounded (the README's Limits).
pub fn limit(sys: &str) -> Result<(), Failure> {
    if !kernel_release::at_least(&kernel_release::running(), 6, 14) {
        return Ok(());
    }
    let path = format!("{sys}/kernel/pid_max");
    let now = std::fs::read_to_string(&path).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        setup(errno, format!("reading {path} failed: {}", describe(errno)))
    })?;
    let now: u64 = now.trim().parse().map_err(|_| setup(0, format!("{path} holds no number: {now:?}")))?;
    if now > TASKS {
        write_file(&path, &TASKS.to_string())?;
    }
    Ok(())
}
