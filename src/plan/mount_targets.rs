//! The runner's placeholders: the host-side mount points for missing read-only paths of its runs.
//!
//! To mount an empty read-only directory over a protected name that does not exist (`.git`,
//! `.envrc`, ...), something must exist at that path ON THE HOST inside the writable root. The
//! runner creates it before bwrap runs and removes it afterwards when no other run uses it, so a
//! run leaves nothing behind. What a placeholder is, and the locking that keeps a concurrent run's
//! mount in place, is `sandspawn_helper::placeholder` (shared with the helper, which does the same
//! in front of bwrap for plans other programs run). A placeholder left by a run that was killed is
//! adopted by the next run in that directory and removed after it.
//!
//! Cost: one `open` and `flock` per directory and one `mkdirat` per placeholder before the run;
//! one `flock` per directory and an `fstatat` and `unlinkat` per placeholder after it. Creating and
//! removing a directory is what costs (about 65 µs per pair on the project's test machine).

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::OwnedFd;
use std::path::Path;

use sandspawn_helper::placeholder;

use crate::policy::MissingReadOnly;

/// The placeholders of one directory, and the shared lock held on it for the run.
struct Group {
    /// `None` when the directory could not be opened or locked: then nothing was created (the
    /// helper then finds no placeholder to cover and fails the run at setup), and nothing is removed.
    lock: Option<OwnedFd>,
    names: Vec<(CString, placeholder::Kind)>,
}

/// Held by the runner for the whole run; dropping it releases the directories and removes the
/// placeholders no other run uses.
pub struct Reservation {
    groups: Vec<Group>,
}

/// The placeholders by the directory they are made in, each as its name there and its kind (the
/// runner locks and fills each directory once; so does the helper for a plan another program runs).
pub fn by_directory<'a>(targets: impl IntoIterator<Item = &'a MissingReadOnly>) -> BTreeMap<&'a Path, Vec<(&'a OsStr, placeholder::Kind)>> {
    let mut by_dir: BTreeMap<&Path, Vec<(&OsStr, placeholder::Kind)>> = BTreeMap::new();
    for t in targets {
        let (Some(dir), Some(name)) = (t.path.parent(), t.path.file_name()) else { continue };
        by_dir.entry(dir).or_default().push((name, t.kind.into()));
    }
    by_dir
}

/// Create (or adopt) every placeholder of a policy (`ResolvedPolicy::missing_read_only`) BEFORE
/// the plan runs. Never fails itself: a placeholder that cannot be made is missing when the helper
/// covers it, which fails the run at setup rather than run it less protected.
pub fn reserve(targets: &[MissingReadOnly]) -> Reservation {
    let groups = by_directory(targets)
        .into_iter()
        .map(|(dir, names)| {
            let names: Vec<(CString, placeholder::Kind)> = names.into_iter().filter_map(|(n, k)| Some((CString::new(n.as_bytes()).ok()?, k))).collect();
            let lock = CString::new(dir.as_os_str().as_bytes()).ok().and_then(|c| placeholder::lock(&c, libc::LOCK_SH, false).ok());
            if let Some(fd) = &lock {
                for (name, k) in &names {
                    placeholder::create(fd, name, *k);
                }
            }
            Group { lock, names }
        })
        .collect();
    Reservation { groups }
}

impl Reservation {
    /// Release now (same as dropping).
    pub fn release(self) {}
}

impl Drop for Reservation {
    fn drop(&mut self) {
        for g in self.groups.drain(..) {
            let Some(fd) = g.lock else { continue };
            // Convert the shared lock on the same descriptor (the directory this run created in,
            // whatever its path names now): it succeeds only when no other run holds it.
            // And no sandbox of a plan another program runs holds it (its bwrap's `--lock-file`).
            if placeholder::flock(&fd, libc::LOCK_EX | libc::LOCK_NB).is_ok() && !placeholder::locked_by_a_sandbox(&fd) {
                for (name, k) in &g.names {
                    placeholder::remove_if_placeholder(&fd, name, *k);
                }
            }
        }
    }
}

/// Whether `meta` describes a placeholder (a concurrent run's, or one left by a killed run).
pub fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    placeholder::is_placeholder(meta.mode(), meta.uid(), meta.is_dir(), meta.is_file(), meta.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PlaceholderKind;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn target(p: &Path, kind: PlaceholderKind) -> Vec<MissingReadOnly> {
        vec![MissingReadOnly { path: p.to_path_buf(), kind }]
    }

    fn mode(p: &Path) -> u32 {
        p.symlink_metadata().unwrap().mode() & 0o7777
    }

    #[test]
    fn created_with_their_mode_and_removed_after_the_last_run() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        let a = reserve(&target(&git, PlaceholderKind::Dir));
        assert!(git.is_dir() && mode(&git) == placeholder::DIR_MODE, "created before the run, with its mode");
        assert!(is_placeholder(&git.symlink_metadata().unwrap()));
        let b = reserve(&target(&git, PlaceholderKind::Dir));
        drop(a);
        assert!(git.exists(), "still used by b");
        drop(b);
        assert!(!git.exists(), "removed after the last run");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "and nothing else is left");
    }

    #[test]
    fn file_placeholder_removed_and_changed_ones_kept() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("ro");
        let r = reserve(&target(&f, PlaceholderKind::File));
        assert!(f.is_file() && mode(&f) == placeholder::FILE_MODE);
        r.release();
        assert!(!f.exists());

        // Something written into a placeholder (only a process that ignores its mode can) stays.
        let d = t.path().join(".git");
        let r = reserve(&target(&d, PlaceholderKind::Dir));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(d.join("HEAD"), "ref").unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        drop(r);
        assert!(d.join("HEAD").exists(), "a non-empty placeholder is never removed");

        let f2 = t.path().join("ro2");
        let r = reserve(&target(&f2, PlaceholderKind::File));
        std::fs::write(&f2, "data").unwrap();
        drop(r);
        assert!(f2.exists(), "a file with content is never removed");
    }

    #[test]
    fn the_users_own_entries_and_symlinks_are_untouched() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".vscode");
        std::fs::create_dir(&d).unwrap(); // the user's own empty directory, mode 755
        drop(reserve(&target(&d, PlaceholderKind::Dir)));
        assert!(d.exists(), "the user's own empty dir stays");

        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        let l = t.path().join("link");
        std::os::unix::fs::symlink(&elsewhere, &l).unwrap();
        drop(reserve(&target(&l, PlaceholderKind::Dir)));
        assert!(l.symlink_metadata().is_ok() && elsewhere.exists(), "symlinks are never removed or followed");
    }

    #[test]
    fn another_holder_keeps_them_and_a_killed_runs_are_removed_later() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".envrc");
        let r = reserve(&target(&d, PlaceholderKind::Dir));
        // What another process's run holds: a shared lock on its own open file description.
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).unwrap();
        let other = placeholder::lock(&c(t.path()), libc::LOCK_SH, false).unwrap();
        assert!(placeholder::lock(&c(t.path()), libc::LOCK_EX | libc::LOCK_NB, false).is_err(), "a shared holder refuses the exclusive lock");
        drop(r);
        assert!(d.exists(), "another holder keeps it");
        // That run was killed: its lock is gone with it, the placeholder stays ...
        drop(other);
        assert!(d.exists());
        // ... until the next run in that directory, which adopts it and removes it.
        let next = reserve(&target(&d, PlaceholderKind::Dir));
        drop(next);
        assert!(!d.exists());
    }

    #[test]
    fn a_sandbox_holding_the_directory_s_read_lock_keeps_them() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".envrc");
        let r = reserve(&target(&d, PlaceholderKind::Dir));
        // What bwrap's pid 1 holds for a plan another program runs (`--lock-file`): a POSIX read
        // lock (an OFD one here, which conflicts the same way) on the directory.
        let dir = std::fs::File::open(t.path()).unwrap();
        // SAFETY: a zeroed flock is valid; a descriptor we own.
        let mut l: libc::flock = unsafe { std::mem::zeroed() };
        l.l_type = libc::F_RDLCK as libc::c_short;
        assert_eq!(unsafe { libc::fcntl(std::os::unix::io::AsRawFd::as_raw_fd(&dir), libc::F_OFD_SETLK, &l) }, 0);
        drop(r);
        assert!(d.exists(), "kept while the sandbox holds the lock");
        drop(dir);
        drop(reserve(&target(&d, PlaceholderKind::Dir)));
        assert!(!d.exists(), "removed by the next run after it");
    }

    #[test]
    fn a_replaced_parent_is_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let r = reserve(&target(&ws.join(".idea"), PlaceholderKind::Dir));
        // The workspace is moved away and a symlink to elsewhere put in its place: the cleanup acts
        // on the directory it locked, never on what the path now names.
        let moved = t.path().join("moved");
        std::fs::rename(&ws, &moved).unwrap();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::create_dir(elsewhere.join(".idea")).unwrap();
        std::fs::set_permissions(elsewhere.join(".idea"), std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &ws).unwrap();
        drop(r);
        assert!(elsewhere.join(".idea").exists(), "nothing removed through the symlink");
        assert!(!moved.join(".idea").exists(), "removed from the directory it was created in");
    }
}
