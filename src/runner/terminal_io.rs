//! The runner's side of a pseudo-terminal: who gets which end, pumping the master into the capture
//! (with `pause()` as real backpressure: the master is not read while paused, so the command blocks
//! on a full terminal), and the controls `SandboxedProcess` exposes (resize, pause, read).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::output::{Capture, Stream};
use super::pipe_io::read_loop;
use super::spawn::{lift_above, ChildFd};
use super::sink::OutputSink;
use crate::error::{Result, SandboxError};
use crate::pty::{PtySize, Terminal, Unread};

/// What `SandboxedProcess` can do to a run's terminal. Shared between the handle and the driver.
pub struct TerminalControls {
    /// A copy of the master for `resize()`: present while the run lasts, closed when it ends.
    master: Mutex<Option<OwnedFd>>,
    size: Mutex<PtySize>,
    paused: watch::Sender<bool>,
    /// The command has exited: from now on the master is read to its end, paused or not.
    exited: std::sync::atomic::AtomicBool,
    pub unread: Unread,
}

impl TerminalControls {
    pub fn new(size: PtySize, unread_limit: usize) -> Self {
        TerminalControls { master: Mutex::new(None), size: Mutex::new(size), paused: watch::channel(false).0, exited: Default::default(), unread: Unread::new(unread_limit) }
    }

    /// The current window size (`SpawnResult.pty`).
    pub fn size(&self) -> PtySize {
        *self.size.lock().unwrap()
    }

    /// Set the window size; the command's foreground job gets SIGWINCH. After the run: a no-op.
    pub fn resize(&self, size: PtySize) -> Result<()> {
        let master = self.master.lock().unwrap();
        if let Some(fd) = master.as_ref() {
            crate::pty::terminal::resize(fd, size).map_err(|e| SandboxError::new(crate::ErrorCode::SetupFailed, format!("resizing the terminal failed: {e}")))?;
        }
        *self.size.lock().unwrap() = size;
        Ok(())
    }

    pub fn set_paused(&self, paused: bool) {
        if !self.exited.load(std::sync::atomic::Ordering::SeqCst) {
            self.paused.send_replace(paused);
        }
    }

    /// The command has exited: drain what is left whatever `pause()` said, so `wait()` settles.
    pub fn command_exited(&self) {
        self.exited.store(true, std::sync::atomic::Ordering::SeqCst);
        self.paused.send_replace(false);
    }

    /// The run has ended: close the resize copy, and let readers see the end.
    pub fn finish(&self) {
        self.master.lock().unwrap().take();
        self.unread.end();
    }
}

/// One run's terminal, from open to spawn.
pub struct RunTerminal {
    master: OwnedFd,
    slave: OwnedFd,
    slave_path: CString,
}

impl RunTerminal {
    /// Open the pair; the slave sits above `min_fd` so no dup2 onto 0..=2 can clobber it.
    pub fn open(size: PtySize, min_fd: RawFd) -> Result<Self> {
        let t = Terminal::open(size)?;
        let slave = lift_above(t.slave, min_fd).map_err(|e| SandboxError::new(crate::ErrorCode::SetupFailed, format!("allocating a pseudo-terminal failed: {e}")))?;
        Ok(RunTerminal { master: t.master, slave, slave_path: t.slave_path })
    }

    /// Split into the master (ours), the slave (the child's; dropped right after the spawn, or
    /// the master would never report the end) and the slave's path.
    pub fn into_parts(self) -> (OwnedFd, OwnedFd, CString) {
        (self.master, self.slave, self.slave_path)
    }
}

/// A close-on-exec copy of a descriptor (the master: one for writing, one for resizing).
pub fn dup_cloexec(fd: &OwnedFd) -> io::Result<OwnedFd> {
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

impl TerminalControls {
    pub fn install(&self, master: OwnedFd) {
        *self.master.lock().unwrap() = Some(master);
    }
}

/// The stdio entries for a child on the terminal.
pub fn stdio<'a>(slave: &'a OwnedFd, path: &'a std::ffi::CStr, child_takes_it: bool) -> Vec<(RawFd, ChildFd<'a>)> {
    let first = if child_takes_it { ChildFd::ControllingTerminal(path) } else { ChildFd::Dup(slave) };
    vec![(0, first), (1, ChildFd::SameAs(0)), (2, ChildFd::SameAs(0))]
}

/// Read the master until EIO (every slave descriptor closed: the whole tree is gone) into the
/// capture (as stdout), the sink and the unread buffer. While paused, nothing more is read.
pub async fn pump_terminal(
    master: AsyncFd<OwnedFd>,
    capture: Arc<Mutex<Capture>>,
    sink: Option<Arc<dyn OutputSink>>,
    controls: Arc<TerminalControls>,
    stop: watch::Receiver<bool>,
) {
    let paused = controls.paused.subscribe();
    read_loop(master, stop, 64 * 1024, |data| {
        capture.lock().unwrap().push(Stream::Stdout, data);
        controls.unread.push(data);
        let pending = sink.as_ref().map(|s| s.chunk(Stream::Stdout, data));
        let mut paused = paused.clone();
        async move {
            if let Some(p) = pending {
                p.await;
            }
            let _ = paused.wait_for(|p| !*p).await;
        }
    })
    .await
}
