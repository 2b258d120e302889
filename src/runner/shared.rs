//! What a run's driver and its handle share: how far the start got, the outcome, the kill channel,
//! the command's input and terminal.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use nix::sys::signal::Signal;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};

use super::result::RunResult;
use super::{child, terminal_io};
use crate::error::{Result, SandboxError};

#[derive(Debug, Clone)]
pub(super) enum StartState {
    Pending,
    /// bwrap is running but the command may still be in setup.
    Spawned { pid: u32 },
    Running { pid: u32 },
    Failed(SandboxError),
}

pub(crate) struct Shared {
    pub(super) start: watch::Sender<StartState>,
    /// The run's outcome once it has ended (`done` turns true at the same time).
    pub(super) outcome: Mutex<Option<Result<RunResult>>>,
    pub(super) done: watch::Sender<bool>,
    pub(super) control: mpsc::UnboundedSender<Signal>,
    pub(super) stdin: tokio::sync::Mutex<Option<AsyncFd<OwnedFd>>>,
    /// Turns true when the run ends, before `stdin` is closed: a write waiting for room (it holds
    /// `stdin`'s lock) fails then instead of holding the run's end on a command that never reads.
    pub(super) input_closed: watch::Sender<bool>,
    pub(super) stdin_is_pipe: bool,
    pub(super) kill_signal: Signal,
    /// The spawned process, once it exists (to confirm under bwrap that the command was exec'd).
    pub(super) child: Mutex<Option<Arc<child::Child>>>,
    /// The run's terminal (`pty`), if it has one.
    pub(super) terminal: Option<Arc<terminal_io::TerminalControls>>,
}
