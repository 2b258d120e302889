//! Terminals among the command's stdio that the name the host gave them cannot open again, for
//! `stdio_devices`, when the command could change the host's device through them as given (it owns
//! them: a run as root).
//!
//! `/dev/tty` opens the opener's controlling terminal, and the helper has none (bwrap makes a new
//! session): as root every run whose stdin was `/dev/tty` (a git hook's `exec < /dev/tty`) failed
//! setup (found by a review, /work/atk/fixes17b/devtty.sh). Left as given, the command could change
//! the mode of the host's `/dev/tty` (`chmod /proc/self/fd/0`), every user's way to their terminal.
//! The kernel says which terminal lies behind it (TIOCGDEV, a device number); the entry of that
//! number in the bind of the host's `/dev` (`pts/N`, or at its top: `tty1`, `ttyS0`) is opened
//! through the read-only copy as any other device (`device_copy`), and put in place once it proved
//! to be that very terminal (`same_terminal`): a number names a terminal only within one devpts
//! instance, and a caller's controlling terminal can come from another than its `/dev/pts` (a
//! container attached to from outside). The command then has the terminal itself, which reads,
//! writes and takes ioctls as `/dev/tty` did.
//!
//! A pty's master has no name of its own: every open of `/dev/ptmx` (or of `/dev/pts/ptmx`, the
//! entry in the devpts mount itself) makes a new terminal, so it cannot be opened again, and as
//! given the command could change the mode of the host's ptmx entry (every user's way to a new
//! terminal). Refused, naming the descriptor and what to give instead (ptmx0.py of the same
//! review). For any other user both are root's and left as given.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use sandspawn_helper::report::{setup, Failure};
use sandspawn_helper::terminal_identity::{is_master, same_terminal};

use crate::device_copy::{open_again, put_over};
use crate::{describe, last_errno};

/// `/dev/tty`'s device number.
const DEV_TTY: (u32, u32) = (5, 0);
/// `/dev/ptmx`'s, and so every pty master's: the file of a master is the ptmx entry it came from.
const PTMX: (u32, u32) = (5, 2);

/// What becomes of `fd` (a device, `st`) if it is a pty's master, which is never opened again:
/// `None` when it is not one. Asked before any reopening: `/dev/pts/ptmx` opens (and makes a new
/// terminal) where `/dev/ptmx` fails, the same entry by device and inode, so the command silently
/// read a new, empty pty of the host's instead of the one given (found by a review,
/// /work/atk/fixes18/ptsptmx.py; containers make `/dev/ptmx` a symlink to it).
pub fn master(fd: i32, st: &libc::stat) -> Option<Result<(), Failure>> {
    let char_device = st.st_mode & libc::S_IFMT == libc::S_IFCHR;
    if !char_device || !(number(st.st_rdev) == PTMX || is_master(fd)) {
        return None;
    }
    // Another uid's (root's, for any other user): the command cannot change its mode either.
    // SAFETY: getuid cannot fail.
    if st.st_uid != unsafe { libc::getuid() } {
        return Some(Ok(()));
    }
    let name = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
    Some(Err(setup(
        libc::EPERM,
        format!(
            "descriptor {fd} is the master side of a pseudo-terminal ({}), which cannot be opened again (every open of /dev/ptmx or /dev/pts/ptmx makes a new terminal) and through which the command could change the mode of the host's device: give the command a pipe instead (and relay the master through it)",
            name.display()
        ),
    )))
}

/// What becomes of `fd` (a device, `st`, not a pty's master) that its name did not open again:
/// `None` when it is not `/dev/tty` (the caller's failure stands).
pub fn instead(fd: i32, st: &libc::stat, dir: &str) -> Option<Result<(), Failure>> {
    if st.st_mode & libc::S_IFMT != libc::S_IFCHR || number(st.st_rdev) != DEV_TTY {
        return None;
    }
    let refused = |(errno, why): (i32, String)| {
        setup(errno, format!("descriptor {fd} is the host's /dev/tty, through which the command could change its mode, and the terminal behind it cannot be opened instead: {why}; give the command the terminal by its name (`< $(tty)`) or a pipe instead"))
    };
    Some(behind_dev_tty(fd, dir).map_err(refused))
}

fn number(dev: libc::dev_t) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// The terminal behind `fd` (a `/dev/tty` descriptor) opened through the read-only copy, over `fd`.
fn behind_dev_tty(fd: i32, dir: &str) -> Result<(), (i32, String)> {
    let mut encoded: libc::c_uint = 0;
    // SAFETY: TIOCGDEV writes one unsigned int (the device number, encoded as stat's st_rdev is).
    if unsafe { libc::ioctl(fd, libc::TIOCGDEV, &mut encoded) } != 0 {
        let e = last_errno();
        return Err((e, format!("which terminal it is cannot be told ({})", describe(e))));
    }
    let dev = number(encoded as libc::dev_t);
    let path = named(dir, dev).ok_or_else(|| (libc::ENOENT, format!("no device {}:{} in the host's /dev", dev.0, dev.1)))?;
    let same = |s: &libc::stat| s.st_mode & libc::S_IFMT == libc::S_IFCHR && number(s.st_rdev) == dev;
    let new = open_again(fd, &path, &same)?;
    if !same_terminal(fd, new.as_raw_fd()) {
        return Err((libc::EXDEV, format!("{} in the host's /dev is another terminal of that number", path.strip_prefix(dir).unwrap_or(&path).display())));
    }
    put_over(new, fd)
}

/// The character device `dev` in the bind of the host's /dev at `dir`: in `pts/`, or at its top.
fn named(dir: &str, dev: (u32, u32)) -> Option<PathBuf> {
    let entries = ["pts", ""].into_iter().flat_map(|sub| std::fs::read_dir(Path::new(dir).join(sub)).into_iter().flatten().flatten());
    entries.map(|e| e.path()).find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device() && number(m.rdev()) == dev))
}
