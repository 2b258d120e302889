//! `flock` on a descriptor, retried when a signal interrupts it (the Landlock mode's run
//! directories), a whole-file OFD lock with `flock`'s operations (`whole_file`: the placeholders'
//! lock files, a change set's hold), and write locks only (`writers_only`: the tool caches' and
//! the held links' lock files, of mode 0200).

use std::os::fd::AsRawFd;

/// `flock(fd, op)`; `EINTR` is retried, any other error returned (`EWOULDBLOCK` with `LOCK_NB`).
pub fn flock(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: flock on a descriptor the caller owns.
        if unsafe { libc::flock(fd.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Lock or unlock the whole file as `flock(fd, op)` would, with an open file description lock on
/// Linux: `LOCK_SH` a read lock, `LOCK_EX` a write lock, which needs a descriptor opened for
/// writing. That is the point: a sandboxed command that can only read a lock file (the Landlock
/// mode reads sandspawn's state directory) can take a shared lock at most, never the exclusive one
/// that keeps others out, and a `flock` of it does not meet these locks at all (found by attackers'
/// reviews: `flock -x` on such files stalled other runs' setup and plans). A conflict with
/// `LOCK_NB` is `EWOULDBLOCK`; `EINTR` is retried.
#[cfg(target_os = "linux")]
pub fn whole_file(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    let kind = match op & !libc::LOCK_NB {
        libc::LOCK_SH => libc::F_RDLCK,
        libc::LOCK_EX => libc::F_WRLCK,
        _ => libc::F_UNLCK,
    };
    // The whole file: from byte 0, length 0 (to the end, and beyond).
    range(fd, kind as libc::c_int, 0, 0, op & libc::LOCK_NB == 0)
}

/// A `whole_file` lock let go of (`LOCK_UN`) when dropped, before its descriptor closes: an OFD lock
/// belongs to the open file description, which every copy of the descriptor shares, and a child
/// another thread of the host forks holds a copy from its fork to its exec (a test's paused child
/// for good), so a lock let go of by the close alone stayed held that long (a change set's hold,
/// found as "in use"; a placeholders cleanup's, which kept a placeholder once in CI).
#[derive(Debug)]
pub struct WholeFileHeld(pub std::os::fd::OwnedFd);

impl Drop for WholeFileHeld {
    fn drop(&mut self) {
        let _ = whole_file(&self.0, libc::LOCK_UN);
    }
}

/// `flock` where there are no OFD locks (macOS: no sandbox there reads sandspawn's state).
#[cfg(not(target_os = "linux"))]
pub fn whole_file(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    flock(fd, op)
}

/// Lock or unlock a file as `flock(fd, op)` would, with write locks only (Linux: OFD locks), for
/// lock files of mode 0200 that only this user's processes outside a sandbox can open, for writing:
/// a shared hold is a write lock on one byte of its own (`SHARED_FROM` on, at random), which the
/// exclusive hold, a write lock on the whole file, meets, and other shared holds do not. Why: a
/// shared lock taken as a read lock (`whole_file`) is one any reader of the file can take too, and
/// the Landlock mode reads everything: its read lock kept the tool caches' folds and the held links'
/// last holders away (found by an attacker's review, cross28). `LOCK_UN` lets go of every lock the
/// description holds. Elsewhere (macOS, where no sandbox reads sandspawn's state) `flock`.
#[cfg(target_os = "linux")]
pub fn writers_only(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    let wait = op & libc::LOCK_NB == 0;
    match op & !libc::LOCK_NB {
        libc::LOCK_SH => shared(fd, wait),
        libc::LOCK_EX => range(fd, libc::F_WRLCK, 0, 0, wait),
        _ => range(fd, libc::F_UNLCK, 0, 0, false),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn writers_only(fd: &impl AsRawFd, op: libc::c_int) -> std::io::Result<()> {
    flock(fd, op)
}

/// An exclusive hold under `writers_only` made shared with no moment between in which another
/// description could take the file exclusively: the whole file but one byte of its own is let go.
#[cfg(target_os = "linux")]
pub fn exclusive_to_shared(fd: &impl AsRawFd) -> std::io::Result<()> {
    use std::hash::{BuildHasher, Hasher};
    let at = (SHARED_FROM + (std::collections::hash_map::RandomState::new().build_hasher().finish() >> 2)) as i64;
    range(fd, libc::F_UNLCK, 0, at, false)?;
    range(fd, libc::F_UNLCK, at + 1, 0, false)
}

#[cfg(not(target_os = "linux"))]
pub fn exclusive_to_shared(fd: &impl AsRawFd) -> std::io::Result<()> {
    flock(fd, libc::LOCK_SH)
}

/// The first byte a shared hold may lock: byte 0 is the exclusive hold's alone (`exclusive_held`).
#[cfg(target_os = "linux")]
const SHARED_FROM: u64 = 1;

/// A shared hold: a write lock on one byte of its own. A byte another shared holder took (a chance
/// in 2^62) is passed over for another; the exclusive hold (which covers byte 0) refuses it.
#[cfg(target_os = "linux")]
fn shared(fd: &impl AsRawFd, wait: bool) -> std::io::Result<()> {
    use std::hash::{BuildHasher, Hasher};
    loop {
        let at = SHARED_FROM + (std::collections::hash_map::RandomState::new().build_hasher().finish() >> 2);
        match range(fd, libc::F_WRLCK, at as i64, 1, false) {
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => {
                // A read lock is a reader's (no holder takes one): never waited for in the kernel,
                // the reader decides how long that would be (found by an attacker's review, lock28:
                // a reader that gave the file its read bit back, `chmod`, read-locked the gaps
                // between the holders' bytes, and the next shared hold waited as long as it lived).
                if read_locked_at(fd, at as i64)? {
                    return Err(e);
                }
                if !exclusive_held(fd)? {
                    continue;
                }
                if !wait {
                    return Err(e);
                }
                return range(fd, libc::F_WRLCK, at as i64, 1, true);
            }
            other => return other,
        }
    }
}

/// Whether another description holds the file exclusively under `writers_only` (a write lock
/// over byte 0; a reader's read lock there is no holder's).
#[cfg(target_os = "linux")]
pub fn exclusive_held(fd: &impl AsRawFd) -> std::io::Result<bool> {
    // SAFETY: a zeroed flock is valid; fcntl on the caller's descriptor.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_WRLCK as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_len = 1;
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(l.l_type == libc::F_WRLCK as libc::c_short)
}

/// Whether what refuses a write lock on byte `at` is a read lock.
#[cfg(target_os = "linux")]
fn read_locked_at(fd: &impl AsRawFd, at: i64) -> std::io::Result<bool> {
    // SAFETY: a zeroed flock is valid; fcntl on the caller's descriptor.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_WRLCK as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_start = at;
    l.l_len = 1;
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(l.l_type == libc::F_RDLCK as libc::c_short)
}

/// An OFD lock of `kind` on `len` bytes from `start` (0: to the end, and beyond); a conflict
/// without `wait` is `EWOULDBLOCK`; `EINTR` is retried.
#[cfg(target_os = "linux")]
fn range(fd: &impl AsRawFd, kind: libc::c_int, start: i64, len: i64, wait: bool) -> std::io::Result<()> {
    // SAFETY: a zeroed flock is valid (l_pid 0, as OFD locks need).
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = kind as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_start = start;
    l.l_len = len;
    let cmd = if wait { libc::F_OFD_SETLKW } else { libc::F_OFD_SETLK };
    loop {
        // SAFETY: fcntl on the caller's descriptor with a valid flock.
        if unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &l) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN | libc::EACCES) => return Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK)),
            _ => return Err(e),
        }
    }
}

/// `path` opened for writing only, made (mode 0200) if missing and `create`, never followed if a
/// symlink, its mode made 0200 if it was not: a lock file for `writers_only`, which nobody opens for
/// reading (a sandboxed command has no capability that passes over a mode, root's neither). One
/// whose owner write bit a reader took is given it back (`open_own`).
pub fn open_write_only(path: &std::path::Path, create: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::PermissionsExt;
    let f = open_own(path, libc::O_WRONLY | if create { libc::O_CREAT } else { 0 }, 0o200)?;
    if f.metadata()?.permissions().mode() & 0o777 != 0o200 {
        f.set_permissions(std::fs::Permissions::from_mode(0o200))?;
    }
    Ok(f)
}

/// `path`, a file of sandspawn's own state of mode `mode`, opened with `flags` (`O_NOFOLLOW` and
/// `O_CLOEXEC` added; made with `mode` under `O_CREAT`), its owner's bits given back first when a
/// reader took them (`open_own_at`).
pub fn open_own(path: &std::path::Path, flags: libc::c_int, mode: u32) -> std::io::Result<std::fs::File> {
    use std::os::unix::ffi::OsStrExt;
    let invalid = || std::io::Error::from_raw_os_error(libc::EINVAL);
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let name = std::ffi::CString::new(path.file_name().ok_or_else(invalid)?.as_bytes()).map_err(|_| invalid())?;
    let dir = std::fs::File::open(parent)?;
    open_own_at(&dir, &name, flags, mode).map(std::fs::File::from)
}

/// `DIR/NAME`, a file of sandspawn's own state of mode `mode` (a lock file's 0200, a record's 0600),
/// opened with `flags` (`O_NOFOLLOW` and `O_CLOEXEC` added). Refused for want of the owner's bits
/// (`EACCES`), they are given back to it (a regular file) and it is opened again. Found by
/// attackers' reviews (lock28, fix29): the files are the user's own and the Landlock mode does not
/// govern modes (`file-modes`), so its command, which reads the whole state directory, could
/// `chmod 0` every lock file of the stores: every later run of a workspace with tool caches failed
/// ("locking the tool cache ... Permission denied"), a pending change set refused its runs and its
/// apply, and a held link's record was held per process, for good. A reader doing it again and
/// again between the two steps is outlasted 16 times, then the refusal stands.
pub fn open_own_at(dir: &impl AsRawFd, name: &std::ffi::CStr, flags: libc::c_int, mode: u32) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut given_back = 0;
    loop {
        // SAFETY: openat with a valid name; the descriptor returned is ours.
        let raw = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC, mode as libc::c_uint) };
        if raw >= 0 {
            return Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) });
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EACCES) || given_back == 16 {
            return Err(e);
        }
        give_back(dir, name, mode, e)?;
        given_back += 1;
    }
}

/// A file of sandspawn's own whose owner's bits a reader took (`chmod 0`, `chmod 400`): `mode`'s
/// owner bits given back, if it is a regular file of this user (the refusal `why` stands
/// otherwise), through a handle, never by its name, which could lead through a link by then
/// (`own_mode`; found by a fixer's review, store29: this was `fchmodat` by name after `fstatat`).
fn give_back(dir: &impl AsRawFd, name: &std::ffi::CStr, mode: u32, why: std::io::Error) -> std::io::Result<()> {
    match crate::own_mode::give_back_at(dir, name, crate::own_mode::Kind::File, mode & 0o700)? {
        true => Ok(()),
        false => Err(why),
    }
}

/// `DIR/NAME` held exclusively under write locks only (a write lock on the whole file), made (mode
/// 0200) if missing: `Ok(Some(descriptor))` held, `Ok(None)` held by another holder's write lock.
///
/// Mode 0200 does not keep a reader out for good: the file is the user's own, and the Landlock mode
/// does not govern permission bits (`file-modes`, not enforced), so its command can `chmod u+r` the
/// file, open it for reading and take a read lock, which refuses every write lock on that inode
/// for as long as it lives (or `chmod 0` it, which refuses the open). Found by an attacker's review
/// (lock28): cross28's change set hold was refused so ("in use by another run"). No holder here
/// ever takes a read lock, so a file whose write lock is refused while no write lock is on it is
/// spoiled by a reader: it is replaced, under this holder's lock, by a new file swapped in with
/// `RENAME_EXCHANGE` (which the Landlock mode cannot do: no entries made or removed in the store),
/// and the swap is undone if what came out was not the spoiled file or a holder took it meanwhile.
/// Every holder checks after locking that the name still leads to what it locked.
#[cfg(target_os = "linux")]
pub fn exclusive_at(dir: &impl AsRawFd, name: &std::ffi::CStr) -> std::io::Result<Option<std::os::fd::OwnedFd>> {
    for _ in 0..16 {
        let fd = open_at(dir, name, libc::O_CREAT)?;
        match whole_file(&fd, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) if named(dir, name, &fd)? => return Ok(Some(fd)),
            Ok(()) => {
                whole_file(&fd, libc::LOCK_UN)?;
            }
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => {
                if write_locked(&fd)? {
                    return Ok(None);
                }
                // Spoiled by a reader: replaced.
                if let Some(new) = replace_spoiled(dir, name, &fd)? {
                    return Ok(Some(new));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// `DIR/NAME` opened for writing only with `flags` (`O_CREAT`: made, mode 0200), never followed if
/// a symlink, its owner's write bit given back if a reader took it (`open_own_at`), its mode made
/// 0200 if it was not.
#[cfg(target_os = "linux")]
pub fn open_at(dir: &impl AsRawFd, name: &std::ffi::CStr, flags: libc::c_int) -> std::io::Result<std::os::fd::OwnedFd> {
    let fd = open_own_at(dir, name, libc::O_WRONLY | flags, 0o200)?;
    let st = fstat(&fd)?;
    if st.st_mode & 0o777 != 0o200 && unsafe { libc::fchmod(fd.as_raw_fd(), 0o200) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

#[cfg(target_os = "linux")]
fn fstat(fd: &impl AsRawFd) -> std::io::Result<libc::stat> {
    // SAFETY: a zeroed stat is valid; fstat on the caller's descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// What `DIR/NAME` is (not followed), `None` if nothing.
#[cfg(target_os = "linux")]
fn lstat_at(dir: &impl AsRawFd, name: &std::ffi::CStr) -> std::io::Result<Option<libc::stat>> {
    // SAFETY: a zeroed stat is valid; fstatat with a valid name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        let e = std::io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ENOENT) { Ok(None) } else { Err(e) };
    }
    Ok(Some(st))
}

/// Whether `DIR/NAME` is the file `fd` is open on.
#[cfg(target_os = "linux")]
fn named(dir: &impl AsRawFd, name: &std::ffi::CStr, fd: &impl AsRawFd) -> std::io::Result<bool> {
    let held = fstat(fd)?;
    Ok(lstat_at(dir, name)?.is_some_and(|st| st.st_dev == held.st_dev && st.st_ino == held.st_ino))
}

/// Whether any description holds a write lock anywhere on the file (a test read lock meets write
/// locks only).
#[cfg(target_os = "linux")]
pub fn write_locked(fd: &impl AsRawFd) -> std::io::Result<bool> {
    // SAFETY: a zeroed flock is valid (the whole file); fcntl on the caller's descriptor.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_RDLCK as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(l.l_type != libc::F_UNLCK as libc::c_short)
}

/// `DIR/NAME`, spoiled (`spoiled` is open on it, read-locked by a reader, write-locked by nobody),
/// replaced by a new file this holder holds exclusively; `None` if another holder came first.
#[cfg(target_os = "linux")]
fn replace_spoiled(dir: &impl AsRawFd, name: &std::ffi::CStr, spoiled: &impl AsRawFd) -> std::io::Result<Option<std::os::fd::OwnedFd>> {
    use std::hash::{BuildHasher, Hasher};
    let aside = format!("{}.new-{:016x}", name.to_string_lossy(), std::collections::hash_map::RandomState::new().build_hasher().finish());
    let aside = std::ffi::CString::new(aside).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let new = open_at(dir, &aside, libc::O_CREAT | libc::O_EXCL)?;
    let swapped = whole_file(&new, libc::LOCK_EX | libc::LOCK_NB).and_then(|()| exchange(dir, &aside, name));
    if let Err(e) = swapped {
        unsafe { libc::unlinkat(dir.as_raw_fd(), aside.as_ptr(), 0) };
        return Err(e);
    }
    // What came out is the spoiled file, and no holder took it meanwhile: ours stays in.
    let was = fstat(spoiled)?;
    let out = lstat_at(dir, &aside)?;
    let ours = out.is_some_and(|st| st.st_dev == was.st_dev && st.st_ino == was.st_ino) && !write_locked(spoiled)?;
    if !ours {
        exchange(dir, &aside, name)?;
    }
    // SAFETY: unlinkat with a valid name: the spoiled file, or ours swapped back out.
    unsafe { libc::unlinkat(dir.as_raw_fd(), aside.as_ptr(), 0) };
    Ok(ours.then_some(new))
}

#[cfg(target_os = "linux")]
fn exchange(dir: &impl AsRawFd, a: &std::ffi::CStr, b: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: renameat2 with valid names in the caller's directory.
    if unsafe { libc::renameat2(dir.as_raw_fd(), a.as_ptr(), dir.as_raw_fd(), b.as_ptr(), libc::RENAME_EXCHANGE) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Where no sandbox reads sandspawn's state (macOS): `DIR/NAME` made if missing and `flock`ed.
#[cfg(not(target_os = "linux"))]
pub fn exclusive_at(dir: &impl AsRawFd, name: &std::ffi::CStr) -> std::io::Result<Option<std::os::fd::OwnedFd>> {
    use std::os::fd::FromRawFd;
    // SAFETY: openat with a valid name; the descriptor returned is ours.
    let raw = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0o600 as libc::c_uint) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
    match flock(&fd, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(Some(fd)),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where no sandbox reads sandspawn's state (macOS, `flock`): any lock is a holder's.
#[cfg(not(target_os = "linux"))]
pub fn write_locked(_fd: &impl AsRawFd) -> std::io::Result<bool> {
    Ok(true)
}
