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
    lock: Option<File>,
    marker: Option<PathBuf>,
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
        let lock = lock_file(&t.path).ok();
        if let Some(f) = &lock {
            // SAFETY: flock on an fd we own.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) };
        }
        let missing = t.path.symlink_metadata().is_err();
        let marker = lock.as_ref().map(|_| lock_path(&t.path).with_extension("created"));
        if missing {
            if let Some(m) = &marker {
                let _ = File::create(m);
            }
        }
        let count = registry.entry(t.path.clone()).or_insert(0);
        let created_here = *count == 0 && missing;
        *count += 1;
        entries.push(Entry { target: t.clone(), lock, marker, created_here });
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
    let ours = match (&e.lock, &e.marker) {
        (Some(f), Some(marker)) => {
            // SAFETY: flock on an fd we own. Converting our shared lock to exclusive succeeds only
            // when no other process holds the path.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                return;
            }
            let created = marker.symlink_metadata().is_ok();
            let _ = std::fs::remove_file(marker);
            created
        }
        _ => e.created_here,
    };
    if ours {
        remove_if_placeholder(&e.target.path, e.target.kind);
    }
    // The lock is released when `e.lock` is dropped here, after the removal.
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

fn lock_path(p: &Path) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.hash(&mut h);
    let dir = lock_dir().unwrap_or_else(|_| PathBuf::from("/nonexistent"));
    dir.join(format!("{:016x}.lock", h.finish()))
}

fn lock_file(p: &Path) -> std::io::Result<File> {
    lock_dir()?;
    OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(lock_path(p))
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
        let other = lock_file(&d).unwrap();
        assert_eq!(unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_SH) }, 0);
        drop(r);
        assert!(d.exists(), "another holder keeps it");
        // The other "process" now finishes and cleans up like release_one would.
        let e = Entry {
            target: target(&d, PlaceholderKind::Dir).remove(0),
            lock: Some(other),
            marker: Some(lock_path(&d).with_extension("created")),
            created_here: false,
        };
        release_one(e);
        assert!(!d.exists());
    }
}
