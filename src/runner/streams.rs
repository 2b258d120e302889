//! The bytes of one run while it runs and just after: stdout and stderr (or the terminal) into the
//! capture and the sink, bwrap's status into its parser, the command's input, the resource
//! sampler; and the drain once the command has exited.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::{ErrorCode, Result, SandboxError};
use crate::limits::ResourceUsage;
use crate::options::StdinMode;
use crate::platform::SandboxType;

use super::child::Child;
use super::output::{Capture, Stream};
use super::pipe_io::{async_fd, pump, read_all, write_all};
use super::status::StatusParser;
use super::terminal_io::{dup_cloexec, pump_terminal};
use super::wiring::Output;
use super::shared::Shared;
use super::sink::OutputSink;

/// How long output may keep arriving after the command exited before we stop at the first empty
/// read (a grandchild that escaped the tree can hold the pipes open forever).
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// Hard stop for draining, even if data keeps flowing.
const DRAIN_MAX: Duration = Duration::from_secs(2);

pub(super) struct Streams {
    pub capture: Arc<Mutex<Capture>>,
    /// bwrap's status as far as it has arrived (default without bwrap).
    pub parser: Arc<Mutex<StatusParser>>,
    stop: watch::Sender<bool>,
    readers: Vec<JoinHandle<()>>,
}

fn failed(e: std::io::Error) -> SandboxError {
    SandboxError::new(ErrorCode::SetupFailed, format!("creating pipes failed: {e}"))
}

impl Streams {
    /// Start reading the output and bwrap's status. The status tells the child its sandbox's
    /// PID namespace and init, which signalling and reaping need.
    pub fn start(output: Output, status: Option<OwnedFd>, child: &Arc<Child>, max_buffer: usize, sink: Option<Arc<dyn OutputSink>>, shared: &Shared) -> Result<Streams> {
        let capture = Arc::new(Mutex::new(Capture::new(max_buffer)));
        let (stop, stop_rx) = watch::channel(false);
        let mut readers = Vec::new();
        match (output, &shared.terminal) {
            (Output::Pipes { stdout, stderr }, _) => {
                readers.push(tokio::spawn(pump(async_fd(stdout).map_err(failed)?, Stream::Stdout, capture.clone(), sink.clone(), stop_rx.clone())));
                readers.push(tokio::spawn(pump(async_fd(stderr).map_err(failed)?, Stream::Stderr, capture.clone(), sink, stop_rx.clone())));
            }
            (Output::Terminal { master }, Some(controls)) => {
                controls.install(dup_cloexec(&master).map_err(failed)?);
                let fd = async_fd(master).map_err(failed)?;
                readers.push(tokio::spawn(pump_terminal(fd, capture.clone(), sink, controls.clone(), stop_rx.clone())));
            }
            (Output::Terminal { .. }, None) => unreachable!("a run with a terminal has its controls"),
        }
        let parser = Arc::new(Mutex::new(StatusParser::default()));
        if let Some(fd) = status {
            let (parser, child) = (parser.clone(), child.clone());
            let fd = async_fd(fd).map_err(failed)?;
            readers.push(tokio::spawn(read_all(fd, stop_rx, move |data| {
                let mut p = parser.lock().unwrap();
                let had_init = p.status.child_pid.is_some();
                if p.feed(data) {
                    child.set_pid_namespace(p.status.pid_namespace.unwrap_or_default());
                }
                if let (false, Some(init)) = (had_init, p.status.child_pid) {
                    child.set_init_pid(init);
                }
            })));
        }
        Ok(Streams { capture, parser, stop, readers })
    }

    /// What the command uses, sampled from /proc (see `limits::sample`): under bwrap the sandbox's
    /// tree, which bwrap's rusage does not include; otherwise the spawned process's own tree, for
    /// its peak resident set (see `limits::own_usage`).
    pub fn sample(&self, sandbox: SandboxType, pid: i32, into: Arc<Mutex<ResourceUsage>>) -> JoinHandle<()> {
        if sandbox == SandboxType::Bwrap {
            let parser = self.parser.clone();
            let tree = move || {
                let p = parser.lock().unwrap();
                p.status.child_pid.zip(p.status.pid_namespace)
            };
            tokio::spawn(crate::limits::sample_sandbox(tree, into))
        } else {
            let own = crate::pidns::ns_of(pid).map(|ns| (pid, ns));
            tokio::spawn(crate::limits::sample_sandbox(move || own, into))
        }
    }

    /// Drain: to EOF normally; past the grace period stop at the first empty read. A terminal is
    /// read to EIO (every slave descriptor closed): its last bytes can reach the master a moment
    /// after the command exited, so an empty read proves nothing there. Returns the capture.
    pub async fn drain(self, on_terminal: bool) -> Capture {
        let aborts: Vec<_> = self.readers.iter().map(|t| t.abort_handle()).collect();
        let all = async {
            for t in self.readers {
                let _ = t.await;
            }
        };
        tokio::pin!(all);
        let grace = if on_terminal { DRAIN_MAX } else { DRAIN_GRACE };
        if tokio::time::timeout(grace, &mut all).await.is_err() {
            self.stop.send_replace(true);
            if tokio::time::timeout(DRAIN_MAX, &mut all).await.is_err() {
                aborts.iter().for_each(|a| a.abort());
            }
        }
        std::mem::replace(&mut *self.capture.lock().unwrap(), Capture::new(1))
    }
}

/// Connect the command's input: bytes given up front are written in the background (EPIPE means
/// the command did not read them all, which is its choice); a pipe or terminal is handed to
/// `write()`/`end()` through `shared`.
pub(super) async fn attach_stdin(fd: Option<OwnedFd>, mode: StdinMode, shared: &Shared) -> Result<()> {
    let Some(fd) = fd else { return Ok(()) };
    let fd = async_fd(fd).map_err(failed)?;
    match mode {
        StdinMode::Bytes(bytes) => {
            let stop = shared.input_closed.subscribe();
            tokio::spawn(async move {
                let _ = write_all(&fd, &bytes, stop).await;
            });
        }
        _ => *shared.stdin.lock().await = Some(fd),
    }
    Ok(())
}
