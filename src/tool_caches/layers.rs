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
//! CACHE/slots/N/upper     this run's writes;  CACHE/slots/N/work: overlayfs's scratch directory
//! ```
//!
//! A run's directories are a slot it holds (`slots`): a run that wrote nothing leaves them, empty,
//! to the next run. Stores of earlier versions have `CACHE/runs/RUN/`, removed by the next fold.
//!
//! A run mounts `lowerdir = pending (newest first) : base : the host's cache`. When it ends its upper
//! directory becomes a pending layer (one `rename`), and whoever then gets the lock exclusively
//! (no run has anything mounted) folds every pending layer into the base (`merge`), oldest first.
//! So runs never wait for each other, and what one wrote is seen by the runs that start after it.

use std::os::fd::OwnedFd;
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
    /// The run's directories, held until the run is over.
    slot: Option<super::slots::Slot>,
    /// What the overlay stacks under the run's upper directory (the host's cache not included),
    /// newest first.
    pub lowers: Vec<PathBuf>,
    pub upper: PathBuf,
    pub work: PathBuf,
}

fn failed(what: &str, p: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::setup_failed(format!("{what} {} failed: {e}", p.display()), "")
}

impl CacheRun {
    /// Take the shared lock, list the layers, make this run's directories.
    pub fn open(cache: &Path, run: &str) -> Result<CacheRun> {
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
        builder.create(cache).map_err(|e| failed("creating the tool cache directory", cache, e))?;
        // The lock first: a fold (which holds it exclusively) trims the slots.
        let lock = super::lock::lock_file(cache, libc::LOCK_SH).map_err(|e| failed("locking the tool cache", cache, e))?;
        for d in [cache.join("base"), cache.join("pending")] {
            builder.create(&d).map_err(|e| failed("creating the tool cache directory", &d, e))?;
        }
        let slots = cache.join("slots");
        let slot = super::slots::claim(&slots).map_err(|e| failed("preparing a run directory in", &slots, e))?;
        let (upper, work) = (slot.upper.clone(), slot.work.clone());
        let mut lowers = pending(cache);
        lowers.reverse();
        lowers.push(cache.join("base"));
        Ok(CacheRun { cache: cache.to_path_buf(), run: run.to_string(), lock: Some(lock), published: false, slot: Some(slot), lowers, upper, work })
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

    /// Publish (if not yet), let go of the run's directories and the cache, fold if alone.
    pub fn finish(mut self) {
        self.publish();
        if let Some(slot) = self.slot.take() {
            slot.release();
        }
        drop(self.lock.take());
        fold_if_alone(&self.cache);
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
    let Ok(_exclusive) = super::lock::lock_file(cache, libc::LOCK_EX | libc::LOCK_NB) else { return };
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
    // Run directories of earlier versions, left by runs killed with their host: nobody holds
    // them now, nor the slots past the first few, made while more runs overlapped.
    let _ = super::store::remove_tree(&cache.join("runs"));
    super::slots::trim(&cache.join("slots"));
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
        assert_eq!(left_behind(&cache), Vec::<PathBuf>::new(), "no write left in a run directory");
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
        assert_eq!(left_behind(&cache), Vec::<PathBuf>::new(), "no write left in a run directory");
    }

    #[test]
    fn a_run_that_never_started_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        drop(CacheRun::open(&cache, "x").unwrap());
        assert_eq!(left_behind(&cache), Vec::<PathBuf>::new());
        assert!(pending(&cache).is_empty());
    }

    /// What the run directories of `cache` hold (in every slot's `upper`, missing when its writes
    /// were published), and any `runs/`.
    fn left_behind(cache: &Path) -> Vec<PathBuf> {
        let slots = std::fs::read_dir(cache.join("slots")).unwrap().flatten();
        let mut left: Vec<PathBuf> = slots.flat_map(|s| std::fs::read_dir(s.path().join("upper")).into_iter().flatten().flatten().map(|e| e.path())).collect();
        left.extend(Some(cache.join("runs")).filter(|r| r.exists()));
        left
    }
}
