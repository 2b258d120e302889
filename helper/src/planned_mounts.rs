//! Inside bwrap, before anything relies on its mounts: every writable mount the plan asked bwrap
//! for (the writable roots and the pins, `--writable-at`) is where the plan put it and holds the
//! directory the plan named, and the working directory is the one planned (`--cwd-at`).
//!
//! Why: bwrap binds by path and follows symlinks in a bind's source and destination (and in its
//! `--chdir`). A concurrent run that swapped a directory on a root's path for a link between the
//! host's plan and bwrap's bind had the link's target bound writable, any directory of the host
//! (found by an attacker's review, race18: the user's home, to plant `~/.bashrc`), which the
//! deny-list of `kernel_mounts` took for an ordinary directory. So each planned path is opened from
//! `/` without following a symlink (`no_symlinks`), and must be the top of a mount of its own (not
//! a directory inside one), writable, whose directory has the device and inode the host took when
//! it resolved the policy. A bind that went elsewhere leaves the planned path without such a mount.
//! Any mismatch stops the run before the command as a changed workspace (`Stage::Changed`): the
//! runner plans again from the paths resolved again, and fails the run if it keeps changing.
//!
//! A few system calls per path (`openat2`, `fstat`, `statx`), and the mount table bwrap left, read
//! once for `kernel_mounts` too.

use std::collections::HashSet;
use std::os::fd::{AsRawFd, OwnedFd};

use sandspawn_helper::mount_root::mount_of;
use sandspawn_helper::mountinfo;
use sandspawn_helper::no_symlinks;
use sandspawn_helper::protocol::Planned;
use sandspawn_helper::report::{changed, setup, Failure};

use crate::{describe, last_errno};

/// Check every planned writable mount against the sandbox's mount table (`table`, as bwrap left
/// it), then enter the planned working directory.
pub fn check(writable: &[Planned], cwd: Option<&Planned>, table: &[u8]) -> Result<(), Failure> {
    if !writable.is_empty() {
        let table = mountinfo::text(table);
        // The mounts writable of their own (`rw` in the mount's options, not the filesystem's: a
        // root on a read-only filesystem is bound writable all the same, and a mount bwrap made
        // read-only, the copy of a host's mount point under its read-only `/`, is not).
        let rw: HashSet<&str> = mountinfo::mounts(&table).filter(|m| m.writable).map(|m| m.id).collect();
        for w in writable {
            check_mount(w, &rw)?;
        }
    }
    cwd.map_or(Ok(()), enter)
}

/// `w` is the top of a writable mount of its own, of the planned directory.
fn check_mount(w: &Planned, rw: &HashSet<&str>) -> Result<(), Failure> {
    let path = w.path.display();
    let fd = open(w, "the writable mount at")?;
    let found = identity(&fd, &path)?;
    let (mount, own) = mount_of(fd.as_raw_fd()).map_err(|e| setup(e, format!("telling the mount of {path} failed: {}", describe(e))))?;
    let writable = rw.contains(mount.to_string().as_str());
    if Some(found) == w.id && own && writable {
        return Ok(());
    }
    let what = match (Some(found) == w.id, own) {
        (false, _) => format!("another directory ({}:{}, planned {})", found.0, found.1, planned(w)),
        (true, false) => "the planned directory, but not as a mount of its own".to_string(),
        (true, true) => "the planned directory, but read-only".to_string(),
    };
    Err(changed(
        libc::EXDEV,
        format!("the writable mount at {path} holds {what}: a directory on its path was replaced since the sandbox was planned, and bwrap bound it elsewhere; refused"),
    ))
}

/// Enter the planned working directory again, by its path without links: bwrap's `--chdir`
/// followed them.
fn enter(cwd: &Planned) -> Result<(), Failure> {
    let path = cwd.path.display();
    let fd = open(cwd, "the working directory")?;
    let found = identity(&fd, &path)?;
    if Some(found) != cwd.id {
        return Err(changed(libc::EXDEV, format!("the working directory {path} is another directory ({}:{}, planned {}): it was replaced since the sandbox was planned; refused", found.0, found.1, planned(cwd))));
    }
    // SAFETY: a directory descriptor of ours (`fchdir` takes an `O_PATH` one).
    if unsafe { libc::fchdir(fd.as_raw_fd()) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("entering the working directory {path} failed: {}", describe(e))));
    }
    Ok(())
}

/// `p` opened without following a symlink: a link on its path (or a path gone) now means a
/// directory on it was replaced since the plan.
fn open(p: &Planned, what: &str) -> Result<OwnedFd, Failure> {
    no_symlinks::open(&p.path, libc::O_PATH | libc::O_DIRECTORY).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        let message = format!("opening {what} {} without following a link failed: {}", p.path.display(), describe(errno));
        match errno {
            libc::ELOOP | libc::ENOENT | libc::ENOTDIR => changed(errno, format!("{message} (a directory on its path was replaced since the sandbox was planned)")),
            _ => setup(errno, message),
        }
    })
}

/// The device and inode of `fd` (`path` names it in a failure).
pub(crate) fn identity(fd: &OwnedFd, path: &impl std::fmt::Display) -> Result<(u64, u64), Failure> {
    // SAFETY: a zeroed stat buffer is valid; `fd` is open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("reading {path} failed: {}", describe(e))));
    }
    Ok((st.st_dev, st.st_ino))
}

fn planned(p: &Planned) -> String {
    p.id.map_or_else(|| "none".to_string(), |(dev, ino)| format!("{dev}:{ino}"))
}
