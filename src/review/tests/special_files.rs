//! A fifo, socket or device the run made. Found by an attacker's review: `rm -rf src notes.txt &&
//! mkfifo src notes.txt` gave a set that listed nothing, and `applyChangeSet` removed it as
//! applied, the host's `src` and `notes.txt` left in place. The host entry a special file covers is
//! listed deleted and applied as a deletion; the special file, which a set cannot carry into the
//! workspace, is reported and held back, and keeps the set.

use super::*;
use crate::review::changes::EntryType;

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{}", std::io::Error::last_os_error());
}

/// Host `src/main.c` and `notes.txt`; the set has fifos in their place, and one where nothing was.
fn fifos() -> Fixture {
    let mut f = fixture();
    put(&f.ws, "src/main.c", "code\n");
    put(&f.ws, "notes.txt", "notes\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    for name in ["src", "notes.txt", "new.fifo"] {
        mkfifo(&up.join(name));
    }
    put(&up, "plain.txt", "p");
    f
}

#[test]
fn a_fifo_over_a_deleted_entry_lists_the_deletion_and_itself() {
    let f = fifos();
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let ws = f.ws.to_string_lossy().into_owned();
    let seen: Vec<(&str, ChangeKind, EntryType)> = s.changes.iter().map(|c| (c.path.strip_prefix(&ws).unwrap(), c.kind, c.entry_type)).collect();
    assert_eq!(seen, [("/notes.txt", ChangeKind::Deleted, EntryType::File), ("/plain.txt", ChangeKind::Added, EntryType::File), ("/src", ChangeKind::Deleted, EntryType::Directory)]);
    let special: Vec<&str> = s.host_risks.iter().filter(|r| r.detail.contains("fifo")).map(|r| r.path.strip_prefix(&ws).unwrap()).collect();
    assert_eq!(special, ["/new.fifo", "/notes.txt", "/src"], "{:?}", s.host_risks);
    assert!(!s.truncated, "every change is listed");
}

#[test]
fn a_fifo_over_a_deleted_entry_applies_the_deletion_holds_itself_back_and_keeps_the_set() {
    let f = fifos();
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    let ws = f.ws.to_string_lossy().into_owned();
    let mut applied: Vec<&str> = out.applied.iter().map(|p| p.strip_prefix(&ws).unwrap()).collect();
    applied.sort();
    assert_eq!(applied, ["/notes.txt", "/plain.txt", "/src"], "{out:?}");
    assert!(!f.ws.join("src").exists() && !f.ws.join("notes.txt").exists(), "the deletions landed");
    assert!(!f.ws.join("new.fifo").exists(), "no fifo is made on the host");
    let held: Vec<&str> = out.held_back.iter().map(|h| h.path.strip_prefix(&ws).unwrap()).collect();
    assert_eq!(held, ["/new.fifo", "/notes.txt", "/src"], "{out:?}");
    assert!(f.set.dir.exists(), "what did not land keeps the set");
    // Again: nothing more to delete, the fifos still held back.
    let again = apply(&f.set, &f.lock, &Request { paths: None, force: true }).unwrap();
    assert!(again.applied.is_empty() && again.held_back.len() == 3, "{again:?}");
    assert!(f.set.dir.exists());
}

/// A deletion under a fifo is judged like any other: the host's edit since the set began conflicts.
#[test]
fn a_fifo_over_an_entry_the_host_changed_since_conflicts() {
    let f = fifos();
    put(&f.ws, "src/main.c", "host edit\n");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.iter().any(|c| c.path.ends_with("/src")), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("src/main.c")).unwrap(), "host edit\n");
}
