//! Names that are not UTF-8: a change's path shows them escaped (`changes::shown`), and everything
//! that looks at the host or the upper directory uses their bytes. Found by an attacker's review: a git
//! directory made below `x\377` was judged against `upper/x\u{fffd}/…`, which does not exist, so
//! it was no risk, landed, and the host's `git status` there ran its fsmonitor.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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
    assert_eq!(risks, [("/x\\xff".to_string(), crate::planted::RiskKind::GitDirectoryCreated)]);
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
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    assert_eq!((s.counts.added, s.counts.deleted), (1, 2), "{s:?}");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty() && out.held_back.is_empty(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join(raw(b"new\xff"))).unwrap(), "n");
    assert!(!f.ws.join("new\u{fffd}").exists());
    assert!(!f.ws.join(raw(b"gone\xfd")).exists() && !f.ws.join(raw(b"op/old\xfe")).exists());
    assert_eq!(std::fs::read_to_string(f.ws.join("gone\u{fffd}")).unwrap(), "twin");
    assert!(!f.set.dir.exists(), "everything landed: {out:?}");
}

// Found by an attacker's review: `hook\xFF.pth` was listed as `hook\u{FFFD}.pth`, the benign
// name beside it, and `readChange` of either read the benign one while apply landed both.
#[test]
fn a_name_that_is_not_utf8_is_shown_escaped_and_read_and_applied_as_itself() {
    let f = fixture();
    let up = f.set.upper(0);
    put(&up, "hook\u{FFFD}.pth", "benign");
    std::fs::write(up.join(raw(b"hook\xFF.pth")), "evil").unwrap();
    std::fs::create_dir(up.join(raw(b"d\xFE"))).unwrap();
    std::fs::write(up.join(raw(b"d\xFE/run.sh")), "payload").unwrap();
    let ws = f.ws.to_string_lossy().into_owned();
    let mut paths: Vec<String> = summarize(&f.set, &f.lock, 100).unwrap().changes.into_iter().map(|c| c.path).collect();
    paths.sort();
    assert_eq!(paths, [format!("{ws}/d\\xfe"), format!("{ws}/d\\xfe/run.sh"), format!("{ws}/hook\\xff.pth"), format!("{ws}/hook\u{FFFD}.pth")]);
    let read = |p: &str| crate::review::content::read(&f.set, Path::new(&format!("{ws}/{p}"))).unwrap().unwrap();
    assert_eq!(read("hook\u{FFFD}.pth"), b"benign");
    assert_eq!(read("hook\\xff.pth"), b"evil");
    assert_eq!(read("d\\xfe/run.sh"), b"payload");
    let one = [PathBuf::from(format!("{ws}/hook\\xff.pth"))];
    let real = one.iter().map(|p| f.ws.join(crate::review::content::resolve(&f.set, p, "paths[0]").unwrap().rel)).collect::<Vec<_>>();
    let out = apply(&f.set, &f.lock, &Request { paths: Some(&real), force: false }).unwrap();
    assert_eq!(out.applied, [format!("{ws}/hook\\xff.pth")]);
    assert_eq!(std::fs::read(f.ws.join(raw(b"hook\xFF.pth"))).unwrap(), b"evil");
    assert!(!f.ws.join("hook\u{FFFD}.pth").exists());
}

#[test]
fn a_path_two_names_show_alike_is_refused() {
    let f = fixture();
    let up = f.set.upper(0);
    put(&up, "x\\xff", "literal");
    std::fs::write(up.join(raw(b"x\xFF")), "raw").unwrap();
    // The host's entry counts too: one there and one in the set are as ambiguous.
    put(&f.ws, "y\\xfe/a", "host");
    std::fs::create_dir(up.join(raw(b"y\xFE"))).unwrap();
    for key in ["x\\xff", "y\\xfe/a"] {
        let e = crate::review::content::read(&f.set, &f.ws.join(key)).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::InvalidOptions);
        assert!(e.message.contains("names 2 entries"), "{}", e.message);
    }
}
