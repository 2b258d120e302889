//! The modes of sandspawn's own entries in its stores (a directory's 0700, a record's 0600), given
//! back when a sandboxed command of this user changed them. Found by attackers' reviews (fix29,
//! store29): the entries are the user's own and the Landlock mode does not govern modes
//! (`file-modes`), so its command, which reads the whole state directory, could `chmod 0`
//! `tool-caches/workspaces` (every later workspace-write run failed: "cannot create the private
//! tool cache store ... Permission denied"), a change set's directory (the pending set was "no
//! change set", its continuation and apply refused) or `change-sets` (no set could be made).
//!
//! Never by a path a sandbox could have swapped for a symlink: the entry is opened (`O_PATH |
//! O_NOFOLLOW`, which needs no access to the entry itself, which may have none) relative to its
//! directory's descriptor, checked to be this user's entry of the kind expected, and only then
//! given its mode through its `/proc/self/fd` entry (a magic link that resolves to the opened
//! inode itself, what glibc's `fchmodat(AT_SYMLINK_NOFOLLOW)` does). A symlink, another user's
//! entry or one of another kind is left alone (the caller's open then fails as it would have).
//! Only the owner's bits are given back; a group's or others' are left to the checks where each
//! store is opened, which refuse a directory others may write.

use std::ffi::CStr;
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::os::fd::{FromRawFd, OwnedFd};

/// Which kind of entry the store keeps at a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
}

#[cfg(target_os = "linux")]
impl Kind {
    fn format(self) -> libc::mode_t {
        match self {
            Kind::Dir => libc::S_IFDIR,
            Kind::File => libc::S_IFREG,
        }
    }
}

/// `DIR/NAME`, this user's `kind` of entry, given back the owner's bits `need` (`0o700` a
/// directory's, `0o600` a record's) if it lacks any: `Ok(true)` if they were given back, `Ok(false)`
/// if it had them, or is missing, or is not this user's entry of that kind (left alone). Other bits
/// are left as they are: a store directory a group or others may write is refused where it is
/// opened (`state_dir::is_private`; whoever else wrote there may have put anything in it).
#[cfg(target_os = "linux")]
pub fn give_back_at(dir: &impl AsRawFd, name: &CStr, kind: Kind, need: u32) -> std::io::Result<bool> {
    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat with a valid name; the descriptor returned is ours.
    let raw = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if raw < 0 {
        let e = std::io::Error::last_os_error();
        return if e.kind() == std::io::ErrorKind::NotFound { Ok(false) } else { Err(e) };
    }
    // SAFETY: as above.
    let handle = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: a zeroed stat is valid; fstat of our handle (O_PATH descriptors are fstat'able).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(handle.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: geteuid cannot fail.
    if st.st_mode & libc::S_IFMT != kind.format() || st.st_uid != unsafe { libc::geteuid() } || st.st_mode as u32 & need == need {
        return Ok(false);
    }
    let proc = std::ffi::CString::new(format!("/proc/self/fd/{}", handle.as_raw_fd())).map_err(std::io::Error::other)?;
    // SAFETY: a valid C string; the magic link resolves to the handle's inode itself.
    if unsafe { libc::chmod(proc.as_ptr(), (st.st_mode as u32 & 0o7777 | need) as libc::mode_t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(true)
}

/// Elsewhere (macOS): `fchmodat(AT_SYMLINK_NOFOLLOW)`, which changes a link itself, never its
/// target, after `fstatat` found this user's entry of that kind.
#[cfg(not(target_os = "linux"))]
pub fn give_back_at(dir: &impl AsRawFd, name: &CStr, kind: Kind, need: u32) -> std::io::Result<bool> {
    let format = match kind {
        Kind::Dir => libc::S_IFDIR,
        Kind::File => libc::S_IFREG,
    };
    // SAFETY: a zeroed stat is valid; fstatat with a valid name, not followed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        let e = std::io::Error::last_os_error();
        return if e.kind() == std::io::ErrorKind::NotFound { Ok(false) } else { Err(e) };
    }
    // SAFETY: geteuid cannot fail.
    if st.st_mode & libc::S_IFMT != format || st.st_uid != unsafe { libc::geteuid() } || st.st_mode as u32 & need == need {
        return Ok(false);
    }
    // SAFETY: fchmodat with a valid name, a link itself never followed.
    if unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), (st.st_mode as u32 & 0o7777 | need) as libc::mode_t, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(true)
}

/// `give_back_at` for each of `entries` (a name, its kind and bits) in `dir`, stopping at none:
/// what could not be given back fails its own open later, as it would have.
pub fn give_back_all(dir: &impl AsRawFd, entries: &[(&CStr, Kind, u32)]) {
    for (name, kind, mode) in entries {
        let _ = give_back_at(dir, name, *kind, *mode);
    }
}
