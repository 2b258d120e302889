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
//! - A plan holds each directory it has placeholders in, from before it creates them until its
//!   sandbox is gone: first through a shared `flock` on the directory's lock file in sandspawn's
//!   state directory (`lock_of`), until its bwrap's pid 1 holds a POSIX read lock on the directory
//!   itself (`--lock-file`), which it keeps for the sandbox's life. A placeholder is removed (or
//!   moved aside) only when neither is held: under the lock file's exclusive lock, taken without
//!   waiting, and when no plan's sandbox holds the directory (`held_by_a_plan`). Removing a
//!   directory that another sandbox has mounted over would detach that mount there, and the
//!   protection with it.
//! - Why a lock file and not the directory (found by an attacker's review): any process can `flock`
//!   a directory it can open, so a run, or another user on the shared `/tmp`, that held an
//!   exclusive lock on one stalled every plan holding it, and one that held a shared lock kept the
//!   leftovers forever. The state directory is the user's own (mode 0700), covered in every bwrap
//!   sandbox; a lock there is never waited for without bound either. Likewise a POSIX read lock on
//!   the directory counts only when it is a plan's sandbox's (its bwrap's pid 1): any process may
//!   take one, and a run that did switched off the undoing of what another run planted there.
//! - Every operation is relative to the locked directory's descriptor, so a parent replaced by a
//!   symlink meanwhile cannot redirect it.

use std::ffi::CStr;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};

/// The mode of a placeholder directory: r-x for its owner, and the sticky bit.
pub const DIR_MODE: u32 = 0o1500;
/// The mode of a placeholder file left by an earlier version (still recognized and removed).
pub const FILE_MODE: u32 = 0o1400;
/// What a placeholder for a file-like name is: a symlink to this path, which never resolves on the
/// host (`/dev/null` is no directory: `ENOTDIR`), so that the host's tools take the name for absent
/// while it is left there. An empty file did not: an empty `/tmp/package.json` made every `node`
/// script under `/tmp` without a `package.json` of its own fail to parse it, and `npm` take `/tmp`
/// for the project; an empty `/tmp/Cargo.toml` stopped `cargo` (measured, plan36). Inside the
/// sandbox it is covered as the empty file was (`covers`): read-only, neither removable nor
/// replaceable, and a write through it cannot reach the host.
pub const LINK_TARGET: &CStr = c"/dev/null/sandspawn-held";

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

/// The name of a held directory's lock file: the directory's device and inode, as `fstat` gives
/// them (both sides compute it alike; a name reused by a later directory only locks more).
pub fn lock_file_name(dev: u64, ino: u64) -> String {
    format!("{dev}-{ino}")
}

/// Open the directory of the held directories' lock files (see `lock_of`), which must be this
/// user's and writable by nobody else: whoever could write it could hold or replace the locks.
pub fn open_locks(locks: &CStr) -> std::io::Result<OwnedFd> {
    let fd = open_dir(locks, false)?;
    let st = fstat(&fd)?;
    // SAFETY: geteuid has no preconditions.
    #[allow(clippy::unnecessary_cast)]
    if st.st_uid != unsafe { libc::geteuid() } || (st.st_mode as u32) & 0o022 != 0 {
        return Err(std::io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(fd)
}

/// Open (creating it, mode 0600) the lock file of the directory `dir` in `locks`, for reading and
/// writing, and lock it whole with `op` (`LOCK_SH | LOCK_NB` in front of bwrap, `LOCK_EX |
/// LOCK_NB` for a cleanup) as an OFD lock (`file_lock::whole_file`): a Landlock-mode command,
/// which can read the state directory but not write it, can take no lock that keeps a plan out
/// (with `flock`, its `flock -x` made every plan there fail after 2 s). Removed only by
/// `sweep_locks`, under its exclusive lock: a process that opened the file before finds it unlinked
/// once it holds its own lock, and opens the name again, so no two processes lock different files.
/// The descriptor is close-on-exec unless `inheritable`.
pub fn lock_of(locks: &OwnedFd, dir: &OwnedFd, op: libc::c_int, inheritable: bool) -> std::io::Result<OwnedFd> {
    let st = fstat(dir)?;
    #[allow(clippy::unnecessary_cast)]
    let name = std::ffi::CString::new(lock_file_name(st.st_dev as u64, st.st_ino as u64)).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let cloexec = if inheritable { 0 } else { libc::O_CLOEXEC };
    // A sweep removes a file only while it holds it exclusively, so this loop ends unless sweeps
    // keep winning the race; then the plan fails as a held lock would (`EWOULDBLOCK`).
    for _ in 0..8 {
        let fd = open_lock_file(locks, &name, libc::O_CREAT | cloexec)?;
        crate::file_lock::whole_file(&fd, op)?;
        if fstat(&fd)?.st_nlink > 0 {
            return Ok(fd);
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK))
}

/// Open the lock file `name` in `locks` for reading and writing (`extra`: `O_CREAT`, `O_CLOEXEC`),
/// not blocking on a FIFO, never through a symlink, and only a regular file.
fn open_lock_file(locks: &OwnedFd, name: &CStr, extra: libc::c_int) -> std::io::Result<OwnedFd> {
    let flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK | extra;
    // SAFETY: a valid descriptor and C string; the descriptor is owned below.
    let open = || unsafe { libc::openat(locks.as_raw_fd(), name.as_ptr(), flags, 0o600 as libc::c_uint) };
    let mut raw = open();
    // A lock file a sandboxed command took the owner's bits from (`chmod 0`; the Landlock mode
    // does not govern modes) is given them back, through a handle (`own_mode`), and opened again.
    if raw < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES) && crate::own_mode::give_back_at(locks, name, crate::own_mode::Kind::File, 0o600)? {
        raw = open();
    }
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    if fstat(&fd)?.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    Ok(fd)
}

/// Remove the lock files in `locks` (named in `names`) that nobody holds; how many went. One is made
/// per directory a plan ever held (each workspace, each repository top with a placeholder) and was
/// never removed: hundreds piled up in the state directory (found by an attacker's review). Each
/// goes only under its exclusive lock, taken without waiting; `lock_of` opens the name again when
/// the file it locked was removed meanwhile. A file a process holds, even only shared, stays.
pub fn sweep_locks(locks: &OwnedFd, names: impl IntoIterator<Item = std::ffi::CString>) -> usize {
    let mut removed = 0;
    for name in names {
        let Ok(fd) = open_lock_file(locks, &name, libc::O_CLOEXEC) else { continue };
        if crate::file_lock::whole_file(&fd, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            continue;
        }
        // Only sweeps unlink, and only under this lock: a linked file here is still this name's.
        // SAFETY: a valid descriptor and C string.
        if fstat(&fd).is_ok_and(|st| st.st_nlink > 0) && unsafe { libc::unlinkat(locks.as_raw_fd(), name.as_ptr(), 0) } == 0 {
            removed += 1;
        }
    }
    removed
}

fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is valid for fstat to overwrite; a valid descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
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
            // A symlink has no mode to set.
            Kind::File => {
                libc::symlinkat(LINK_TARGET.as_ptr(), dir.as_raw_fd(), name.as_ptr());
                return;
            }
        };
        if created {
            libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), DIR_MODE as libc::mode_t, 0);
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

/// Whether a symlink's content is a placeholder's (`LINK_TARGET`).
pub fn is_link_target(target: &[u8]) -> bool {
    target == LINK_TARGET.to_bytes()
}

/// Whether the symlink `name` in the directory `dir` leads to `LINK_TARGET` (or, with an empty
/// `name`, the symlink an `O_PATH | O_NOFOLLOW` descriptor `dir` is open on).
pub fn links_to_target(dir: std::os::unix::io::RawFd, name: &CStr) -> bool {
    let mut buf = [0u8; 64];
    // SAFETY: a descriptor of the caller's, a C string and a buffer of that length.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).is_ok_and(|n| is_link_target(&buf[..n]))
}

/// The type (`S_IFDIR`, `S_IFREG`, `S_IFLNK`) of the placeholder at `name` in `dir` (this user's),
/// `None` when there is none.
pub fn placeholder_at(dir: &OwnedFd, name: &CStr) -> Option<libc::mode_t> {
    let st = crate::stat_at::stat_at(dir.as_raw_fd(), name).ok()?;
    let fmt = st.st_mode & libc::S_IFMT;
    if fmt == libc::S_IFLNK {
        // SAFETY: geteuid has no preconditions.
        return (st.st_uid == unsafe { libc::geteuid() } && links_to_target(dir.as_raw_fd(), name)).then_some(fmt);
    }
    // `mode_t` is 32 bits on Linux, 16 on macOS.
    #[allow(clippy::unnecessary_cast)]
    is_placeholder(st.st_mode as u32, st.st_uid, fmt == libc::S_IFDIR, fmt == libc::S_IFREG, st.st_size as u64).then_some(fmt)
}

/// Remove `name` in `dir` if it is a placeholder of `kind`, never following a symlink (`rmdir`
/// fails on a directory that is not empty). Call it only with the exclusive lock held.
pub fn remove_if_placeholder(dir: &OwnedFd, name: &CStr, kind: Kind) {
    let Some(fmt) = placeholder_at(dir, name) else { return };
    let flags = match (kind, fmt) {
        (Kind::Dir, libc::S_IFDIR) => libc::AT_REMOVEDIR,
        (Kind::File, libc::S_IFREG | libc::S_IFLNK) => 0,
        _ => return,
    };
    // SAFETY: a valid descriptor and C string.
    unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) };
}

/// Whether a sandbox still running a plan another program started uses `dir`: its bwrap's pid 1
/// holds a POSIX read lock on it for the sandbox's life (`--lock-file`, see the addon's
/// `plan::bwrap`), and keeps the directory open to hold it. Told by who holds it, not by the lock's
/// presence: any process that can open the directory can take such a lock. Only when the kernel
/// says a read lock is there, a plan's init must hold the directory itself open: the init of a pid
/// namespace below this process's (no sandboxed command can be one: every plan's filter refuses new
/// namespaces, and bwrap's pid 1 is its sandbox's), run from a bwrap. A lock whose holder this
/// process cannot see keeps the directory: the kernel gives its pid as 0 (found by flake41: a
/// cleanup in a pid namespace of its own, as reaping.test.js's Node as PID 1 or a container's
/// sandspawn sharing the host's `/tmp`, found no init in its `/proc`, removed a running plan's
/// placeholders under it, and so detached its covers: the command wrote the protected name on the
/// host, or the plan failed its setup); not one a process this one sees holds, whose locker has ended
/// (`locked_by_a_visible_process`). Left: such a holder behind a lock of a process this one sees
/// (the kernel names only the first conflicting lock).
///
/// The inits are found among the processes, not among the locks' owners in `/proc/locks`: each
/// read(2) of that file walks the machine's whole lock list from its head (a page of text a call,
/// under the kernel's global file-lock lock), quadratic in the locks of the machine, which a command
/// makes as many of as it likes (found by an attacker's review, kern31: a run that read-locked its
/// workspace's top and took 200,000 byte-range locks of its own kept this in one read of it, the
/// keeper's move of a planted `.envrc` for over a minute, at 19 s of the host's CPU). A process
/// costs one `readlink` of its `exe` here, and the bwraps among them a `status` and their few
/// descriptors.
#[cfg(target_os = "linux")]
pub fn held_by_a_plan(dir: &OwnedFd) -> bool {
    // SAFETY: a zeroed `struct flock` is valid; F_OFD_GETLK fills it in.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_WRLCK as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    // Tested, not taken: a directory cannot be opened for writing, so a write lock cannot be
    // requested on it, but the test reports whether any read lock would conflict with one.
    // SAFETY: a valid descriptor and flock buffer.
    if unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_OFD_GETLK, &mut l) } != 0 {
        return true; // cannot tell: keep the placeholders
    }
    if l.l_type == libc::F_UNLCK as libc::c_short {
        return false;
    }
    let Ok(st) = fstat(dir) else { return true };
    #[allow(clippy::unnecessary_cast)]
    let (dev, ino) = (st.st_dev as u64, st.st_ino as u64);
    // A POSIX lock of a process outside this one's pid namespace (an OFD lock's pid is -1), unless
    // a process this one sees holds it (see `locked_by_a_visible_process`).
    if l.l_pid == 0 && !ghost_locked_by_a_visible_process(dev, ino) {
        return true;
    }
    processes().any(|pid| is_a_plan_s_init(pid) && holds_open(pid, dev, ino))
}

/// The pids `/proc` lists (this process's pid namespace and those below it).
#[cfg(target_os = "linux")]
fn processes() -> impl Iterator<Item = u32> {
    let procs = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    procs.filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
}

/// How many descriptors `ghost_locked_by_a_visible_process` looks at, over all processes: past it the
/// lock is taken for an outside plan's (kept), the README's Limits.
#[cfg(target_os = "linux")]
const VISIBLE_LOCK_LOOKS: usize = 1 << 16;

/// Whether a process this one sees holds a POSIX lock on the directory (`dev`, `ino`) through a
/// descriptor of its own: the `lock:` lines of that descriptor's `fdinfo` name the locks of its
/// descriptor table there. The kernel gives a lock's owner as pid 0 when that owner is outside this
/// pid namespace, and also when the process that took it has ended while the descriptor table it
/// locked through lives on in another (`clone` with `CLONE_FILES`): its pid, freed, is found in no
/// namespace. A command forged such a lock on its workspace's top, and with sandspawn in a pid
/// namespace of its own (a container, CI's `unshare --pid`) the keeper left the `.envrc` it planted
/// on the host for the whole run (found by an attacker's review, rev42). Costs a `stat` of each
/// descriptor (at most `VISIBLE_LOCK_LOOKS` in all), and a read of the `fdinfo` of those open on the
/// directory (the kernel walks the inode's locks for it), only for a lock whose owner reads as pid 0.
///
/// Only such a ghost (`ghost_lock_line`: its owner reads pid 0 in its holder's `fdinfo` too), not
/// any lock a process this one sees holds there: any process that can read a directory may
/// read-lock it (a command of a run of this sandspawn's, in a container), and that lock, whose owner
/// reads as its live pid, made a running outside plan's pid-0 lock count for nothing: the cleanup
/// removed that plan's placeholders under its sandbox (found by an attacker's review, rev43).
#[cfg(target_os = "linux")]
fn ghost_locked_by_a_visible_process(dev: u64, ino: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut looks = 0usize;
    for pid in processes() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        for fd in fds.flatten() {
            looks += 1;
            if looks > VISIBLE_LOCK_LOOKS {
                return false;
            }
            if !std::fs::metadata(fd.path()).is_ok_and(|m| m.is_dir() && m.dev() == dev && m.ino() == ino) {
                continue;
            }
            let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy()));
            if info.is_ok_and(|i| i.lines().any(ghost_lock_line)) {
                return true;
            }
        }
    }
    false
}

/// Whether an `fdinfo` line is a POSIX lock whose owner reads as pid 0 (`lock:\t1: POSIX  ADVISORY
/// READ 0 00:2d:1234 0 EOF`: the pid follows the type): the descriptor table's own lock, taken by a
/// process that has ended (the `fdinfo` shows its holder's locks only). A live locker reads as its pid.
#[cfg(target_os = "linux")]
fn ghost_lock_line(line: &str) -> bool {
    line.strip_prefix("lock:").and_then(posix_lock).is_some_and(|(_, owner)| owner == "0")
}

/// The type (`READ`, `WRITE`) and the owner's pid of a held POSIX lock, as a `/proc/locks` line
/// (and an `fdinfo`'s `lock:` line past its prefix) shows it: `1: POSIX  ADVISORY  READ 1
/// fe:00:2015234 0 EOF`; `None` for another kind of lock, and for a waiter's line (`->`).
fn posix_lock(line: &str) -> Option<(&str, &str)> {
    if line.contains("->") {
        return None;
    }
    let f: Vec<&str> = line.split_whitespace().collect();
    (f.len() >= 5 && f[1] == "POSIX").then(|| (f[3], f[4]))
}

/// Plans hold no directory where placeholders are not made (macOS: the profile denies instead).
#[cfg(not(target_os = "linux"))]
pub fn held_by_a_plan(_dir: &OwnedFd) -> bool {
    false
}

/// Whether `pid` is the init of a pid namespace below this process's (its `NSpid` has more than one
/// level and ends in 1) and runs a bwrap (the system's `bwrap` or the bundled `sandspawn-bwrap`).
/// The program first: one `readlink`, and most processes are no bwrap. A program whose file was
/// replaced while it runs (a package upgrade of bubblewrap, or of sandspawn's bundled copy) reads
/// `.../bwrap (deleted)` there: still a plan's (found by an attacker's review, fix32: the live
/// sandbox's directory counted as held by nobody, and a cleanup detached its placeholders' covers).
#[cfg(target_os = "linux")]
fn is_a_plan_s_init(pid: u32) -> bool {
    let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else { return false };
    if !exe.file_name().is_some_and(|n| runs_a_bwrap(n.as_encoded_bytes())) {
        return false;
    }
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| ns_init(&status))
}

/// Whether a program's file name, as `/proc/PID/exe` ends, is a bwrap's (the system's `bwrap`, the
/// bundled `sandspawn-bwrap`), its file removed or replaced since it started or not.
pub fn runs_a_bwrap(name: &[u8]) -> bool {
    name.strip_suffix(b" (deleted)").unwrap_or(name).ends_with(b"bwrap")
}

/// From a `/proc/<pid>/status`: the process is pid 1 of a pid namespace nested in the reader's.
pub fn ns_init(status: &str) -> bool {
    let Some(line) = status.lines().find_map(|l| l.strip_prefix("NSpid:")) else { return false };
    let levels: Vec<&str> = line.split_whitespace().collect();
    levels.len() >= 2 && levels.last() == Some(&"1")
}

/// Whether `pid` has the directory (`dev`, `ino`, as `fstat` gives them) open.
#[cfg(target_os = "linux")]
fn holds_open(pid: u32, dev: u64, ino: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    // bwrap's pid 1 keeps a few descriptors; bounded all the same.
    fds.flatten().take(4096).any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| m.is_dir() && m.dev() == dev && m.ino() == ino))
}

/// The locks pid 1 (bwrap's init, this process's parent) holds, as `/proc/locks` lines: the
/// `lock:` lines of its descriptors' `fdinfo` (each lists the locks its owner holds on that open
/// file's inode, the inode's own list walked, not the machine's). `None` where they cannot be read.
#[cfg(target_os = "linux")]
pub fn init_s_locks() -> Option<String> {
    let mut locks = String::new();
    for entry in std::fs::read_dir("/proc/1/fdinfo").ok()?.flatten() {
        let Ok(info) = std::fs::read_to_string(entry.path()) else { continue };
        locks.extend(info.lines().filter_map(|l| l.strip_prefix("lock:")).flat_map(|l| [l.trim_start(), "\n"]));
    }
    Some(locks)
}

/// How many POSIX read locks the process with this pid holds, from `/proc/locks` as this process's
/// pid namespace shows it: the helper inside waits until bwrap's pid 1 holds all of them before it
/// lets go of the directories' `flock`s (see the helper's `--await-init-locks`).
pub fn posix_read_locks_of(locks: &str, pid: u32) -> usize {
    locks.lines().filter_map(posix_lock).filter(|(kind, owner)| *kind == "READ" && owner.parse::<u32>() == Ok(pid)).count()
}

/// A placeholder's name as the protocol carries it: one path component.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rev43: only a lock whose owner reads pid 0 in its holder's `fdinfo` is a ghost; a live
    /// locker's (any process may read-lock a directory) is not, nor an OFD lock's (-1).
    #[cfg(target_os = "linux")]
    #[test]
    fn only_a_lock_owned_by_pid_0_is_a_ghost() {
        assert!(ghost_lock_line("lock:\t1: POSIX  ADVISORY  READ 0 00:2d:1234 0 EOF"));
        assert!(ghost_lock_line("lock:\t1: POSIX  ADVISORY  WRITE 0 fd:01:99 0 EOF"));
        assert!(!ghost_lock_line("lock:\t1: POSIX  ADVISORY  READ 4242 00:2d:1234 0 EOF"));
        assert!(!ghost_lock_line("lock:\t1: POSIX  ADVISORY  READ 10 00:2d:1234 0 EOF"));
        assert!(!ghost_lock_line("lock:\t1: OFDLCK ADVISORY  READ -1 00:2d:1234 0 EOF"));
        assert!(!ghost_lock_line("lock:\t1: FLOCK  ADVISORY  WRITE 0 00:2d:1234 0 EOF"));
        assert!(!ghost_lock_line("pos:\t0"));
    }

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
        // As pid 1's fdinfo shows them, past the `lock:` prefix.
        assert_eq!(posix_read_locks_of("1: POSIX  ADVISORY  READ 1 fe:00:10064546 0 EOF\n", 1), 1);
    }

    #[test]
    fn a_bwrap_is_told_by_its_program_s_name_replaced_or_not() {
        assert!(runs_a_bwrap(b"bwrap") && runs_a_bwrap(b"sandspawn-bwrap"));
        assert!(runs_a_bwrap(b"bwrap (deleted)"), "its file replaced by an upgrade");
        assert!(!runs_a_bwrap(b"sh") && !runs_a_bwrap(b"bwrap.sh") && !runs_a_bwrap(b"sh (deleted)"));
    }

    #[test]
    fn only_the_init_of_a_nested_pid_namespace_is_one() {
        assert!(ns_init("Name:\tbwrap\nNSpid:\t5123\t1\n"));
        assert!(ns_init("NSpid:\t5123\t40\t1\n"));
        assert!(!ns_init("NSpid:\t5124\t2\n"), "the command in a sandbox");
        assert!(!ns_init("NSpid:\t1\n"), "this namespace's own init");
        assert!(!ns_init("NSpid:\t5124\t1\t3\n"));
        assert!(!ns_init("Name:\tx\n"));
    }
}
