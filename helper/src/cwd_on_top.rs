//! The working directory entered again once the helper's read-only carve-outs are attached, when
//! one of them is the working directory or holds it.
//!
//! Why: a working directory is a mount and a directory, taken when it is entered. The helper
//! enters the planned one early (`planned_mounts`, before anything relies on bwrap's mounts), and a
//! read-only copy attached afterwards over that directory or one above it (`read_only`) covers the
//! path, not a directory already entered: the command's cwd stayed the writable bind beneath. With
//! `readOnlyPaths: [cwd]` the cwd was read-only by its absolute path and writable by a relative
//! one, and `rm src/f`, `mv`, `mkdir`, `ln -s` and `chmod` changed the host's read-only workspace
//! (found by an attacker's review, mode34). The reviewed workspace's overlay has the same cause and
//! its own re-entry (`review_mount`).
//!
//! Entered by its path without following a link, and only where that is still the directory the
//! cwd is (device and inode: a read-only copy shows the same directory): anything else means a
//! directory on its path was replaced during setup. A `getcwd`, an `openat2` and two `fstat`s, on
//! runs with such a carve-out only.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use sandspawn_helper::no_symlinks;
use sandspawn_helper::protocol::ReadOnly;
use sandspawn_helper::report::{changed, setup, Failure};

use crate::planned_mounts::identity;
use crate::{describe, last_errno};

/// After `read_only::bind_all(paths)`: enter the working directory again when one of `paths` is it
/// or lies above it.
pub fn reenter_below(paths: &[ReadOnly]) -> Result<(), Failure> {
    if paths.is_empty() {
        return Ok(());
    }
    let cwd = std::env::current_dir().map_err(|e| setup(e.raw_os_error().unwrap_or(0), format!("reading the working directory failed: {e}")))?;
    if !paths.iter().any(|p| cwd.starts_with(&p.path)) {
        return Ok(());
    }
    let here = identity(&open(Path::new("."), libc::O_PATH | libc::O_DIRECTORY)?, &cwd.display())?;
    let fd = no_symlinks::open(&cwd, libc::O_PATH | libc::O_DIRECTORY).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        changed(errno, format!("entering the working directory {} again, without following a link, failed: {} (a directory on its path was replaced during setup)", cwd.display(), describe(errno)))
    })?;
    let found = identity(&fd, &cwd.display())?;
    if found != here {
        return Err(changed(libc::EXDEV, format!("the working directory {} is another directory than the one entered ({}:{}, was {}:{}): a directory on its path was replaced during setup; refused", cwd.display(), found.0, found.1, here.0, here.1)));
    }
    // SAFETY: a directory descriptor of ours (`fchdir` takes an `O_PATH` one).
    if unsafe { libc::fchdir(fd.as_raw_fd()) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("entering the working directory {} again failed: {}", cwd.display(), describe(e))));
    }
    Ok(())
}

fn open(p: &Path, flags: i32) -> Result<OwnedFd, Failure> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| setup(libc::EINVAL, "a path with a NUL byte".into()))?;
    // SAFETY: a valid C string; the descriptor returned is ours.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = last_errno();
        return Err(setup(e, format!("opening the working directory failed: {}", describe(e))));
    }
    // SAFETY: just opened, owned by nothing else.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}
