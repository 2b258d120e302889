//! One direction of a tunnel moved by the kernel (Linux `splice(2)`): socket → pipe → socket, so
//! the bytes never enter this process (no copy into a buffer of ours and out again). On loopback
//! that halves the copies the proxy adds, and the CPU it spends per gigabyte (bench/network.js).
//!
//! A pipe is two more of the host's descriptors, so a direction takes one only once bytes arrive
//! (idle tunnels hold none), and only while one of the run's `PIPES_PER_RUN` is free; without one
//! it copies through a buffer of ours instead.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use std::sync::Arc;

use tokio::io::Interest;
use tokio::sync::Semaphore;
use tokio::net::TcpStream;

/// The pipe between the two sockets: larger pipes mean fewer system calls per gigabyte. Best
/// effort (a user over the kernel's pipe budget keeps the default 64 KiB).
const PIPE_BYTES: usize = 1 << 20;

/// Directions of one run that may hold a pipe at once (two descriptors each).
pub const PIPES_PER_RUN: usize = 32;

/// A pipe for one direction, `(read end, write end)`, both non-blocking.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES as libc::c_int) };
    Ok((r, w))
}

fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    let n = unsafe { libc::splice(from, std::ptr::null_mut(), to, std::ptr::null_mut(), len, libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Move bytes from `src` to `dst` until `src` ends (then `dst`'s write half is shut down) or
/// either fails. `moved` is called after every read that brought bytes (the idle watchdog).
pub async fn pump(src: &TcpStream, dst: &TcpStream, pipes: &Arc<Semaphore>, moved: impl Fn()) -> io::Result<()> {
    src.readable().await?;
    if let Ok(_slot) = pipes.clone().try_acquire_owned() {
        if let Ok(pipe) = self::pipe() {
            return spliced(src, dst, pipe, &moved).await;
        }
    }
    copied(src, dst, &moved).await
}

async fn spliced(src: &TcpStream, dst: &TcpStream, pipe: (OwnedFd, OwnedFd), moved: &impl Fn()) -> io::Result<()> {
    let (pr, pw) = pipe;
    loop {
        let mut in_pipe = loop {
            src.readable().await?;
            match src.try_io(Interest::READABLE, || splice(src.as_raw_fd(), pw.as_raw_fd(), PIPE_BYTES)) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        };
        if in_pipe == 0 {
            return shut_write(dst);
        }
        moved();
        while in_pipe > 0 {
            dst.writable().await?;
            match dst.try_io(Interest::WRITABLE, || splice(pr.as_raw_fd(), dst.as_raw_fd(), in_pipe)) {
                Ok(n) => in_pipe -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}


fn shut_write(s: &TcpStream) -> io::Result<()> {
    nix::sys::socket::shutdown(s.as_raw_fd(), nix::sys::socket::Shutdown::Write).map_err(io::Error::from)
}

/// The same through a buffer of ours (no pipe to be had).
async fn copied(src: &TcpStream, dst: &TcpStream, moved: &impl Fn()) -> io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        src.readable().await?;
        let n = match src.try_read(&mut buf) {
            Ok(0) => return shut_write(dst),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        moved();
        let mut off = 0;
        while off < n {
            dst.writable().await?;
            match dst.try_write(&buf[off..n]) {
                Ok(k) => off += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}
