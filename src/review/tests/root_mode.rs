//! The workspace root's own mode. Found by an attacker's review: `chmod 700 .` in a review run was
//! not listed (the walk never read the upper directory's top), and the run saw the root as `0700`
//! whatever its mode on the host (the upper's, as the store made it). The upper's top now takes
//! the root's mode when the set is made, and a change of it is listed and applied as any
//! directory's mode change.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::review::changes::EntryType;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

/// A workspace of mode `0755` and a set made over it, with a new file.
fn over_0755() -> Fixture {
    let mut f = fixture();
    std::fs::set_permissions(&f.ws, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Made again over the root as it now is (as a run's set is made after the root exists).
    let meta = f.set.meta.clone();
    store::remove(&f.set, &f.lock).unwrap();
    (f.set, f.lock) = store::create(f.set.dir.parent().unwrap(), meta).unwrap();
    begin_now(&mut f);
    put(&f.set.upper(0), "new.txt", "n");
    f
}

/// `over_0755` and the run's `chmod <to> .`.
fn chmodded(to: u32) -> Fixture {
    let f = over_0755();
    std::fs::set_permissions(f.set.upper(0), std::fs::Permissions::from_mode(to)).unwrap();
    f
}

#[test]
fn the_set_begins_with_the_root_s_mode() {
    let f = over_0755();
    assert_eq!(mode(&f.set.upper(0)), 0o755, "the run sees the root as the host has it");
    let s = summarize(&f.set, 100).unwrap();
    assert_eq!(s.changes.len(), 1, "only new.txt: {:?}", s.changes);
}

#[test]
fn a_mode_change_of_the_root_is_listed_and_applied() {
    for to in [0o700, 0o777] {
        let f = chmodded(to);
        let s = summarize(&f.set, 100).unwrap();
        let ws = f.ws.to_string_lossy().into_owned();
        let root: Vec<_> = s.changes.iter().filter(|c| c.path == ws).map(|c| (c.kind, c.entry_type, c.mode)).collect();
        assert_eq!(root, [(ChangeKind::Modified, EntryType::Directory, Some(to))], "{:?}", s.changes);
        assert_eq!(s.counts.modified, 1);
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        let mut applied = out.applied.clone();
        applied.sort();
        assert_eq!(applied, [ws.clone(), f.ws.join("new.txt").to_string_lossy().into_owned()], "{out:?}");
        assert_eq!(mode(&f.ws), to);
        assert!(!f.set.dir.exists(), "applied whole");
    }
}

/// Asked for below the root: its own change stays pending, as a parent directory's does.
#[test]
fn a_path_below_the_root_does_not_apply_the_root_s_mode() {
    let f = chmodded(0o700);
    let out = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("new.txt")]), force: false }).unwrap();
    assert_eq!(out.applied, [f.ws.join("new.txt").to_string_lossy()]);
    assert_eq!(mode(&f.ws), 0o755);
    assert!(f.set.dir.exists(), "the root's mode is still pending");
    let s = summarize(&f.set, 100).unwrap();
    assert_eq!(s.changes.iter().map(|c| c.path.clone()).collect::<Vec<_>>(), [f.ws.to_string_lossy()]);
}

#[test]
fn a_root_the_host_changed_since_the_set_began_conflicts() {
    let f = chmodded(0o700);
    std::fs::set_permissions(&f.ws, std::fs::Permissions::from_mode(0o750)).unwrap();
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(out.conflicts.iter().map(|c| c.path.clone()).collect::<Vec<_>>(), [f.ws.to_string_lossy()], "{out:?}");
    assert_eq!(mode(&f.ws), 0o750, "left as the host has it");
    assert!(f.ws.join("new.txt").exists(), "the rest lands");
    assert!(f.set.dir.exists());
}

/// A set made before the upper's mode was kept: its `0700` top is no change of the root.
#[test]
fn a_set_without_the_root_s_kept_mode_lists_none() {
    let mut f = chmodded(0o700);
    f.set.meta.root_modes.clear();
    let s = summarize(&f.set, 100).unwrap();
    assert!(!s.changes.iter().any(|c| c.path == f.ws.to_string_lossy()), "{:?}", s.changes);
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(mode(&f.ws), 0o755);
}

/// Read and diffed like any directory's mode change (`''`); refused when the root did not change.
#[test]
fn the_root_s_mode_change_is_read_as_a_directory() {
    let f = chmodded(0o700);
    assert_eq!(crate::review::content::diff(&f.set, &f.ws).unwrap(), "");
    let f = over_0755();
    assert!(crate::review::content::diff(&f.set, &f.ws).is_err(), "not a change of the set");
}
