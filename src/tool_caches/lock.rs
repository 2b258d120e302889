//! The `lock` file of a cache location and of each of its run slots.

use std::os::fd::OwnedFd;
use std::path::Path;

/// `DIR/lock` (made if missing, never followed if a symlink), `flock`ed with `op`, retried when a
/// signal interrupts it: the cache's lock, and each run slot's (`slots`).
pub(super) fn lock_file(dir: &Path, op: libc::c_int) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).write(true).create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(dir.join("lock"))?;
    let fd: OwnedFd = f.into();
    sandspawn_helper::file_lock::flock(&fd, op)?;
    Ok(fd)
}
