//! The runner: spawns a launch plan, owns the process tree, captures its output and ends it
//! cleanly (timeout, kill, abort), then reports a `RunResult`.
//!
//! `launch` returns a `ProcessHandle` and a driver future; the caller spawns the driver on its tokio
//! runtime (napi-rs's in the addon, the test runtime in `cargo test`). Dropping the handle neither
//! kills nor leaks the process: the driver runs to the end on its own.

pub mod child;
pub mod cloexec;
mod disk_room;
mod exit_kill;
mod failure;
mod launch_child;
mod overlap;
pub mod output;
pub mod pipe_io;
pub mod prepare;
pub mod reap;
pub mod result;
mod setup_changed;
mod shared;
mod side_services;
mod path_modes;
mod store_modes;
mod scratch;
mod scratch_sweep;
mod setup_kill;
mod sink;
pub mod spawn;
pub mod status;
mod streams;
mod supervise;
pub mod terminal_io;
#[cfg(test)]
pub mod test_hooks;
#[cfg(test)]
mod tests_changed;
#[cfg(test)]
mod tests_kill_in_setup;
#[cfg(test)]
mod tests_overlap;
#[cfg(test)]
mod tests_stores_gone;
mod until_exit;
mod walk_first;
mod wiring;

use std::future::Future;
use std::sync::{Arc, Mutex};

use nix::sys::signal::Signal;
use tokio::sync::{mpsc, watch};

use crate::error::{ErrorCode, Result, SandboxError};
use crate::options::SpawnRequest;
pub use output::Stream;
pub use result::RunResult;
use shared::{Shared, StartState};
pub use sink::OutputSink;

fn taken() -> SandboxError {
    SandboxError::new(ErrorCode::SetupFailed, "the result of this run was already taken")
}

/// The caller's handle on a launched process.
#[derive(Clone)]
pub struct ProcessHandle {
    shared: Arc<Shared>,
}

/// Start `req`. Validation already happened in `options`; sandbox availability, planning and the
/// spawn happen in the driver, so this never blocks.
pub fn launch(req: SpawnRequest, sink: Option<Arc<dyn OutputSink>>) -> (ProcessHandle, impl Future<Output = ()> + Send + 'static) {
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        start: watch::channel(StartState::Pending).0,
        outcome: Mutex::new(None),
        done: watch::channel(false).0,
        control: control_tx,
        stdin: tokio::sync::Mutex::new(None),
        input_closed: watch::channel(false).0,
        stdin_is_pipe: req.stdin == crate::options::StdinMode::Pipe,
        kill_signal: req.kill_signal,
        child: Mutex::new(None),
        terminal: req.pty.as_ref().map(|p| Arc::new(terminal_io::TerminalControls::new(p.size, req.max_buffer))),
    });
    // The timeout counts from here, the request, not from the spawn (see `supervise`).
    let driver = supervise::drive(req, tokio::time::Instant::now(), sink, shared.clone(), control_rx);
    (ProcessHandle { shared }, driver)
}

impl ProcessHandle {
    /// Resolves with the host pid once the command is running (under bwrap: once the sandbox is
    /// set up and the command was executed), or with the error that prevented it.
    pub async fn started(&self) -> Result<u32> {
        let mut rx = self.shared.start.subscribe();
        loop {
            let state = rx.borrow_and_update().clone();
            match state {
                StartState::Running { pid } => return Ok(pid),
                StartState::Failed(e) => return Err(e),
                StartState::Spawned { pid } => {
                    if self.command_was_executed() {
                        return Ok(pid);
                    }
                    // Setup takes a few milliseconds; poll until exec, exit or failure.
                    tokio::select! {
                        _ = rx.changed() => {}
                        _ = tokio::time::sleep(std::time::Duration::from_millis(1)) => {}
                    }
                }
                StartState::Pending => {
                    if rx.changed().await.is_err() {
                        return Err(SandboxError::new(ErrorCode::SetupFailed, "the process driver stopped before the command started"));
                    }
                }
            }
        }
    }

    fn command_was_executed(&self) -> bool {
        self.shared.child.lock().unwrap().as_ref().is_some_and(|c| c.command_has_started())
    }

    async fn ended(&self) -> Result<()> {
        let mut rx = self.shared.done.subscribe();
        if rx.wait_for(|done| *done).await.is_err() {
            return Err(SandboxError::new(ErrorCode::SetupFailed, "the process driver stopped without a result"));
        }
        Ok(())
    }

    /// Resolves with the result once the run has ended; may be called any number of times.
    pub async fn wait(&self) -> Result<RunResult> {
        self.ended().await?;
        self.shared.outcome.lock().unwrap().clone().unwrap_or_else(|| Err(taken()))
    }

    /// Like `wait`, but moves the result out instead of copying it (large outputs are not copied
    /// again). Later calls of `wait` or `take` fail: for callers that wait exactly once.
    pub async fn take(&self) -> Result<RunResult> {
        self.ended().await?;
        self.shared.outcome.lock().unwrap().take().unwrap_or_else(|| Err(taken()))
    }

    /// Send `signal` (default: the run's `killSignal`) to the whole tree, then SIGKILL after
    /// `forceKillAfterDelay`. A no-op once the run has ended.
    pub fn kill(&self, signal: Option<Signal>) {
        let _ = self.shared.control.send(signal.unwrap_or(self.shared.kill_signal));
    }

    /// Write to the command's stdin (`stdin: 'pipe'`).
    pub async fn write(&self, data: &[u8]) -> Result<()> {
        if !self.shared.stdin_is_pipe {
            return Err(SandboxError::invalid("stdin", "write() needs stdin: 'pipe' (or input)"));
        }
        let guard = self.shared.stdin.lock().await;
        let Some(fd) = guard.as_ref() else {
            return Err(SandboxError::new(ErrorCode::BrokenPipe, "write after end(), or the command has exited"));
        };
        pipe_io::write_all(fd, data, self.shared.input_closed.subscribe()).await.map_err(|e| SandboxError::new(ErrorCode::BrokenPipe, format!("write to the command's stdin failed: {e}")))
    }

    /// Close the command's stdin. With a terminal: send the end-of-file character (Ctrl-D), which
    /// ends the input of a program in cooked mode; the terminal itself stays open.
    pub async fn end(&self) {
        if self.shared.terminal.is_some() {
            let guard = self.shared.stdin.lock().await;
            if let Some(fd) = guard.as_ref() {
                let _ = pipe_io::write_all(fd, b"\x04", self.shared.input_closed.subscribe()).await;
            }
            return;
        }
        self.shared.stdin.lock().await.take();
    }

    fn terminal(&self, member: &str) -> Result<&Arc<terminal_io::TerminalControls>> {
        self.shared.terminal.as_ref().ok_or_else(|| SandboxError::invalid("pty", format!("{member}() needs a terminal: start the process with pty: true")))
    }

    /// Set the terminal's size (`pty` runs); the command gets SIGWINCH. A no-op after the end.
    pub fn resize(&self, size: crate::pty::PtySize) -> Result<()> {
        self.terminal("resize")?.resize(size)
    }

    /// Stop (true) or restart (false) reading the terminal. Once the command has exited the rest
    /// of its output is read regardless, so `wait()` always settles.
    pub fn set_paused(&self, paused: bool) -> Result<()> {
        self.terminal(if paused { "pause" } else { "resume" })?.set_paused(paused);
        Ok(())
    }

    /// Terminal output not read yet: waits until there is some and `wait` has passed, or the run
    /// has ended (see `pty::Unread::read`).
    pub async fn read(&self, wait: std::time::Duration, max_bytes: usize) -> Result<crate::pty::unread::ReadChunk> {
        Ok(self.terminal("read")?.unread.read(wait, max_bytes).await)
    }
}
#[cfg(test)]
mod tests;
