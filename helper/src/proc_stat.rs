//! Reading one line of `/proc/<pid>/stat`: the fields after the command's name (`fields`, which the
//! addon's reaper and resource sampler read too), and the parent and the state, what the Landlock
//! supervisor needs to find and freeze the command's tree. Pure: the callers read the files.

/// A process of the table: its pid, its parent's and its state letter (`R`, `S`, `D`, `T`, `Z`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub pid: i32,
    pub ppid: i32,
    pub state: u8,
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
    Some(Entry { pid, ppid, state })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_after_the_last_parenthesis() {
        assert_eq!(parse(7, "7 (a) b) R 3 7 7 0 -1"), Some(Entry { pid: 7, ppid: 3, state: b'R' }));
        assert_eq!(parse(9, "9 (sh) T 1 9 9"), Some(Entry { pid: 9, ppid: 1, state: b'T' }));
        assert!(parse(9, "9 (sh) T 1 9 9").unwrap().is_stopped());
        assert!(parse(9, "9 (x) Z 1").unwrap().is_dead());
        assert_eq!(parse(9, "9 (sh"), None);
        assert_eq!(parse(9, "9 (sh) R"), None);
        assert_eq!(fields("5 (a b) c) S 1 5").unwrap().collect::<Vec<_>>(), ["S", "1", "5"]);
    }
}
