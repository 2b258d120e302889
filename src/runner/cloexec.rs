//! The runner's own descriptors (its pipes, and the listeners the network bridge receives) are
//! close-on-exec, so no child but the one a pipe end is dup2'ed into gets them.
//!
//! Linux creates them so in the same call (`pipe2(O_CLOEXEC)`, `MSG_CMSG_CLOEXEC`).
//! macOS has none of these flags, so there the flag is set with `fcntl` right after the call. In
//! that short window only a child spawned meanwhile by some other code in the host (another
//! thread's fork and exec) could inherit the descriptor: the runner's own spawns cannot, since on
//! macOS `spawn` sets POSIX_SPAWN_CLOEXEC_DEFAULT and the child gets only the descriptors its file
//! actions name.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::sys::socket::MsgFlags;

/// A pipe `(read, write)`, both ends close-on-exec.
#[cfg(target_os = "linux")]
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)
}

/// A pipe `(read, write)`, both ends close-on-exec.
#[cfg(not(target_os = "linux"))]
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe().map_err(io::Error::from)?;
    set_cloexec(&r)?;
    set_cloexec(&w)?;
    Ok((r, w))
}

/// The `recvmsg` flags under which descriptors arrive close-on-exec; see `received`.
#[cfg(target_os = "linux")]
pub const RECVMSG_FLAGS: MsgFlags = MsgFlags::MSG_CMSG_CLOEXEC;
#[cfg(not(target_os = "linux"))]
pub const RECVMSG_FLAGS: MsgFlags = MsgFlags::empty();

/// Call on each descriptor `recvmsg` (with `RECVMSG_FLAGS`) has just received: on macOS it marks
/// it close-on-exec; on Linux the flag already did.
pub fn received(fd: &OwnedFd) -> io::Result<()> {
    if cfg!(target_os = "linux") {
        Ok(())
    } else {
        set_cloexec(fd)
    }
}

fn set_cloexec(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_cloexec(fd: &OwnedFd) -> bool {
        (unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) }) & libc::FD_CLOEXEC != 0
    }

    #[test]
    fn both_ends_of_a_pipe_are_close_on_exec() {
        let (r, w) = pipe().unwrap();
        assert!(is_cloexec(&r) && is_cloexec(&w));
    }
}
