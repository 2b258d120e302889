//! Opening a directory by an absolute path without following a symlink anywhere on it: what both
//! undoing planted names (`planted::undo`) and applying a change set (`review::host_fs`) start
//! from, so that a path a command swapped for a link never leads them out of the tree they act on.
//! Imports nothing of the crate; the walk itself is the helper crate's (`sandspawn_helper::no_symlinks`),
//! which checks the identities taken here (`identity`) inside the sandbox.

use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;

/// `open(dir, O_RDONLY | O_DIRECTORY)` refusing every symlink on the way (not `O_PATH`: callers
/// need a descriptor `fcntl`, `fstatat` and `openat` accept); see `sandspawn_helper::no_symlinks`.
pub fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    sandspawn_helper::no_symlinks::open(dir, libc::O_RDONLY | libc::O_DIRECTORY)
}

/// The `(device, inode)` of the directory `dir` names (canonical), reached without following a
/// symlink (one at its end too): what a writable root is when the policy resolves it, which the helper checks bwrap's
/// bind against (and the Landlock mode's grant), so that a directory on its path swapped for a link
/// since cannot make either land where the link leads.
pub fn identity(dir: &Path) -> std::io::Result<(u64, u64)> {
    sandspawn_helper::no_symlinks::dir_identity(dir)
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
    first_link_on(path, |meta| meta.uid() == uid)
}

/// The first symlink on `path` (a prefix of it, from `/` down), whoever owns it; missing
/// components end the walk, as in `own_link_on`.
pub fn any_link_on(path: &Path) -> Option<std::path::PathBuf> {
    first_link_on(path, |_| true)
}

/// The first prefix of `path`, from `/` down, that is a symlink `counts` takes: one `lstat` per
/// component, none followed; the walk ends where one fails.
fn first_link_on(path: &Path, counts: impl Fn(&std::fs::Metadata) -> bool) -> Option<std::path::PathBuf> {
    let mut prefix = std::path::PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&prefix) else { return None };
        if meta.file_type().is_symlink() && counts(&meta) {
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
