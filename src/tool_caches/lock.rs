//! The `lock` file of a cache location and of each of its run slots, and the cache's `waiting`
//! file, by which a run waiting for the cache asks a fold to stop (`layers`).

use std::os::fd::OwnedFd;
use std::path::Path;

/// `DIR/lock` (made if missing, never followed if a symlink), `flock`ed with `op`, retried when a
/// signal interrupts it: the cache's lock, and each run slot's (`slots`).
pub(super) fn lock_file(dir: &Path, op: libc::c_int) -> std::io::Result<OwnedFd> {
    lock_named(dir, "lock", op)
}

/// `DIR/NAME`, made and `flock`ed as `lock_file` does.
pub(super) fn lock_named(dir: &Path, name: &str, op: libc::c_int) -> std::io::Result<OwnedFd> {
    let fd = open(dir, name)?;
    sandspawn_helper::file_lock::flock(&fd, op)?;
    Ok(fd)
}

/// `DIR/NAME` opened (made if missing, never followed if a symlink), not locked yet.
pub(super) fn open(dir: &Path, name: &str) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).write(true).create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(dir.join(name))?;
    Ok(f.into())
}

/// The lock is held by someone else (`LOCK_NB`).
pub(super) fn is_held(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EWOULDBLOCK)
}
