//! `SpawnResult.resourceUsage` and `SpawnResult.limitExceeded`.

use serde::Serialize;

use super::{Limit, LimitPlan};

/// What the run used. Without bwrap: `wait4`'s rusage of the spawned process, which is the command
/// itself and includes every descendant it waited for. Under bwrap: bwrap's own rusage plus the
/// sandbox's processes as sampled from /proc (see `sample`).
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
