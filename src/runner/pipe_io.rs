//! Non-blocking pipe I/O on the tokio reactor: the readers that drain stdout/stderr to EOF (so the
//! child never blocks on a full pipe) and the stdin writer.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::output::{Capture, Stream};
use super::sink::OutputSink;

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

/// Read a pipe until EOF, or until `stop` is set and the pipe is empty (a grandchild that escaped
/// the tree may hold the write end forever; data already in the pipe is still read). Each read is
/// handed to `on_data`; the future it returns is awaited before reading on (backpressure).
pub(super) async fn read_loop<F, Fut>(fd: AsyncFd<OwnedFd>, mut stop: watch::Receiver<bool>, buf_size: usize, mut on_data: F)
where
    F: FnMut(&[u8]) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut buf = vec![0u8; buf_size];
    loop {
        match read_once(fd.get_ref(), &mut buf) {
            Ok(0) => return,
            Ok(n) => on_data(&buf[..n]).await,
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

/// Pump one output stream into the capture and the sink.
pub async fn pump(
    fd: AsyncFd<OwnedFd>,
    stream: Stream,
    capture: Arc<Mutex<Capture>>,
    sink: Option<Arc<dyn OutputSink>>,
    stop: watch::Receiver<bool>,
) {
    read_loop(fd, stop, 64 * 1024, |data| {
        capture.lock().unwrap().push(stream, data);
        // The sink copies what it keeps before returning, so its future does not borrow `data`.
        let pending = sink.as_ref().map(|s| s.chunk(stream, data));
        async move {
            if let Some(p) = pending {
                p.await;
            }
        }
    })
    .await
}

/// Read a small control pipe (bwrap's status) until EOF or `stop`, handing each read to `on_data`.
pub async fn read_all(fd: AsyncFd<OwnedFd>, stop: watch::Receiver<bool>, mut on_data: impl FnMut(&[u8]) + Send) {
    read_loop(fd, stop, 4096, |data| {
        on_data(data);
        std::future::ready(())
    })
    .await
}

/// Write all of `data` to a non-blocking pipe or terminal master. `BrokenPipe` means the command's
/// input is gone: the pipe's reader closed it (EPIPE), the terminal's slave side is closed (a
/// hang-up), or `stop` turned true (the run ended) while the write waited for room.
pub async fn write_all(fd: &AsyncFd<OwnedFd>, mut data: &[u8], mut stop: watch::Receiver<bool>) -> io::Result<()> {
    while !data.is_empty() {
        if *stop.borrow_and_update() {
            return Err(closed("the run has ended"));
        }
        let n = unsafe { libc::write(fd.get_ref().as_raw_fd(), data.as_ptr().cast(), data.len()) };
        if n >= 0 {
            data = &data[n as usize..];
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => tokio::select! {
                guard = fd.writable() => {
                    let mut guard = guard?;
                    // A terminal master whose slave side is closed answers EAGAIN and reports a
                    // hang-up, never room. tokio keeps a hang-up as readiness that `clear_ready`
                    // does not clear, so waiting again returns at once: this loop spun a runtime
                    // thread forever (found by an attacker's review). Nothing written now would
                    // be read.
                    if guard.ready().is_write_closed() {
                        return Err(closed("the command's terminal was closed"));
                    }
                    guard.clear_ready();
                }
                // Re-checked at the top of the loop; a dropped sender means the run is gone too.
                changed = stop.changed() => if changed.is_err() { return Err(closed("the run has ended")) },
            },
            _ => return Err(e),
        }
    }
    Ok(())
}

fn closed(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, why.to_string())
}
