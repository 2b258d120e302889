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
//! found there by the name the host gave it, opened through a read-only copy with the original's
//! access mode and flags (`device_copy`), and put over the original (`dup2`). The bind is then
//! detached, before the command exists: it never sees the host's `/dev`.
//!
//! Block devices too. A device another uid owns, or whose name is gone, is left as it is when it
//! cannot be reopened: the command cannot change its mode either. The new open file keeps the
//! original's status flags and starts at its offset, which is its own from then on: what the
//! command reads or writes no longer moves the caller's offset (a block device given past its
//! header; an open file's offset cannot be shared with another).
//!
//! `/dev/tty` and a pty's master cannot be opened again by their name (the first opens the
//! opener's controlling terminal, the second makes a new terminal): `stdio_terminals` opens the
//! terminal behind `/dev/tty` by its number instead, and refuses a master the command could change
//! (leaves another uid's as given) before any attempt to reopen it. Any other character
//! device the bind does not hold (the name the host gave it is not under `/dev`, or leads to
//! another inode there), or that cannot be opened again (a tty another session holds
//! exclusively), fails setup: the run never gets a host device it could change. Pipes and sockets
//! (pipefs, sockfs: no path anyone could open) and regular files (the caller's own, given on
//! purpose) are left as they are.

use sandspawn_helper::report::{setup, Failure};

use crate::describe;
use crate::device_copy::{fstat, open_again, put_over};

/// Reopen each inherited descriptor on a character device through a read-only mount of the
/// host's `/dev` bound at `dir`, and each pipe as an open file of its own (`stdio_pipes`), then
/// detach `dir`.
pub fn reopen_all(dir: &str) -> Result<(), Failure> {
    crate::device_copy::collect_spent();
    for fd in inherited()? {
        let Some(st) = fstat(fd) else { continue };
        if st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            crate::stdio_pipes::reopen(fd, &st)?;
            continue;
        }
        if !matches!(st.st_mode & libc::S_IFMT, libc::S_IFCHR | libc::S_IFBLK) {
            continue;
        }
        // A pty's master: never opened again (that would make a new terminal), refused or left.
        if let Some(master) = crate::stdio_terminals::master(fd, &st) {
            master?;
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
            // The command could change it: `/dev/tty` as root.
            Err(failure) => crate::stdio_terminals::instead(fd, &st, dir).unwrap_or(Err(failure))?,
        }
    }
    // The read-only copies, detached with the bind (one grace period waited for, not one each).
    crate::device_copy::park_spent();
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

/// `fd` (a device, `st`) opened again through a read-only mount, at the same number.
fn reopen(fd: i32, st: &libc::stat, dir: &str) -> Result<(), Failure> {
    let name = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
    let shown = name.display().to_string();
    let refused = |(errno, why): (i32, String)| setup(errno, format!("descriptor {fd} is the host's device {shown}, which the command could change the mode of: {why}"));
    // The name the host's mount namespace gives it: the same entry in the bind of its `/dev`.
    let rel = name.strip_prefix("/dev").ok().filter(|r| !r.as_os_str().is_empty());
    let rel = rel.ok_or_else(|| refused((libc::EXDEV, "not under /dev, so it cannot be opened again read-only".into())))?;
    let same = |s: &libc::stat| (s.st_dev, s.st_ino, s.st_rdev) == (st.st_dev, st.st_ino, st.st_rdev);
    let new = open_again(fd, &std::path::Path::new(dir).join(rel), &same).map_err(refused)?;
    put_over(new, fd).map_err(refused)
}
