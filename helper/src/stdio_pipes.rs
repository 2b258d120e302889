//! Pipes among the command's stdio, each opened again as an open file of its own, for
//! `stdio_devices`: left as given, a pipe's status flags are those of the caller's open file, which
//! the caller shares with its other processes (a shell pipeline's next command, a CI log pipe,
//! `buildSandboxCommand` spawned with `stdio: 'inherit'`). The command's `fcntl(1, F_SETFL,
//! O_NONBLOCK)` outlived the run, and the next host writer into that pipe lost its output to EAGAIN
//! once the pipe was full (found by an attacker's review, kern30: `cat` wrote 61,485 of 3,000,000
//! bytes). Opened through `/proc/self/fd`, a pipe (or a FIFO) is the same pipe as a new open file,
//! whose status flags are the command's own; it starts with those the caller gave (not `O_ASYNC`,
//! whose signals go to an owner outside the sandbox, as for devices).
//!
//! A FIFO's write end whose readers are all gone cannot be opened again (opening it would wait for
//! one): it is left as given, the command's writes fail with EPIPE anyway. One among the stdio
//! (0, 1, 2) the helper may not open (another user's: a pipe's inode is its creator's, mode 0600)
//! fails setup, naming the descriptor: left as given, its flags were the caller's open file all
//! the same, and a root CI agent that ran a plan as another user with its own pipes as stdio had
//! the command's O_NONBLOCK on them after the run (found by an attacker's review, fix31). Another
//! user's pipe inherited past the stdio (a jobserver's) is left as given (README). A socket cannot
//! be opened again at all (README: not covered).
//!
//! The bwrap plans only (`--stdio-devices`): the Landlock supervisor leaves its stdio as given, as
//! no pipe of a caller's reaches it. `buildSandboxCommand` gives no Landlock plan, and the runner
//! gives each run pipes of its own whose other ends are open files of their own (checked by pipe30,
//! stdio-devices.test.js); reopening them there would cost three opens a run for nothing.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use sandspawn_helper::report::{setup, Failure};

use crate::device_copy::{fstat, put_over};

/// The status flags `F_SETFL` changes that the caller may have chosen (`O_DIRECT` is a pipe's
/// packet mode).
const GIVEN: i32 = libc::O_APPEND | libc::O_NONBLOCK | libc::O_DIRECT;

/// Opens the pipe at `fd` (of `st`) again and puts the new open file at `fd`, with the status
/// flags it was given; leaves it as given where it cannot, but for one it may not open (`refused`).
pub fn reopen(fd: i32, st: &libc::stat) -> Result<(), Failure> {
    // SAFETY: F_GETFL on an open descriptor.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl < 0 || fl & libc::O_PATH != 0 {
        return Ok(());
    }
    let new = match open_again(fd, fl & libc::O_ACCMODE) {
        Ok(new) => new,
        // Stdio only: another inherited descriptor (a jobserver's, a harness's) is no output a
        // caller shares by design, and refusing it failed runs for a pipe the command never uses.
        Err(errno) if (errno == libc::EACCES || errno == libc::EPERM) && (0..=2).contains(&fd) => return Err(refused(fd, st, errno)),
        Err(_) => return Ok(()),
    };
    let same = fstat(new.as_raw_fd()).is_some_and(|s| (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino));
    // SAFETY: F_SETFL on the descriptor just opened.
    if same && unsafe { libc::fcntl(new.as_raw_fd(), libc::F_SETFL, fl & GIVEN) } == 0 {
        // A failed dup2 leaves `fd` as given (nothing is lost but the separation).
        let _ = put_over(new, fd);
    }
    Ok(())
}

/// Why the pipe at `fd` fails setup: the command would share the caller's open file.
fn refused(fd: i32, st: &libc::stat, errno: i32) -> Failure {
    setup(
        errno,
        format!(
            "descriptor {fd} is a pipe of another user's (owner uid {} as the sandbox sees it), which the sandbox may not open again as an open file of its own: the command's status flags on it (O_NONBLOCK) would be the caller's open file, shared with the caller's other processes, and outlive the run; give the command a pipe its own user made (spawn the plan as that user with stdio 'pipe', and relay)",
            st.st_uid
        ),
    )
}

/// `/proc/self/fd/FD` opened with `access`, never waiting (a FIFO's open waits for the other end
/// otherwise: a write end with no reader fails with ENXIO instead), or the errno of its failure.
fn open_again(fd: i32, access: i32) -> Result<OwnedFd, i32> {
    let path = CString::new(format!("/proc/self/fd/{fd}")).map_err(|_| libc::EINVAL)?;
    // SAFETY: a valid C string.
    let new = unsafe { libc::open(path.as_ptr(), access | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if new < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
    }
    // SAFETY: a descriptor open just returned, owned from here.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}
