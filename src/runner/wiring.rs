//! The descriptors of one run: which of ours the child gets at which number (`child_fds`), and the
//! ends the runner keeps. Every end of ours sits above the child's numbers, so no `dup2` in the
//! child clobbers a source before it is used.

use std::ffi::CString;
use std::io;
use std::os::fd::{OwnedFd, RawFd};

use crate::child_fds::FIRST_FREE;
use crate::error::{ErrorCode, Result, SandboxError};
use crate::options::{SpawnRequest, StdinMode};
use crate::plan::LaunchPlan;

use super::spawn::{lift_above, pipe_above, ChildFd};
use super::terminal_io::{self, dup_cloexec, RunTerminal};

/// What the child is given; dropped (closed here) right after the spawn.
pub(super) struct ChildSide {
    stdio: ChildStdio,
    /// `(number in the child, our descriptor)`: bwrap's status, the report, the bridge, the control.
    extra: Vec<(RawFd, OwnedFd)>,
    /// No helper in front of the command (no sandbox, Linux): the spawn makes the terminal the
    /// controlling one. With a helper, its --controlling-tty step does.
    takes_terminal: bool,
}

enum ChildStdio {
    Terminal { slave: OwnedFd, path: CString },
    Pipes { stdin: Option<OwnedFd>, stdout: OwnedFd, stderr: OwnedFd },
}

/// The runner's ends.
pub(super) struct OurSide {
    pub output: Output,
    /// Where the command's input is written (a pipe, or a copy of the terminal's master).
    pub stdin: Option<OwnedFd>,
    /// bwrap's JSON status.
    pub status: Option<OwnedFd>,
    /// The helper's failure report.
    pub report: Option<OwnedFd>,
    /// The Landlock supervisor's control pipe (held until the tree is gone: see `TreeKind::Supervisor`).
    pub control: Option<OwnedFd>,
    /// The host end of the network bridge (the proxy serves what arrives on it).
    pub bridge: Option<OwnedFd>,
}

pub(super) enum Output {
    Pipes { stdout: OwnedFd, stderr: OwnedFd },
    Terminal { master: OwnedFd },
}

fn failed(e: io::Error) -> SandboxError {
    SandboxError::new(ErrorCode::SetupFailed, format!("creating pipes failed: {e}"))
}

/// Create every descriptor the plan asks for.
pub(super) fn wire(req: &SpawnRequest, plan: &LaunchPlan) -> Result<(ChildSide, OurSide)> {
    let (stdio, output, stdin) = stdio(req)?;
    let mut extra = Vec::new();
    // A pipe the child writes and we read, at `number` in the child.
    let mut from_child = |number: Option<RawFd>| -> Result<Option<OwnedFd>> {
        let Some(number) = number else { return Ok(None) };
        let (r, w) = pipe_above(FIRST_FREE).map_err(failed)?;
        extra.push((number, w));
        Ok(Some(r))
    };
    let status = from_child(plan.status_fd)?;
    let report = from_child(plan.report_fd)?;
    if let Some(status) = &status {
        // bwrap's: the helper watches the status pipe for bwrap's end (`child_fds::BWRAP_ALIVE`).
        let copy = status.try_clone().and_then(|c| lift_above(c, FIRST_FREE)).map_err(failed)?;
        extra.push((crate::child_fds::BWRAP_ALIVE, copy));
    }
    let control = match plan.control_fd {
        Some(number) => {
            let (r, w) = pipe_above(FIRST_FREE).map_err(failed)?;
            extra.push((number, r));
            Some(w)
        }
        None => None,
    };
    let bridge = match (plan.net_ctl_fd, &req.policy.network_proxy) {
        (Some(number), Some(_)) => {
            let (ours, theirs) = crate::network::bridge::socket_pair(FIRST_FREE).map_err(failed)?;
            extra.push((number, theirs));
            Some(ours)
        }
        _ => None,
    };
    let child = ChildSide { stdio, extra, takes_terminal: plan.helper.is_none() };
    Ok((child, OurSide { output, stdin, status, report, control, bridge }))
}

/// A terminal (its slave is the child's stdin, stdout and stderr) or three pipes.
fn stdio(req: &SpawnRequest) -> Result<(ChildStdio, Output, Option<OwnedFd>)> {
    if let Some(p) = &req.pty {
        let (master, slave, path) = RunTerminal::open(p.size, FIRST_FREE)?.into_parts();
        let input = dup_cloexec(&master).map_err(failed)?;
        return Ok((ChildStdio::Terminal { slave, path }, Output::Terminal { master }, Some(input)));
    }
    let (out_r, out_w) = pipe_above(FIRST_FREE).map_err(failed)?;
    let (err_r, err_w) = pipe_above(FIRST_FREE).map_err(failed)?;
    let (stdin_child, stdin_ours) = match req.stdin {
        StdinMode::Null => (None, None),
        StdinMode::Pipe | StdinMode::Bytes(_) => {
            let (r, w) = pipe_above(FIRST_FREE).map_err(failed)?;
            (Some(r), Some(w))
        }
    };
    let child = ChildStdio::Pipes { stdin: stdin_child, stdout: out_w, stderr: err_w };
    Ok((child, Output::Pipes { stdout: out_r, stderr: err_r }, stdin_ours))
}

impl ChildSide {
    /// One more descriptor of ours for the child, at `number` (the helper's arguments' pipe).
    pub(super) fn give(&mut self, number: RawFd, fd: OwnedFd) {
        self.extra.push((number, fd));
    }

    /// The spawn's `(target, source)` pairs.
    pub(super) fn fds(&self) -> Vec<(RawFd, ChildFd<'_>)> {
        let mut fds = match &self.stdio {
            ChildStdio::Terminal { slave, path } => terminal_io::stdio(slave, path, self.takes_terminal),
            ChildStdio::Pipes { stdin, stdout, stderr } => vec![
                (0, stdin.as_ref().map(ChildFd::Dup).unwrap_or(ChildFd::DevNull)),
                (1, ChildFd::Dup(stdout)),
                (2, ChildFd::Dup(stderr)),
            ],
        };
        fds.extend(self.extra.iter().map(|(number, fd)| (*number, ChildFd::Dup(fd))));
        fds
    }
}
