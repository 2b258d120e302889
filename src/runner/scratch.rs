//! The Landlock mode's directory of one run: made before the plan is built (the plan grants it
//! whole, see `plan::landlock`), removed when the run is over. Made in sandspawn's own runs
//! directory (`plan::stores::runs_root`, mode 0700), not in the shared temporary directory, which
//! every other run may write: a concurrent run planted a package in one run's npm cache there
//! (found by an attacker's review). Where the runs directory cannot be had (no HOME, a read-only
//! one), the run's directory is made in the temporary directory and the result says so (`place`). It is the
//! command's `TMPDIR` when the shared temporary directory takes no new entries, and npm's cache.
//! The run holds an `flock` on a lock file beside it (`sandspawn-run-XXXXXX.lock`) while it lives,
//! so that when the host dies without removing it (SIGKILL), a later run's sweep (`scratch_sweep`)
//! can tell it is nobody's and remove it. The lock file, not the directory: any Landlock-mode
//! command can open another run's new directory read-only and `flock` it first, and that run then
//! failed its setup (35% of one workspace's runs, with a command in another racing every new
//! directory; found by an attacker's review). The lock file is made mode 0200 by the host: the
//! command has no capability to read it past its mode, and Landlock lets it write nothing there.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, Result, SandboxError};

pub struct Scratch {
    path: PathBuf,
    /// The directory's lock file, open and locked (`LOCK_EX`) until the run is over and then
    /// removed; close-on-exec, so the lock is the host's alone and goes when it dies.
    _lock: OwnedFd,
}

/// The lock file of the run directory `dir`: the directory's name with `.lock` added.
pub(super) fn lock_file_of(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl Scratch {
    /// A fresh directory `sandspawn-run-XXXXXX` (mode 0700) in `parent`.
    pub fn create(parent: &Path) -> Result<Scratch> {
        let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        let template = CString::new(parent.join("sandspawn-run-XXXXXX").into_os_string().into_vec())
            .map_err(|_| SandboxError::new(ErrorCode::SetupFailed, "the temporary directory's path holds a NUL byte"))?;
        let mut buf = template.into_bytes_with_nul();
        // SAFETY: a writable, NUL-terminated template that mkdtemp fills in place.
        if unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) }.is_null() {
            let e = std::io::Error::last_os_error();
            return Err(SandboxError::new(
                ErrorCode::SetupFailed,
                format!("cannot make the run's own directory in {} (the Landlock mode's TMPDIR): {}", parent.display(), sandspawn_helper::report::os_words(&e)),
            ));
        }
        buf.pop();
        let path = PathBuf::from(std::ffi::OsString::from_vec(buf));
        let lock = make_lock_file(&path).and_then(|f| lock(f)).map_err(|e| {
            let _ = std::fs::remove_file(lock_file_of(&path));
            let _ = std::fs::remove_dir(&path);
            SandboxError::new(ErrorCode::SetupFailed, format!("cannot lock the run's own directory {}: {}", path.display(), sandspawn_helper::report::os_words(&e)))
        })?;
        super::scratch_sweep::sweep_soon(&parent);
        Ok(Scratch { path, _lock: lock })
    }

    /// Where the run's directory is made: the runs directory, made (0700) and checked, or the
    /// host's temporary directory with why not (for the result's `notEnforced`).
    pub fn place() -> (PathBuf, Option<String>) {
        match runs_dir() {
            Ok(dir) => (dir, None),
            Err(why) => (
                std::env::temp_dir(),
                Some(format!(
                    "the run's own directory (npm's cache, TMPDIR where /tmp takes no new entries) is in the shared temporary \
                     directory, which other runs may write: {why}"
                )),
            ),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The runs directory, made where missing: no symlink of this user's on its path (a run could
/// have planted one), this user's, and writable by nobody else.
fn runs_dir() -> std::result::Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = crate::plan::stores::runs_root().ok_or(crate::state_dir::NO_HOST_PATH)?;
    let refused = |why: &str| Err(format!("{} {why}", dir.display()));
    if let Some(link) = crate::no_symlinks::own_link_on(&dir) {
        return refused(&format!("is reached through the symlink {}", link.display()));
    }
    if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir) {
        return refused(&format!("cannot be made: {}", sandspawn_helper::report::os_words(&e)));
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| format!("{}: {}", dir.display(), sandspawn_helper::report::os_words(&e)))?;
    // The owner's bits a sandboxed command took (`chmod 0`), given back.
    crate::state_dir::give_back_if_taken(&dir, &meta);
    if !crate::state_dir::is_private(&meta) {
        return refused("is not a directory of this user's that nobody else may write");
    }
    Ok(dir)
}

/// How long a run waits for its own new directory's lock at most: a sweep holds it for a moment
/// while it looks at a directory this young (and then leaves it, see `scratch_sweep::GRACE`).
const MOST_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The lock file of the new run directory `dir`, made by this call (never an existing one) with
/// mode 0200, open for writing only.
fn make_lock_file(dir: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o200)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(lock_file_of(dir))?;
    Ok(file.into())
}

/// `fd` locked, looked at again with pauses rather than waited for in the kernel: only a sweep
/// looking at it holds it, for a moment. When the lock was the directory's, a Landlock-mode
/// command held it as long as it lived and the run waited in its setup, its timeout and abort
/// unheard (found by an attacker's review); this bound stays as a second guard.
fn lock(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    let until = std::time::Instant::now() + MOST_WAIT;
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match sandspawn_helper::file_lock::flock(&fd, libc::LOCK_EX | libc::LOCK_NB) {
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) && std::time::Instant::now() < until => {}
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => return Err(std::io::Error::other("another process holds its lock")),
            taken => return taken.map(|()| fd),
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
    }
}

impl Drop for Scratch {
    /// Everything the run left there goes, without following a symlink (a link the command put in
    /// place of the directory is removed, not what it points to). `remove_tree`, not std's
    /// `remove_dir_all`: that recurses and holds a descriptor per level, and a command made its
    /// directory 15,000 levels deep: the host's thread overflowed its stack and Node died (found
    /// by an attacker's review). Dropped on a blocking thread (`supervise`), the tree's size being
    /// the command's choice.
    fn drop(&mut self) {
        let _ = crate::remove_tree::remove_tree(&self.path);
        // The lock file last, once the directory is gone: until then a sweep finds it held.
        let _ = std::fs::remove_file(lock_file_of(&self.path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by an attacker's review: a Landlock-mode command that took the lock of a run's new
    /// directory first held that run in its setup for as long as it lived.
    #[test]
    fn a_run_directory_someone_else_locked_is_given_up_on() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("sandspawn-run-held");
        std::fs::create_dir(&dir).unwrap();
        let held = crate::no_symlinks::open_dir(&dir).unwrap();
        sandspawn_helper::file_lock::flock(&held, libc::LOCK_EX).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dir.clone();
        std::thread::spawn(move || tx.send(crate::no_symlinks::open_dir(&d).and_then(lock).map(drop)));
        let gave = rx.recv_timeout(std::time::Duration::from_secs(3)).expect("still waiting after 3 s");
        assert!(gave.unwrap_err().to_string().contains("another process holds its lock"));
        drop(held);
        assert!(crate::no_symlinks::open_dir(&dir).and_then(lock).is_ok(), "free again: taken");
    }

    /// Found by an attacker's review: a Landlock-mode command watched the runs directory and
    /// `flock`ed every new run directory (it may open them read-only), and 7 of 20 runs of another
    /// workspace failed their setup. The run's lock is on a lock file that command cannot open.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_reader_locking_every_new_run_directory_fails_no_run() {
        let t = tempfile::tempdir().unwrap();
        let parent = t.path().canonicalize().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (ready, watching) = std::sync::mpsc::channel();
        let racer = {
            let (parent, stop) = (parent.clone(), stop.clone());
            std::thread::spawn(move || lock_every_new_directory(&parent, &stop, ready))
        };
        watching.recv().unwrap();
        let made: Vec<_> = (0..40).map(|_| Scratch::create(&parent).map_err(|e| e.message)).collect();
        std::thread::sleep(std::time::Duration::from_millis(100));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let locked = racer.join().unwrap();
        // Where the run's lock is the directory's own, the racer gets only those it wins the race
        // for (here usually none, in another process a third): every one it got failed a run.
        assert!(locked > 0, "the racer locked no directory: the run still holds a lock a reader can take");
        let failed: Vec<_> = made.iter().filter_map(|m| m.as_ref().err()).collect();
        assert!(failed.is_empty(), "{} of 40 runs failed their setup: {failed:?}", failed.len());
        let s = made.into_iter().next().unwrap().unwrap();
        use std::os::unix::fs::PermissionsExt;
        let lock = lock_file_of(s.path());
        assert_eq!(std::fs::symlink_metadata(&lock).unwrap().permissions().mode() & 0o777, 0o200);
        drop(s);
        assert!(!lock.exists(), "the lock file goes with its directory");
    }

    /// The racer: `flock` each directory made in `parent` the moment inotify tells, holding them
    /// all, until `stop`. Returns how many it locked.
    #[cfg(target_os = "linux")]
    fn lock_every_new_directory(parent: &Path, stop: &std::sync::atomic::AtomicBool, ready: std::sync::mpsc::Sender<()>) -> usize {
        use std::os::fd::{AsRawFd, FromRawFd};
        let ino = unsafe { OwnedFd::from_raw_fd(libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK)) };
        let c = CString::new(parent.as_os_str().as_encoded_bytes()).unwrap();
        assert!(unsafe { libc::inotify_add_watch(ino.as_raw_fd(), c.as_ptr(), libc::IN_CREATE | libc::IN_ONLYDIR) } >= 0);
        let dir = crate::no_symlinks::open_dir(parent).unwrap();
        ready.send(()).unwrap();
        let mut held = Vec::new();
        let mut buf = [0u8; 4096];
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let n = unsafe { libc::read(ino.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                std::thread::yield_now();
                continue;
            }
            let mut at = 0;
            while at < n as usize {
                let ev = unsafe { &*(buf.as_ptr().add(at) as *const libc::inotify_event) };
                let name = &buf[at + std::mem::size_of::<libc::inotify_event>()..][..ev.len as usize];
                let name = CString::new(name.split(|b| *b == 0).next().unwrap()).unwrap();
                if let Ok(fd) = crate::no_symlinks::open_at(dir.as_raw_fd(), &name) {
                    if sandspawn_helper::file_lock::flock(&fd, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
                        held.push(fd);
                    }
                }
                at += std::mem::size_of::<libc::inotify_event>() + ev.len as usize;
            }
        }
        held.len()
    }

    /// Found by an attacker's review: a Landlock-mode command made its run directory 15,000
    /// directories deep (relative `mkdir`/`cd`); the recursive `remove_dir_all` (a stack frame and a
    /// descriptor per level) overflowed the host's runtime thread's stack and Node died of SIGSEGV.
    /// Dropped here on a thread with a small stack, the same chain goes without recursion.
    #[test]
    fn a_deep_chain_in_the_run_directory_is_removed_on_a_small_stack() {
        let t = tempfile::tempdir().unwrap();
        let s = Scratch::create(t.path()).unwrap();
        let p = s.path().to_path_buf();
        crate::remove_tree::tests::deep_chain(&p, 3000, "d");
        let dropping = std::thread::Builder::new().stack_size(64 * 1024).spawn(move || drop(s)).unwrap();
        dropping.join().expect("removed without overflowing a 64 KiB stack");
        assert!(!p.exists());
    }

    #[test]
    fn made_private_and_removed_with_what_it_holds() {
        let t = tempfile::tempdir().unwrap();
        let s = Scratch::create(t.path()).unwrap();
        let p = s.path().to_path_buf();
        assert!(p.starts_with(t.path().canonicalize().unwrap()) && p.file_name().unwrap().to_str().unwrap().starts_with("sandspawn-run-"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(t.path().join("keep"), "").unwrap();
        std::os::unix::fs::symlink(t.path(), p.join("d/link")).unwrap();
        drop(s);
        assert!(!p.exists() && t.path().join("keep").exists(), "the link's target is left alone");
        assert!(Scratch::create(Path::new("/nonexistent/dir")).is_err());
    }

    fn age(p: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::open(p).unwrap().set_modified(old).unwrap();
    }

    /// The same with lock files: a live run (its lock file held) stays however old its
    /// directory; a dead run's directory goes with its lock file; a lock file whose directory
    /// is gone goes when nobody holds it, even while someone holds the directory's own lock.
    #[test]
    fn the_sweep_goes_by_the_lock_files() {
        let t = tempfile::tempdir().unwrap();
        // A live run's, made by hand: Scratch::create would sweep on a thread of its own, racing
        // this test's sweep (the count below then came out 1 in one run of the suite).
        let live = t.path().join("sandspawn-run-live");
        std::fs::create_dir(&live).unwrap();
        let _live_lock = lock(make_lock_file(&live).unwrap()).unwrap();
        age(&live);
        let dead = t.path().join("sandspawn-run-dead");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("blob"), "x").unwrap();
        make_lock_file(&dead).unwrap();
        age(&dead);
        let reader = crate::no_symlinks::open_dir(&dead).unwrap();
        sandspawn_helper::file_lock::flock(&reader, libc::LOCK_SH).unwrap();
        let orphan = t.path().join("sandspawn-run-orphan");
        drop(make_lock_file(&orphan).unwrap());
        age_file(&lock_file_of(&orphan));
        let held_orphan = t.path().join("sandspawn-run-held");
        let held = lock(make_lock_file(&held_orphan).unwrap()).unwrap();
        age_file(&lock_file_of(&held_orphan));
        assert_eq!(super::super::scratch_sweep::sweep(t.path()), 2, "the dead run's directory, the free orphan lock file");
        assert!(live.exists() && lock_file_of(&live).exists(), "live");
        assert!(!dead.exists() && !lock_file_of(&dead).exists(), "dead");
        assert!(!lock_file_of(&orphan).exists(), "orphan");
        assert!(lock_file_of(&held_orphan).exists(), "a held lock file stays");
        drop((held, reader));
    }

    fn age_file(p: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::OpenOptions::new().write(true).open(p).unwrap().set_modified(old).unwrap();
    }

    #[test]
    fn the_sweep_removes_only_unlocked_old_run_directories() {
        let t = tempfile::tempdir().unwrap();
        let stale = t.path().join("sandspawn-run-stale");
        std::fs::create_dir_all(stale.join("d")).unwrap();
        std::fs::write(stale.join("d/blob"), "x").unwrap();
        age(&stale);
        // A live run's (Scratch::create would sweep on a thread of its own, racing this test's).
        let live = t.path().join("sandspawn-run-live");
        std::fs::create_dir(&live).unwrap();
        let _held = crate::no_symlinks::open_dir(&live).and_then(lock).unwrap();
        age(&live);
        std::fs::create_dir(t.path().join("sandspawn-run-young")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("sandspawn-run-link")).unwrap();
        std::fs::create_dir(t.path().join("other")).unwrap();
        age(&t.path().join("other"));
        assert_eq!(super::super::scratch_sweep::sweep(t.path()), 1);
        assert!(!stale.exists(), "stale");
        assert!(live.exists(), "live");
        assert!(t.path().join("sandspawn-run-young").exists() && t.path().join("other").exists(), "young, other");
        assert!(outside.path().join("keep").exists() && t.path().join("sandspawn-run-link").exists());
    }
}
