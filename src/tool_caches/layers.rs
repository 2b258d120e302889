//! One cache location's layers in the store, and one run's share of them.
//!
//! Concurrent runs used to share one overlay upper directory. Overlayfs does not support that (each
//! mount caches what it saw of the upper directory), and six parallel `npm install`s on a cold
//! store failed with `ENOTEMPTY` in npm's `_cacache/tmp`. Now each run writes an upper directory of
//! its own, over read-only layers nobody changes while they are mounted:
//!
//! ```text
//! CACHE/lock              a run holds it shared from before it lists the layers until its sandbox is gone
//! CACHE/waiting           a run waiting for a fold holds it shared: the fold stops at its next entry
//! CACHE/base/             what earlier runs wrote, folded together (the lowest layer above the host's cache)
//! CACHE/pending/SEQ-RUN/  a finished run's writes, not folded yet (immutable while a run holds the lock)
//! CACHE/slots/N/upper     this run's writes;  CACHE/slots/N/work: overlayfs's scratch directory
//! CACHE/discard/          what a fold replaced or finished with, removed after it let go of the lock
//! ```
//!
//! A run's directories are a slot it holds (`slots`): a run that wrote nothing leaves them, empty,
//! to the next run. Stores of earlier versions have `CACHE/runs/RUN/`, removed by the next fold.
//!
//! A run mounts `lowerdir = pending (newest first) : base : the host's cache`. When it ends its upper
//! directory becomes a pending layer (one `rename`), and whoever then gets the lock exclusively
//! (no run has anything mounted) folds every pending layer into the base (`merge`), oldest first.
//! So runs never wait for each other, and what one wrote is seen by the runs that start after it.
//!
//! Nor does a run wait for a fold. A fold moves a layer's entries one by one (~40 to 70 µs each
//! where they land in directories the base has); a run that wrote 200,000 entries so held the lock
//! for 14 s, and the next run in the workspace waited that long in its setup, past its own timeout
//! (found by an attacker's review). A run that finds the lock taken says so (`waiting`), and the
//! fold stops after the entry it is moving and lets go: between two entries the rest of the layer
//! over the base shows what the whole layer did (`merge`), so the run mounts them as they are, and
//! the fold goes on when the last run lets go. Past `MOST_PENDING` layers a fold does not stop
//! (the overlay stacks at most 500): runs wait then, until their own end (`runner::supervise`) and
//! `lock::MOST_WAIT` at most, looking at the lock again and again rather than waiting in the kernel.
//!
//! No sandbox can hold a run or a fold up: the locks are write locks on files of mode 0200 (`lock::set`), and they need a descriptor
//! no sandbox can open (`lock`). A Landlock-mode command's `flock -x` on every cache of the store
//! held every other workspace's runs in their setup for as long as it lived (found by an attacker's
//! review).

use std::path::{Path, PathBuf};

use super::dir::Dir;
use crate::error::{Result, SandboxError};

/// One run's hold on one cache location.
pub struct CacheRun {
    /// The cache's directory in the scope, held open: everything the run's end does in it is done
    /// from this descriptor, through no link (`dir`).
    cache: Dir,
    run: String,
    /// Shared lock (`lock::set`) on `CACHE/lock` for the run's life.
    lock: Option<super::lock::Held>,
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
    /// Take the shared lock, list the layers, make this run's directories, in the cache `name` of
    /// `scope`. `ended`: whether the run ended meanwhile, which ends a wait for the lock
    /// (`lock_shared`).
    pub fn open(scope: &Dir, name: &str, run: &str, ended: &dyn Fn() -> bool) -> Result<CacheRun> {
        let made = |d: &Dir, name: &str| d.dir(name).map_err(|e| failed("creating the tool cache directory", &d.join(name), e));
        let cache = made(scope, name)?;
        // The lock first: a fold (which holds it exclusively) trims the slots.
        let lock = lock_shared(&cache, ended).map_err(|e| failed("locking the tool cache", cache.path(), e))?;
        made(&cache, "base")?;
        let pending = made(&cache, "pending")?;
        let slots = made(&cache, "slots")?;
        let slot = super::slots::claim(&slots).map_err(|e| failed("preparing a run directory in", slots.path(), e))?;
        let (upper, work) = (slot.upper.clone(), slot.work.clone());
        let mut lowers: Vec<PathBuf> = layer_names(&pending).into_iter().map(|n| pending.join(n)).collect();
        lowers.reverse();
        lowers.push(cache.join("base"));
        Ok(CacheRun { cache, run: run.to_string(), lock: Some(lock), published: false, slot: Some(slot), lowers, upper, work })
    }

    /// The run is over (its sandbox is gone): what it wrote becomes a pending layer (one `rename`),
    /// which every run that starts from now on mounts. The rest of `finish` can wait.
    pub fn publish(&mut self) {
        if std::mem::replace(&mut self.published, true) {
            return;
        }
        let (Some(slot), Ok(pending)) = (&self.slot, self.cache.dir("pending")) else { return };
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        slot.publish(&pending, &format!("{stamp:024}-{}", self.run));
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

/// The pending layers' names, oldest first (they start with a zero-padded time).
fn layer_names(pending: &Dir) -> Vec<std::ffi::OsString> {
    let mut layers = pending.names().unwrap_or_default();
    layers.sort();
    layers
}

/// The cache's lock, shared. Taken by a fold, it is waited for with `waiting` held, which makes the
/// fold stop at its next entry (`fold_if_alone`); both waits end when the run does (`ended`), and
/// after `lock::MOST_WAIT` in all.
fn lock_shared(cache: &Dir, ended: &dyn Fn() -> bool) -> std::io::Result<super::lock::Held> {
    use super::lock::{is_held, lock_file, wait_for, MOST_WAIT};
    match lock_file(cache, libc::LOCK_SH | libc::LOCK_NB) {
        Err(e) if is_held(&e) => {
            let until = std::time::Instant::now() + MOST_WAIT;
            let _waiting = wait_for(cache, "waiting", libc::LOCK_SH, ended, until)?;
            wait_for(cache, "lock", libc::LOCK_SH, ended, until)
        }
        taken => taken,
    }
}

/// Pending layers past which a fold no longer stops for a waiting run: runs that kept stopping it
/// would otherwise stack their layers without bound, and an overlay stacks at most 500.
const MOST_PENDING: usize = 64;

/// How often a fold looks whether a run waits (a lock taken and let go: a few µs).
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(2);

/// Whether a run waits for the cache (holds `waiting` shared, `lock_shared`), looked at every
/// `LOOK_EVERY` at most.
struct Waiters {
    file: Option<std::os::fd::OwnedFd>,
    last: std::time::Instant,
}

impl Waiters {
    fn of(cache: &Dir) -> Waiters {
        Waiters { file: super::lock::open(cache, "waiting").ok(), last: std::time::Instant::now() }
    }

    fn now(&mut self) -> bool {
        use super::lock::set;
        if self.last.elapsed() < LOOK_EVERY {
            return false;
        }
        self.last = std::time::Instant::now();
        let Some(file) = &self.file else { return false };
        // Exclusive for a moment: refused while any run holds it shared.
        match set(file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => {
                let _ = set(file, libc::LOCK_UN);
                false
            }
            // A reader's read lock (lock28: `chmod u+r` first) is nobody waiting.
            Err(e) => super::lock::is_held(&e) && super::lock::holders(file),
        }
    }
}

/// Fold the pending layers into the base when no run holds the cache; otherwise the last of those
/// runs does it when it ends. A run that comes to wait for the lock stops the fold after the
/// entry it is moving (see the module comment); the rest is left to the last run again. Every
/// step from the cache's descriptor, through no link (`dir`).
pub fn fold_if_alone(cache: &Dir) {
    let Ok(exclusive) = super::lock::lock_file(cache, libc::LOCK_EX | libc::LOCK_NB) else { return };
    let (Ok(mut base), Ok(pending), Ok(discard)) = (cache.dir("base"), cache.dir("pending"), cache.dir("discard")) else { return };
    let layers = layer_names(&pending);
    let mut waiters = Waiters::of(cache);
    let mut stop = || layers.len() <= MOST_PENDING && waiters.now();
    let mut whole = true;
    for name in &layers {
        // Not a directory (a link a run left): nothing to fold, removed below.
        if let Ok(layer) = pending.open(name) {
            let mut fold = super::merge::Fold { discard: &discard, stop: &mut stop };
            match super::merge::merge_into(&layer, &base, &mut fold) {
                Ok(true) => {}
                Ok(false) => {
                    whole = false;
                    break;
                }
                // A layer that cannot be folded whole is dropped rather than half-applied: this is a
                // cache, and what is missing is fetched again.
                Err(_) => {
                    if set_aside(cache, "base", &discard).is_err() {
                        let _ = cache.remove("base");
                    }
                    let Ok(fresh) = cache.dir("base") else {
                        whole = false;
                        break;
                    };
                    base = fresh;
                }
            }
        }
        // Folded (what is left is its directories) or dropped: out of the pending layers in one step.
        if set_aside(&pending, name, &discard).is_err() {
            let _ = pending.remove(name);
        }
    }
    if whole {
        // Run directories of earlier versions, left by runs killed with their host: nobody holds
        // them now, nor the slots past the first few, made while more runs overlapped.
        let _ = cache.remove("runs");
        if let Ok(slots) = cache.open("slots") {
            super::slots::trim(&slots);
        }
    }
    drop(exclusive);
    // No run mounts what was set aside: removed without the lock, by any fold (a fold that ended
    // with its host left it).
    for name in discard.names().unwrap_or_default() {
        let _ = discard.remove(&name);
    }
}

/// Move the entry `name` of `dir` into `discard` under a name of its own (one `rename`, whatever it
/// holds; made writable first, whatever mode its run left on its root: a directory moves to another
/// parent only so).
fn set_aside(dir: &Dir, name: impl AsRef<std::ffi::OsStr>, discard: &Dir) -> std::io::Result<()> {
    super::owner_access::open_up(dir, name.as_ref())?;
    let shown = name.as_ref().to_string_lossy().into_owned();
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    dir.rename(name, discard, format!("{shown}-{}-{stamp}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CacheRun::open` of the cache at `cache` (its scope: the parent directory).
    fn open(cache: &Path, run: &str) -> CacheRun {
        open_ending(cache, run, &|| false).unwrap()
    }

    fn open_ending(cache: &Path, run: &str, ended: &dyn Fn() -> bool) -> Result<CacheRun> {
        let scope = Dir::at(cache.parent().unwrap());
        CacheRun::open(&scope, cache.file_name().unwrap().to_str().unwrap(), run, ended)
    }

    /// The pending layers of the cache at `cache`, oldest first.
    fn pending(cache: &Path) -> Vec<PathBuf> {
        layer_names(&Dir::at(&cache.join("pending"))).into_iter().map(|n| cache.join("pending").join(n)).collect()
    }

    #[test]
    fn concurrent_runs_write_apart_and_the_last_one_folds() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        let a = open(&cache, "a");
        let b = open(&cache, "b");
        assert_eq!(a.lowers, vec![cache.join("base")]);
        assert_ne!(a.upper, b.upper, "an upper directory of its own");
        std::fs::write(a.upper.join("from-a"), "a").unwrap();
        std::fs::write(b.upper.join("from-b"), "b").unwrap();
        a.finish();
        assert_eq!(pending(&cache).len(), 1, "b still holds the cache: a's writes wait as a layer");
        let c = open(&cache, "c");
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
        let mut a = open(&cache, "a");
        std::fs::write(a.upper.join("from-a"), "a").unwrap();
        a.publish();
        a.publish();
        let b = open(&cache, "b");
        assert!(b.lowers[0].join("from-a").exists(), "the next run mounts a's writes: {:?}", b.lowers);
        a.finish();
        assert_eq!(pending(&cache).len(), 1, "one layer, published once; b still holds the cache");
        b.finish();
        assert_eq!(std::fs::read_to_string(cache.join("base/from-a")).unwrap(), "a");
        assert_eq!(left_behind(&cache), Vec::<PathBuf>::new(), "no write left in a run directory");
    }

    /// A child that another thread of the host forks (Node's `child_process`, another run's spawn)
    /// holds a copy of every descriptor the host has open from its fork to its exec, which closes
    /// them (CLOEXEC); under load that is milliseconds. A run's locks are OFD locks, held while any
    /// copy of their descriptor is open: a run that let go of the cache by closing its descriptor
    /// still held it in such a child, and its fold (which needs the cache alone) did not happen;
    /// nor could the next run take its slot. Seen as a flaky
    /// `a_run_that_comes_during_a_fold_gets_in_at_once_and_mounts_the_rest_of_the_layer` in a
    /// full `cargo test --lib`. This child is stopped between its fork and its exec for as long as
    /// the test needs.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_forked_while_a_run_holds_the_cache_holds_up_no_fold_and_no_slot() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        let a = open(&cache, "a");
        std::fs::write(a.upper.join("from-a"), "a").unwrap();
        let upper = a.upper.clone();
        let child = Forked::new();
        a.finish();
        assert!(pending(&cache).is_empty(), "a folded its writes at once, whatever a forked child holds: {:?}", pending(&cache));
        assert_eq!(std::fs::read_to_string(cache.join("base/from-a")).unwrap(), "a");
        let b = open(&cache, "b");
        assert_eq!(b.upper, upper, "a's slot is free again");
        drop(child);
        b.finish();
    }

    /// A child forked from this process that stays between its fork and an exec (holding a copy of
    /// every descriptor) until dropped.
    #[cfg(target_os = "linux")]
    struct Forked(libc::pid_t);

    #[cfg(target_os = "linux")]
    impl Forked {
        fn new() -> Forked {
            // SAFETY: the child calls only an async-signal-safe function (pause) until killed.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork");
            if pid == 0 {
                loop {
                    // SAFETY: as above.
                    unsafe { libc::pause() };
                }
            }
            Forked(pid)
        }
    }

    #[cfg(target_os = "linux")]
    impl Drop for Forked {
        fn drop(&mut self) {
            // SAFETY: our own child, killed and reaped.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
                libc::waitpid(self.0, std::ptr::null_mut(), 0);
            }
        }
    }

    #[test]
    fn a_run_that_never_started_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        drop(open(&cache, "x"));
        assert_eq!(left_behind(&cache), Vec::<PathBuf>::new());
        assert!(pending(&cache).is_empty());
    }

    /// Found by an attacker's review: the next run in a workspace waited in its setup for the
    /// whole fold of the last run's writes (14 s for 200,000 entries), past its timeout.
    #[test]
    fn a_run_that_comes_during_a_fold_gets_in_at_once_and_mounts_the_rest_of_the_layer() {
        const DIRS: usize = 20;
        const FILES: usize = 1000;
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        // Directories in the base first (folded by one rename each), then hard links into them
        // (a link is ten times cheaper to make than a file), which a fold moves one by one.
        let a = open(&cache, "a");
        (0..DIRS).for_each(|d| std::fs::create_dir(a.upper.join(format!("d{d}"))).unwrap());
        a.finish();
        let b = open(&cache, "b");
        std::fs::write(b.upper.join("one"), "x").unwrap();
        for d in 0..DIRS {
            std::fs::create_dir(b.upper.join(format!("d{d}"))).unwrap();
            (0..FILES).for_each(|f| std::fs::hard_link(b.upper.join("one"), b.upper.join(format!("d{d}/{f}"))).unwrap());
        }
        let folding = std::thread::spawn(move || b.finish());
        let held = || held_exclusively(&cache);
        let begun = std::time::Instant::now();
        while !held() {
            assert!(!folding.is_finished() && begun.elapsed() < std::time::Duration::from_secs(10), "the fold was over before it was seen");
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        let asked = std::time::Instant::now();
        let c = open(&cache, "c");
        let waited = asked.elapsed();
        // That c did not wait for the fold is told by what c got, not by a time (a loaded machine
        // takes over 500 ms to open a run): b's layer still pending, and below, the fold stopped
        // before its end. Waiting for the whole fold (the bug) leaves one lower, the base.
        assert_eq!(c.lowers.len(), 2, "c got in while b's layer was still pending: {:?} (after {waited:?})", c.lowers);
        folding.join().unwrap();
        // The layer over the base shows every entry, wherever each one is now.
        for d in 0..DIRS {
            let names: std::collections::BTreeSet<_> = c.lowers.iter().flat_map(|l| std::fs::read_dir(l.join(format!("d{d}"))).unwrap().flatten().map(|e| e.file_name())).collect();
            assert_eq!(names.len(), FILES, "d{d}");
        }
        assert!(std::fs::read_dir(cache.join(format!("base/d{}", DIRS - 1))).unwrap().count() < FILES, "the fold stopped before its end");
        c.finish();
        assert!(pending(&cache).is_empty(), "the last run folded the rest");
        (0..DIRS).for_each(|d| assert_eq!(std::fs::read_dir(cache.join(format!("base/d{d}"))).unwrap().count(), FILES));
        assert_eq!(std::fs::read_dir(cache.join("discard")).unwrap().count(), 0, "what the fold set aside is gone");
    }

    /// Whether something holds the cache's lock exclusively (a fold), asked without taking the lock
    /// (`F_OFD_GETLK`): a probe that took it shared for a moment, as this test's did, turned the
    /// fold it looked for away when the fold came to the lock in that moment (1 in 20 runs of
    /// `cargo test --lib tool_caches -- --test-threads=8`: "the fold was over before it was seen").
    #[cfg(target_os = "linux")]
    fn held_exclusively(cache: &Path) -> bool {
        let fd = super::super::lock::open(&Dir::at(cache), "lock").unwrap();
        super::super::lock::exclusive_held(&fd).unwrap()
    }

    /// Where there are no OFD locks (macOS, `flock`): by taking the lock shared for a moment.
    #[cfg(not(target_os = "linux"))]
    fn held_exclusively(cache: &Path) -> bool {
        matches!(super::super::lock::lock_file(&Dir::at(cache), libc::LOCK_SH | libc::LOCK_NB), Err(e) if super::super::lock::is_held(&e))
    }

    /// Found by a review (/work/atk/fixes17b/gomod.js): as a user other than root, Go's read-only
    /// module directories (0555, as `go mod download` leaves them) made the second run's fold fail
    /// (EACCES renaming the new module into the base), and the fold dropped the base: a later run
    /// saw only the last module fetched. Every module lands, with the modes the runs saw, and
    /// nothing the folds set aside is left on disk, whatever modes a run leaves (a 0000 directory,
    /// one without search access, its cache's mount point made 0555).
    #[cfg(target_os = "linux")]
    #[test]
    fn read_only_module_directories_fold_for_a_user_other_than_root_and_leave_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("go-mod");
        let chmod = |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        // What `go mod download` leaves of one module: directories 0555, files 0444.
        let module = |upper: &Path, version: &str| {
            let m = upper.join(format!("example.test/m@{version}"));
            std::fs::create_dir_all(m.join("sub")).unwrap();
            for f in ["m.go", "sub/blob"] {
                std::fs::write(m.join(f), version).unwrap();
                chmod(&m.join(f), 0o444);
            }
            chmod(&m.join("sub"), 0o555);
            chmod(&m, 0o555);
        };
        let modes = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
        crate::test_capabilities::without_dac_override(|| {
            for version in ["v1.0.0", "v1.1.0", "v1.2.0"] {
                let run = open(&cache, version);
                module(&run.upper, version);
                run.finish();
            }
            // A run that closes what it wrote, and the cache's mount point, to the fold.
            let run = open(&cache, "closing");
            for d in ["closed/in", "unsearchable"] {
                std::fs::create_dir_all(run.upper.join(d)).unwrap();
                std::fs::write(run.upper.join(d).join("f"), "f").unwrap();
            }
            for (d, mode) in [("closed/in", 0o000), ("closed", 0o000), ("unsearchable", 0o600), ("", 0o555)] {
                chmod(&run.upper.join(d), mode);
            }
            let upper = run.upper.clone();
            run.finish();
            assert!(!upper.exists() || std::fs::read_dir(&upper).unwrap().next().is_none(), "the run's writes were published");
        });
        let later = open(&cache, "later");
        assert_eq!(later.lowers, vec![cache.join("base")], "every layer folded: {:?}", pending(&cache));
        for version in ["v1.0.0", "v1.1.0", "v1.2.0"] {
            let m = cache.join(format!("base/example.test/m@{version}"));
            assert_eq!(std::fs::read_to_string(m.join("sub/blob")).unwrap_or_default(), version, "a later run sees {version}");
            assert_eq!((modes(&m), modes(&m.join("sub")), modes(&m.join("m.go"))), (0o555, 0o555, 0o444), "as Go left it");
        }
        assert_eq!((modes(&cache.join("base/closed")), modes(&cache.join("base/unsearchable"))), (0o000, 0o600));
        later.finish();
        assert_eq!(std::fs::read_dir(cache.join("discard")).unwrap().count(), 0, "what the folds set aside is gone");
        assert_eq!(left_behind(&cache), Vec::<PathBuf>::new(), "no write left in a run directory");
    }

    /// `CacheRun::open` on a thread of its own, and what it gave within `within` (`None`: still
    /// waiting then; the thread is left to end when the lock is let go).
    /// A bound on a run's opening that only a hang meets: under `lock::MOST_WAIT` (60 s), so that
    /// a run waiting for a lock the test holds is told apart from one refused after that wait.
    const HANG_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

    fn open_within(cache: &Path, ended: std::sync::Arc<std::sync::atomic::AtomicBool>, within: std::time::Duration) -> Option<Result<CacheRun>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let cache = cache.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(open_ending(&cache, "late", &|| ended.load(std::sync::atomic::Ordering::Relaxed)));
        });
        rx.recv_timeout(within).ok()
    }

    /// Found by an attacker's review: a Landlock-mode command reads the whole store, and its
    /// `flock -x` on a cache's `lock` (and `waiting`) held every other run of that scope in its
    /// setup for as long as it lived. What a descriptor opened for reading can take holds up no run.
    #[test]
    fn a_command_that_can_only_read_the_cache_holds_up_no_run() {
        use std::os::fd::AsRawFd;
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        open(&cache, "a").finish();
        let held: Vec<std::fs::File> = ["lock", "waiting", "slots/0/lock"]
            .iter()
            .filter(|name| {
                // A command of this user without capabilities (the Landlock mode's) opens for reading
                // only what the owner may read (mode 0200 on Linux: none of these; this test may run
                // as root, whom no mode stops). The run's fold made `waiting` (it began: the run let
                // go of its locks whatever copies of its descriptors children forked by other tests
                // held, `lock::Held`).
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(cache.join(name)).unwrap().permissions().mode() & 0o400 != 0
            })
            .map(|name| {
                let f = std::fs::File::open(cache.join(name)).unwrap();
                // SAFETY: flock and fcntl on a descriptor this test owns; a zeroed flock is valid.
                assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0, "{name}: flock -x");
                let mut l: libc::flock = unsafe { std::mem::zeroed() };
                l.l_type = libc::F_RDLCK as libc::c_short;
                // SAFETY: as above.
                assert_eq!(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &l) }, 0, "{name}: a read lock");
                f
            })
            .collect();
        // The locks stay held until after the run is open: a run that waited for them would wait
        // until `lock::MOST_WAIT` (60 s) and fail. So the run opening at all tells that it was not
        // held up; the bound is a hang bound under MOST_WAIT, not a speed (a 500 ms bound failed
        // 1 run in 3 at a tenth of a CPU: 'waited 526 ms').
        let begun = std::time::Instant::now();
        let run = open_within(&cache, Default::default(), HANG_BOUND);
        let run = run.unwrap_or_else(|| panic!("still waiting after {:?}", begun.elapsed()));
        let run = run.unwrap_or_else(|e| panic!("refused after {:?}: {}", begun.elapsed(), e.message));
        drop(held);
        run.finish();
    }

    /// Found by an attacker's review (cross28): what a descriptor opened for reading could still
    /// take, a read lock on a cache's `lock` (or `waiting`), kept every fold from happening for as
    /// long as the reader (a Landlock-mode command, which reads the whole store) lived. Runs still
    /// started, each mounting every pending layer, until the overlay's options no longer fit in a
    /// page (some 200 layers) and every run of the workspace failed its setup; meanwhile each slot
    /// a run let go was read-locked too, and every run made one more (4,096 at most, then failed).
    #[test]
    fn a_command_that_can_only_read_the_cache_holds_up_no_fold() {
        use std::os::fd::AsRawFd;
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        open(&cache, "a").finish();
        // A command of this user without capabilities (the Landlock mode's): it opens for reading
        // only what the owner may read (this test may run as root, whom no mode stops).
        let read_lock = |name: &str| -> Option<std::fs::File> {
            use std::os::unix::fs::PermissionsExt;
            if std::fs::metadata(cache.join(name)).ok()?.permissions().mode() & 0o400 == 0 {
                return None;
            }
            let f = std::fs::File::open(cache.join(name)).ok()?;
            // SAFETY: fcntl on a descriptor this test owns; a zeroed flock is valid (whole file).
            let mut l: libc::flock = unsafe { std::mem::zeroed() };
            l.l_type = libc::F_RDLCK as libc::c_short;
            // SAFETY: as above.
            (unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &l) } == 0).then_some(f)
        };
        let held: Vec<std::fs::File> = ["lock", "waiting", "slots/0/lock"].iter().filter_map(|n| read_lock(n)).collect();
        let b = open(&cache, "b");
        std::fs::write(b.upper.join("from-b"), "b").unwrap();
        b.finish();
        assert!(pending(&cache).is_empty(), "the fold did not happen while a reader held the cache's files: {:?} ({} of them read-locked)", pending(&cache), held.len());
        assert_eq!(std::fs::read_to_string(cache.join("base/from-b")).unwrap(), "b");
        let slots: Vec<_> = std::fs::read_dir(cache.join("slots")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(slots, vec![std::ffi::OsString::from("0")], "the run took the slot a reader locked, made no other");
        drop(held);
    }

    /// Found by an attacker's review (lock28): mode 0200 keeps no reader out for good. The files are
    /// the user's own and the Landlock mode does not govern modes (`file-modes`): its command gives
    /// each its read bit back, opens it for reading and read-locks it. The fold did not happen,
    /// another slot was made, and a run's shared hold on the cache was refused (it waited its 60 s
    /// and failed).
    #[test]
    fn a_reader_that_chmods_the_cache_s_files_holds_up_no_fold_nor_run() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        open(&cache, "a").finish();
        let read_lock = |name: &str| -> Option<std::fs::File> {
            let mode = std::fs::metadata(cache.join(name)).ok()?.permissions().mode();
            std::fs::set_permissions(cache.join(name), std::fs::Permissions::from_mode((mode & 0o777) | 0o400)).ok()?;
            let f = std::fs::File::open(cache.join(name)).ok()?;
            // SAFETY: fcntl on a descriptor this test owns; a zeroed flock is valid (whole file).
            let mut l: libc::flock = unsafe { std::mem::zeroed() };
            l.l_type = libc::F_RDLCK as libc::c_short;
            // SAFETY: as above.
            (unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &l) } == 0).then_some(f)
        };
        let held: Vec<std::fs::File> = ["lock", "waiting", "slots/0/lock"].iter().filter_map(|n| read_lock(n)).collect();
        assert_eq!(held.len(), 3, "the reader read-locked the cache's files");
        assert!(super::super::lock::lock_file(&Dir::at(&cache), libc::LOCK_SH | libc::LOCK_NB).is_ok(), "a run's shared hold was refused");
        let b = open(&cache, "b");
        std::fs::write(b.upper.join("from-b"), "b").unwrap();
        b.finish();
        assert!(pending(&cache).is_empty(), "the fold did not happen while a reader held the cache's files: {:?}", pending(&cache));
        assert_eq!(std::fs::read_to_string(cache.join("base/from-b")).unwrap(), "b");
        let slots: Vec<_> = std::fs::read_dir(cache.join("slots")).unwrap().flatten().map(|e| e.file_name()).filter(|n| !n.to_string_lossy().contains(".new-")).collect();
        assert_eq!(slots, vec![std::ffi::OsString::from("0")], "the run took the slot a reader locked, made no other");
        drop(held);
    }

    /// A run that waits for the cache (a fold past `MOST_PENDING` layers does not stop for it)
    /// stops waiting when the run ends (its deadline, a kill, an abort): before, its thread waited
    /// in `flock` for as long as the holder held on.
    #[test]
    fn a_wait_for_the_cache_ends_with_the_run() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("npm");
        open(&cache, "a").finish();
        let folding = super::super::lock::lock_file(&Dir::at(&cache), libc::LOCK_EX).unwrap();
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let end = ended.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            end.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let begun = std::time::Instant::now();
        let gave = open_within(&cache, ended, HANG_BOUND).unwrap_or_else(|| panic!("still waiting after {:?}", begun.elapsed()));
        // Which end it heard is told by the error, not by a time: a wait deaf to the run's end
        // would end at `lock::MOST_WAIT` with "waited for 60 s", after the hang bound.
        let e = gave.err().expect("no lock, no run");
        assert!(e.message.contains("the run ended while it waited"), "gave up after {:?}: {}", begun.elapsed(), e.message);
        drop(folding);
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
