//! Writing the host's workspace without ever following a symlink: every step is relative to an
//! open directory descriptor, one component at a time, with `O_NOFOLLOW` (and the root itself
//! opened with `RESOLVE_NO_SYMLINKS`), so a directory replaced by a link meanwhile is refused or
//! replaced, never entered. A file lands whole: written to a temporary name in its directory, then
//! renamed over the old one. Reading a change's content (`content`), in the workspace and in the
//! set's upper directory, takes the same steps.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// An open directory of the host's workspace.
pub struct Dir(OwnedFd);

/// What a change set's file must still be when its content has been read: the inode the walk
/// found, with no change at or after `before_ns`. A descriptor of it that a run opened for writing
/// and passed to another process outlives the run (found by an attacker's review, mode38): that
/// process could rewrite the file after its revision was checked, while the apply read it.
pub struct Unchanged {
    pub inode: (u64, u64),
    pub before_ns: i64,
}

impl Unchanged {
    fn check(&self, from: &std::fs::File) -> std::io::Result<()> {
        let m = from.metadata()?;
        let ctime = super::changed_at::ctime_ns(&m);
        if (m.dev(), m.ino()) == self.inode && ctime < self.before_ns {
            return Ok(());
        }
        Err(std::io::Error::other("it changed in the change set while the apply read it (a process outside the set's runs holds it open for writing); it stays in the set"))
    }
}

/// Copy `from` into the new, empty `to`, its holes left holes: a file of 16 TiB a run made with
/// `truncate` (nothing on disk) must not take 16 TiB of the host's disk once applied.
fn copy_data(from: &std::fs::File, to: &mut std::fs::File) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let len = from.metadata()?.len();
    let mut pos = 0;
    while let Some(stretch) = super::sparse::next_data(from, pos, len)? {
        let mut reader = from;
        reader.seek(SeekFrom::Start(stretch.start))?;
        to.seek(SeekFrom::Start(stretch.start))?;
        std::io::copy(&mut reader.take(stretch.end - stretch.start), to)?;
        pos = stretch.end;
    }
    // The holes up to the end (a file that ends in one is not yet that long).
    to.set_len(len)
}

fn cstr(name: &OsStr) -> std::io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(rc: libc::c_int) -> std::io::Result<libc::c_int> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// The lstat of an entry, as a change set compares it.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    pub mode: u32,
    pub ctime_ns: i64,
}

impl Stat {
    fn is(&self, kind: libc::mode_t) -> bool {
        // `as u32`: macOS's mode_t is 16 bits.
        self.mode & libc::S_IFMT as u32 == kind as u32
    }

    pub fn is_dir(&self) -> bool {
        self.is(libc::S_IFDIR)
    }

    pub fn is_symlink(&self) -> bool {
        self.is(libc::S_IFLNK)
    }

    pub fn is_file(&self) -> bool {
        self.is(libc::S_IFREG)
    }
}

impl Dir {
    /// Open an absolute directory path, refusing a symlink anywhere on it.
    pub fn open_root(path: &Path) -> std::io::Result<Dir> {
        crate::no_symlinks::open_dir(path).map(Dir)
    }

    /// A directory the host trusts, opened as its path says: a change set's own upper directory
    /// (in the private store, whose path may pass an administrator's symlink). Only what is below
    /// it is reached step by step (`child`).
    pub fn open_trusted(path: &Path) -> std::io::Result<Dir> {
        Dir::at(libc::AT_FDCWD, &cstr(path.as_os_str())?)
    }

    fn at(fd: i32, name: &CStr) -> std::io::Result<Dir> {
        crate::no_symlinks::open_at(fd, name).map(Dir)
    }

    /// The subdirectory `name` (never a symlink to one, never another mount's top: a filesystem
    /// the host mounted there since the set began, maybe a bind of a directory outside the
    /// workspace, is not the workspace's to write or read for the set, `remove_tree::MountPointMet`).
    pub fn child(&self, name: &OsStr) -> std::io::Result<Dir> {
        let c = cstr(name)?;
        let d = Dir::at(self.0.as_raw_fd(), &c)?;
        crate::remove_tree::same_mount(&self.0, &d.0, &c)?;
        Ok(d)
    }

    /// The entry `name`, not following a symlink; `None` when there is none.
    pub fn stat(&self, name: &OsStr) -> std::io::Result<Option<Stat>> {
        let st = match sandspawn_helper::stat_at::stat_at(self.0.as_raw_fd(), &cstr(name)?) {
            Ok(st) => st,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(Stat { mode: st.st_mode as u32, ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec }))
    }

    /// The names in this directory.
    pub fn names(&self) -> std::io::Result<Vec<OsString>> {
        Ok(crate::dir_names::names(&self.0)?.into_iter().map(|n| OsString::from(OsStr::from_bytes(n.as_bytes()))).collect())
    }

    /// The regular file `name`, open for reading, and its size; never a symlink, and never a fifo
    /// or device (which could block or act when opened: refused).
    pub fn open_file(&self, name: &OsStr) -> std::io::Result<(std::fs::File, u64)> {
        let c = cstr(name)?;
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
        // SAFETY: valid descriptor and C string.
        let fd = check(unsafe { libc::openat(self.0.as_raw_fd(), c.as_ptr(), flags) })?;
        // SAFETY: just opened, ours alone.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        Ok((file, meta.len()))
    }

    /// The target of the symlink `name`.
    pub fn read_link(&self, name: &OsStr) -> std::io::Result<std::path::PathBuf> {
        let c = cstr(name)?;
        let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
        // SAFETY: valid descriptor and C string; the buffer's size is passed.
        let n = unsafe { libc::readlinkat(self.0.as_raw_fd(), c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        buf.truncate(n as usize);
        Ok(OsString::from(OsStr::from_bytes(&buf)).into())
    }

    /// Make directory `name` with `mode` (the umask does not apply).
    pub fn mkdir(&self, name: &OsStr, mode: u32) -> std::io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::mkdirat(self.0.as_raw_fd(), c.as_ptr(), 0o700) })?;
        self.child(name)?.chmod(mode)
    }

    pub fn chmod(&self, mode: u32) -> std::io::Result<()> {
        // SAFETY: our descriptor. Set-id bits are never applied (see `write_file`).
        check(unsafe { libc::fchmod(self.0.as_raw_fd(), (mode & 0o1777) as libc::mode_t) }).map(drop)
    }

    fn temp_name() -> CString {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        CString::new(format!(".sandspawn-apply-{}-{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))).expect("no NUL")
    }

    /// Move the temporary entry over `name`; a directory there is removed first (rename cannot
    /// replace a directory with a file).
    fn land(&self, tmp: &CStr, name: &OsStr) -> std::io::Result<()> {
        let c = cstr(name)?;
        if self.stat(name)?.is_some_and(|s| s.is_dir()) {
            self.remove(name)?;
        }
        // SAFETY: valid descriptor and C strings.
        let rc = unsafe { libc::renameat(self.0.as_raw_fd(), tmp.as_ptr(), self.0.as_raw_fd(), c.as_ptr()) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: as above; the temporary entry is ours.
            unsafe { libc::unlinkat(self.0.as_raw_fd(), tmp.as_ptr(), 0) };
            return Err(e);
        }
        Ok(())
    }

    /// Write `src`'s content as `name` with `mode` and `mtime`, atomically. Set-uid and set-gid
    /// bits are dropped: a sandboxed command must not leave the host a set-id program. `src` must
    /// still be the file `unchanged` names, unchanged since its moment, once its content is read
    /// (else nothing lands: `Unchanged::check`). Returns the device and inode of the file written.
    pub fn write_file(&self, name: &OsStr, src: &Path, mode: u32, mtime: (i64, i64), unchanged: &Unchanged) -> std::io::Result<(u64, u64)> {
        use std::os::unix::fs::OpenOptionsExt;
        let from = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(src)?;
        let tmp = Dir::temp_name();
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid descriptor and C string.
        let fd = check(unsafe { libc::openat(self.0.as_raw_fd(), tmp.as_ptr(), flags, 0o600) })?;
        // SAFETY: just opened, ours alone.
        let mut to = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let written = copy_data(&from, &mut to).and_then(|_| unchanged.check(&from)).and_then(|_| {
            let times = [libc::timespec { tv_sec: mtime.0 as _, tv_nsec: mtime.1 as _ }; 2];
            // SAFETY: our descriptor; two timespecs.
            check(unsafe { libc::fchmod(to.as_raw_fd(), (mode & 0o1777) as libc::mode_t) })?;
            check(unsafe { libc::futimens(to.as_raw_fd(), times.as_ptr()) }).map(drop)
        });
        if let Err(e) = written {
            // SAFETY: our own temporary entry.
            unsafe { libc::unlinkat(self.0.as_raw_fd(), tmp.as_ptr(), 0) };
            return Err(e);
        }
        let written = to.metadata().map(|m| (m.dev(), m.ino()));
        drop(to);
        self.land(&tmp, name)?;
        written
    }

    /// Make `name` another name of the file `from_name` in `from`, atomically, only if that still
    /// is the file `inode` (device and inode; else `ESTALE` and nothing changed): linked under a
    /// temporary name without following a symlink (`linkat` without `AT_SYMLINK_FOLLOW`), checked,
    /// then renamed over `name` as a written file is.
    pub fn link_file(&self, name: &OsStr, from: &Dir, from_name: &OsStr, inode: (u64, u64)) -> std::io::Result<()> {
        let (tmp, f) = (Dir::temp_name(), cstr(from_name)?);
        // SAFETY: valid descriptors and C strings.
        check(unsafe { libc::linkat(from.0.as_raw_fd(), f.as_ptr(), self.0.as_raw_fd(), tmp.as_ptr(), 0) })?;
        match sandspawn_helper::stat_at::stat_at(self.0.as_raw_fd(), &tmp) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFREG && (st.st_dev as u64, st.st_ino as u64) == inode => self.land(&tmp, name),
            got => {
                // SAFETY: our own temporary entry.
                unsafe { libc::unlinkat(self.0.as_raw_fd(), tmp.as_ptr(), 0) };
                Err(got.err().unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::ESTALE)))
            }
        }
    }

    /// Make `name` a symlink to `target`, atomically.
    pub fn symlink(&self, name: &OsStr, target: &Path) -> std::io::Result<()> {
        let (tmp, t) = (Dir::temp_name(), cstr(target.as_os_str())?);
        // SAFETY: valid descriptor and C strings.
        check(unsafe { libc::symlinkat(t.as_ptr(), self.0.as_raw_fd(), tmp.as_ptr()) })?;
        self.land(&tmp, name)
    }

    /// Remove `name` (a directory with everything in it); a missing one is fine.
    pub fn remove(&self, name: &OsStr) -> std::io::Result<()> {
        let Some(st) = self.stat(name)? else { return Ok(()) };
        let c = cstr(name)?;
        if st.is_dir() {
            // Without recursion, at any depth (the host's tree can be as deep as a run made it);
            // read-only directories (Go's module cache) are the user's: made writable to empty them.
            return crate::remove_tree::remove_dir_at(self.dup()?, &c);
        }
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::unlinkat(self.0.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }

    /// A second descriptor of this directory.
    fn dup(&self) -> std::io::Result<OwnedFd> {
        // SAFETY: duplicating our own descriptor; the copy is owned from here.
        let fd = check(unsafe { libc::fcntl(self.0.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The newest ctime at or below `name` (a directory: everything in it), without following links.
    pub fn newest_ctime(&self, name: &OsStr) -> std::io::Result<i64> {
        Ok(crate::remove_tree::newest_ctime_at(&self.0, &cstr(name)?)?.unwrap_or(i64::MIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree deeper than a recursive walk's stack (found reading the apply path: the host's tree
    /// below a directory a set deletes or replaces is walked for its newest ctime, then removed).
    #[test]
    fn a_tree_of_any_depth_is_dated_and_removed_without_recursion() {
        let t = tempfile::tempdir().unwrap();
        crate::remove_tree::tests::deep_chain(t.path(), 3000, "d");
        let top = t.path().to_path_buf();
        // A small stack, as a recursive walk at this depth would overflow even a default one later.
        let newest = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(move || {
                let dir = Dir::open_root(&top).unwrap();
                let newest = dir.newest_ctime(OsStr::new("d")).unwrap();
                dir.remove(OsStr::new("d")).unwrap();
                (newest, dir.stat(OsStr::new("d")).unwrap().is_none())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(newest.0 > 0 && newest.1, "{newest:?}");
    }

    /// A 2 GiB sparse file a review run made (36 KiB in its set) took 2 GiB of the host's disk
    /// once applied, and one of 16 TiB would have filled it (found by an attacker's review): the
    /// copy keeps the holes, so the host's file takes what the set's did.
    #[test]
    fn a_sparse_file_lands_sparse() {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        let len = 1u64 << 30;
        let f = std::fs::File::create(&src).unwrap();
        f.set_len(len).unwrap();
        f.write_all_at(b"data", 512 << 20).unwrap();
        f.write_all_at(b"end", len - 3).unwrap();
        drop(f);
        let dir = Dir::open_root(t.path()).unwrap();
        dir.write_file(OsStr::new("dst"), &src, 0o640, (1, 0), &Unchanged { inode: { let m = std::fs::metadata(&src).unwrap(); (m.dev(), m.ino()) }, before_ns: i64::MAX }).unwrap();
        let dst = std::fs::metadata(t.path().join("dst")).unwrap();
        let allocated = dst.blocks() * 512;
        assert_eq!(dst.len(), len);
        assert!(allocated <= std::fs::metadata(&src).unwrap().blocks() * 512 + (1 << 20), "{allocated} bytes allocated for a file of 7 data bytes");
        assert!(crate::review::changes::same_content(&src, &t.path().join("dst")).unwrap());
    }
}
