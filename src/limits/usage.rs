//! `SpawnResult.resourceUsage` and `SpawnResult.limitExceeded`.

use serde::Serialize;

use super::{Limit, LimitPlan};

/// What the run used. Without bwrap: `wait4`'s rusage of the spawned process, which is the command
/// itself and includes every descendant it waited for. Under bwrap: bwrap's own rusage plus the
/// sandbox's processes as sampled from /proc (see `sample`). The peak resident set: see `own_usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUsage {
    pub user_cpu_ms: f64,
    pub system_cpu_ms: f64,
    /// The largest resident set of any single process of the tree.
    pub max_rss_bytes: f64,
}

impl ResourceUsage {
    pub fn from_rusage(r: &libc::rusage) -> ResourceUsage {
        let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
        // Linux reports ru_maxrss in KiB, macOS in bytes.
        let rss_unit = if cfg!(target_os = "macos") { 1.0 } else { 1024.0 };
        ResourceUsage { user_cpu_ms: ms(r.ru_utime), system_cpu_ms: ms(r.ru_stime), max_rss_bytes: r.ru_maxrss as f64 * rss_unit }
    }
}

/// This process's peak resident set, in bytes, or 0 when unknown: `getrusage(RUSAGE_SELF)`'s
/// `ru_maxrss`, the kernel's `VmHWM` of this process (or a larger peak it had before), one system
/// call on every run's path where reading and parsing `/proc/self/status` cost tens of
/// microseconds in a process of many threads.
pub fn host_peak_rss_bytes() -> f64 {
    // SAFETY: an all-zero rusage is a valid value, and getrusage only writes to it.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) } != 0 {
        return 0.0;
    }
    ResourceUsage::from_rusage(&r).max_rss_bytes
}

/// The run's usage from the spawned process's `wait4` rusage (`reaped`) and what sampling /proc
/// saw of the tree (`sampled`): CPU from the rusage, plus the sampled tree's when that tree is a
/// sandbox the rusage does not include (`tree_apart`, bwrap); the peak resident set from both,
/// except that a rusage peak near `host_peak` (this process's own peak when it spawned) or above is
/// not the command's: the child is spawned with vfork semantics, sharing this process's memory
/// until it executes, and the kernel keeps that memory's peak as the child's (`exec_mmap`). "Near":
/// the kernel's own record of the peak lags behind what `/proc` shows by what was freed since, so
/// the inherited value can be a little below the one read before the spawn. A command whose own
/// peak lies that high is reported from the samples alone.
pub fn own_usage(reaped: ResourceUsage, sampled: ResourceUsage, tree_apart: bool, host_peak: f64) -> ResourceUsage {
    let inherited = host_peak > 0.0 && reaped.max_rss_bytes >= host_peak * 0.9;
    let reaped_rss = if inherited { 0.0 } else { reaped.max_rss_bytes };
    let (user, system) = if tree_apart { (reaped.user_cpu_ms + sampled.user_cpu_ms, reaped.system_cpu_ms + sampled.system_cpu_ms) } else { (reaped.user_cpu_ms, reaped.system_cpu_ms) };
    ResourceUsage { user_cpu_ms: user, system_cpu_ms: system, max_rss_bytes: reaped_rss.max(sampled.max_rss_bytes) }
}

impl ResourceUsage {
    /// Two disjoint sets of processes together (bwrap's own, reaped, and its sandbox, sampled).
    pub fn plus(&self, other: &ResourceUsage) -> ResourceUsage {
        ResourceUsage {
            user_cpu_ms: self.user_cpu_ms + other.user_cpu_ms,
            system_cpu_ms: self.system_cpu_ms + other.system_cpu_ms,
            max_rss_bytes: self.max_rss_bytes.max(other.max_rss_bytes),
        }
    }
}

/// The limit that ended the run, from kernel evidence only: the command died of SIGXCPU (the CPU
/// rlimit) or SIGXFSZ (the file size rlimit) and that limit was set. A memory or process rlimit
/// leaves no such trace (allocations and forks just fail), so it is never reported here.
pub fn exceeded(plan: &LimitPlan, signal: Option<&str>) -> Option<Limit> {
    let limit = match signal? {
        "SIGXCPU" => Limit::CpuTime,
        "SIGXFSZ" => Limit::FileSize,
        _ => return None,
    };
    plan.requested(limit).then_some(limit)
}
