//! Non-blocking pipe I/O on the tokio reactor: the readers that drain stdout/stderr to EOF (so the
//! child never blocks on a full pipe) and the stdin writer.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::output::{Capture, Stream};
use super::OutputSink;

pub fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn async_fd(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    set_nonblocking(&fd)?;
    // SAFETY: an OwnedFd owns its descriptor, which stays open and unchanged until the AsyncFd
    // (which owns the OwnedFd) is dropped.
    unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)
}

fn read_once(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Read one pipe until EOF, or until `stop` is set and the pipe is empty (a grandchild that
/// escaped the tree may hold the write end forever; data already in the pipe is still read).
pub async fn pump(
    fd: AsyncFd<OwnedFd>,
    stream: Stream,
    capture: Arc<Mutex<Capture>>,
    sink: Option<Arc<dyn OutputSink>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match read_once(fd.get_ref(), &mut buf) {
            Ok(0) => return,
            Ok(n) => {
                capture.lock().unwrap().push(stream, &buf[..n]);
                if let Some(sink) = &sink {
                    sink.chunk(stream, &buf[..n]).await;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if *stop.borrow() {
                    return;
                }
                tokio::select! {
                    guard = fd.readable() => match guard {
                        Ok(mut g) => g.clear_ready(),
                        Err(_) => return,
                    },
                    changed = stop.changed() => if changed.is_err() { return },
                }
            }
            Err(_) => return,
        }
    }
}

/// Read a small control pipe (bwrap's status) until EOF or `stop`, handing each read to `on_data`.
pub async fn read_all(fd: AsyncFd<OwnedFd>, mut stop: watch::Receiver<bool>, mut on_data: impl FnMut(&[u8]) + Send) {
    let mut buf = [0u8; 4096];
    loop {
        match read_once(fd.get_ref(), &mut buf) {
            Ok(0) => return,
            Ok(n) => on_data(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if *stop.borrow() {
                    return;
                }
                tokio::select! {
                    guard = fd.readable() => match guard {
                        Ok(mut g) => g.clear_ready(),
                        Err(_) => return,
                    },
                    changed = stop.changed() => if changed.is_err() { return },
                }
            }
            Err(_) => return,
        }
    }
}

/// Write all of `data` to a non-blocking pipe. `BrokenPipe` means the child closed its stdin.
pub async fn write_all(fd: &AsyncFd<OwnedFd>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let n = unsafe { libc::write(fd.get_ref().as_raw_fd(), data.as_ptr().cast(), data.len()) };
        if n >= 0 {
            data = &data[n as usize..];
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => fd.writable().await?.clear_ready(),
            _ => return Err(e),
        }
    }
    Ok(())
}
