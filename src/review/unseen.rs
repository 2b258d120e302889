//! What lands at a path that the lines of its diff cannot show: a mode, a type (a symlink where the
//! host has a file, a file where it has a directory), a directory deleted whole. `diffChange` says
//! each in a line above the diff's header (where `patch` and `git apply` skip text), the way git's
//! extended headers (`old mode`, `new file mode`, `deleted file mode`) say them.
//!
//! Before, such a change diffed as '' or as a plain new file and landed all the same: `chmod 644`
//! of a 0600 secret, `chmod +x`, a host symlink replaced by a file holding its target's text, `rm
//! -rf src` (found by an attacker's review, land27).

use super::changes::{Change, ChangeKind, EntryType};
use super::host_fs::Stat;

/// The line for the listing's `changes` at a path (the last one is what the set makes there),
/// given the host's entry there now (`None`: none, or not reached without a symlink); `p` is the
/// path as the diff's header shows it (`content::header_path`: a control character quoted).
pub fn note(changes: &[Change], host: Option<Stat>, p: &str) -> String {
    let Some(last) = changes.last() else { return String::new() };
    if last.kind == ChangeKind::Deleted {
        return match last.entry_type {
            EntryType::Directory => format!("{p}: a directory deleted with everything in it\n"),
            _ => String::new(),
        };
    }
    let new_mode = last.mode.unwrap_or(0) & 0o7777;
    let Some(host) = host else {
        let executable = last.entry_type == EntryType::File && new_mode & 0o111 != 0;
        return if executable { format!("{p}: new, mode {new_mode:04o}\n") } else { String::new() };
    };
    let host_type = type_of(&host);
    if host_type != Some(last.entry_type) {
        let gone = if host.is_dir() { " (the directory deleted with everything in it)" } else { "" };
        return format!("{p}: {} on the host, {} in the change set{gone}\n", words(host_type), words(Some(last.entry_type)));
    }
    let host_mode = host.mode & 0o7777;
    if last.entry_type != EntryType::Symlink && host_mode != new_mode {
        return format!("{p}: mode {host_mode:04o} on the host, {new_mode:04o} in the change set\n");
    }
    String::new()
}

fn type_of(st: &Stat) -> Option<EntryType> {
    if st.is_file() {
        Some(EntryType::File)
    } else if st.is_dir() {
        Some(EntryType::Directory)
    } else if st.is_symlink() {
        Some(EntryType::Symlink)
    } else {
        None
    }
}

fn words(t: Option<EntryType>) -> &'static str {
    match t {
        Some(EntryType::File) => "a regular file",
        Some(EntryType::Directory) => "a directory",
        Some(EntryType::Symlink) => "a symlink",
        None => "a special file",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(kind: ChangeKind, entry_type: EntryType, mode: u32) -> Change {
        Change { path: "/ws/x".into(), rel: "x".into(), kind, entry_type, mode: Some(mode), size: None, target: None }
    }

    fn stat(mode: u32) -> Option<Stat> {
        Some(Stat { mode, ctime_ns: 0 })
    }

    #[test]
    fn says_what_the_lines_of_a_diff_cannot() {
        let file = |m| change(ChangeKind::Modified, EntryType::File, m);
        assert_eq!(note(&[file(0o100644)], stat(0o100600), "/ws/x"), "/ws/x: mode 0600 on the host, 0644 in the change set\n");
        assert_eq!(note(&[file(0o100644)], stat(0o100644), "/ws/x"), "");
        assert_eq!(note(&[file(0o100644)], stat(0o120777), "/ws/x"), "/ws/x: a symlink on the host, a regular file in the change set\n");
        assert_eq!(note(&[change(ChangeKind::Deleted, EntryType::Directory, 0o40755)], stat(0o40755), "/ws/x"), "/ws/x: a directory deleted with everything in it\n");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::File, 0o100755)], None, "/ws/x"), "/ws/x: new, mode 0755\n");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::File, 0o100644)], None, "/ws/x"), "");
        assert_eq!(note(&[change(ChangeKind::Modified, EntryType::Symlink, 0o120777)], stat(0o120777), "/ws/x"), "", "a symlink's mode is no change");
        assert_eq!(note(&[], stat(0o100644), "/ws/x"), "");
    }
}
