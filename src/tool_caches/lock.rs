//! The `lock` file of a cache location and of each of its run slots, and the cache's `waiting`
//! file, by which a run waiting for the cache asks a fold to stop (`layers`).
//!
//! On Linux these are open file description locks (`F_OFD_SETLK`), not `flock`: a command in the
//! Landlock mode reads the whole store (Landlock cannot hide a path inside a readable tree), and
//! `flock -x` on a descriptor opened for reading held every other workspace's runs in their setup
//! (found by an attacker's review). An exclusive OFD lock needs a descriptor open for writing,
//! which no sandbox gets on the store (bwrap and Seatbelt runs do not see it, Landlock runs read
//! it only). Nor does any take a read lock: the files are mode 0200, and a shared hold is a write
//! lock on a byte of its own (`set`; a reader's read lock kept every fold away, cross28; one that gave the file its read bit
//! back first, `chmod`, spoils it, and it is replaced: `lock_named`, lock28). What a run still waits for
//! (a fold past `MOST_PENDING` layers) it waits for step by step (`wait_for`), hearing its end.
//!
//! A lock taken here is let go of explicitly (`Held`), never by closing its descriptor alone: an
//! OFD lock (and a `flock`) belongs to the open file description, which every copy of the
//! descriptor shares, and a child that another thread of the host forks (Node's `child_process`,
//! another run's spawn: CLOEXEC closes the copy only at its exec) holds a copy from its fork to its
//! exec. A run that let go by closing still held the cache for that while, under load milliseconds:
//! its fold did not happen (left to a later run) and its slot looked taken (found as a flaky test).

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use super::dir::Dir;

/// A lock taken on a file, let go of (`LOCK_UN`) when dropped, before its descriptor is closed,
/// whatever copies of the descriptor forked children hold (see the module comment).
pub(super) struct Held(OwnedFd);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = set(&self.0, libc::LOCK_UN);
    }
}

/// `DIR/lock` (made if missing, never followed if a symlink), locked with `op` (`LOCK_SH`,
/// `LOCK_EX`, with `LOCK_NB`: see `set`): the cache's lock, and each run slot's (`slots`).
pub(super) fn lock_file(dir: &Dir, op: libc::c_int) -> std::io::Result<Held> {
    lock_named(dir, "lock", op)
}

/// `DIR/NAME`, made and locked as `lock_file` does.
pub(super) fn lock_named(dir: &Dir, name: &str, op: libc::c_int) -> std::io::Result<Held> {
    let fd = open(dir, name)?;
    match set(&fd, op) {
        Ok(()) if still_named(dir, name, &fd) => Ok(Held(fd)),
        Ok(()) => {
            let _ = set(&fd, libc::LOCK_UN);
            Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK))
        }
        Err(e) if is_held(&e) && readers_only(&fd) => replaced(dir, name, op),
        Err(e) => Err(e),
    }
}

/// Mode 0200 keeps no reader out for good: the file is the user's own and the Landlock mode does
/// not govern modes (`file-modes`), so its command could `chmod u+r` a lock file, open it and
/// read-lock it, which kept the folds away again and had every run of the cache wait its 60 s
/// and fail (found by an attacker's review, lock28). No holder takes a read lock: a file whose lock
/// is refused by read locks alone is spoiled, and replaced (`file_lock::exclusive_at`); every
/// holder checks after its lock that the name still leads to the file it locked (`still_named`).
#[cfg(target_os = "linux")]
fn readers_only(fd: &OwnedFd) -> bool {
    sandspawn_helper::file_lock::write_locked(fd).is_ok_and(|held| !held)
}

#[cfg(not(target_os = "linux"))]
fn readers_only(_fd: &OwnedFd) -> bool {
    false
}

/// Whether a holder's lock is what refused a lock on `fd` (not a reader's alone).
pub(super) fn holders(fd: &OwnedFd) -> bool {
    !readers_only(fd)
}

/// `DIR/NAME`, spoiled by a reader, replaced by a file held with `op`; held by another if a holder
/// came first.
fn replaced(dir: &Dir, name: &str, op: libc::c_int) -> std::io::Result<Held> {
    let c = std::ffi::CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let Some(fd) = sandspawn_helper::file_lock::exclusive_at(dir.fd(), &c)? else {
        return Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK));
    };
    if op & !libc::LOCK_NB == libc::LOCK_SH {
        sandspawn_helper::file_lock::exclusive_to_shared(&fd)?;
    }
    Ok(Held(fd))
}

/// Whether `DIR/NAME` is still the file `fd` is open on (not one a spoiled file's replacement put
/// in its place since it was opened).
fn still_named(dir: &Dir, name: &str, fd: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed stat is valid; fstat on our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    matches!(dir.stat(name), Ok(Some(now)) if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino))
}

/// `DIR/NAME` opened for writing only (made if missing, never followed if a symlink), its mode
/// made 0200 on Linux, not locked yet (see `set`). One whose owner write bit a reader took is given
/// it back (`file_lock::open_at`): a Landlock command's `chmod 0` of a cache's `lock` failed every
/// later run of the workspace for good (found by an attacker's review, fix29).
#[cfg(target_os = "linux")]
pub(super) fn open(dir: &Dir, name: &str) -> std::io::Result<OwnedFd> {
    let c = std::ffi::CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    sandspawn_helper::file_lock::open_at(dir.fd(), &c, libc::O_CREAT)
}

/// `DIR/NAME` opened for reading and writing (made if missing, never followed if a symlink), not
/// locked yet.
#[cfg(not(target_os = "linux"))]
pub(super) fn open(dir: &Dir, name: &str) -> std::io::Result<OwnedFd> {
    dir.file(name, libc::O_RDWR | libc::O_CREAT)
}

/// The lock is held by someone else (`LOCK_NB`).
pub(super) fn is_held(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// Lock or unlock the file as `flock(fd, op)` would, with write locks only (Linux; see
/// `sandspawn_helper::file_lock::writers_only`): a shared lock taken as a read lock is one a reader
/// can take too, and the Landlock mode reads the whole store. Found by an attacker's review
/// (cross28): a Landlock command's read lock on a cache's `lock` (or `waiting`) kept every fold from
/// happening while it lived; runs went on stacking every pending layer until the overlay's options
/// no longer fit in a page (some 200 layers) and every run of the workspace failed its setup, and
/// its read lock on each slot a run let go had every later run make one more. Now nobody but this
/// user's processes outside a sandbox can open the file at all (mode 0200, `open`).
pub(super) fn set(fd: &OwnedFd, op: libc::c_int) -> std::io::Result<()> {
    sandspawn_helper::file_lock::writers_only(fd, op)
}

/// Whether another description holds the file exclusively (a fold).
#[cfg(all(test, target_os = "linux"))]
pub(super) fn exclusive_held(fd: &OwnedFd) -> std::io::Result<bool> {
    sandspawn_helper::file_lock::exclusive_held(fd)
}

/// How long a run waits for a cache's lock at most, when its own end does not come first: only a
/// fold holds it exclusively (no sandbox can, see the module comment), and a fold stops for a
/// waiting run within an entry unless it has more than `MOST_PENDING` layers to fold.
pub(super) const MOST_WAIT: Duration = Duration::from_secs(60);
/// The longest pause between two looks at a lock a run waits for.
const MOST_PAUSE: Duration = Duration::from_millis(50);

/// `DIR/NAME` locked with `op` (without `LOCK_NB`), looked at again and again with growing pauses
/// (1 ms up to `MOST_PAUSE`) rather than waited for in the kernel, where nothing is heard: until
/// `ended()` (the run's deadline passed, it was killed or aborted) or `until`, then an error.
pub(super) fn wait_for(dir: &Dir, name: &str, op: libc::c_int, ended: &dyn Fn() -> bool, until: Instant) -> std::io::Result<Held> {
    let mut pause = Duration::from_millis(1);
    loop {
        // Opened each time: the file may have been replaced (`lock_named`).
        match lock_named(dir, name, op | libc::LOCK_NB) {
            Err(e) if is_held(&e) => {}
            taken => return taken,
        }
        if ended() {
            return Err(std::io::Error::other(format!("{name}: the run ended while it waited for another process's lock")));
        }
        if Instant::now() >= until {
            return Err(std::io::Error::other(format!("{name} is held by another process, waited for {} s", MOST_WAIT.as_secs())));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MOST_PAUSE);
    }
}
