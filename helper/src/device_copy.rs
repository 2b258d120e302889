//! Opening one of the host's devices again through a read-only copy of its mount: the mechanism of
//! `stdio_devices` (see there why), apart from which devices it is used for.
//!
//! The entry is found in the bind of the host's `/dev` the plan makes (read-only and nodev, as
//! bwrap's `--ro-bind` makes it), copied read-only with devices allowed (`open_tree`,
//! `mount_setattr`; on kernels before 5.12 a bind of the entry onto itself remounted read-only),
//! opened, and the copy then refuses devices: the command cannot open it again through
//! `/proc/self/fd` with more access than it was given.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::last_errno;
use crate::mount_target::{c, mount, mount_flags_of, set_mount_attrs};

pub fn fstat(fd: i32) -> Option<libc::stat> {
    // SAFETY: a zeroed stat buffer is valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

/// The entry at `path` (in the bind of the host's /dev), which `same` must accept as it is found
/// and once open, opened through a read-only copy with `fd`'s access mode, status flags and file
/// offset. The error: its errno, and which step failed.
pub fn open_again(fd: i32, path: &std::path::Path, same: &dyn Fn(&libc::stat) -> bool) -> Result<OwnedFd, (i32, String)> {
    let entry = open_path(path).map_err(|e| (e, format!("opening it again in the host's /dev failed: {}", crate::describe(e))))?;
    if !fstat(entry.as_raw_fd()).is_some_and(|s| same(&s)) {
        return Err((libc::EXDEV, "its name in the host's /dev leads to another entry".into()));
    }
    // SAFETY: F_GETFL on an open descriptor.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // The status flags an open sets, as the caller chose them (a block device given with O_DIRECT
    // lost it; found by a review), and O_PATH: a descriptor given without reads or writes stays so
    // (musl's O_ACCMODE holds it, glibc's does not). Not O_ASYNC: its signals go to an owner the
    // caller set on its own open file, outside the sandbox's pid namespace; nor O_NOATIME, which
    // only the device's owner may ask for and which means nothing to a device.
    let keep = libc::O_ACCMODE | libc::O_APPEND | libc::O_NONBLOCK | libc::O_SYNC | libc::O_DSYNC | libc::O_DIRECT | libc::O_PATH;
    let flags = (fl & keep) | libc::O_NOCTTY | libc::O_CLOEXEC;
    let (new, copy) = read_only_open(&entry, path, flags).map_err(|e| (e, format!("opening it again read-only failed: {}", crate::describe(e))))?;
    if let Some(copy) = copy {
        spent(copy, entry);
    }
    if !fstat(new.as_raw_fd()).is_some_and(|s| same(&s)) {
        return Err((libc::EXDEV, "opened again, it was another entry".into()));
    }
    same_offset(fd, &new)?;
    Ok(new)
}

/// `new` moved to where `fd` stands. A new open file starts at offset 0: a block device given past
/// its header (4096) had the command's output written over the header (found by a review,
/// /work/atk/fixes18/blockoffset.sh). The offset is `new`'s own from here: what the command reads
/// or writes no longer moves the caller's (an open file's offset cannot be shared with another).
fn same_offset(fd: i32, new: &OwnedFd) -> Result<(), (i32, String)> {
    // SAFETY: lseek on open descriptors. A terminal or pipe-like device has no offset (ESPIPE).
    let at = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    if at <= 0 {
        return Ok(());
    }
    // SAFETY: as above.
    if unsafe { libc::lseek(new.as_raw_fd(), at, libc::SEEK_SET) } != at {
        let e = last_errno();
        return Err((e, format!("opened again, it could not be moved to the given offset {at}: {}", crate::describe(e))));
    }
    Ok(())
}

/// `new` put over `fd` (which keeps its number, without close-on-exec, as it was).
pub fn put_over(new: OwnedFd, fd: i32) -> Result<(), (i32, String)> {
    // SAFETY: both ours.
    if unsafe { libc::dup2(new.as_raw_fd(), fd) } < 0 {
        let e = last_errno();
        return Err((e, format!("putting it in place failed: {}", crate::describe(e))));
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

/// The detached copies `read_only_open` made, each with the entry it copied, while `collect_spent`
/// is in force (`stdio_devices::reopen_all`); `None`: each is closed at once.
static SPENT: std::sync::Mutex<Option<Vec<(OwnedFd, OwnedFd)>>> = std::sync::Mutex::new(None);

/// Keep the copies made from now on until `park_spent`, instead of closing each at once. Why: the
/// close of a detached copy's last descriptor dissolves it, and every dissolve or detach waits for
/// an RCU grace period (`synchronize_rcu_expedited`, off the CPU: 1 to 7 ms each at load 6 on the
/// 2-core VM); attached inside the bind of the host's /dev, the copies go with that bind's one
/// detach. A move waits for none.
pub fn collect_spent() {
    if let Ok(mut s) = SPENT.lock() {
        *s = Some(Vec::new());
    }
}

/// Each copy kept since `collect_spent` put over the entry it was copied from, in the bind of the
/// host's /dev that the caller detaches next (read-only and refusing devices, as they are; no
/// process but the helper's exists to see them meanwhile, and no name is looked up there after
/// this). A copy the kernel does not move is closed, paying its wait, as before.
pub fn park_spent() {
    let Some(spent) = SPENT.lock().ok().and_then(|mut s| s.take()) else { return };
    let how = libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH;
    for (copy, entry) in spent {
        // SAFETY: both descriptors are ours, both paths empty.
        unsafe { libc::syscall(libc::SYS_move_mount, copy.as_raw_fd(), c"".as_ptr(), entry.as_raw_fd(), c"".as_ptr(), how) };
    }
}

/// `copy` closed now, or kept with `entry` for `park_spent`.
fn spent(copy: OwnedFd, entry: OwnedFd) {
    if let Ok(mut s) = SPENT.lock() {
        if let Some(list) = s.as_mut() {
            list.push((copy, entry));
        }
    }
}

/// `entry` opened with `flags` through a copy of its mount that is read-only and allows devices;
/// with that copy, detached (`None` on the old kernels' way, a bind detached with the host's /dev).
fn read_only_open(entry: &OwnedFd, path: &std::path::Path, flags: i32) -> Result<(OwnedFd, Option<OwnedFd>), i32> {
    let tree = match detached_copy(entry) {
        Ok(tree) => tree,
        // A kernel before 5.12: the entry bound onto itself, remounted read-only (detached with
        // the whole bind of the host's /dev afterwards).
        Err(libc::ENOSYS) => return bound_copy(entry, path, flags).map(|open| (open, None)),
        Err(e) => return Err(e),
    };
    let open = open_proc(&tree, flags)?;
    // Opened: devices are refused on the copy from now on, so the command cannot open it again
    // with more access through `/proc/self/fd` (a device given read-only, written; found by a
    // review). The open file keeps working.
    set_mount_attrs(tree.as_raw_fd(), libc::MOUNT_ATTR_NODEV, 0)?;
    Ok((open, Some(tree)))
}

/// A detached read-only copy of the mount at `entry`, with devices allowed (the bind of the host's
/// /dev is nodev); closed or parked (`spent`) once the device is open (the open file keeps the mount).
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
