//! Opening a directory by an absolute path without following a symlink anywhere on it: what both
//! undoing planted names (`planted::undo`) and applying a change set (`review::host_fs`) start
//! from, so that a path a command swapped for a link never leads them out of the tree they act on.
//! Imports nothing of the crate.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `open(dir, O_RDONLY | O_DIRECTORY)` refusing every symlink on the way (Linux 5.6+; not `O_PATH`:
/// callers need a descriptor `fcntl`, `fstatat` and `openat` accept). Where `openat2` does not
/// exist (older Linux, macOS), each component is opened with `O_NOFOLLOW` from `/`.
pub fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    if let Some(opened) = openat2(&c) {
        return opened;
    }
    let mut fd = open_at(libc::AT_FDCWD, c"/")?;
    for part in dir.components().skip(1) {
        let name = CString::new(part.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        fd = open_at(fd.as_raw_fd(), &name)?;
    }
    Ok(fd)
}

/// `openat2` with `RESOLVE_NO_SYMLINKS`; `None` where the kernel does not have it.
#[cfg(target_os = "linux")]
fn openat2(c: &CStr) -> Option<std::io::Result<OwnedFd>> {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_NO_SYMLINKS: u64 = 0x04;
    let how = OpenHow { flags: (libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64, mode: 0, resolve: RESOLVE_NO_SYMLINKS };
    // SAFETY: openat2 with a valid C string and an `open_how` of the size passed.
    let fd = unsafe { libc::syscall(libc::SYS_openat2, libc::AT_FDCWD, c.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>()) };
    if fd >= 0 {
        // SAFETY: a descriptor just opened, owned by nobody else.
        return Some(Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) }));
    }
    let e = std::io::Error::last_os_error();
    (e.raw_os_error() != Some(libc::ENOSYS)).then_some(Err(e))
}

#[cfg(not(target_os = "linux"))]
fn openat2(_c: &CStr) -> Option<std::io::Result<OwnedFd>> {
    None
}

/// The directory `name` in `dir` (or `AT_FDCWD`), never through a symlink.
pub fn open_at(dir: i32, name: &CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid descriptor (or AT_FDCWD) and C string.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The first symlink on `path` (a prefix of it, from `/` down) that this user owns, if any: what a
/// sandboxed command of this user can plant, in any directory a run may write, to point a path the
/// host trusts (sandspawn's stores) somewhere of its choosing. Links of other users (an
/// administrator's `/home -> /var/home`, macOS's `/var`) are followed; for root, every link is its
/// own. Missing components end the walk (nothing below them to follow).
pub fn own_link_on(path: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut prefix = std::path::PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&prefix) else { return None };
        if meta.file_type().is_symlink() && meta.uid() == uid {
            return Some(prefix);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn own_link_on_names_the_first_link_this_user_owns() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(top.join("real/store")).unwrap();
        std::os::unix::fs::symlink("real", top.join("link")).unwrap();
        assert_eq!(super::own_link_on(&top.join("real/store")), None);
        assert_eq!(super::own_link_on(&top.join("link/store")), Some(top.join("link")));
        assert_eq!(super::own_link_on(&top.join("missing/link")), None, "nothing below a missing component");
    }
}
