//! The placeholders over missing protected names, on the host: what the addon's runner does for its
//! own runs (`plan::mount_targets`) and what the helper does in front of bwrap for a plan another
//! program runs (`--hold-dir`, `--placeholder-dir`, `--placeholder-file`). The few system calls they
//! share live here so the two cannot drift apart.
//!
//! - A placeholder is an empty directory with mode 1500 (or a zero-length regular file with mode
//!   1400), owned by this user: bwrap mounts an empty read-only directory (file) over it. The mode
//!   is the whole record of who made it, so a placeholder left by a run that was killed is
//!   recognized later: the sticky bit makes it one no user directory has by accident, and the
//!   owner's read and search bits let tools that remove a tree (`rm -r`, `shutil.rmtree`,
//!   `fs.rmSync`) list it without root.
//! - A run holds a shared `flock` on each directory it has placeholders in, from before it creates
//!   them until its sandbox is gone. A placeholder is removed only under the exclusive lock, taken
//!   without waiting, that is, when no run uses that directory: removing a directory that another
//!   sandbox has mounted over would detach that mount there, and the protection with it.
//! - Every operation is relative to the locked directory's descriptor, so a parent replaced by a
//!   symlink meanwhile cannot redirect it.

use std::ffi::CStr;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};

/// The mode of a placeholder directory: r-x for its owner, and the sticky bit.
pub const DIR_MODE: u32 = 0o1500;
/// The mode of a placeholder file.
pub const FILE_MODE: u32 = 0o1400;

/// What a placeholder is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Covers a name that may be a file or a directory (an empty read-only tmpfs is mounted on it).
    Dir,
    /// Covers a missing file (an empty read-only file is mounted on it).
    File,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Dir => "dir",
            Kind::File => "file",
        }
    }
}

/// Open `dir` (not following a final symlink) and `flock` it with `op` (`LOCK_SH`, or
/// `LOCK_EX | LOCK_NB`). The descriptor is close-on-exec unless `inheritable`.
pub fn lock(dir: &CStr, op: libc::c_int, inheritable: bool) -> std::io::Result<OwnedFd> {
    let fd = open_dir(dir, inheritable)?;
    crate::file_lock::flock(&fd, op)?;
    Ok(fd)
}

/// Open `dir` (not following a final symlink), unlocked.
pub fn open_dir(dir: &CStr, inheritable: bool) -> std::io::Result<OwnedFd> {
    let cloexec = if inheritable { 0 } else { libc::O_CLOEXEC };
    // SAFETY: a valid C string; the descriptor is owned below.
    let raw = unsafe { libc::open(dir.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | cloexec) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Create the placeholder `name` in `dir` with its exact mode (set again after creating, since the
/// umask may have taken bits away). An existing entry is left as it is: a concurrent run's
/// placeholder is shared, anything else was there before (bwrap mounts over an empty one; the plan
/// protects a non-empty one another way).
pub fn create(dir: &OwnedFd, name: &CStr, kind: Kind) {
    // SAFETY: a valid descriptor and C string; a file we create is closed at once.
    unsafe {
        let created = match kind {
            Kind::Dir => libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), DIR_MODE as libc::mode_t) == 0,
            Kind::File => {
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                let fd = libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, FILE_MODE as libc::c_uint);
                if fd >= 0 {
                    libc::close(fd);
                }
                fd >= 0
            }
        };
        if created {
            let mode = if kind == Kind::Dir { DIR_MODE } else { FILE_MODE };
            libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t, 0);
        }
    }
}

/// Whether an entry with these attributes is a placeholder (see the module comment). A directory's
/// emptiness is left to `rmdir`.
pub fn is_placeholder(mode: u32, uid: u32, is_dir: bool, is_file: bool, len: u64) -> bool {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    uid == euid && ((is_dir && mode & 0o7777 == DIR_MODE) || (is_file && len == 0 && mode & 0o7777 == FILE_MODE))
}

/// Remove `name` in `dir` if it is a placeholder of `kind`, never following a symlink (`rmdir`
/// fails on a directory that is not empty). Call it only with the exclusive lock held.
pub fn remove_if_placeholder(dir: &OwnedFd, name: &CStr, kind: Kind) {
    let Ok(st) = crate::stat_at::stat_at(dir.as_raw_fd(), name) else { return };
    let fmt = st.st_mode & libc::S_IFMT;
    // `mode_t` is 32 bits on Linux, 16 on macOS.
    #[allow(clippy::unnecessary_cast)]
    if !is_placeholder(st.st_mode as u32, st.st_uid, fmt == libc::S_IFDIR, fmt == libc::S_IFREG, st.st_size as u64) {
        return;
    }
    let flags = match (kind, fmt) {
        (Kind::Dir, libc::S_IFDIR) => libc::AT_REMOVEDIR,
        (Kind::File, libc::S_IFREG) => 0,
        _ => return,
    };
    // SAFETY: a valid descriptor and C string.
    unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) };
}

/// Whether a sandbox still running a plan another program started uses `dir`: its bwrap's pid 1
/// holds a POSIX read lock on it for the sandbox's life (`--lock-file`, see the addon's
/// `plan::bwrap`). Tested, not taken: a directory cannot be opened for writing, so a write lock
/// cannot be requested on it, but the test reports any read lock that would conflict with one.
pub fn locked_by_a_sandbox(dir: &OwnedFd) -> bool {
    // SAFETY: a zeroed `struct flock` is valid; F_OFD_GETLK fills it in.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_WRLCK as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: a valid descriptor and flock buffer.
    if unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_OFD_GETLK, &mut l) } != 0 {
        return true; // cannot tell: keep the placeholders
    }
    l.l_type != libc::F_UNLCK as libc::c_short
}

/// How many POSIX read locks the process with this pid holds, from `/proc/locks` as this process's
/// pid namespace shows it: the helper inside waits until bwrap's pid 1 holds all of them before it
/// lets go of the directories' `flock`s (see the helper's `--await-init-locks`).
pub fn posix_read_locks_of(locks: &str, pid: u32) -> usize {
    locks
        .lines()
        .filter(|l| !l.contains("->"))
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() >= 5 && f[1] == "POSIX" && f[3] == "READ" && f[4].parse::<u32>() == Ok(pid)
        })
        .count()
}

/// A placeholder's name as the protocol carries it: one path component.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_one_process_s_posix_read_locks() {
        let locks = "1: POSIX  ADVISORY  READ 1 fe:00:2015234 0 EOF\n\
                     2: FLOCK  ADVISORY  READ 1 fe:00:2015235 0 EOF\n\
                     3: POSIX  ADVISORY  WRITE 1 fe:00:2015236 0 EOF\n\
                     4: POSIX  ADVISORY  READ 12 fe:00:2015237 0 EOF\n\
                     4: -> POSIX  ADVISORY  READ 1 fe:00:2015237 0 EOF\n\
                     5: POSIX  ADVISORY  READ 1 00:1f:42 0 EOF\n\
                     6: OFDLCK ADVISORY  READ -1 00:1f:43 0 EOF\n";
        assert_eq!(posix_read_locks_of(locks, 1), 2);
        assert_eq!(posix_read_locks_of(locks, 12), 1);
        assert_eq!(posix_read_locks_of("", 1), 0);
    }
}
