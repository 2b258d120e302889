//! Removing the Landlock mode's run directories (`sandspawn-run-*`, see `scratch`) that outlived
//! their host: one SIGKILLed mid-run never reached `Scratch`'s `Drop`. A directory is stale when
//! nobody holds its lock (each live run holds one on its own), it belongs to this user, and it was
//! last changed more than `GRACE` ago (a run locks its directory a moment after making it). Every
//! step is relative to the descriptor of the directory they are in (the runs directory, or the
//! temporary directory where that cannot be had) and follows no symlink; the sweep runs on a thread
//! of its own, off every run's path, at most once a minute per such directory and process, and
//! looks at a bounded number of entries.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How recently a directory may have changed and still be left alone.
pub const GRACE: Duration = Duration::from_secs(10);
/// How often one process sweeps one temporary directory.
const EVERY: Duration = Duration::from_secs(60);
/// Directories looked at per sweep.
const AT_MOST: usize = 64;

static LAST: Mutex<Option<HashMap<PathBuf, Instant>>> = Mutex::new(None);

/// Sweep `tmp` on a thread of its own, unless this process did so less than `EVERY` ago.
pub fn sweep_soon(tmp: &Path) {
    {
        let mut last = LAST.lock().unwrap();
        let map = last.get_or_insert_with(HashMap::new);
        if map.get(tmp).is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        map.insert(tmp.to_path_buf(), Instant::now());
    }
    let tmp = tmp.to_path_buf();
    let _ = std::thread::Builder::new().name("sandspawn-sweep".into()).spawn(move || sweep(&tmp));
}

/// Remove the stale run directories in `tmp`; returns how many went.
pub fn sweep(tmp: &Path) -> usize {
    let Ok(names) = std::fs::read_dir(tmp) else { return 0 };
    let names: Vec<CString> = names
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.as_bytes().starts_with(b"sandspawn-run-"))
        .take(AT_MOST)
        .filter_map(|n| CString::new(n.as_bytes()).ok())
        .collect();
    names.iter().filter(|n| remove_if_stale(tmp, n)).count()
}

fn remove_if_stale(tmp: &Path, name: &CStr) -> bool {
    let Ok(parent) = crate::no_symlinks::open_dir(tmp) else { return false };
    // Not a link (O_NOFOLLOW), not a file (O_DIRECTORY).
    let Ok(dir) = crate::no_symlinks::open_at(parent.as_raw_fd(), name) else { return false };
    // SAFETY: a valid descriptor; LOCK_NB never waits. The lock is released when `dir` closes.
    if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return false; // a live run's
    }
    let (Some(held), Some(named)) = (stat(&dir, None), stat(&parent, Some(name))) else { return false };
    // SAFETY: no arguments.
    let mine = held.st_uid == unsafe { libc::geteuid() };
    let same = (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino);
    let age = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs() as i64 - held.st_mtime;
    if !mine || !same || age < GRACE.as_secs() as i64 {
        return false;
    }
    crate::remove_tree::remove_dir_at(parent, name).is_ok()
}

/// `fstat` of `fd`, or `fstatat` of `name` in it without following a link.
fn stat(fd: &OwnedFd, name: Option<&CStr>) -> Option<libc::stat> {
    if let Some(n) = name {
        return sandspawn_helper::stat_at::stat_at(fd.as_raw_fd(), n).ok();
    }
    // SAFETY: a zeroed stat is valid; a valid descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some(st)
}
