//! Reading one directory for the walk. The directory is opened without following a symlink, then
//! described (`fstat`), watched (`watch`) and listed (`readdir`: the entry type comes with the
//! name, no entry is stat'ed) through that one descriptor: all three see the same inode, whatever
//! its path names meanwhile. The descriptor is closed as soon as the listing is read.

use std::ffi::{CStr, OsStr};
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use nix::errno::Errno;

/// Which inode a directory is, and when its entries last changed (for the stat rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub ctime: (i64, i64),
}

impl Stamp {
    pub fn of(meta: &Metadata) -> Self {
        Stamp { dev: meta.dev(), ino: meta.ino(), ctime: (meta.ctime(), meta.ctime_nsec()) }
    }
}

/// A directory opened for listing, with its stamp taken before anything was listed (a change after
/// the stamp shows as another ctime next time).
pub struct OpenDir {
    file: File,
    pub stamp: Stamp,
}

/// What a listed entry is, as the listing tells (a symlink is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    Symlink,
    Other,
}

/// The errors that say there is no directory at that path (any more, or a symlink or a file now).
pub fn is_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP))
}

pub fn open(path: &Path) -> io::Result<OpenDir> {
    // std adds O_CLOEXEC.
    let file = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(path)?;
    let stamp = Stamp::of(&file.metadata()?);
    Ok(OpenDir { file, stamp })
}

/// Closes the stream (and its descriptor) however the listing ends.
struct Stream(*mut libc::DIR);

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a successful fdopendir and is closed only here.
        unsafe { libc::closedir(self.0) };
    }
}

impl OpenDir {
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Calls `each(name, kind, d_ino, dir)` for every entry but `.` and `..` (`dir`: the open
    /// directory, for `id_at`), then closes the directory. A read error fails the whole listing: a
    /// partial one would be kept as complete.
    pub fn list(self, mut each: impl FnMut(&OsStr, EntryKind, u64, RawFd)) -> io::Result<()> {
        let fd = self.file.into_raw_fd();
        // SAFETY: `fd` is an open directory descriptor that this function owns; on success the
        // stream owns it (closedir closes it), on failure it is closed here.
        let dir = unsafe { libc::fdopendir(fd) };
        if dir.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `fd` is still ours to close.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let stream = Stream(dir);
        loop {
            // readdir returns null both at the end and on an error: only errno tells them apart.
            Errno::clear();
            // SAFETY: `stream.0` is a valid open stream, used by this thread only.
            let ent = unsafe { libc::readdir(stream.0) };
            if ent.is_null() {
                return match Errno::last_raw() {
                    0 => Ok(()),
                    e => Err(io::Error::from_raw_os_error(e)),
                };
            }
            // SAFETY: `ent` points to an entry that stays valid until the next readdir on this
            // stream; d_name is NUL-terminated.
            let (name, d_type, ino) = unsafe { (CStr::from_ptr((*ent).d_name.as_ptr()), (*ent).d_type, (*ent).d_ino as u64) };
            let name = OsStr::from_bytes(name.to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match d_type {
                libc::DT_DIR => EntryKind::Dir,
                libc::DT_LNK => EntryKind::Symlink,
                // Some filesystems do not fill in the type: ask for it, without following.
                libc::DT_UNKNOWN => kind_at(fd, name),
                _ => EntryKind::Other,
            };
            each(name, kind, ino, fd);
        }
    }
}

/// `(st_dev, st_ino)` of `name` in the open directory `dir`, not following a symlink: what a
/// process that opens the path sees (unlike `d_ino`, which for a mount point names the directory
/// below the mount). `None` when it is gone.
pub fn id_at(dir: RawFd, name: &OsStr) -> Option<(u64, u64)> {
    stat_at(dir, name).map(|st| (st.st_dev as u64, st.st_ino as u64))
}

/// How long before a baseline an entry's ctime still counts as changed after it: the kernel stamps
/// ctimes with its coarse clock, up to a tick (at most 10 ms) behind the time the baseline read.
const CLOCK_SLACK_NS: i64 = 20_000_000;

/// Whether a ctime (seconds, nanoseconds) is not older than the baseline taken at `since_ns`: the
/// entry was made, renamed into place or changed since (a ctime cannot be set from user space).
pub fn changed_since(ctime: (i64, i64), since_ns: i64) -> bool {
    ctime.0.saturating_mul(1_000_000_000).saturating_add(ctime.1) >= since_ns.saturating_sub(CLOCK_SLACK_NS)
}

/// Whether `name` in the open directory `dir` is a symlink made since `since_ns` (`changed_since`).
pub fn link_made_since(dir: RawFd, name: &OsStr, since_ns: i64) -> bool {
    stat_at(dir, name).is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK && changed_since((st.st_ctime, st.st_ctime_nsec), since_ns))
}

/// Whether the symlink `name` in the open directory `dir` holds a `node_modules` component (in any
/// case when `fold`): it leads where the walk never reads (`scan`), so a repository planted there
/// later is not seen by any walk (`unwalked_links`). One `readlinkat`; `false` when it fails.
pub fn link_into_node_modules(dir: RawFd, name: &OsStr, fold: bool) -> bool {
    let Ok(name) = std::ffi::CString::new(name.as_bytes()) else { return false };
    let mut buf = [0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is writable for its length; `name` is NUL-terminated.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let Ok(n) = usize::try_from(n) else { return false };
    buf[..n].split(|b| *b == b'/').any(|c| c == b"node_modules" || (fold && c.eq_ignore_ascii_case(b"node_modules")))
}

fn kind_at(dir: RawFd, name: &OsStr) -> EntryKind {
    match stat_at(dir, name).map(|st| st.st_mode & libc::S_IFMT) {
        Some(libc::S_IFDIR) => EntryKind::Dir,
        Some(libc::S_IFLNK) => EntryKind::Symlink,
        _ => EntryKind::Other,
    }
}

/// `fstatat` of `name` in the open directory `dir`, not following a symlink; `None` when it fails.
pub(super) fn stat_at(dir: RawFd, name: &OsStr) -> Option<libc::stat> {
    let name = std::ffi::CString::new(name.as_bytes()).ok()?;
    sandspawn_helper::stat_at::stat_at(dir, &name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_names_types_and_inodes_and_never_follows_a_symlink() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir(r.join("sub")).unwrap();
        std::fs::write(r.join("file"), "").unwrap();
        std::os::unix::fs::symlink("sub", r.join("link")).unwrap();
        let d = open(r).unwrap();
        assert_eq!(d.stamp, Stamp::of(&r.symlink_metadata().unwrap()));
        let mut got = Vec::new();
        let mut ids = Vec::new();
        d.list(|name, kind, ino, fd| {
            got.push((name.to_string_lossy().into_owned(), kind == EntryKind::Dir, ino));
            ids.push(id_at(fd, name));
        })
        .unwrap();
        let sub = r.join("sub").symlink_metadata().unwrap();
        assert!(ids.contains(&Some((sub.dev(), sub.ino()))), "{ids:?}");
        let link = r.join("link").symlink_metadata().unwrap();
        assert!(ids.contains(&Some((link.dev(), link.ino()))), "the link itself, not its target");
        got.sort();
        let sub_ino = r.join("sub").symlink_metadata().unwrap().ino();
        assert_eq!(got.iter().map(|(n, d, _)| (n.as_str(), *d)).collect::<Vec<_>>(), vec![("file", false), ("link", false), ("sub", true)]);
        assert_eq!(got[2].2, sub_ino);
        assert!(open(&r.join("link")).is_err_and(|e| is_gone(&e)), "a symlink to a directory is not opened");
        assert!(open(&r.join("file")).is_err_and(|e| is_gone(&e)));
        assert!(open(&r.join("missing")).is_err_and(|e| is_gone(&e)));
    }
}
