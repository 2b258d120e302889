//! A directory of the tool cache store, held by its descriptor. Everything below the store's root is
//! reached from the root's descriptor one name at a time, each opened with `O_NOFOLLOW` (what
//! `openat2`'s `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` gives, on every kernel and on macOS), and
//! every change (a directory made, an entry renamed or removed, a file written or locked) is made
//! relative to the descriptor of the directory it is in.
//!
//! Why: a store can be written by more than the host. A run whose writable root holds another
//! environment's store (a workspace holding a home, another process's `HOME=/tmp/x`) can write
//! there, and one such run planted links in a scope: `npm/base` to a host directory, `npm/discard`
//! to host data. The fold after the next run, which followed paths, moved the run's file into the
//! host directory and emptied the data (found by an attacker's review, own18 storechain.js). Now
//! a link where the store keeps a directory leads nowhere: it is removed (the link itself) and a
//! directory made in its place.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use sandspawn_helper::own_mode;

/// A directory of the store: its descriptor, and the path it was reached by (for the plan's
/// mounts and for messages; never opened again by the host).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// `name` as one entry of a directory: not empty, no `/`, not `.` or `..`.
fn entry(name: &OsStr) -> io::Result<CString> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

impl Dir {
    /// The store's root at `root` (made and checked by `store::create`): opened with no symlink
    /// anywhere on its real path (the links of other users above it, which `store::create` allows,
    /// are resolved first).
    pub fn root(root: &Path) -> io::Result<Dir> {
        let real = root.canonicalize()?;
        let fd = match crate::no_symlinks::open_dir(&real) {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) && give_back_root(&real)? => crate::no_symlinks::open_dir(&real)?,
            other => other?,
        };
        Ok(Dir { fd, path: root.to_path_buf() })
    }

    /// The path this directory was reached by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of the entry `name` (for the plan's mounts and messages only).
    pub fn join(&self, name: impl AsRef<OsStr>) -> PathBuf {
        self.path.join(name.as_ref())
    }

    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// The subdirectory `name`, never through a symlink (`ENOTDIR` or `ELOOP` on one, `NotFound`
    /// when missing).
    ///
    /// One of this user's directories that a sandboxed command took the owner's bits from (the
    /// Landlock mode does not govern modes: `chmod 0 tool-caches/workspaces` failed every later run)
    /// is given them back first (`own_mode`, through a handle, never a path).
    pub fn open(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let name = name.as_ref();
        let c = entry(name)?;
        let fd = match crate::no_symlinks::open_at(self.fd.as_raw_fd(), &c) {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) && own_mode::give_back_at(&self.fd, &c, own_mode::Kind::Dir, 0o700)? => {
                crate::no_symlinks::open_at(self.fd.as_raw_fd(), &c)?
            }
            other => other?,
        };
        Ok(Dir { fd, path: self.path.join(name) })
    }

    /// The subdirectory `name`, made (mode 0700) when missing. Anything else at that name (a
    /// symlink, a file) is removed first: the store keeps a directory there.
    pub fn dir(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let name = name.as_ref();
        let c = entry(name)?;
        for _ in 0..3 {
            match self.open(name) {
                Ok(d) => return Ok(d),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                // A link (`ELOOP`) or another kind of file (`ENOTDIR`): the entry itself goes.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => self.unlink(&c)?,
                Err(e) => return Err(e),
            }
            // SAFETY: our descriptor and a valid C string.
            match check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o700) }) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        self.open(name)
    }

    /// `dir` for each component of `rel` (relative, no `..`), from here down.
    pub fn dirs(&self, rel: &Path) -> io::Result<Dir> {
        let mut parts = rel.components().map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        });
        let first = parts.next().ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))??;
        let mut d = self.dir(first)?;
        for part in parts {
            d = d.dir(part?)?;
        }
        Ok(d)
    }

    /// The names in this directory (not `.`, `..`).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        Ok(crate::dir_names::names(&self.fd)?.into_iter().map(|c| OsString::from_vec(c.into_bytes())).collect())
    }

    /// The entry `name`, not following a link; `None` when missing.
    pub fn stat(&self, name: impl AsRef<OsStr>) -> io::Result<Option<libc::stat>> {
        match sandspawn_helper::stat_at::stat_at(self.fd.as_raw_fd(), &entry(name.as_ref())?) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            other => other.map(Some),
        }
    }

    /// Whether `name` is a directory (not a link to one).
    pub fn has_dir(&self, name: impl AsRef<OsStr>) -> bool {
        self.stat(name).ok().flatten().is_some_and(|st| is_dir(&st))
    }

    /// This directory's own `stat`.
    pub fn own_stat(&self) -> io::Result<libc::stat> {
        // SAFETY: a zeroed stat is valid to fill; our descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        check(unsafe { libc::fstat(self.fd.as_raw_fd(), &mut st) })?;
        Ok(st)
    }

    /// The same directory, on a descriptor of its own.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir { fd: self.fd.try_clone()?, path: self.path.clone() })
    }

    /// Set the mode of the directory `name` here, never a link's target: on Linux by a handle
    /// opened with `O_PATH | O_DIRECTORY | O_NOFOLLOW` (which takes no access to the directory
    /// itself, which may have none) and `chmod` of its `/proc/self/fd` entry (what glibc's
    /// `fchmodat(AT_SYMLINK_NOFOLLOW)` does, without needing glibc 2.32); elsewhere by
    /// `fchmodat(AT_SYMLINK_NOFOLLOW)`, after `stat` found a directory.
    pub fn chmod_dir(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<()> {
        let c = entry(name.as_ref())?;
        #[cfg(target_os = "linux")]
        {
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: our descriptor and a valid C string.
            let handle = check(unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags) })?;
            // SAFETY: the descriptor openat just returned, owned by nobody else.
            let handle = unsafe { OwnedFd::from_raw_fd(handle) };
            let proc = CString::new(format!("/proc/self/fd/{}", handle.as_raw_fd())).map_err(io::Error::other)?;
            // SAFETY: a valid C string (the magic link resolves to the handle's directory itself).
            check(unsafe { libc::chmod(proc.as_ptr(), mode as libc::mode_t) }).map(drop)
        }
        #[cfg(not(target_os = "linux"))]
        {
            if !self.has_dir(name.as_ref()) {
                return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
            }
            // SAFETY: our descriptor and a valid C string.
            check(unsafe { libc::fchmodat(self.fd.as_raw_fd(), c.as_ptr(), mode as libc::mode_t, libc::AT_SYMLINK_NOFOLLOW) }).map(drop)
        }
    }

    /// The subdirectory `name`, given the owner bits `need` first where it lacks them (one without
    /// read access cannot be opened), and the mode it had. The directory opened is the one given
    /// them (same device and inode), or this fails.
    pub fn open_granting(&self, name: impl AsRef<OsStr>, need: u32) -> io::Result<(Dir, u32)> {
        let name = name.as_ref();
        let st = self.stat(name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        if !is_dir(&st) {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        let was = st.st_mode as u32 & 0o7777;
        if was & need != need {
            self.chmod_dir(name, was | need)?;
        }
        let dir = self.open(name)?;
        let now = dir.own_stat()?;
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
            return Err(io::Error::other(format!("{} changed while it was opened", dir.path.display())));
        }
        Ok((dir, was))
    }

    /// Rename the entry `from` here to `to_name` in `to` (replacing what `rename` replaces).
    pub fn rename(&self, from: impl AsRef<OsStr>, to: &Dir, to_name: impl AsRef<OsStr>) -> io::Result<()> {
        let (from, to_name) = (entry(from.as_ref())?, entry(to_name.as_ref())?);
        // SAFETY: our descriptors and valid C strings.
        check(unsafe { libc::renameat(self.fd.as_raw_fd(), from.as_ptr(), to.fd.as_raw_fd(), to_name.as_ptr()) }).map(drop)
    }

    /// Remove the entry `name` whatever it is (a tree, a file, a link: the link itself); missing is fine.
    pub fn remove(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let c = entry(name.as_ref())?;
        match self.stat(name.as_ref())? {
            None => Ok(()),
            Some(st) if is_dir(&st) => crate::remove_tree::remove_dir_at(self.fd.try_clone()?, &c),
            Some(_) => self.unlink(&c),
        }
    }

    fn unlink(&self, name: &CStr) -> io::Result<()> {
        // SAFETY: our descriptor and a valid C string.
        match check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) }) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// The file `name` opened with `flags` (`O_NOFOLLOW` added: never a link's target; mode 0600
    /// when made). A file of this user's that a sandboxed command took the owner's read and write
    /// bits from (`workspace`, `roots`, `last-used`) is given them back first (`own_mode`).
    pub fn file(&self, name: impl AsRef<OsStr>, flags: libc::c_int) -> io::Result<OwnedFd> {
        let c = entry(name.as_ref())?;
        let open = || -> io::Result<OwnedFd> {
            // SAFETY: our descriptor and a valid C string.
            let fd = check(unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0o600 as libc::c_uint) })?;
            // SAFETY: the descriptor openat just returned, owned by nobody else.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        };
        match open() {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) && own_mode::give_back_at(&self.fd, &c, own_mode::Kind::File, 0o600)? => open(),
            other => other,
        }
    }

    /// Write `bytes` as the whole file `name` (made if missing). A link at that name is removed
    /// first, never written through.
    pub fn write(&self, name: impl AsRef<OsStr>, bytes: &[u8]) -> io::Result<()> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        let fd = match self.file(name.as_ref(), flags) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                self.unlink(&entry(name.as_ref())?)?;
                self.file(name.as_ref(), flags)?
            }
            other => other?,
        };
        io::Write::write_all(&mut std::fs::File::from(fd), bytes)
    }

    /// The whole file `name`, never a link's target.
    pub fn read(&self, name: impl AsRef<OsStr>) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        io::Read::read_to_end(&mut std::fs::File::from(self.file(name, libc::O_RDONLY)?), &mut out)?;
        Ok(out)
    }

    /// A directory at `path` opened without following any link on it (tests build stores in
    /// temporary directories).
    #[cfg(test)]
    pub fn at(path: &Path) -> Dir {
        Dir { fd: crate::no_symlinks::open_dir(path).unwrap(), path: path.to_path_buf() }
    }
}

/// The store's root `real` (canonical), one of this user's directories a sandboxed command took
/// the owner's bits from, given them back (`own_mode`) from its parent's descriptor, opened with no
/// symlink on the way: whether they were.
fn give_back_root(real: &Path) -> io::Result<bool> {
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else { return Ok(false) };
    let parent = crate::no_symlinks::open_dir(parent)?;
    own_mode::give_back_at(&parent, &entry(name)?, own_mode::Kind::Dir, 0o700)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_reached_through_no_link() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        let (store, outside) = (top.join("store"), top.join("outside"));
        std::fs::create_dir_all(&store).unwrap();
        std::fs::create_dir_all(outside.join("d")).unwrap();
        std::fs::write(outside.join("f"), "host").unwrap();
        let root = Dir::at(&store);
        for name in ["link", "file-link", "dir-link"] {
            std::os::unix::fs::symlink(if name == "file-link" { outside.join("f") } else { outside.clone() }, store.join(name)).unwrap();
        }
        // ENOTDIR on Linux (`O_DIRECTORY` is checked first), ELOOP elsewhere.
        assert!(matches!(root.open("link").unwrap_err().raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)));
        let made = root.dirs(Path::new("link/a")).unwrap();
        assert_eq!(made.path(), store.join("link/a"));
        assert!(store.join("link").symlink_metadata().unwrap().is_dir(), "the link is replaced by a directory");
        root.write("file-link", b"store").unwrap();
        assert_eq!(std::fs::read_to_string(outside.join("f")).unwrap(), "host", "written through no link");
        assert_eq!(root.read("file-link").unwrap(), b"store");
        root.remove("dir-link").unwrap();
        assert!(outside.join("d").exists() && outside.join("f").exists(), "the link removed, not its target");
        assert!(root.dirs(Path::new("../x")).is_err() && root.open("a/b").is_err(), "one name at a time, beneath");
    }

    /// A fold resumed on a directory it holds lists it again: the listing read nothing the second
    /// time (its duplicate descriptor shares the offset the first left at the end).
    #[test]
    fn a_directory_held_open_lists_every_time() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), "").unwrap();
        let d = Dir::at(&t.path().canonicalize().unwrap());
        assert_eq!((d.names().unwrap().len(), d.names().unwrap().len()), (1, 1));
    }

    /// `own_mode` gives this user's entries the owner's bits back (other bits as they were), through
    /// a handle: a link's target, an entry of another kind, a missing one are left alone (the
    /// Landlock mode's command took them with `chmod 0`; root passes over modes, so this checks
    /// the modes themselves).
    #[test]
    fn own_entries_get_the_owners_bits_back_and_links_are_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        use sandspawn_helper::own_mode::{give_back_at, Kind};
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::create_dir(d.join("workspaces")).unwrap();
        std::fs::write(d.join("roots"), b"").unwrap();
        std::fs::write(d.join("target"), b"").unwrap();
        std::os::unix::fs::symlink(d.join("target"), d.join("link")).unwrap();
        for (p, m) in [("workspaces", 0), ("roots", 0o044), ("target", 0)] {
            std::fs::set_permissions(d.join(p), std::fs::Permissions::from_mode(m)).unwrap();
        }
        let mode = |p: &str| std::fs::symlink_metadata(d.join(p)).unwrap().permissions().mode() & 0o7777;
        let dir = std::fs::File::open(d).unwrap();
        assert!(give_back_at(&dir, c"workspaces", Kind::Dir, 0o700).unwrap());
        assert!(give_back_at(&dir, c"roots", Kind::File, 0o600).unwrap());
        assert!(!give_back_at(&dir, c"workspaces", Kind::Dir, 0o700).unwrap(), "it has them now");
        assert!(!give_back_at(&dir, c"link", Kind::File, 0o600).unwrap(), "a link is not followed");
        assert!(!give_back_at(&dir, c"roots", Kind::Dir, 0o700).unwrap(), "another kind is left alone");
        assert!(!give_back_at(&dir, c"missing", Kind::Dir, 0o700).unwrap());
        assert_eq!((mode("workspaces"), mode("roots"), mode("target")), (0o700, 0o644, 0));
        std::fs::set_permissions(d.join("target"), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}
