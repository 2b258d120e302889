//! `flock` on a descriptor, retried when a signal interrupts it (the Landlock mode's run
//! directories), a whole-file OFD lock with `flock`'s operations (`whole_file`: the placeholders'
//! lock files, a change set's hold), and write locks only (`writers_only`: the tool caches' and
//! the held links' lock files, of mode 0200).

use std::os::fd::AsRawFd;

/// `flock(fd, op)`; `EINTR` is retried, any other error returned (`EWOULDBLOCK` with `LOCK_NB`).
pub fn flock(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: flock on a descriptor the caller owns.
        if unsafe { libc::flock(fd.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Lock or unlock the whole file as `flock(fd, op)` would, with an open file description lock on
/// Linux: `LOCK_SH` a read lock, `LOCK_EX` a write lock, which needs a descriptor opened for
/// writing. That is the point: a sandboxed command that can only read a lock file (the Landlock
/// mode reads sandspawn's state directory) can take a shared lock at most, never the exclusive one
/// that keeps others out, and a `flock` of it does not meet these locks at all (found by attackers'
/// reviews: `flock -x` on such files stalled other runs' setup and plans). A conflict with
/// `LOCK_NB` is `EWOULDBLOCK`; `EINTR` is retried.
#[cfg(target_os = "linux")]
pub fn whole_file(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    let kind = match op & !libc::LOCK_NB {
        libc::LOCK_SH => libc::F_RDLCK,
        libc::LOCK_EX => libc::F_WRLCK,
        _ => libc::F_UNLCK,
    };
    // The whole file: from byte 0, length 0 (to the end, and beyond).
    range(fd, kind as libc::c_int, 0, 0, op & libc::LOCK_NB == 0)
}

/// `flock` where there are no OFD locks (macOS: no sandbox there reads sandspawn's state).
#[cfg(not(target_os = "linux"))]
pub fn whole_file(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    flock(fd, op)
}

/// Lock or unlock a file as `flock(fd, op)` would, with write locks only (Linux: OFD locks), for
/// lock files of mode 0200 that only this user's processes outside a sandbox can open, for writing:
/// a shared hold is a write lock on one byte of its own (`SHARED_FROM` on, at random), which the
/// exclusive hold, a write lock on the whole file, meets, and other shared holds do not. Why: a
/// shared lock taken as a read lock (`whole_file`) is one any reader of the file can take too, and
/// the Landlock mode reads everything: its read lock kept the tool caches' folds and the held links'
/// last holders away (found by an attacker's review, cross28). `LOCK_UN` lets go of every lock the
/// description holds. Elsewhere (macOS, where no sandbox reads sandspawn's state) `flock`.
#[cfg(target_os = "linux")]
pub fn writers_only(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    let wait = op & libc::LOCK_NB == 0;
    match op & !libc::LOCK_NB {
        libc::LOCK_SH => shared(fd, wait),
        libc::LOCK_EX => range(fd, libc::F_WRLCK, 0, 0, wait),
        _ => range(fd, libc::F_UNLCK, 0, 0, false),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn writers_only(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    flock(fd, op)
}

/// An exclusive hold under `writers_only` made shared with no moment between in which another
/// description could take the file exclusively: the whole file but one byte of its own is let go.
#[cfg(target_os = "linux")]
pub fn exclusive_to_shared(fd: &impl AsRawFd) -> std::io::Result<()> {
    use std::hash::{BuildHasher, Hasher};
    let at = (SHARED_FROM + (std::collections::hash_map::RandomState::new().build_hasher().finish() >> 2)) as i64;
    range(fd, libc::F_UNLCK, 0, at, false)?;
    range(fd, libc::F_UNLCK, at + 1, 0, false)
}

#[cfg(not(target_os = "linux"))]
pub fn exclusive_to_shared(fd: &impl AsRawFd) -> std::io::Result<()> {
    flock(fd, libc::LOCK_SH)
}

/// The first byte a shared hold may lock: byte 0 is the exclusive hold's alone (`exclusive_held`).
#[cfg(target_os = "linux")]
const SHARED_FROM: u64 = 1;

/// A shared hold: a write lock on one byte of its own. A byte another shared holder took (a chance
/// in 2^62) is passed over for another; the exclusive hold (which covers byte 0) refuses it.
#[cfg(target_os = "linux")]
fn shared(fd: &impl AsRawFd, wait: bool) -> std::io::Result<()> {
    use std::hash::{BuildHasher, Hasher};
    loop {
        let at = SHARED_FROM + (std::collections::hash_map::RandomState::new().build_hasher().finish() >> 2);
        match range(fd, libc::F_WRLCK, at as i64, 1, false) {
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => {
                if !exclusive_held(fd)? {
                    continue;
                }
                if !wait {
                    return Err(e);
                }
                return range(fd, libc::F_WRLCK, at as i64, 1, true);
            }
            other => return other,
        }
    }
}

/// Whether another description holds the file exclusively under `writers_only` (a write lock
/// over byte 0).
#[cfg(target_os = "linux")]
pub fn exclusive_held(fd: &impl AsRawFd) -> std::io::Result<bool> {
    // SAFETY: a zeroed flock is valid; fcntl on the caller's descriptor.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_WRLCK as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_len = 1;
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(l.l_type != libc::F_UNLCK as libc::c_short)
}

/// An OFD lock of `kind` on `len` bytes from `start` (0: to the end, and beyond); a conflict
/// without `wait` is `EWOULDBLOCK`; `EINTR` is retried.
#[cfg(target_os = "linux")]
fn range(fd: &impl AsRawFd, kind: libc::c_int, start: i64, len: i64, wait: bool) -> std::io::Result<()> {
    // SAFETY: a zeroed flock is valid (l_pid 0, as OFD locks need).
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = kind as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_start = start;
    l.l_len = len;
    let cmd = if wait { libc::F_OFD_SETLKW } else { libc::F_OFD_SETLK };
    loop {
        // SAFETY: fcntl on the caller's descriptor with a valid flock.
        if unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &l) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN | libc::EACCES) => return Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK)),
            _ => return Err(e),
        }
    }
}

/// `path` opened for writing only, made (mode 0200) if missing and `create`, never followed if a
/// symlink, its mode made 0200 if it was not: a lock file for `writers_only`, which nobody opens for
/// reading (a sandboxed command has no capability that passes over a mode, root's neither).
pub fn open_write_only(path: &std::path::Path, create: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let f = std::fs::OpenOptions::new().write(true).create(create).mode(0o200).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)?;
    if f.metadata()?.permissions().mode() & 0o777 != 0o200 {
        f.set_permissions(std::fs::Permissions::from_mode(0o200))?;
    }
    Ok(f)
}
