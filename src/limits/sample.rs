//! `resourceUsage` under bwrap, sampled from /proc.
//!
//! Why not `wait4`: the process sandspawn spawns and reaps is bwrap's outer process, and it returns
//! as soon as its init (pid 1 of the sandbox) reports the command's exit, without reaping that
//! init. Its rusage therefore holds bwrap's own few milliseconds, never the command's. So while the
//! sandbox runs, its processes are read from /proc: at any instant the tree's total CPU time is the
//! sum over its live processes of their own time plus what they reaped (`utime + stime + cutime +
//! cstime`: an exited process is counted by its reaper, the sandbox's init for orphans), and the
//! largest resident set is the largest `VmHWM`. Samples come after 10, 30, 70, 150 ms and then
//! every 100 ms, so up to one interval of CPU at the very end is missed, and a process living
//! shorter than an interval may not count towards `maxRssBytes`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::ResourceUsage;

/// Sample the sandbox (`init`'s tree, limited to the PID namespace `ns`) until aborted, keeping
/// the largest totals in `into`. `sandbox` says `(init, ns)` once bwrap reported them.
pub async fn sample_sandbox(sandbox: impl Fn() -> Option<(i32, u64)>, into: Arc<Mutex<ResourceUsage>>) {
    let mut delay = Duration::from_millis(10);
    loop {
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(100));
        let Some((init, ns)) = sandbox() else { continue };
        // Reading /proc for a whole tree (thousands of processes, by the command's choice) is
        // blocking work: on the runtime's two workers it delayed every other run's timers (found by
        // an attacker's review: three trees of 5,000 processes made other runs' 2 s timeouts fire
        // at 2.7 s). When the sampler is aborted, the reading in progress ends on its own.
        if let Ok(Some(now)) = tokio::task::spawn_blocking(move || sample(init, ns)).await {
            let mut best = into.lock().unwrap();
            // Totals only grow; a process caught both as a zombie and in its reaper's total is
            // counted twice for one sample at most, and a later sample corrects nothing downwards.
            best.user_cpu_ms = best.user_cpu_ms.max(now.user_cpu_ms);
            best.system_cpu_ms = best.system_cpu_ms.max(now.system_cpu_ms);
            best.max_rss_bytes = best.max_rss_bytes.max(now.max_rss_bytes);
        }
    }
}

/// One reading of the tree below `init` (itself included), or None when `init` is gone.
#[cfg(target_os = "linux")]
pub fn sample(init: i32, ns: u64) -> Option<ResourceUsage> {
    let tick_ms = 1000.0 / (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64);
    let mut total = ResourceUsage::default();
    let mut seen_init = false;
    let mut stack = vec![init];
    let mut visited = 0;
    while let Some(pid) = stack.pop() {
        // A recycled pid outside the sandbox is never counted (nor its children followed).
        if crate::pidns::ns_of(pid) != Some(ns) {
            continue;
        }
        let Some((user, system)) = cpu_ticks(pid) else { continue };
        seen_init |= pid == init;
        total.user_cpu_ms += user as f64 * tick_ms;
        total.system_cpu_ms += system as f64 * tick_ms;
        total.max_rss_bytes = total.max_rss_bytes.max(peak_rss_bytes(pid).unwrap_or(0.0));
        visited += 1;
        // A fork bomb cannot make one reading unbounded: PID_MAX_LIMIT processes at most.
        if visited < 4_194_304 {
            stack.extend(children(pid));
        }
    }
    seen_init.then_some(total)
}

#[cfg(not(target_os = "linux"))]
pub fn sample(_init: i32, _ns: u64) -> Option<ResourceUsage> {
    None
}

/// `(utime + cutime, stime + cstime)` in clock ticks, from /proc/PID/stat.
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: i32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Fields 14..=17 of /proc/PID/stat (the 12th to 15th after the command's name).
#[cfg(target_os = "linux")]
pub(super) fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let f: Vec<u64> = sandspawn_helper::proc_stat::fields(text)?.skip(11).take(4).map(|s| s.parse().unwrap_or(0)).collect();
    (f.len() == 4).then(|| (f[0] + f[2], f[1] + f[3]))
}

#[cfg(target_os = "linux")]
fn peak_rss_bytes(pid: i32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The children of every thread of `pid`.
#[cfg(target_os = "linux")]
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(list.split_whitespace().filter_map(|c| c.parse::<i32>().ok()));
        }
    }
    out
}
