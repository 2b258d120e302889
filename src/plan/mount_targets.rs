//! Host-side mount points for missing read-only paths (the placeholders).
//!
//! To mount an empty read-only directory over a protected name that does not exist (`.git`,
//! `.envrc`, ...), something must exist at that path ON THE HOST inside the writable root. The
//! runner creates it before bwrap runs and removes it afterwards, so a run leaves nothing behind:
//!
//! - **What a placeholder is**: an empty directory (or a zero-length regular file) with mode 000,
//!   owned by this user. Nothing else is ever removed: a user's own empty `.vscode` (mode 755) is
//!   mounted over like a placeholder but stays. The mode is the whole record, so there are no
//!   marker or lock files, and a placeholder left by a run that was killed is recognized and
//!   removed by the next run in that directory.
//! - **Who may remove it**: runs hold a shared `flock` on each directory they create
//!   placeholders in, from before they create them until their sandbox is gone; a run that ends
//!   removes them only if it then gets the exclusive lock at once (non-blocking), that is, when no
//!   other run uses that directory. Removing a directory that another sandbox has mounted over
//!   would detach that mount there (Linux lets `rmdir` do that to other mount namespaces), and the
//!   protection with it. `flock` locks belong to an open file description, so concurrent runs in
//!   this process exclude each other the same way as runs in other processes.
//! - **Where**: every operation is relative to the locked directory's descriptor (`mkdirat`,
//!   `fstatat` without following, `unlinkat`), so a parent replaced by a symlink meanwhile cannot
//!   redirect them.
//!
//! Cost: one `open` and `flock` per directory and one `mkdirat` per placeholder before the run;
//! one `flock` per directory and an `fstatat` and `unlinkat` per placeholder after it (the old scheme kept a lock file
//! and a marker per placeholder, about 20 system calls each).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::policy::{MissingReadOnly, PlaceholderKind};

/// The placeholders of one directory, and the shared lock held on it for the run.
struct Group {
    dir: PathBuf,
    /// `None` when the directory could not be opened or locked: then nothing was created (bwrap
    /// creates its own mount points, which are not placeholders and stay), and nothing is removed.
    lock: Option<OwnedFd>,
    names: Vec<(CString, PlaceholderKind)>,
}

/// Held by the runner for the whole run; dropping it releases the directories and removes the
/// placeholders no other run uses.
pub struct Reservation {
    groups: Vec<Group>,
}

/// Create (or adopt) every placeholder of a policy (`ResolvedPolicy::missing_read_only`) BEFORE
/// the plan runs. Never fails: what cannot be prepared is left to bwrap, which creates a plain
/// mount point (protected the same, but not removed afterwards).
pub fn reserve(targets: &[MissingReadOnly]) -> Reservation {
    let mut by_dir: BTreeMap<PathBuf, Vec<(CString, PlaceholderKind)>> = BTreeMap::new();
    for t in targets {
        let (Some(dir), Some(name)) = (t.path.parent(), t.path.file_name()) else { continue };
        let Ok(name) = CString::new(name.as_bytes()) else { continue };
        by_dir.entry(dir.to_path_buf()).or_default().push((name, t.kind));
    }
    let groups = by_dir
        .into_iter()
        .map(|(dir, names)| {
            let lock = lock(&dir, libc::LOCK_SH);
            if let Some(fd) = &lock {
                for (name, kind) in &names {
                    create(fd, name, *kind);
                }
            }
            Group { dir, lock, names }
        })
        .collect();
    Reservation { groups }
}

impl Reservation {
    /// Release now (same as dropping).
    pub fn release(self) {}

    pub fn paths(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.groups.iter().flat_map(|g| g.names.iter().map(|(n, _)| g.dir.join(std::ffi::OsStr::from_bytes(n.as_bytes()))))
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        for g in self.groups.drain(..) {
            let Some(fd) = g.lock else { continue };
            // Convert the shared lock on the same descriptor (the directory this run created in,
            // whatever its path names now): it succeeds only when no other run holds it.
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(fd.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                for (name, kind) in &g.names {
                    remove_if_placeholder(&fd, name, *kind);
                }
            }
        }
    }
}

/// Open `dir` (never following a final symlink) and `flock` it; `None` if either fails.
fn lock(dir: &Path, op: libc::c_int) -> Option<OwnedFd> {
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid C string; the descriptor is owned below.
    let raw = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a descriptor we just opened and own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(fd.as_raw_fd(), op) } == 0 {
            return Some(fd);
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// An empty directory or file with mode 000 (the umask cannot add bits). An existing entry is
/// left as it is: a placeholder of a concurrent run is shared, anything else was there before.
fn create(dir: &OwnedFd, name: &CString, kind: PlaceholderKind) {
    // SAFETY: a valid descriptor and C string; a file descriptor we open is closed at once.
    unsafe {
        match kind {
            PlaceholderKind::Dir => {
                libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0);
            }
            PlaceholderKind::File => {
                let fd = libc::openat(dir.as_raw_fd(), name.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0);
                if fd >= 0 {
                    libc::close(fd);
                }
            }
        }
    }
}

/// Whether `meta` describes a placeholder (see the module comment): mode 000, owned by this
/// user, an empty regular file or a directory (emptiness is `rmdir`'s to check).
pub fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    meta.mode() & 0o7777 == 0 && meta.uid() == euid && (meta.is_dir() || (meta.is_file() && meta.len() == 0))
}

/// Remove `name` in `dir` only if it is a placeholder, never following a symlink (`rmdir` fails on
/// a directory that is not empty anyway).
fn remove_if_placeholder(dir: &OwnedFd, name: &CString, kind: PlaceholderKind) {
    // SAFETY: a valid descriptor, C string and stat buffer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) != 0 {
            return;
        }
        if st.st_mode & 0o7777 != 0 || st.st_uid != libc::geteuid() {
            return;
        }
        match (kind, st.st_mode & libc::S_IFMT) {
            (PlaceholderKind::Dir, libc::S_IFDIR) => {
                libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR);
            }
            (PlaceholderKind::File, libc::S_IFREG) if st.st_size == 0 => {
                libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn target(p: &Path, kind: PlaceholderKind) -> Vec<MissingReadOnly> {
        vec![MissingReadOnly { path: p.to_path_buf(), kind }]
    }

    fn mode(p: &Path) -> u32 {
        p.symlink_metadata().unwrap().mode() & 0o7777
    }

    #[test]
    fn created_with_mode_000_and_removed_after_the_last_run() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        let a = reserve(&target(&git, PlaceholderKind::Dir));
        assert!(git.is_dir() && mode(&git) == 0, "created before the run, mode 000");
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
        assert!(f.is_file() && mode(&f) == 0);
        r.release();
        assert!(!f.exists());

        // Something written into a placeholder (only a process that ignores its mode can) stays.
        let d = t.path().join(".git");
        let r = reserve(&target(&d, PlaceholderKind::Dir));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(d.join("HEAD"), "ref").unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0)).unwrap();
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
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0)).unwrap();
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
        let other = lock(t.path(), libc::LOCK_SH).unwrap();
        assert!(lock(t.path(), libc::LOCK_EX | libc::LOCK_NB).is_none(), "a shared holder refuses the exclusive lock");
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
        std::fs::set_permissions(elsewhere.join(".idea"), std::fs::Permissions::from_mode(0)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &ws).unwrap();
        drop(r);
        assert!(elsewhere.join(".idea").exists(), "nothing removed through the symlink");
        assert!(!moved.join(".idea").exists(), "removed from the directory it was created in");
    }
}
