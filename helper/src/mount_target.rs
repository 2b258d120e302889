//! What the helper mounts onto, opened first: a descriptor on exactly what a path names (never a
//! symlink's target), checked to be the kind of entry expected, and mounted onto through its
//! `/proc/self/fd` path, so an entry replaced by a symlink during setup is refused, never followed.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sandspawn_helper::report::{Failure, setup};

use crate::{describe, last_errno};

pub(crate) fn c(p: &str) -> Result<CString, Failure> {
    CString::new(p).map_err(|_| setup(libc::EINVAL, format!("path {p:?} contains a NUL byte")))
}

/// `p` as it is, bytes and all (a name need not be UTF-8: see the protocol's `path_word`).
pub(crate) fn c_path(p: &Path) -> Result<CString, Failure> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| setup(libc::EINVAL, format!("path {} contains a NUL byte", p.display())))
}

/// The kind of entry a target must be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    /// A directory or a regular file (anything but a symlink, a device, a socket or a fifo).
    DirOrFile,
    /// Anything but a symlink (the kernel's own objects: device nodes, procfs entries).
    Any,
    /// A file placeholder: a symlink to `placeholder::LINK_TARGET` (the symlink itself is mounted
    /// onto, never followed), or a regular file (an earlier version's placeholder, or a cover).
    FilePlaceholder,
    /// A symlink, whatever it leads to (the symlink itself is mounted onto, never followed).
    Link,
}

/// An open `O_PATH` descriptor on the target; closed on drop.
pub(crate) struct Target {
    pub fd: i32,
    /// Device and inode: a path opened again after a mount must lead to the same entry.
    pub id: (u64, u64),
    /// Its type (`S_IFMT` bits of its mode).
    fmt: libc::mode_t,
    /// Its link count when opened: 0 for a directory removed meanwhile (`rmdir` clears it).
    links: u64,
    /// Its size when opened.
    size: i64,
}

impl Target {
    /// Open `path`; `what` names it in errors ("the placeholder", "the read-only path").
    pub fn open(path: impl AsRef<Path>, kind: Kind, what: &str) -> Result<Target, Failure> {
        let path = path.as_ref();
        Target::open_at(libc::AT_FDCWD, &c_path(path)?, path, kind, what)
    }

    /// `open`, with `name` looked up from the directory `dir` (an `O_PATH` descriptor, or
    /// `AT_FDCWD`): `path` is the whole path, for errors. The caller makes sure `name` below `dir`
    /// is where `path` leads (`read_only`'s anchors); as with `open`, a symlink at the end is
    /// refused and those on the way are followed.
    pub fn open_at(dir: i32, name: &std::ffi::CStr, path: &Path, kind: Kind, what: &str) -> Result<Target, Failure> {
        let path = path.display();
        // `openat`, not `open`: musl's `open` follows an `O_CLOEXEC` open with an `fcntl` (for
        // kernels that ignored the flag, before 2.6.23), one more system call per read-only path of
        // every run; its `openat` passes the flag as it is.
        // SAFETY: a valid C string; `dir` is open or AT_FDCWD.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = last_errno();
            return Err(setup(e, format!("opening {what} {path} failed: {}", describe(e))));
        }
        // SAFETY: a zeroed stat buffer is valid; `fd` is open.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            let e = last_errno();
            // SAFETY: our own descriptor.
            unsafe { libc::close(fd) };
            return Err(setup(e, format!("reading {what} {path} failed: {}", describe(e))));
        }
        let fmt = st.st_mode & libc::S_IFMT;
        let t = Target { fd, id: (st.st_dev, st.st_ino), fmt, links: u64::from(st.st_nlink), size: st.st_size };
        let (dir, file) = (fmt == libc::S_IFDIR, fmt == libc::S_IFREG);
        let fits = match kind {
            Kind::Dir => dir,
            Kind::DirOrFile => dir || file,
            Kind::Any => fmt != libc::S_IFLNK,
            Kind::FilePlaceholder => file || (fmt == libc::S_IFLNK && sandspawn_helper::placeholder::links_to_target(fd, c"")),
            Kind::Link => fmt == libc::S_IFLNK,
        };
        if !fits {
            let want = match kind {
                Kind::Dir => "a directory",
                Kind::DirOrFile => "a directory or a regular file",
                Kind::Any => "anything but a symlink",
                Kind::FilePlaceholder => "a placeholder's symlink or a regular file",
                Kind::Link => "a symlink",
            };
            return Err(setup(libc::ENOTDIR, format!("{what} {path} is no longer {want} (replaced during setup?)")));
        }
        Ok(t)
    }

    /// A placeholder's symlink (see `Kind::FilePlaceholder`).
    pub fn is_link(&self) -> bool {
        self.fmt == libc::S_IFLNK
    }

    /// The flags of the mount this is on, as `MS_*`, read-only left out: a remount clears those it
    /// is not given, and a bind remount in a user namespace must keep those it locked, or the
    /// kernel refuses it. `path` names it in errors.
    pub fn mount_flags(&self, path: impl std::fmt::Display) -> Result<libc::c_ulong, Failure> {
        mount_flags_of(self.fd, path)
    }

    /// Whether the mount this is on is read-only (`statvfs`'s `ST_RDONLY`).
    pub fn is_read_only(&self, path: impl std::fmt::Display) -> Result<bool, Failure> {
        statvfs_of(self.fd, path).map(|st| st.f_flag & libc::ST_RDONLY != 0)
    }

    /// A directory.
    pub fn is_dir(&self) -> bool {
        self.fmt == libc::S_IFDIR
    }

    /// Removed from its directory by the time it was opened (a directory `rmdir` cleared, reached
    /// through the descriptor or the working directory of a process that held it): no entry can
    /// be made in it any more, and the kernel refuses a mount onto it. Only a hint where the
    /// kernel has refused already: a file system may count a directory's links as it likes.
    pub fn is_removed(&self) -> bool {
        self.links == 0
    }

    /// Of size 0 when opened.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// A character or block device.
    pub fn is_device(&self) -> bool {
        self.fmt == libc::S_IFCHR || self.fmt == libc::S_IFBLK
    }

    /// The filesystem this is on (its type, its inode count); `what` names the step in errors.
    pub fn statfs(&self, what: &str) -> Result<libc::statfs, Failure> {
        // SAFETY: a zeroed statfs is valid; `self.fd` is open.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatfs(self.fd, &mut st) } != 0 {
            let e = last_errno();
            return Err(setup(e, format!("{what} failed: statfs: {}", describe(e))));
        }
        Ok(st)
    }

    /// The descriptor, no longer closed on drop: the caller closes it (`close_batch`).
    pub fn into_raw(self) -> i32 {
        let fd = self.fd;
        std::mem::forget(self);
        fd
    }

    pub fn proc_path(&self) -> CString {
        CString::new(format!("/proc/self/fd/{}", self.fd)).expect("no NUL in a number")
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        // SAFETY: our own descriptor.
        unsafe { libc::close(self.fd) };
    }
}

/// `Target::mount_flags` of any open descriptor `fd`.
pub(crate) fn mount_flags_of(fd: i32, path: impl std::fmt::Display) -> Result<libc::c_ulong, Failure> {
    let st = statvfs_of(fd, path)?;
    let map = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(map.iter().filter(|(st_flag, _)| st.f_flag & st_flag != 0).fold(0, |acc, (_, ms)| acc | ms))
}

/// `fstatvfs` of `fd` (at `path`, for the error).
fn statvfs_of(fd: i32, path: impl std::fmt::Display) -> Result<libc::statvfs, Failure> {
    // SAFETY: a zeroed statvfs is valid; `fd` is open.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(fd, &mut st) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("reading the mount flags of {path} failed: {}", describe(e))));
    }
    Ok(st)
}

/// `statvfs`'s relatime flag: the libc crate defines it for glibc only, and the helper is built for
/// musl too (scripts/build-helper.js). The kernel's value (`ST_RELATIME` in linux/statfs.h).
const ST_RELATIME: libc::c_ulong = 0x1000;

/// `mount_setattr` on the top of the mount (or detached tree) `fd` is: the attributes `set` added,
/// `clear` removed, the mounts below it untouched. The errno on failure.
pub(crate) fn set_mount_attrs(fd: i32, set: u64, clear: u64) -> Result<(), i32> {
    let attr = libc::mount_attr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    // SAFETY: a descriptor of the caller's, an empty path, a valid attribute struct of the size given.
    let rc = unsafe { libc::syscall(libc::SYS_mount_setattr, fd, c"".as_ptr(), libc::AT_EMPTY_PATH as libc::c_uint, &attr as *const libc::mount_attr, std::mem::size_of::<libc::mount_attr>()) };
    if rc == 0 { Ok(()) } else { Err(last_errno()) }
}

pub(crate) fn mount(source: Option<&CString>, target: &CString, fstype: Option<&CString>, flags: libc::c_ulong, data: Option<&CString>, what: &str) -> Result<(), Failure> {
    let ptr = |c: Option<&CString>| c.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: valid C strings or null, as mount(2) accepts.
    if unsafe { libc::mount(ptr(source), target.as_ptr(), ptr(fstype), flags, ptr(data).cast()) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("{what} failed: {}", describe(e))));
    }
    Ok(())
}
