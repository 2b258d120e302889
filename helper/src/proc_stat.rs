//! Reading one line of `/proc/<pid>/stat`: the fields after the command's name (`fields`, which the
//! addon's reaper and resource sampler read too), and the parent and the state, what the Landlock
//! supervisor needs to find and freeze the command's tree (with its threads' states where the
//! leader's own says zombie: `group_state`). Pure: the callers read the files.

/// A process of the table: its pid, its parent's, its state letter (`R`, `S`, `D`, `T`, `Z`...)
/// and when it started (clock ticks since boot): a pid and its start time name one process, where
/// a pid alone may name another once the first is reaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub pid: i32,
    pub ppid: i32,
    pub state: u8,
    pub start: u64,
}

impl Entry {
    /// Gone but not reaped yet: nothing to signal.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }

    /// Stopped by a signal (or by a tracer): it runs no code, so it forks no more.
    pub fn is_stopped(&self) -> bool {
        matches!(self.state, b'T' | b't')
    }
}

/// The state of a process whose leader's stat line says `leader`, given its other threads' states.
/// A leader that ended its own thread (`pthread_exit`, or `exit` of the main thread alone) while
/// others run shows `Z` for the whole process in `/proc/<pid>/stat`, yet the process lives on (its
/// threads run the command's code) and `waitpid` cannot reap it until its last thread exits: it is
/// running while any thread runs, stopped once every live thread is, and dead only with none left.
pub fn group_state(leader: u8, others: impl IntoIterator<Item = u8>) -> u8 {
    if leader != b'Z' {
        return leader;
    }
    let mut stopped = false;
    for state in others {
        match state {
            b'Z' | b'X' | b'x' => {}
            b'T' | b't' => stopped = true,
            running => return running,
        }
    }
    if stopped { b'T' } else { leader }
}

/// The fields of a stat line from the third (the state) on. The command's name, the second, comes
/// in parentheses and may hold anything, spaces and `)` included, so they are read after the last `)`.
pub fn fields(stat: &str) -> Option<std::str::SplitAsciiWhitespace<'_>> {
    Some(stat[stat.rfind(')')? + 1..].split_ascii_whitespace())
}

/// The entry of `pid` from its stat line.
pub fn parse(pid: i32, stat: &str) -> Option<Entry> {
    let mut fields = fields(stat)?;
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    // `starttime` is field 22; `ppid`, just read, was field 4.
    let start = fields.nth(22 - 5)?.parse().ok()?;
    Some(Entry { pid, ppid, state, start })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_after_the_last_parenthesis() {
        // Fields 5 to 21 as 0, then a start time of 4242 and a 23rd field.
        let rest = format!("{} 4242 99", "0 ".repeat(17).trim_end());
        assert_eq!(parse(7, &format!("7 (a) b) R 3 {rest}")), Some(Entry { pid: 7, ppid: 3, state: b'R', start: 4242 }));
        assert_eq!(parse(9, &format!("9 (sh) T 1 {rest}")), Some(Entry { pid: 9, ppid: 1, state: b'T', start: 4242 }));
        assert!(parse(9, &format!("9 (sh) T 1 {rest}")).unwrap().is_stopped());
        assert!(parse(9, &format!("9 (x) Z 1 {rest}")).unwrap().is_dead());
        assert_eq!(parse(9, "9 (sh"), None);
        assert_eq!(parse(9, "9 (sh) R"), None);
        assert_eq!(parse(9, "9 (sh) R 1 0 0"), None, "no start time");
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        let me = parse(std::process::id() as i32, &own).unwrap();
        assert!(me.start > 0 && me.ppid > 0);
        assert_eq!(fields("5 (a b) c) S 1 5").unwrap().collect::<Vec<_>>(), ["S", "1", "5"]);
    }

    #[test]
    fn a_leader_that_ended_while_its_threads_live_is_the_state_of_its_threads() {
        assert_eq!(group_state(b'S', [b'R']), b'S', "a live leader says it all");
        assert_eq!(group_state(b'Z', []), b'Z', "a zombie: nothing left to run");
        assert_eq!(group_state(b'Z', [b'Z', b'X']), b'Z', "its threads are exiting too");
        assert_eq!(group_state(b'Z', [b'S']), b'S', "a worker thread lives on");
        assert_eq!(group_state(b'Z', [b'T', b'R']), b'R', "one thread still runs: not stopped");
        assert_eq!(group_state(b'Z', [b'T', b't', b'Z']), b'T', "every live thread is stopped");
    }
}
