//! One cache location's layers in the store, and one run's share of them.
//!
//! Concurrent runs used to share one overlay upper directory. Overlayfs does not support that (each
//! mount caches what it saw of the upper directory), and six parallel `npm install`s on a cold
//! store failed with `ENOTEMPTY` in npm's `_cacache/tmp`. Now each run writes an upper directory of
//! its own, over read-only layers nobody changes while they are mounted:
//!
//! ```text
//! CACHE/lock              a run holds it shared from before it lists the layers until its sandbox is gone
//! CACHE/base/             what earlier runs wrote, folded together (the lowest layer above the host's cache)
//! CACHE/pending/SEQ-RUN/  a finished run's writes, not folded yet (immutable)
//! CACHE/runs/RUN/upper    this run's writes;  CACHE/runs/RUN/work: overlayfs's scratch directory
//! ```
//!
//! A run mounts `lowerdir = pending (newest first) : base : the host's cache`. When it ends its upper
//! directory becomes a pending layer (one `rename`), and whoever then gets the lock exclusively
//! (no run has anything mounted) folds every pending layer into the base (`merge`), oldest first.
//! So runs never wait for each other, and what one wrote is seen by the runs that start after it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};

/// One run's hold on one cache location.
pub struct CacheRun {
    cache: PathBuf,
    run: String,
    /// Shared `flock` on `CACHE/lock` for the run's life.
    lock: Option<OwnedFd>,
    /// Whether what it wrote was published already (`publish`).
    published: bool,
    /// What the overlay stacks under the run's upper directory (the host's cache not included),
    /// newest first.
    pub lowers: Vec<PathBuf>,
    pub upper: PathBuf,
    pub work: PathBuf,
}

fn failed(what: &str, p: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::setup_failed(format!("{what} {} failed: {e}", p.display()), "")
}

fn lock_file(cache: &Path, op: libc::c_int) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).write(true).create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(cache.join("lock"))?;
    let fd: OwnedFd = f.into();
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(fd.as_raw_fd(), op) } == 0 {
            return Ok(fd);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl CacheRun {
    /// Take the shared lock, list the layers, make this run's directories.
    pub fn open(cache: &Path, run: &str) -> Result<CacheRun> {
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
        let upper = cache.join("runs").join(run).join("upper");
        let work = cache.join("runs").join(run).join("work");
        builder.create(cache).map_err(|e| failed("creating the tool cache directory", cache, e))?;
        // The lock first: a fold (which holds it exclusively) removes every run's directories it
        // finds, taking them for those of runs killed with their host.
        let lock = lock_file(cache, libc::LOCK_SH).map_err(|e| failed("locking the tool cache", cache, e))?;
        for d in [cache.join("base"), cache.join("pending"), upper.clone(), work.clone()] {
            builder.create(&d).map_err(|e| failed("creating the tool cache directory", &d, e))?;
        }
        let mut lowers = pending(cache);
        lowers.reverse();
        lowers.push(cache.join("base"));
        Ok(CacheRun { cache: cache.to_path_buf(), run: run.to_string(), lock: Some(lock), published: false, lowers, upper, work })
    }

    /// The run is over (its sandbox is gone): what it wrote becomes a pending layer (one `rename`),
    /// which every run that starts from now on mounts. The rest of `finish` can wait.
    pub fn publish(&mut self) {
        if std::mem::replace(&mut self.published, true) {
            return;
        }
        let wrote = std::fs::read_dir(&self.upper).map(|mut d| d.next().is_some()).unwrap_or(false);
        if wrote {
            let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
            let _ = std::fs::rename(&self.upper, self.cache.join("pending").join(format!("{stamp:024}-{}", self.run)));
        }
    }

    /// Publish (if not yet), remove the run's directories, let go, fold if alone.
    pub fn finish(mut self) {
        self.publish();
        let _ = super::store::remove_tree(&self.cache.join("runs").join(&self.run));
        drop(self.lock.take());
        fold_if_alone(&self.cache);
    }
}

impl Drop for CacheRun {
    fn drop(&mut self) {
        if self.lock.is_some() {
            // Never started (setup failed): nothing to publish.
            let _ = super::store::remove_tree(&self.cache.join("runs").join(&self.run));
        }
    }
}

/// The pending layers, oldest first (their names start with a zero-padded time).
fn pending(cache: &Path) -> Vec<PathBuf> {
    let mut layers: Vec<PathBuf> = std::fs::read_dir(cache.join("pending")).into_iter().flatten().flatten().map(|e| e.path()).collect();
    layers.sort();
    layers
}

/// Fold the pending layers into the base when no run holds the cache; otherwise the last of those
/// runs does it when it ends.
pub fn fold_if_alone(cache: &Path) {
    let Ok(_exclusive) = lock_file(cache, libc::LOCK_EX | libc::LOCK_NB) else { return };
    let base = cache.join("base");
    for layer in pending(cache) {
        // A layer that cannot be folded whole is dropped rather than half-applied: this is a
        // cache, and what is missing is fetched again.
        if super::merge::merge_into(&layer, &base).is_err() {
            let _ = super::store::remove_tree(&base);
            let _ = std::fs::create_dir(&base);
        }
        let _ = super::store::remove_tree(&layer);
    }
    // Runs killed with their host leave their directories behind: nobody holds them now.
    for stale in std::fs::read_dir(cache.join("runs")).into_iter().flatten().flatten() {
        let _ = super::store::remove_tree(&stale.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_runs_write_apart_and_the_last_one_folds() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        let a = CacheRun::open(&cache, "a").unwrap();
        let b = CacheRun::open(&cache, "b").unwrap();
        assert_eq!(a.lowers, vec![cache.join("base")]);
        assert_ne!(a.upper, b.upper, "an upper directory of its own");
        std::fs::write(a.upper.join("from-a"), "a").unwrap();
        std::fs::write(b.upper.join("from-b"), "b").unwrap();
        a.finish();
        assert_eq!(pending(&cache).len(), 1, "b still holds the cache: a's writes wait as a layer");
        let c = CacheRun::open(&cache, "c").unwrap();
        assert_eq!(c.lowers.len(), 2, "a run starting now sees a's layer above the base");
        assert!(c.lowers[0].join("from-a").exists());
        b.finish();
        assert_eq!(pending(&cache).len(), 2, "c still holds it");
        c.finish();
        assert!(pending(&cache).is_empty(), "the last run folded them");
        assert_eq!(std::fs::read_to_string(cache.join("base/from-a")).unwrap(), "a");
        assert_eq!(std::fs::read_to_string(cache.join("base/from-b")).unwrap(), "b");
        assert_eq!(std::fs::read_dir(cache.join("runs")).unwrap().count(), 0, "no run directory left");
    }

    #[test]
    fn published_writes_are_seen_by_the_next_run_before_the_first_lets_go() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        let mut a = CacheRun::open(&cache, "a").unwrap();
        std::fs::write(a.upper.join("from-a"), "a").unwrap();
        a.publish();
        a.publish();
        let b = CacheRun::open(&cache, "b").unwrap();
        assert!(b.lowers[0].join("from-a").exists(), "the next run mounts a's writes: {:?}", b.lowers);
        a.finish();
        assert_eq!(pending(&cache).len(), 1, "one layer, published once; b still holds the cache");
        b.finish();
        assert_eq!(std::fs::read_to_string(cache.join("base/from-a")).unwrap(), "a");
        assert_eq!(std::fs::read_dir(cache.join("runs")).unwrap().count(), 0, "no run directory left");
    }

    #[test]
    fn a_run_that_never_started_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        drop(CacheRun::open(&cache, "x").unwrap());
        assert_eq!(std::fs::read_dir(cache.join("runs")).unwrap().count(), 0);
    }
}
