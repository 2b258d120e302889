//! The host half of the bridge: a socket pair whose child end the runner passes into the sandbox
//! (the helper's `--net-listen=FD`), and receiving the listeners the helper sends back on it.
//!
//! The helper sends one message `v1 port=P` with the listening sockets as SCM_RIGHTS. End of file
//! instead means the helper stopped before (its report says why); the run then has no proxy, and
//! the command never ran.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{getsockopt, recvmsg, sockopt, ControlMessageOwned};
use tokio::io::unix::AsyncFd;

use crate::runner::cloexec;

/// `(ours, child's)`, both close-on-exec and numbered at or above `min_fd` (the child's is dup2'ed
/// to its target by the spawn, which clears close-on-exec there only).
#[cfg(target_os = "linux")]
pub fn socket_pair(min_fd: RawFd) -> io::Result<(OwnedFd, OwnedFd)> {
    use crate::runner::spawn::lift_above;
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    let (a, b) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK)?;
    Ok((lift_above(a, min_fd)?, lift_above(b, min_fd)?))
}

/// The bridge's other half is the helper's `--net-listen` step inside bwrap, so only Linux plans
/// ask for it: on macOS the proxy listens on the host's loopback (`loopback`), and `AF_UNIX` has
/// no `SOCK_SEQPACKET` there either.
#[cfg(not(target_os = "linux"))]
pub fn socket_pair(_min_fd: RawFd) -> io::Result<(OwnedFd, OwnedFd)> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "the network allow-list's bridge exists only on Linux"))
}

/// The listeners the helper sent, as tokio listeners; `Ok(None)` when it sent nothing (EOF).
pub async fn receive(ours: OwnedFd) -> io::Result<Option<Vec<tokio::net::TcpListener>>> {
    // SAFETY: `ours` is owned here and moved into the AsyncFd, which closes it when dropped.
    let afd = unsafe { AsyncFd::register(ours) }.map_err(io::Error::from)?;
    loop {
        let mut guard = afd.readable().await?;
        match guard.try_io(|fd| recv_once(fd.get_ref().as_raw_fd())) {
            Ok(result) => return result,
            Err(_would_block) => continue,
        }
    }
}

fn recv_once(fd: RawFd) -> io::Result<Option<Vec<tokio::net::TcpListener>>> {
    let mut buf = [0u8; 64];
    let mut iov = [io::IoSliceMut::new(&mut buf)];
    let mut space = nix::cmsg_space!([RawFd; 4]);
    let msg = recvmsg::<()>(fd, &mut iov, Some(&mut space), cloexec::RECVMSG_FLAGS)?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for c in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(received) = c {
            fds.extend(received.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
        }
    }
    for fd in &fds {
        cloexec::received(fd)?;
    }
    let len = msg.bytes;
    if len == 0 && fds.is_empty() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&buf[..len]);
    if !text.starts_with("v1 port=") || fds.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("unexpected message from the helper: {text:?}")));
    }
    let mut listeners = Vec::new();
    for fd in fds {
        // Only listening TCP sockets are served; anything else is closed (dropped) here.
        if !getsockopt(&fd, sockopt::AcceptConn).unwrap_or(false) {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "the helper sent a descriptor that is not a listening socket"));
        }
        let std_listener = std::net::TcpListener::from(fd);
        std_listener.set_nonblocking(true)?;
        listeners.push(tokio::net::TcpListener::from_std(std_listener)?);
    }
    Ok(Some(listeners))
}
