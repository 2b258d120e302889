//! `flock` on a descriptor, retried when a signal interrupts it: the placeholders' directory locks
//! (the addon and the helper), the tool caches' lock files and run slots, and the Landlock mode's
//! run directories.

use std::os::fd::{AsRawFd, OwnedFd};

/// `flock(fd, op)`; `EINTR` is retried, any other error returned (`EWOULDBLOCK` with `LOCK_NB`).
pub fn flock(fd: &OwnedFd, op: libc::c_int) -> std::io::Result<()> {
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
