//! Host-side mount points for missing read-only paths.
//!
//! To mount an empty read-only `.git` over a path that does not exist, bwrap must first create it
//! ON THE HOST inside the writable root (an empty directory or file). Left behind, that litter looks
//! like a broken repository to git. The runner reserves these paths for the run and the last owner
//! removes them afterwards, but only when:
//! - no other run still uses them: in this process a counted registry; across processes a shared
//!   `flock` on a per-path lock file, and cleanup only if an exclusive non-blocking lock succeeds;
//! - they did not exist before a sandspawn run first reserved them (a user's own empty directory
//!   is theirs): recorded as a `.created` marker next to the lock file;
//! - they are still an empty directory or a zero-length regular file (never a symlink, never
//!   followed).
//!
//! The cleanup also unlinks the lock file, while it still holds the exclusive lock, so the lock
//! directory does not grow by one file per workspace ever used. A run that opened that file just
//! before sees, once it has its lock, that the path now names another file (or none), and locks
//! that one instead (`lock_shared`).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::policy::{MissingReadOnly, PlaceholderKind};

/// In-process owners per path.
static REGISTRY: Mutex<Option<HashMap<PathBuf, usize>>> = Mutex::new(None);

struct Entry {
    target: MissingReadOnly,
    /// Shared flock held for the run (None when the lock directory is unusable).
    lock: Option<PathLock>,
    /// The path was missing when this process first reserved it (fallback without a lock dir).
    created_here: bool,
}

/// Held by the runner for the whole run; dropping it releases the paths and cleans up.
pub struct Reservation {
    entries: Vec<Entry>,
}

/// Reserve every placeholder path of a policy (`ResolvedPolicy::missing_read_only`) BEFORE the
/// plan is run. Never fails: without a usable lock directory cross-process protection degrades to
/// "never remove what another process might use" (see `release_one`).
pub fn reserve(targets: &[MissingReadOnly]) -> Reservation {
    let mut guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let registry = guard.get_or_insert_with(HashMap::new);
    let mut entries = Vec::new();
    for t in targets {
        // Shared lock first, then look: a concurrent cleanup holds the exclusive lock while it removes.
        let lock = lock_shared(&t.path).ok();
        let missing = t.path.symlink_metadata().is_err();
        if missing {
            if let Some(l) = &lock {
                let _ = File::create(l.marker());
            }
        }
        let count = registry.entry(t.path.clone()).or_insert(0);
        let created_here = *count == 0 && missing;
        *count += 1;
        entries.push(Entry { target: t.clone(), lock, created_here });
    }
    Reservation { entries }
}

impl Reservation {
    /// Release now (same as dropping).
    pub fn release(self) {}

    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.entries.iter().map(|e| e.target.path.as_path())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let registry = guard.get_or_insert_with(HashMap::new);
        for e in self.entries.drain(..) {
            let last = match registry.get_mut(&e.target.path) {
                Some(c) if *c > 1 => {
                    *c -= 1;
                    false
                }
                _ => {
                    registry.remove(&e.target.path);
                    true
                }
            };
            if last {
                release_one(e);
            }
        }
    }
}

fn release_one(e: Entry) {
    let Some(lock) = &e.lock else {
        if e.created_here {
            remove_if_placeholder(&e.target.path, e.target.kind);
        }
        return;
    };
    // SAFETY: flock on an fd we own. Converting our shared lock to exclusive succeeds only when no
    // other process holds the path.
    if unsafe { libc::flock(lock.file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return;
    }
    let marker = lock.marker();
    if marker.symlink_metadata().is_ok() {
        remove_if_placeholder(&e.target.path, e.target.kind);
    }
    let _ = std::fs::remove_file(marker);
    let _ = std::fs::remove_file(&lock.path);
    // The lock is released when `e.lock` is dropped here, after the removals.
}

/// Remove `p` only if it is still an empty directory or a zero-length regular file. Never follows a
/// symlink (`symlink_metadata`; `remove_dir` fails on a non-empty directory anyway).
fn remove_if_placeholder(p: &Path, _kind: PlaceholderKind) {
    let Ok(meta) = p.symlink_metadata() else { return };
    let ft = meta.file_type();
    if ft.is_dir() {
        let _ = std::fs::remove_dir(p);
    } else if ft.is_file() && meta.len() == 0 {
        let _ = std::fs::remove_file(p);
    }
}

/// `/tmp/sandspawn-<euid>-locks`, created 0700 and checked to be ours (not a symlink, not shared).
fn lock_dir() -> std::io::Result<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let dir = PathBuf::from(format!("/tmp/sandspawn-{euid}-locks"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = dir.symlink_metadata()?;
    if !meta.is_dir() || meta.uid() != euid || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "lock directory is not private"));
    }
    Ok(dir)
}

#[cfg(test)]
fn lock_path(p: &Path) -> PathBuf {
    lock_path_in(&lock_dir().unwrap_or_else(|_| PathBuf::from("/nonexistent")), p)
}

fn lock_path_in(dir: &Path, p: &Path) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.hash(&mut h);
    dir.join(format!("{:016x}.lock", h.finish()))
}

/// A lock file, opened and holding a shared `flock`.
struct PathLock {
    file: File,
    path: PathBuf,
}

impl PathLock {
    /// Present while the placeholder is one a sandspawn run created (see the module comment).
    fn marker(&self) -> PathBuf {
        self.path.with_extension("created")
    }
}

/// How often `lock_shared` follows a lock file that a cleanup replaced before giving up.
const LOCK_ATTEMPTS: usize = 8;

/// Open the lock file for `p` and take a shared lock on it. A cleanup may unlink the file between
/// our open and our lock; the inode we then locked is no longer the one at the path, so we lock
/// the file that is there now.
fn lock_shared(p: &Path) -> std::io::Result<PathLock> {
    // Checked once per placeholder (a mkdir and an lstat), not again to name the file.
    let path = lock_path_in(&lock_dir()?, p);
    for _ in 0..LOCK_ATTEMPTS {
        let file = OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(&path)?;
        // SAFETY: flock on an fd we own.
        while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
        if names_same_file(&file, &path) {
            return Ok(PathLock { file, path });
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "the lock file keeps being replaced"))
}

fn names_same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), path.symlink_metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(p: &Path, kind: PlaceholderKind) -> Vec<MissingReadOnly> {
        vec![MissingReadOnly { path: p.to_path_buf(), kind }]
    }

    #[test]
    fn overlapping_reservations_remove_after_the_last() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        let a = reserve(&target(&git, PlaceholderKind::Dir));
        std::fs::create_dir(&git).unwrap(); // what bwrap does on the host
        let b = reserve(&target(&git, PlaceholderKind::Dir));
        drop(a);
        assert!(git.exists(), "still owned by b");
        drop(b);
        assert!(!git.exists(), "removed after the last owner");
    }

    #[test]
    fn file_placeholder_removed_and_non_empty_kept() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("ro");
        let r = reserve(&target(&f, PlaceholderKind::File));
        std::fs::write(&f, "").unwrap();
        r.release();
        assert!(!f.exists());

        let d = t.path().join(".git");
        let r = reserve(&target(&d, PlaceholderKind::Dir));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("HEAD"), "ref").unwrap();
        drop(r);
        assert!(d.join("HEAD").exists(), "a non-empty placeholder is never removed");

        let f2 = t.path().join("ro2");
        let r = reserve(&target(&f2, PlaceholderKind::File));
        std::fs::write(&f2, "data").unwrap();
        drop(r);
        assert!(f2.exists());
    }

    #[test]
    fn preexisting_empty_dir_is_kept_and_symlinks_untouched() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".git");
        std::fs::create_dir(&d).unwrap();
        drop(reserve(&target(&d, PlaceholderKind::Dir)));
        assert!(d.exists(), "the user's own empty dir stays");

        let target_dir = t.path().join("elsewhere");
        std::fs::create_dir(&target_dir).unwrap();
        let l = t.path().join("link");
        let r = reserve(&target(&l, PlaceholderKind::Dir));
        std::os::unix::fs::symlink(&target_dir, &l).unwrap();
        drop(r);
        assert!(l.symlink_metadata().is_ok() && target_dir.exists(), "symlinks are never removed or followed");
    }

    #[test]
    fn another_process_holding_the_lock_blocks_cleanup() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".git");
        let r = reserve(&target(&d, PlaceholderKind::Dir));
        std::fs::create_dir(&d).unwrap();
        // A second open file description = what another process would hold.
        let other = lock_shared(&d).unwrap();
        drop(r);
        assert!(d.exists(), "another holder keeps it");
        assert!(other.path.exists() && other.marker().exists(), "and keeps its lock file and marker");
        // The other "process" now finishes and cleans up like release_one would.
        let lock_file = other.path.clone();
        let e = Entry { target: target(&d, PlaceholderKind::Dir).remove(0), lock: Some(other), created_here: false };
        release_one(e);
        assert!(!d.exists());
        assert!(!lock_file.exists() && !lock_file.with_extension("created").exists(), "the last owner leaves no lock file behind");
    }

    #[test]
    fn no_lock_file_is_left_behind_and_a_replaced_one_is_followed() {
        let t = tempfile::tempdir().unwrap();
        let kept = t.path().join("kept");
        std::fs::create_dir(&kept).unwrap(); // existed before: kept, but its lock file still goes
        let lock_file = lock_path(&kept);
        // Opened before a whole run (reserve, release) unlinks the lock file, locked after it.
        let stale = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_file).unwrap();
        drop(reserve(&target(&kept, PlaceholderKind::Dir)));
        assert!(kept.exists());
        assert!(!lock_file.exists(), "the lock file is removed with the reservation");
        assert!(!names_same_file(&stale, &lock_file), "a stale open would be noticed");
        let fresh = lock_shared(&kept).unwrap();
        assert!(names_same_file(&fresh.file, &lock_file), "lock_shared locks the file that is at the path");
        release_one(Entry { target: target(&kept, PlaceholderKind::Dir).remove(0), lock: Some(fresh), created_here: false });
        assert!(!lock_file.exists());
    }
}
