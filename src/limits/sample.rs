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
//!
//! The host pays for every process of every sample, however idle (found by an attacker's review:
//! at five /proc files a process every 100 ms, 4,000 sleeping processes kept a host core busy for
//! the run's life). So a sample reads little per process (its stat, its status, its children;
//! the tree is followed through the parent pid each stat names), and the pause after a sample
//! grows with the tasks it read: `TASKS_PER_SECOND` at most, whatever the tree's size. A task is
//! a process or a thread: a process of many threads has its children on each of them, so the
//! sample reads one file per thread, and the kernel walks every thread to format its stat (found
//! by an attacker's review, kern29: counted as one process, one of 10,000 sleeping threads cost
//! the host 18% of a core for the run's life).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::ResourceUsage;

/// Sample the sandbox (`init`'s tree, `init` checked to be in the PID namespace `ns`) until aborted, keeping
/// the largest totals in `into`. `sandbox` says `(init, ns)` once bwrap reported them.
pub async fn sample_sandbox(sandbox: impl Fn() -> Option<(i32, u64)>, into: Arc<Mutex<ResourceUsage>>) {
    let mut delay = Duration::from_millis(10);
    let mut tasks = 0;
    loop {
        tokio::time::sleep(delay).await;
        delay = next_delay(delay, tasks);
        let Some((init, ns)) = sandbox() else { continue };
        // Reading /proc for a whole tree (thousands of processes, by the command's choice) is
        // blocking work: on the runtime's two workers it delayed every other run's timers (found by
        // an attacker's review: three trees of 5,000 processes made other runs' 2 s timeouts fire
        // at 2.7 s). When the sampler is aborted, the reading in progress ends on its own.
        if let Ok(Some(Reading { usage: now, tasks: read })) = tokio::task::spawn_blocking(move || sample(init, ns)).await {
            tasks = read;
            let mut best = into.lock().unwrap();
            // Totals only grow; a process caught both as a zombie and in its reaper's total is
            // counted twice for one sample at most, and a later sample corrects nothing downwards.
            best.user_cpu_ms = best.user_cpu_ms.max(now.user_cpu_ms);
            best.system_cpu_ms = best.system_cpu_ms.max(now.system_cpu_ms);
            best.max_rss_bytes = best.max_rss_bytes.max(now.max_rss_bytes);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
thread_local! {
    /// How many /proc files this thread opened or listed for sampling: the tests count the work a
    /// sample costs the host per process.
    pub(super) static PROC_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(target_os = "linux")]
fn counted() {
    #[cfg(test)]
    PROC_READS.with(|n| n.set(n.get() + 1));
}

/// The host's budget for one run's sampling: tasks read per second. A one-thread process costs
/// about 25 us to read (most of it the kernel formatting its stat, status and children), so a
/// run's sampling takes at most ~3% of a host core. A run of up to 100 tasks is sampled every
/// 100 ms; a larger one less often (1,000 processes, or one process of 1,000 threads: every
/// second).
pub(super) const TASKS_PER_SECOND: usize = 1_000;

/// The pause before the next sample, after one that read `tasks` tasks.
pub(super) fn next_delay(delay: Duration, tasks: usize) -> Duration {
    let paced = Duration::from_secs_f64(tasks as f64 / TASKS_PER_SECOND as f64);
    (delay * 2).min(Duration::from_millis(100)).max(paced)
}

/// One sample: what the tree used, and how many tasks were read for it: each process, and each
/// thread of a process of more than one (whose children file was read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub usage: ResourceUsage,
    pub tasks: usize,
}

/// One reading of the tree below `init` (itself included), or None when `init` is gone.
#[cfg(target_os = "linux")]
pub fn sample(init: i32, ns: u64) -> Option<Reading> {
    // A recycled init pid outside the sandbox is never read. Below it, a listed child whose pid
    // was recycled since has another parent, so it is neither counted nor followed.
    counted();
    if crate::pidns::ns_of(init) != Some(ns) {
        return None;
    }
    let tick_ms = 1000.0 / (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64);
    let mut total = ResourceUsage::default();
    let mut seen_init = false;
    let mut stack = vec![(init, None)];
    let mut tasks = 0;
    while let Some((pid, parent)) = stack.pop() {
        // Every pid taken is paid for, read or not: a listed child reaped before its stat was read
        // still cost that read.
        tasks += 1;
        let Some(stat) = read_stat(pid) else { continue };
        if parent.is_some_and(|p| p != stat.ppid) {
            continue;
        }
        seen_init |= pid == init;
        total.user_cpu_ms += stat.user as f64 * tick_ms;
        total.system_cpu_ms += stat.system as f64 * tick_ms;
        total.max_rss_bytes = total.max_rss_bytes.max(peak_rss_bytes(pid).unwrap_or(0.0));
        // A fork bomb cannot make one reading unbounded: PID_MAX_LIMIT tasks at most.
        if tasks < 4_194_304 {
            let (found, threads) = children(pid, &stat);
            // Its other threads, whose children files were read too.
            tasks += threads - 1;
            stack.extend(found.into_iter().map(|c| (c, Some(pid))));
        }
    }
    seen_init.then_some(Reading { usage: total, tasks })
}

#[cfg(not(target_os = "linux"))]
pub fn sample(_init: i32, _ns: u64) -> Option<Reading> {
    None
}

/// What a sample needs of /proc/PID/stat.
#[cfg(target_os = "linux")]
#[derive(Debug, PartialEq)]
pub(super) struct Stat {
    pub state: u8,
    pub ppid: i32,
    /// `utime + cutime` and `stime + cstime`, in clock ticks.
    pub user: u64,
    pub system: u64,
    pub threads: u64,
}

#[cfg(target_os = "linux")]
fn read_stat(pid: i32) -> Option<Stat> {
    counted();
    parse_stat(&crate::whole_file::read_to_string(format!("/proc/{pid}/stat"), crate::whole_file::PROC_FILE).ok()?)
}

/// Fields 3 (state), 4 (ppid), 14..=17 (times) and 20 (threads) of /proc/PID/stat.
#[cfg(target_os = "linux")]
pub(super) fn parse_stat(text: &str) -> Option<Stat> {
    let f: Vec<&str> = sandspawn_helper::proc_stat::fields(text)?.take(18).collect();
    if f.len() < 18 {
        return None;
    }
    let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
    Some(Stat { state: *f[0].as_bytes().first()?, ppid: f[1].parse().ok()?, user: n(11) + n(13), system: n(12) + n(14), threads: n(17) })
}

#[cfg(target_os = "linux")]
fn peak_rss_bytes(pid: i32) -> Option<f64> {
    counted();
    let text = crate::whole_file::read_to_string(format!("/proc/{pid}/status"), crate::whole_file::PROC_FILE).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The children of every thread of `pid`, and the tasks the sample pays for: 1 for a process of
/// one thread, else every task listed (at least 1), whose children files were each read. A live
/// process of one thread has them all on that thread (a thread's children move to another of its
/// group when it exits), read without listing its tasks; a zombie leader's live threads are listed.
#[cfg(target_os = "linux")]
fn children(pid: i32, stat: &Stat) -> (Vec<i32>, usize) {
    let parse = |list: String| list.split_whitespace().filter_map(|c| c.parse::<i32>().ok()).collect::<Vec<_>>();
    counted();
    if stat.threads == 1 && stat.state != b'Z' {
        return (crate::whole_file::read_to_string(format!("/proc/{pid}/task/{pid}/children"), crate::whole_file::PROC_FILE).map(parse).unwrap_or_default(), 1);
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return (Vec::new(), 1) };
    let mut out = Vec::new();
    let mut listed = 0;
    for task in tasks.flatten() {
        counted();
        listed += 1;
        out.extend(crate::whole_file::read_to_string(task.path().join("children"), crate::whole_file::PROC_FILE).map(parse).unwrap_or_default());
    }
    (out, listed.max(1))
}
