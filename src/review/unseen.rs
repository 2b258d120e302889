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
    let Some(host) = host else { return new_entry(last, new_mode, p) };
    let host_type = type_of(&host);
    if host_type != Some(last.entry_type) {
        let gone = if host.is_dir() { " (the directory deleted with everything in it)" } else { "" };
        return format!("{p}: {} on the host, {} in the change set{gone}\n", words(host_type), words(Some(last.entry_type)));
    }
    // A link's lines are its target's text, as a one-line file's would be (found by an attacker's
    // review, fix28: `config -> config.dev.json` made `-> ~/.ssh/authorized_keys` read as a
    // file's change). Its mode is no change.
    if last.entry_type == EntryType::Symlink {
        return format!("{p}: a symlink on the host and in the change set (its lines are its target, not a file's content)\n");
    }
    let host_mode = host.mode & 0o7777;
    if host_mode != new_mode {
        return format!("{p}: mode {host_mode:04o} on the host, {new_mode:04o} in the change set\n");
    }
    String::new()
}

/// What the diff of `last`, made where the host has nothing, cannot show: a symlink (its lines are
/// its target's text, as a one-line file's would be; apply makes the link, and what the host writes
/// at that name later lands where it leads), an executable file, and a file or directory others may
/// write (any local user then rewrites what the host runs or reads) or with a special bit. Found by
/// an attacker's review (fix28): each diffed as an ordinary new file, or as nothing.
fn new_entry(last: &Change, new_mode: u32, p: &str) -> String {
    match last.entry_type {
        EntryType::Symlink => format!("{p}: new, a symlink to {}\n", quoted(last.target.as_deref().unwrap_or(""))),
        EntryType::File => new_file(last, new_mode, p),
        EntryType::Directory if new_mode & (0o7000 | 0o002) != 0 => format!("{p}: new, a directory of mode {new_mode:04o}\n"),
        _ => String::new(),
    }
}

/// A new file's line: its mode when executable, writable by others or with a special bit, and
/// `empty` when it is (an empty file has no line to diff, so it showed nothing at all while apply
/// landed it: an empty `.npmignore` makes `npm publish` ignore `.gitignore` and ship `.env`; found
/// by an attacker's review, mode28).
fn new_file(c: &Change, mode: u32, p: &str) -> String {
    let odd_mode = mode & (0o7000 | 0o111 | 0o002) != 0;
    let says: Vec<String> = [odd_mode.then(|| format!("mode {mode:04o}")), (c.size == Some(0)).then(|| "empty".to_string())].into_iter().flatten().collect();
    if says.is_empty() {
        String::new()
    } else {
        format!("{p}: new, {}\n", says.join(", "))
    }
}

/// A symlink's target as a line shows it: as it is, or, with a control character or a double quote
/// in it (the run's to choose: a newline would begin a line of the diff's own), quoted and escaped.
fn quoted(target: &str) -> String {
    if target.chars().any(|c| c.is_control() || c == '"') {
        format!("{target:?}")
    } else {
        target.to_string()
    }
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
        let relinked = "/ws/x: a symlink on the host and in the change set (its lines are its target, not a file's content)\n";
        assert_eq!(note(&[change(ChangeKind::Modified, EntryType::Symlink, 0o120777)], stat(0o120777), "/ws/x"), relinked, "a symlink's mode is no change");
        let empty = |m| Change { size: Some(0), ..change(ChangeKind::Added, EntryType::File, m) };
        assert_eq!(note(&[empty(0o100644)], None, "/ws/x"), "/ws/x: new, empty\n");
        assert_eq!(note(&[empty(0o100755)], None, "/ws/x"), "/ws/x: new, mode 0755, empty\n");
        assert_eq!(note(&[], stat(0o100644), "/ws/x"), "");
    }

    #[test]
    fn says_a_new_symlink_and_a_new_entry_others_may_write() {
        let mut link = change(ChangeKind::Added, EntryType::Symlink, 0o120777);
        link.target = Some("/home/u/.bashrc".into());
        assert_eq!(note(&[link.clone()], None, "/ws/x"), "/ws/x: new, a symlink to /home/u/.bashrc\n");
        link.target = Some("a\n+b".into());
        assert_eq!(note(&[link], None, "/ws/x"), "/ws/x: new, a symlink to \"a\\n+b\"\n", "a newline cannot begin a line");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::File, 0o100666)], None, "/ws/x"), "/ws/x: new, mode 0666\n");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::File, 0o104644)], None, "/ws/x"), "/ws/x: new, mode 4644\n");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::File, 0o100664)], None, "/ws/x"), "", "a group's write is a umask's");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::Directory, 0o40777)], None, "/ws/x"), "/ws/x: new, a directory of mode 0777\n");
        assert_eq!(note(&[change(ChangeKind::Added, EntryType::Directory, 0o40755)], None, "/ws/x"), "");
    }
}
