//! The command's inherited descriptors on the host's devices (its terminal, a pty run's pty, the
//! host's `/dev/null` as stdin), reopened through read-only mounts before it runs.
//!
//! Why: a descriptor opened on the host carries the host's writable mount, whatever the sandbox's
//! view. `fchmod(0, 0666)` or `chmod /proc/self/fd/0` made the caller's terminal (and a pty run's
//! pty, in the host's `/dev/pts`) world-readable and -writable, and as root `fchmod` of the host's
//! `/dev/null` would have broken every other user's programs (found by an attacker's review). A
//! mode or owner change needs a writable mount; the same device opened through a read-only one
//! reads, writes and takes ioctls (TIOCSCTTY) as before, and `fchmod`/`fchown` get EROFS.
//!
//! The inherited descriptor's own mount lies in the host's mount namespace, which nothing here may
//! copy (`open_tree` refuses a mount of another namespace). So the plan binds the host's `/dev`
//! into the sandbox's (`--stdio-devices=DIR`, read-only and nodev, as bwrap's `--ro-bind` makes
//! it); for each descriptor on a character device, the entry of the same device and inode is
//! found there by the name the host gave it, copied read-only with devices allowed (`open_tree`,
//! `mount_setattr`; on kernels before 5.12 a bind of the entry onto itself remounted read-only),
//! opened with the original's access mode and flags, and put over the original (`dup2`). The bind
//! is then detached, before the command exists: it never sees the host's `/dev`.
//!
//! Block devices too. A device another uid owns, or whose name is gone, is left as it is when it
//! cannot be reopened: the command cannot change its mode either.
//!
//! A character device the bind does not hold (the name the host gave it is not under `/dev`, or
//! leads to another inode there), or that cannot be opened again (a tty another session holds
//! exclusively), fails setup: the run never gets a host device it could change. Pipes and sockets
//! (pipefs, sockfs: no path anyone could open) and regular files (the caller's own, given on
//! purpose) are left as they are.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use sandspawn_helper::report::{setup, Failure};

use crate::mount_target::{c, mount, mount_flags_of, set_mount_attrs};
use crate::{describe, last_errno};

/// Reopen each inherited descriptor on a character device through a read-only mount of the
/// host's `/dev` bound at `dir`, then detach `dir`.
pub fn reopen_all(dir: &str) -> Result<(), Failure> {
    for fd in inherited()? {
        let Some(st) = fstat(fd) else { continue };
        if !matches!(st.st_mode & libc::S_IFMT, libc::S_IFCHR | libc::S_IFBLK) {
            continue;
        }
        match reopen(fd, &st, dir) {
            Ok(()) => {}
            // What the command could not change anyway: a device another uid owns (`/dev/tty`, a
            // terminal `su` left the caller, unmapped here: a mode change needs its owner), or one
            // whose name is gone (a hung-up terminal's `/dev/pts/N (deleted)`). Reopening those
            // fails (no controlling terminal, EACCES, ENOENT), and failing the run for them broke
            // `exec < /dev/tty` in git hooks and `su` (found by a review of this step).
            Err(_) if st.st_uid != unsafe { libc::getuid() } || deleted(fd) => {}
            Err(f) => return Err(f),
        }
    }
    crate::private_mounts::unmount(dir)
}

/// The open descriptors without close-on-exec (those the command gets), read before any is reopened.
fn inherited() -> Result<Vec<i32>, Failure> {
    let list = std::fs::read_dir("/proc/self/fd").map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        setup(errno, format!("listing the helper's descriptors failed: {}", describe(errno)))
    })?;
    let fds: Vec<i32> = list.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    // SAFETY: F_GETFD on a number; one closed meanwhile (the listing's own) returns -1.
    Ok(fds.into_iter().filter(|&fd| matches!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, f if f >= 0 && f & libc::FD_CLOEXEC == 0)).collect())
}

/// Whether the name the host gave `fd` is gone (the kernel says ` (deleted)`).
fn deleted(fd: i32) -> bool {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).is_ok_and(|n| n.to_string_lossy().ends_with(" (deleted)"))
}

fn fstat(fd: i32) -> Option<libc::stat> {
    // SAFETY: a zeroed stat buffer is valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

/// `fd` (a character device, `st`) opened again through a read-only mount, at the same number.
fn reopen(fd: i32, st: &libc::stat, dir: &str) -> Result<(), Failure> {
    let name = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
    let shown = name.display().to_string();
    let refused = |errno: i32, why: String| setup(errno, format!("descriptor {fd} is the host's device {shown}, which the command could change the mode of: {why}"));
    // The name the host's mount namespace gives it: the same entry in the bind of its `/dev`.
    let rel = name.strip_prefix("/dev").ok().filter(|r| !r.as_os_str().is_empty()).ok_or_else(|| refused(libc::EXDEV, "not under /dev, so it cannot be opened again read-only".into()))?;
    let path = std::path::Path::new(dir).join(rel);
    let entry = open_path(&path).map_err(|e| refused(e, format!("opening it again in the host's /dev failed: {}", describe(e))))?;
    let same = |s: &libc::stat| (s.st_dev, s.st_ino, s.st_rdev) == (st.st_dev, st.st_ino, st.st_rdev);
    if !fstat(entry.as_raw_fd()).is_some_and(|s| same(&s)) {
        return Err(refused(libc::EXDEV, "its name in the host's /dev leads to another entry".into()));
    }
    // SAFETY: F_GETFL on an open descriptor.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let keep = libc::O_ACCMODE | libc::O_APPEND | libc::O_NONBLOCK | libc::O_SYNC | libc::O_DSYNC;
    let flags = (fl & keep) | libc::O_NOCTTY | libc::O_CLOEXEC;
    let new = read_only_open(&entry, &path, flags).map_err(|e| refused(e, format!("opening it again read-only failed: {}", describe(e))))?;
    if !fstat(new.as_raw_fd()).is_some_and(|s| same(&s)) {
        return Err(refused(libc::EXDEV, "opened again, it was another entry".into()));
    }
    // SAFETY: both ours; dup2 leaves `fd` without close-on-exec, as it was.
    if unsafe { libc::dup2(new.as_raw_fd(), fd) } < 0 {
        let e = last_errno();
        return Err(refused(e, format!("putting it in place failed: {}", describe(e))));
    }
    Ok(())
}

/// `path` as an `O_PATH` descriptor on exactly that entry (never a symlink's target).
fn open_path(path: &std::path::Path) -> Result<OwnedFd, i32> {
    let p = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())).map_err(|_| libc::EINVAL)?;
    // SAFETY: a valid C string.
    let fd = unsafe { libc::open(p.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    // SAFETY: a descriptor open just returned, owned from here.
    if fd < 0 { Err(last_errno()) } else { Ok(unsafe { OwnedFd::from_raw_fd(fd) }) }
}

/// `entry` opened with `flags` through a copy of its mount that is read-only and allows devices.
fn read_only_open(entry: &OwnedFd, path: &std::path::Path, flags: i32) -> Result<OwnedFd, i32> {
    let tree = match detached_copy(entry) {
        Ok(tree) => tree,
        // A kernel before 5.12: the entry bound onto itself, remounted read-only (detached with
        // the whole bind of the host's /dev afterwards).
        Err(libc::ENOSYS) => return bound_copy(entry, path, flags),
        Err(e) => return Err(e),
    };
    let open = open_proc(&tree, flags)?;
    // Opened: devices are refused on the copy from now on, so the command cannot open it again
    // with more access through `/proc/self/fd` (a device given read-only, written; found by a
    // review). The open file keeps working.
    set_mount_attrs(tree.as_raw_fd(), libc::MOUNT_ATTR_NODEV, 0)?;
    Ok(open)
}

/// A detached read-only copy of the mount at `entry`, with devices allowed (the bind of the host's
/// /dev is nodev); closed by the caller once the device is open (the open file keeps the mount).
fn detached_copy(entry: &OwnedFd) -> Result<OwnedFd, i32> {
    let flags = libc::OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint;
    // SAFETY: open_tree on our own descriptor with an empty path; returns a descriptor or -1.
    let tree = unsafe { libc::syscall(libc::SYS_open_tree, entry.as_raw_fd(), c"".as_ptr(), flags) } as i32;
    if tree < 0 {
        return Err(last_errno());
    }
    // SAFETY: a descriptor open_tree just returned, owned from here.
    let tree = unsafe { OwnedFd::from_raw_fd(tree) };
    set_mount_attrs(tree.as_raw_fd(), libc::MOUNT_ATTR_RDONLY, libc::MOUNT_ATTR_NODEV)?;
    Ok(tree)
}

/// The old way: `entry` bound onto itself, that bind remounted read-only with devices allowed.
fn bound_copy(entry: &OwnedFd, path: &std::path::Path, flags: i32) -> Result<OwnedFd, i32> {
    let at = CString::new(format!("/proc/self/fd/{}", entry.as_raw_fd())).expect("no NUL in a number");
    mount(Some(&at), &at, None, libc::MS_BIND, None, "").map_err(|f| f.errno)?;
    let bound = open_path(path)?;
    // Those a remount must keep (see `Target::mount_flags`), but nodev.
    let kept = mount_flags_of(bound.as_raw_fd(), "").map_err(|f| f.errno)? & !libc::MS_NODEV;
    let at = c(&format!("/proc/self/fd/{}", bound.as_raw_fd())).map_err(|f| f.errno)?;
    mount(None, &at, None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept, None, "").map_err(|f| f.errno)?;
    // Opened through `bound`: the read-only bind, not what lies below it.
    open_proc(&bound, flags)
}

/// Open what the descriptor `at` names (its own mount), with `flags`.
fn open_proc(at: &OwnedFd, flags: i32) -> Result<OwnedFd, i32> {
    let p = CString::new(format!("/proc/self/fd/{}", at.as_raw_fd())).expect("no NUL in a number");
    // SAFETY: a valid C string.
    let fd = unsafe { libc::open(p.as_ptr(), flags) };
    // SAFETY: a descriptor open just returned, owned from here.
    if fd < 0 { Err(last_errno()) } else { Ok(unsafe { OwnedFd::from_raw_fd(fd) }) }
}
