//! Names that are not UTF-8: a change's path is shown as lossy text, but everything that looks at
//! the host or the upper directory must use its bytes. Found by an attacker's review: a git
//! directory made below `x\377` was judged against `upper/x\u{fffd}/…`, which does not exist, so
//! it was no risk, landed, and the host's `git status` there ran its fsmonitor.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::*;

fn raw(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

#[test]
fn a_git_directory_below_a_name_that_is_not_utf8_is_held_back() {
    let mut f = fixture();
    begin_now(&mut f);
    let up = f.set.upper(0);
    let gd = up.join(raw(b"x\xff"));
    for d in ["objects", "refs/heads", "sub"] {
        std::fs::create_dir_all(gd.join(d)).unwrap();
    }
    std::fs::write(gd.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(gd.join("config"), "[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch /tmp/x; false\"\n").unwrap();
    let risks = risks_of(&f);
    assert_eq!(risks, [("/x\u{fffd}".to_string(), crate::planted::RiskKind::GitDirectoryCreated)]);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(!out.held_back.is_empty(), "{out:?}");
    assert!(!f.ws.join(raw(b"x\xff/config")).exists(), "the planted configuration stays in the set: {out:?}");
}

#[test]
fn names_that_are_not_utf8_are_applied_as_their_bytes() {
    let mut f = fixture();
    put(&f.ws, "op/keep", "k");
    std::fs::write(f.ws.join(raw(b"op/old\xfe")), "o").unwrap();
    std::fs::write(f.ws.join(raw(b"gone\xfd")), "g").unwrap();
    // A lossy twin on the host: what must not be touched in their place.
    put(&f.ws, "gone\u{fffd}", "twin");
    begin_now(&mut f);
    let up = f.set.upper(0);
    std::fs::write(up.join(raw(b"new\xff")), "n").unwrap();
    whiteout(&up.join(raw(b"gone\xfd")));
    put(&up, "op/keep", "k");
    xattr(&up.join("op"), c"user.overlay.opaque", b"y");
    let s = summarize(&f.set, 100).unwrap();
    assert_eq!((s.counts.added, s.counts.deleted), (1, 2), "{s:?}");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty() && out.held_back.is_empty(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join(raw(b"new\xff"))).unwrap(), "n");
    assert!(!f.ws.join("new\u{fffd}").exists());
    assert!(!f.ws.join(raw(b"gone\xfd")).exists() && !f.ws.join(raw(b"op/old\xfe")).exists());
    assert_eq!(std::fs::read_to_string(f.ws.join("gone\u{fffd}")).unwrap(), "twin");
    assert!(!f.set.dir.exists(), "everything landed: {out:?}");
}
