//! `flock` on a descriptor, retried when a signal interrupts it (the Landlock mode's run
//! directories), and a whole-file OFD lock with `flock`'s operations (`whole_file`: the tool
//! caches' lock files and run slots, the placeholders' lock files, the held links' shared records).

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
    // SAFETY: a zeroed flock is valid: the whole file (start 0, length 0), l_pid 0 as OFD locks need.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_type = match op & !libc::LOCK_NB {
        libc::LOCK_SH => libc::F_RDLCK,
        libc::LOCK_EX => libc::F_WRLCK,
        _ => libc::F_UNLCK,
    } as libc::c_short;
    let cmd = if op & libc::LOCK_NB != 0 { libc::F_OFD_SETLK } else { libc::F_OFD_SETLKW };
    loop {
        // SAFETY: fcntl on a descriptor the caller owns, with a valid flock.
        if unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &l) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            // F_OFD_SETLK says a conflict with either.
            Some(libc::EAGAIN | libc::EACCES) => return Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK)),
            _ => return Err(e),
        }
    }
}

/// `flock` where there are no OFD locks (macOS: no sandbox there reads sandspawn's state).
#[cfg(not(target_os = "linux"))]
pub fn whole_file(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    flock(fd, op)
}
