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
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    assert_eq!(s.changes.len(), 1, "only new.txt: {:?}", s.changes);
}

#[test]
fn a_mode_change_of_the_root_is_listed_and_applied() {
    for to in [0o700, 0o711] {
        let f = chmodded(to);
        let s = summarize(&f.set, &f.lock, 100).unwrap();
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
    let s = summarize(&f.set, &f.lock, 100).unwrap();
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
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    assert!(!s.changes.iter().any(|c| c.path == f.ws.to_string_lossy()), "{:?}", s.changes);
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(mode(&f.ws), 0o755);
}

/// Read and diffed like any directory's mode change (a line saying it: `unseen`); refused when the
/// root did not change.
#[test]
fn the_root_s_mode_change_is_read_as_a_directory() {
    let f = chmodded(0o700);
    assert_eq!(crate::review::content::diff(&f.set, &f.ws).unwrap(), format!("{}: mode 0755 on the host, 0700 in the change set\n", f.ws.display()));
    let f = over_0755();
    assert!(crate::review::content::diff(&f.set, &f.ws).is_err(), "not a change of the set");
}

fn kind(r: &crate::planted::HostRisk) -> String {
    serde_json::to_value(r.kind).unwrap().as_str().unwrap().to_string()
}

/// The host risks of `f`'s set at `path`, by kind.
fn risks_at(f: &Fixture, path: &Path) -> Vec<String> {
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    s.host_risks.iter().filter(|r| r.path == path.to_string_lossy()).map(kind).collect()
}

/// Found by an attacker's review: `chmod 777 .` in a review run landed with no host risk, and the
/// host's workspace became writable by every local user (who could then replace `.git`, `.envrc`).
/// Group or other write without the sticky bit is held back; a forced apply naming the root lands it.
#[test]
fn a_root_opened_to_other_users_is_held_back() {
    for to in [0o777, 0o775, 0o757] {
        let f = chmodded(to);
        assert_eq!(risks_at(&f, &f.ws), ["permissions-changed"], "{to:o}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert_eq!(out.held_back.iter().map(|h| (h.path.clone(), kind(&h.risk))).collect::<Vec<_>>(), [(f.ws.to_string_lossy().into_owned(), "permissions-changed".to_string())], "{out:?}");
        assert_eq!(mode(&f.ws), 0o755, "{to:o} not landed");
        assert!(f.ws.join("new.txt").exists(), "the rest lands");
        let out = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.clone()]), force: true }).unwrap();
        assert!(out.held_back.is_empty(), "{out:?}");
        assert_eq!(mode(&f.ws), to, "forced");
    }
    // Sticky, as `/tmp`, keeps others from replacing what they do not own, but not from creating
    // new names (an `.envrc`): found by an attacker's review, `chmod 1777 .` landed unflagged.
    for to in [0o1777, 0o1775] {
        let f = chmodded(to);
        assert_eq!(risks_at(&f, &f.ws), ["permissions-changed"], "{to:o}");
    }
}

/// Found by an attacker's review: `chmod 666 Makefile` and `chmod 777 scripts/build.sh` landed
/// unflagged, and every local user could then rewrite the build. Write for others added to a file,
/// or for the group to an existing one, is held back; a new file's group bit follows the umask.
#[test]
fn a_file_opened_to_other_users_is_held_back() {
    let mut f = fixture();
    for (name, m) in [("Makefile", 0o644), ("build.sh", 0o755), ("shared.txt", 0o664)] {
        put(&f.ws, name, "old");
        std::fs::set_permissions(f.ws.join(name), std::fs::Permissions::from_mode(m)).unwrap();
    }
    begin_now(&mut f);
    let up = f.set.upper(0);
    for (name, m) in [("Makefile", 0o666), ("build.sh", 0o775), ("shared.txt", 0o664), ("open.sh", 0o777), ("group.txt", 0o664)] {
        put(&up, name, "new");
        std::fs::set_permissions(up.join(name), std::fs::Permissions::from_mode(m)).unwrap();
    }
    assert_eq!(risks_at(&f, &f.ws.join("Makefile")), ["permissions-changed"], "other write added");
    assert_eq!(risks_at(&f, &f.ws.join("build.sh")), ["permissions-changed"], "group write added to an existing file");
    assert_eq!(risks_at(&f, &f.ws.join("open.sh")), ["permissions-changed"], "a new file writable by others");
    assert_eq!(risks_at(&f, &f.ws.join("shared.txt")), Vec::<String>::new(), "group write it had already");
    assert_eq!(risks_at(&f, &f.ws.join("group.txt")), Vec::<String>::new(), "a new file's group bit follows the umask");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(mode(&f.ws.join("Makefile")), 0o644, "{out:?}");
    assert_eq!(mode(&f.ws.join("build.sh")), 0o755, "{out:?}");
    assert!(!f.ws.join("open.sh").exists(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("shared.txt")).unwrap(), "new", "the rest lands");
    let out = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("Makefile")]), force: true }).unwrap();
    assert!(out.held_back.is_empty(), "{out:?}");
    assert_eq!(mode(&f.ws.join("Makefile")), 0o666, "forced");
}

/// The same for a directory below the root: its mode opened, or one made so. Only the mode is
/// held back: what is in the directory lands (it is made owner-writable only, as one passed through).
#[test]
fn a_directory_opened_to_other_users_is_held_back() {
    let mut f = fixture();
    put(&f.ws, "sub/a", "a");
    std::fs::set_permissions(f.ws.join("sub"), std::fs::Permissions::from_mode(0o755)).unwrap();
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "sub/in.txt", "i");
    std::fs::set_permissions(up.join("sub"), std::fs::Permissions::from_mode(0o775)).unwrap();
    for (name, m) in [("open", 0o777), ("group", 0o775), ("shared", 0o1777), ("grouped", 0o1775)] {
        std::fs::create_dir(up.join(name)).unwrap();
        std::fs::set_permissions(up.join(name), std::fs::Permissions::from_mode(m)).unwrap();
    }
    assert_eq!(risks_at(&f, &f.ws.join("sub")), ["permissions-changed"], "an existing directory made group-writable");
    assert_eq!(risks_at(&f, &f.ws.join("open")), ["permissions-changed"], "a new directory writable by others");
    // A new directory's group bit follows the user's umask (`002` with a group of one's own).
    assert_eq!(risks_at(&f, &f.ws.join("group")), Vec::<String>::new());
    assert_eq!(risks_at(&f, &f.ws.join("grouped")), Vec::<String>::new());
    assert_eq!(risks_at(&f, &f.ws.join("shared")), ["permissions-changed"], "sticky: others still create names in it");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(mode(&f.ws.join("sub")), 0o755, "{out:?}");
    assert_eq!(mode(&f.ws.join("open")), 0o755, "{out:?}");
    assert_eq!(mode(&f.ws.join("group")), 0o775);
    assert!(f.ws.join("sub/in.txt").exists(), "{out:?}");
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let mut pending: Vec<_> = s.changes.iter().map(|c| c.path.clone()).collect();
    pending.sort();
    assert_eq!(pending, [f.ws.join("open").to_string_lossy(), f.ws.join("shared").to_string_lossy(), f.ws.join("sub").to_string_lossy()]);
}

/// Found by an attacker's review: a run's `chmod 000 .` landed on the host's workspace, locking
/// its user out. A mode that takes the owner's own read, search or write from the root is held back.
#[test]
fn a_root_locked_against_its_owner_is_held_back() {
    for to in [0o000, 0o500, 0o300, 0o655] {
        let f = chmodded(to);
        assert_eq!(risks_at(&f, &f.ws), ["permissions-changed"], "{to:o}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(out.applied.iter().all(|p| *p != f.ws.to_string_lossy()), "{out:?}");
        assert_eq!(mode(&f.ws), 0o755, "{to:o} not landed");
        apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.clone()]), force: true }).unwrap();
        assert_eq!(mode(&f.ws), to, "forced");
        std::fs::set_permissions(&f.ws, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The root's mode lands only where the walk read the upper's top: one it could not read (a
/// run's `chmod 000 .`, as an ordinary user; here a top that is no directory) is held back as not
/// examined, and was also said applied.
#[test]
fn an_unread_top_lands_no_root_mode() {
    let f = over_0755();
    let up = f.set.upper(0);
    std::fs::remove_dir_all(&up).unwrap();
    std::fs::write(&up, "").unwrap();
    std::fs::set_permissions(&up, std::fs::Permissions::from_mode(0o711)).unwrap();
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: true }).unwrap();
    let root = f.ws.to_string_lossy().into_owned();
    assert!(!out.applied.contains(&root), "{out:?}");
    assert!(out.held_back.iter().any(|h| h.path == root && kind(&h.risk) == "scan-incomplete"), "{out:?}");
    assert_eq!(mode(&f.ws), 0o755);
}

/// A partial apply writes into the root (its ctime then is after the set began): the root's mode
/// change is judged by the root's mode, which the host did not change, and lands later.
#[test]
fn a_partial_apply_leaves_the_root_s_mode_to_land_later() {
    let f = chmodded(0o700);
    let out = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("new.txt")]), force: false }).unwrap();
    assert_eq!(out.applied, [f.ws.join("new.txt").to_string_lossy()]);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty(), "{out:?}");
    assert_eq!(out.applied, [f.ws.to_string_lossy()]);
    assert_eq!(mode(&f.ws), 0o700);
}
