//! Opening an absolute path without following a symlink anywhere on it, for the addon (the
//! identity of a writable root as the policy resolved it, the directories its undo and apply walks
//! start from) and the helper (each writable mount and grant checked against that identity): a
//! directory on the path swapped for a link by a concurrent run then fails the open (`ELOOP`)
//! instead of leading elsewhere. A symlink as the last component is returned itself when `flags`
//! hold `O_PATH` (as `openat2` does), else refused.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How the components on the way are opened (and what `identity` opens): `O_PATH` where there is
/// one, which needs no permission to read the entry; a plain read elsewhere.
#[cfg(target_os = "linux")]
const SEARCH: i32 = libc::O_PATH;
#[cfg(not(target_os = "linux"))]
const SEARCH: i32 = libc::O_RDONLY;

/// `open(path, flags)` refusing every symlink on the way (Linux 5.6+: `openat2` with
/// `RESOLVE_NO_SYMLINKS`, which also refuses `/proc` magic links). Where `openat2` does not exist
/// (older Linux, macOS), each component is opened with `O_NOFOLLOW` from `/`. Close-on-exec.
pub fn open(path: &Path, flags: i32) -> std::io::Result<OwnedFd> {
    let c = cstring(path.as_os_str().as_bytes())?;
    if let Some(opened) = openat2(&c, flags | libc::O_NOFOLLOW, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) {
        return opened;
    }
    walk(path, flags)
}

/// `open` one component at a time, each with `O_NOFOLLOW` (a link on the way: `ELOOP`, as
/// `openat2` says).
fn walk(path: &Path, flags: i32) -> std::io::Result<OwnedFd> {
    if path.components().nth(1).is_none() {
        return open_at(libc::AT_FDCWD, c"/", flags);
    }
    let mut fd = open_at(libc::AT_FDCWD, c"/", SEARCH | libc::O_DIRECTORY)?;
    let mut parts = path.components().skip(1).peekable();
    while let Some(part) = parts.next() {
        let name = cstring(part.as_os_str().as_bytes())?;
        if parts.peek().is_none() {
            return open_at(fd.as_raw_fd(), &name, flags);
        }
        fd = open_at(fd.as_raw_fd(), &name, SEARCH)?;
        if stat(&fd)?.st_mode & libc::S_IFMT == libc::S_IFLNK {
            return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
        }
    }
    Ok(fd)
}

fn stat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: a zeroed stat buffer is valid; `fd` is open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The `(device, inode)` of the directory `path` names, reached without following a symlink (a
/// symlink at its end too: `ENOTDIR`).
pub fn dir_identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let st = stat(&open(path, SEARCH | libc::O_DIRECTORY)?)?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

fn cstring(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// `openat2`'s `RESOLVE_NO_MAGICLINKS`: no `/proc` magic link on the way.
pub const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
/// `openat2`'s `RESOLVE_NO_SYMLINKS`: no symlink on the way (magic links included).
pub const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// `openat2(AT_FDCWD, path, flags | O_CLOEXEC, resolve)`; `None` where the kernel does not have it
/// (before Linux 5.6, and elsewhere than Linux). The one place that calls it raw (the addon's
/// `policy::procfs` too).
pub fn openat2(path: &std::ffi::CStr, flags: i32, resolve: u64) -> Option<std::io::Result<OwnedFd>> {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct OpenHow {
            flags: u64,
            mode: u64,
            resolve: u64,
        }
        let how = OpenHow { flags: (flags | libc::O_CLOEXEC) as u64, mode: 0, resolve };
        // SAFETY: openat2 with a valid C string and an `open_how` of the size passed.
        let fd = unsafe { libc::syscall(libc::SYS_openat2, libc::AT_FDCWD, path.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>()) };
        if fd >= 0 {
            // SAFETY: a descriptor just opened, owned by nobody else.
            return Some(Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) }));
        }
        let e = std::io::Error::last_os_error();
        (e.raw_os_error() != Some(libc::ENOSYS)).then_some(Err(e))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (path, flags, resolve);
        None
    }
}

/// `name` in `dir` (or `AT_FDCWD`) with `flags`, never through a symlink.
fn open_at(dir: i32, name: &std::ffi::CStr, flags: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid descriptor (or AT_FDCWD) and C string.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_link_anywhere_on_the_path_is_refused_and_a_last_one_is_itself() {
        let t = std::env::temp_dir().join(format!("no-symlinks-{}", std::process::id()));
        std::fs::create_dir_all(t.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", t.join("link")).unwrap();
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(t.join("real/sub")).unwrap();
        assert_eq!(dir_identity(&t.join("real/sub")).unwrap(), (m.dev(), m.ino()));
        assert_eq!(open(&t.join("link/sub"), libc::O_PATH).unwrap_err().raw_os_error(), Some(libc::ELOOP));
        let last = open(&t.join("link"), libc::O_RDONLY | libc::O_DIRECTORY).unwrap_err().raw_os_error();
        assert!(matches!(last, Some(libc::ELOOP | libc::ENOTDIR)), "{last:?}");
        let link = std::fs::symlink_metadata(t.join("link")).unwrap();
        let opened = open(&t.join("link"), libc::O_PATH).unwrap();
        let st = stat(&opened).unwrap();
        assert_eq!((st.st_dev, st.st_ino), (link.dev(), link.ino()), "O_PATH opens a last link itself");
        assert_eq!(dir_identity(&t.join("link")).unwrap_err().raw_os_error(), Some(libc::ENOTDIR), "a link is no directory");
        assert_eq!(open(&t.join("none"), libc::O_PATH).unwrap_err().raw_os_error(), Some(libc::ENOENT));
        // Where the kernel has no openat2.
        assert_eq!(walk(&t.join("link/sub"), libc::O_PATH).unwrap_err().raw_os_error(), Some(libc::ELOOP));
        let walked = walk(&t.join("real/sub"), libc::O_RDONLY | libc::O_DIRECTORY).unwrap();
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::fstat(walked.as_raw_fd(), &mut st) }, 0);
        assert_eq!((st.st_dev, st.st_ino), (m.dev(), m.ino()));
        std::fs::remove_dir_all(&t).unwrap();
    }
}
