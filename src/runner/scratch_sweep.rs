//! Removing the Landlock mode's run directories (`sandspawn-run-*`, see `scratch`) that outlived
//! their host: one SIGKILLed mid-run never reached `Scratch`'s `Drop`. A directory is stale when
//! nobody holds its lock file's lock (each live run holds its own; a directory from a version
//! before lock files, its own lock), it belongs to this user, and it was last changed more than
//! `GRACE` ago (a run locks a moment after making its directory). A lock file whose directory is
//! gone goes on the same terms. Every
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
    if let Some(dir_name) = name.to_bytes().strip_suffix(b".lock") {
        return remove_orphan_lock(&parent, name, dir_name);
    }
    // Not a link (O_NOFOLLOW), not a file (O_DIRECTORY).
    let Ok(dir) = crate::no_symlinks::open_at(parent.as_raw_fd(), name) else { return false };
    let mut lock_name = name.to_bytes().to_vec();
    lock_name.extend_from_slice(b".lock");
    let Ok(lock_name) = CString::new(lock_name) else { return false };
    let has_lock_file = stat(&parent, Some(&lock_name)).is_some();
    // Held while this looks, released when it returns; a live run's is held already.
    let _lock_file = if has_lock_file {
        match open_lock_file(&parent, &lock_name) {
            Some(f) if try_lock(&f) => Some(f),
            _ => return false,
        }
    } else if try_lock(&dir) {
        None // held through `dir` until it closes
    } else {
        return false; // a live run's (from a version that locked the directory itself)
    };
    let (Some(held), Some(named)) = (stat(&dir, None), stat(&parent, Some(name))) else { return false };
    let same = (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino);
    if !is_mine_and_old(&held) || !same {
        return false;
    }
    let Ok(again) = parent.try_clone() else { return false };
    let removed = crate::remove_tree::remove_dir_at(again, name).is_ok();
    if removed && has_lock_file {
        // SAFETY: a valid descriptor and C string; unlinkat never follows the last component.
        unsafe { libc::unlinkat(parent.as_raw_fd(), lock_name.as_ptr(), 0) };
    }
    removed
}

/// A lock file whose run directory is gone (the host died between removing the one and the
/// other), when nobody holds it and it is this user's and old.
fn remove_orphan_lock(parent: &OwnedFd, name: &CStr, dir_name: &[u8]) -> bool {
    let Ok(dir_name) = CString::new(dir_name) else { return false };
    if stat(parent, Some(&dir_name)).is_some() {
        return false; // looked at with its directory
    }
    let Some(lock) = open_lock_file(parent, name) else { return false };
    let Some(st) = stat(&lock, None) else { return false };
    if !try_lock(&lock) || !is_mine_and_old(&st) {
        return false;
    }
    // SAFETY: a valid descriptor and C string; unlinkat never follows the last component.
    unsafe { libc::unlinkat(parent.as_raw_fd(), name.as_ptr(), 0) == 0 }
}

/// The lock file `name` in `parent`, opened as its maker does (write only), never through a link
/// and only if it is a regular file.
fn open_lock_file(parent: &OwnedFd, name: &CStr) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: a valid descriptor and C string.
    let fd = unsafe { libc::openat(parent.as_raw_fd(), name.as_ptr(), libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK) };
    if fd < 0 {
        return None;
    }
    // SAFETY: just opened, owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    stat(&fd, None).filter(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG).map(|_| fd)
}

/// `flock(LOCK_EX | LOCK_NB)` as the run takes it (`EINTR` retried): whether it was free (and is
/// now held through `fd`, released when it closes).
fn try_lock(fd: &OwnedFd) -> bool {
    sandspawn_helper::file_lock::flock(fd, libc::LOCK_EX | libc::LOCK_NB).is_ok()
}

/// Whether `st` is this user's and last changed more than `GRACE` ago: by the earlier of its mtime
/// and ctime. The mtime is the command's to set (its run directory is its `TMPDIR`): one dated
/// into the future (`touch -d 2100-01-01 "$TMPDIR"`) was never swept once its host was killed
/// (found by an attacker's review, cross41). The ctime no process sets, and it is never before the
/// mtime a process did not set. Dated into the past, a directory is still kept while its run's
/// lock is held.
fn is_mine_and_old(st: &libc::stat) -> bool {
    // SAFETY: no arguments.
    let mine = st.st_uid == unsafe { libc::geteuid() };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    mine && now - st.st_mtime.min(st.st_ctime) >= GRACE.as_secs() as i64
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A run directory whose mtime its command dated into the future ages by its ctime.
    #[test]
    fn a_run_directory_dated_into_the_future_still_ages() {
        let t = tempfile::tempdir().unwrap();
        let dir = crate::no_symlinks::open_dir(t.path()).unwrap();
        let mut st = stat(&dir, None).unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        st.st_mtime = now + 100 * 365 * 86_400;
        st.st_ctime = now - 3_600;
        assert!(is_mine_and_old(&st), "changed an hour ago, whatever its mtime says");
        st.st_ctime = now;
        assert!(!is_mine_and_old(&st), "changed just now");
    }
}
