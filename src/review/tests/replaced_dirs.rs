//! A directory replaced by a file or a symlink. Found by an attacker's review: the set showed one
//! `M src` and no deletion, and apply compared only the directory's own ctime, so the host's edits
//! inside it after the set began were removed with no conflict.

use std::path::Path;

use super::*;
use crate::review::changes::EntryType;

/// Host `src/deep/important.c`; the set makes `src` a file or a symlink.
fn replaced(symlink: bool) -> Fixture {
    let mut f = fixture();
    put(&f.ws, "src/deep/important.c", "int main(){}\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    if symlink {
        std::os::unix::fs::symlink("elsewhere", up.join("src")).unwrap();
    } else {
        put(&up, "src", "not a dir any more\n");
    }
    f
}

#[test]
fn the_directory_a_file_replaces_is_shown_deleted() {
    for symlink in [false, true] {
        let f = replaced(symlink);
        let s = summarize(&f.set, &f.lock, 100).unwrap();
        let ws = f.ws.to_string_lossy().into_owned();
        let seen: Vec<(&str, ChangeKind, EntryType)> = s.changes.iter().map(|c| (c.path.strip_prefix(&ws).unwrap(), c.kind, c.entry_type)).collect();
        let new = if symlink { EntryType::Symlink } else { EntryType::File };
        assert_eq!(seen, [("/src", ChangeKind::Deleted, EntryType::Directory), ("/src", ChangeKind::Added, new)]);
        assert_eq!((s.counts.added, s.counts.modified, s.counts.deleted), (1, 0, 1));
    }
}

#[test]
fn host_edits_inside_a_directory_a_file_replaces_conflict() {
    for symlink in [false, true] {
        let f = replaced(symlink);
        put(&f.ws, "src/deep/important.c", "int main(){ return 42; }\n");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert_eq!(out.conflicts.len(), 1, "{out:?}");
        assert!(out.applied.is_empty(), "{out:?}");
        assert_eq!(std::fs::read_to_string(f.ws.join("src/deep/important.c")).unwrap(), "int main(){ return 42; }\n");
        assert!(f.set.dir.exists(), "the replacement stays pending");
        let forced = apply(&f.set, &f.lock, &Request { paths: None, force: true }).unwrap();
        assert!(forced.conflicts.is_empty(), "{forced:?}");
        assert!(!f.ws.join("src").symlink_metadata().unwrap().is_dir());
    }
}

#[test]
fn a_directory_nobody_touched_is_replaced() {
    let f = replaced(false);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty() && out.held_back.is_empty(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("src")).unwrap(), "not a dir any more\n");
    assert!(!f.set.dir.exists());
    assert!(!Path::new(&f.ws.join("src/deep")).exists());
}
