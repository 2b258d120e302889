//! Finding the Landlock supervisor's descendants in `/proc` (no PID namespace to list them), fast
//! enough to catch pid hoppers: processes that fork and exit at once, so that the live one is a new
//! pid every few microseconds. Each is acted on the moment its stat line is read, not after the
//! whole walk: `/proc` lists pids in increasing order and a child's pid is nearly always above its
//! parent's, so the walk meets a hopper's next generation right after its current one. Linear in
//! the number of processes: a set of the pids found, and the few met before their parent (pids
//! wrap around) kept by parent until it turns up.

use std::collections::{HashMap, HashSet};

use sandspawn_helper::proc_stat::{self, Entry};
use sandspawn_helper::threads;

/// Walk `/proc` once, calling `act` on every descendant of `root` as soon as it is found; returns
/// them all.
pub fn walk(root: i32, mut act: impl FnMut(&Entry)) -> Vec<Entry> {
    let mut known: HashSet<i32> = HashSet::from([root]);
    let mut waiting: HashMap<i32, Vec<Entry>> = HashMap::new();
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return found };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(entry) = proc_stat::parse(pid, &stat) else { continue };
        if !known.contains(&entry.ppid) {
            waiting.entry(entry.ppid).or_default().push(entry);
            continue;
        }
        // This one, then whatever was met earlier below it.
        let mut stack = vec![entry];
        while let Some(d) = stack.pop() {
            if !known.insert(d.pid) {
                continue;
            }
            let d = threads::with_threads_state(d);
            act(&d);
            found.push(d);
            stack.extend(waiting.remove(&d.pid).unwrap_or_default());
        }
    }
    found
}

/// The supervisor's own children, from `/proc/<me>/task/<me>/children` (it is single-threaded, so
/// its one task holds them all, orphans re-parented to it included): a few microseconds to read,
/// against milliseconds for a walk of a host's `/proc`, so a hopper's current generation, which
/// is always one of them, is met before it forks again. `None` where the kernel lacks the file
/// (CONFIG_PROC_CHILDREN): the walk alone finds them there.
pub fn own_children(me: i32) -> Option<Vec<i32>> {
    let text = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")).ok()?;
    Some(text.split_ascii_whitespace().filter_map(|p| p.parse().ok()).collect())
}
