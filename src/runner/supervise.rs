//! The driver of one run: spawn on an owner thread, pump output, enforce the timeout and kill
//! requests, wait for the exit, drain what is left, and build the result.

use std::ffi::CString;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::sync::{mpsc, watch};

use crate::error::{ErrorCode, Result, SandboxError};
use crate::options::{SpawnRequest, StdinMode};
use crate::platform::SandboxType;

use super::child::{spawn_owned, ExitStatus, TreeKind};
use super::output::{Capture, Stream};
use super::pipe_io::{async_fd, pump, read_all, write_all};
use super::prepare::{prepare, Prepared};
use super::result::{from_bwrap, from_wait_status, Aggregated, RunResult};
use super::spawn::{cstring, pipe_above, spawn, ChildFd, SpawnSpec};
use super::terminal_io::{self, dup_cloexec, pump_terminal, RunTerminal};
use super::status::StatusParser;
use super::{OutputSink, Shared, StartState};
use sandspawn_helper::report::{Failure, Stage};

/// How long output may keep arriving after the command exited before we stop at the first empty
/// read (a grandchild that escaped the tree can hold the pipes open forever).
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// Hard stop for draining, even if data keeps flowing.
const DRAIN_MAX: Duration = Duration::from_secs(2);
/// How often a signal that arrived during bwrap's setup is retried until the command runs.
const PENDING_SIGNAL_RETRY: Duration = Duration::from_millis(2);

/// Why the tree is being signalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Timeout,
    Request,
}

pub(super) async fn drive(req: SpawnRequest, sink: Option<Arc<dyn OutputSink>>, shared: Arc<Shared>, control: mpsc::UnboundedReceiver<Signal>) {
    let outcome = run(req, sink, &shared, control).await;
    match &outcome {
        Ok(result) => {
            let pid = result.pid;
            shared.start.send_if_modified(|s| match s {
                StartState::Pending | StartState::Spawned { .. } => {
                    *s = StartState::Running { pid };
                    true
                }
                _ => false,
            });
        }
        Err(e) => {
            shared.start.send_if_modified(|s| match s {
                StartState::Pending | StartState::Spawned { .. } => {
                    *s = StartState::Failed(e.clone());
                    true
                }
                _ => false,
            });
        }
    }
    shared.stdin.lock().await.take();
    if let Some(t) = &shared.terminal {
        t.finish();
    }
    *shared.outcome.lock().unwrap() = Some(outcome);
    shared.done.send_replace(true);
}

fn internal(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::new(ErrorCode::SetupFailed, format!("{what}: {e}"))
}

async fn run(req: SpawnRequest, sink: Option<Arc<dyn OutputSink>>, shared: &Arc<Shared>, mut control: mpsc::UnboundedReceiver<Signal>) -> Result<RunResult> {
    let (req, prepared) = tokio::task::spawn_blocking(move || {
        let mut req = req;
        let p = prepare(&mut req);
        (req, p)
    })
    .await
    .map_err(|e| internal("preparing the sandbox failed", e))?;
    let Prepared { plan, details, limits, cache_run, bwrap_path, proxy_listener } = prepared?;
    let sandbox_type = plan.sandbox_type;
    // Names that must stay absent at the roots' tops are kept so while the run is in flight.
    let keeper = if sandbox_type == SandboxType::Bwrap {
        let tops: Vec<std::path::PathBuf> = req.policy.writable_roots.iter().map(|r| r.root.clone()).collect();
        crate::planted::keeper::start(&req.policy.planted.absent, &tops)
    } else {
        None
    };
    let kind = match sandbox_type {
        SandboxType::Bwrap => TreeKind::PidNamespace,
        SandboxType::Landlock => TreeKind::Supervisor,
        _ => TreeKind::ProcessGroup,
    };

    // Child-side descriptors are numbered 0..=5 (stdio, bwrap's status, the helper's report, the
    // network bridge); ours are lifted above that so no dup2 in the child can clobber a source
    // before it is used.
    let min_fd = 6;
    let io_err = |e: io::Error| internal("creating pipes failed", e);
    // With a terminal the slave is the child's stdin, stdout and stderr, and the master is read
    // and written here; without one, three pipes.
    let terminal = match &req.pty {
        Some(p) => Some(RunTerminal::open(p.size, min_fd)?.into_parts()),
        None => None,
    };
    let (pipes, stdin_child, stdin_ours) = match &terminal {
        Some((master, _, _)) => (None, None, Some(dup_cloexec(master).map_err(io_err)?)),
        None => {
            let (out_r, out_w) = pipe_above(min_fd).map_err(io_err)?;
            let (err_r, err_w) = pipe_above(min_fd).map_err(io_err)?;
            let (stdin_child, stdin_ours): (Option<OwnedFd>, Option<OwnedFd>) = match req.stdin {
                StdinMode::Null => (None, None),
                StdinMode::Pipe | StdinMode::Bytes(_) => {
                    let (r, w) = pipe_above(min_fd).map_err(io_err)?;
                    (Some(r), Some(w))
                }
            };
            (Some(((out_r, out_w), (err_r, err_w))), stdin_child, stdin_ours)
        }
    };
    let (master, slave) = match terminal {
        Some((master, slave, path)) => (Some(master), Some((slave, path))),
        None => (None, None),
    };
    let (readers, writers) = match pipes {
        Some(((out_r, out_w), (err_r, err_w))) => (Some((out_r, err_r)), Some((out_w, err_w))),
        None => (None, None),
    };
    // No helper in front of the command (no sandbox, Linux): the spawn makes the terminal the
    // controlling one. With a helper, its --controlling-tty step does.
    let child_takes_terminal = plan.helper.is_none();
    let runner_pipe = |fd: Option<RawFd>| -> Result<(Option<OwnedFd>, Option<(RawFd, OwnedFd)>)> {
        match fd {
            Some(fd) => {
                let (r, w) = pipe_above(min_fd).map_err(io_err)?;
                Ok((Some(r), Some((fd, w))))
            }
            None => Ok((None, None)),
        }
    };
    let (status_ours, status_child) = runner_pipe(plan.status_fd)?;
    let (report_ours, report_child) = runner_pipe(plan.report_fd)?;
    // The Landlock supervisor's control pipe: it reads, we hold the write end (see TreeKind::Supervisor).
    let (control_ours, control_child) = match plan.control_fd {
        Some(fd) => {
            let (r, w) = pipe_above(min_fd).map_err(io_err)?;
            (Some(w), Some((fd, r)))
        }
        None => (None, None),
    };
    // The allow-list's proxy: serves the listener the helper sends over the bridge (Linux) or the
    // one bound on the host's loopback for the plan (macOS); see crate::network::for_run.
    let (proxy, net_child) = crate::network::for_run::start(&req.policy, plan.net_ctl_fd, proxy_listener, min_fd).map_err(io_err)?;

    let mut argv = Vec::with_capacity(plan.args.len() + 1);
    argv.push(cstring(&plan.argv0).map_err(|_| SandboxError::invalid_command("contains a NUL byte"))?);
    for a in &plan.args {
        argv.push(cstring(a).map_err(|_| SandboxError::invalid_command("an argument contains a NUL byte"))?);
    }
    let envp: Vec<CString> = plan
        .env
        .iter()
        .map(|(k, v)| CString::new(format!("{k}={v}")))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| SandboxError::invalid("env", "a variable contains a NUL byte"))?;
    let program = plan.program.clone();
    let cwd = plan.cwd.clone();

    let spawn_closure = Box::new(move || {
        let mut fds: Vec<(RawFd, ChildFd)> = match (&slave, &writers) {
            (Some((slave, path)), _) => terminal_io::stdio(slave, path, child_takes_terminal),
            (None, Some((out_w, err_w))) => vec![
                (0, stdin_child.as_ref().map(ChildFd::Dup).unwrap_or(ChildFd::DevNull)),
                (1, ChildFd::Dup(out_w)),
                (2, ChildFd::Dup(err_w)),
            ],
            (None, None) => unreachable!("a run has a terminal or pipes"),
        };
        for (target, fd) in status_child.iter().chain(report_child.iter()).chain(net_child.iter()).chain(control_child.iter()) {
            fds.push((*target, ChildFd::Dup(fd)));
        }
        spawn(&SpawnSpec { program: &program, argv: &argv, envp: &envp, cwd: &cwd, fds })
        // The child-side descriptors are dropped (closed in this process) here.
    });
    // Under bwrap, the command runs once a process in the sandbox is neither bwrap nor the helper.
    let setup_programs: Vec<PathBuf> = std::iter::once(plan.program.clone()).chain(plan.helper.clone()).chain(bwrap_path).collect();
    // What the child inherits as its own peak until it executes (see `limits::own_usage`).
    let host_peak = crate::limits::host_peak_rss_bytes();
    let (started_rx, exit_rx) = spawn_owned(spawn_closure, kind, setup_programs).map_err(|e| internal("starting the owner thread failed", e))?;
    let child = match started_rx.await {
        Ok(Ok(child)) => child,
        Ok(Err(e)) => return Err(spawn_error(e, &req.command[0], sandbox_type, &plan.program)),
        Err(e) => return Err(internal("spawning failed", e)),
    };
    if let Some(w) = control_ours {
        child.hold_control(w);
    }
    let spawned_at = Instant::now();
    let pid = child.pid.as_raw() as u32;

    let capture = Arc::new(Mutex::new(Capture::new(req.max_buffer)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let (out_task, err_task) = match (readers, master, &shared.terminal) {
        (Some((out_r, err_r)), _, _) => (
            tokio::spawn(pump(async_fd(out_r).map_err(io_err)?, Stream::Stdout, capture.clone(), sink.clone(), stop_rx.clone())),
            Some(tokio::spawn(pump(async_fd(err_r).map_err(io_err)?, Stream::Stderr, capture.clone(), sink.clone(), stop_rx.clone()))),
        ),
        (None, Some(master), Some(controls)) => {
            controls.install(dup_cloexec(&master).map_err(io_err)?);
            let fd = async_fd(master).map_err(io_err)?;
            (tokio::spawn(pump_terminal(fd, capture.clone(), sink.clone(), controls.clone(), stop_rx.clone())), None)
        }
        _ => unreachable!("a run has a terminal or pipes"),
    };
    let parser = Arc::new(Mutex::new(StatusParser::default()));
    let status_task = match status_ours {
        Some(fd) => {
            let (parser, child) = (parser.clone(), child.clone());
            let fd = async_fd(fd).map_err(io_err)?;
            Some(tokio::spawn(read_all(fd, stop_rx.clone(), move |data| {
                let mut p = parser.lock().unwrap();
                let had_init = p.status.child_pid.is_some();
                if p.feed(data) {
                    child.set_pid_namespace(p.status.pid_namespace.unwrap_or_default());
                }
                if let (false, Some(init)) = (had_init, p.status.child_pid) {
                    child.set_init_pid(init);
                }
            })))
        }
        None => None,
    };
    // What the command uses is sampled from /proc (see `limits::sample`): under bwrap the sandbox's
    // tree, which bwrap's rusage does not include; otherwise the spawned process's own tree, for
    // its peak resident set (see `limits::own_usage`).
    let tree_usage = Arc::new(Mutex::new(crate::limits::ResourceUsage::default()));
    let sampler = if sandbox_type == SandboxType::Bwrap {
        let parser = parser.clone();
        let sandbox = move || {
            let p = parser.lock().unwrap();
            p.status.child_pid.zip(p.status.pid_namespace)
        };
        tokio::spawn(crate::limits::sample_sandbox(sandbox, tree_usage.clone()))
    } else {
        let own = crate::runner::pidns::ns_of(pid as i32).map(|ns| (pid as i32, ns));
        tokio::spawn(crate::limits::sample_sandbox(move || own, tree_usage.clone()))
    };
    if let Some(w) = stdin_ours {
        let fd = async_fd(w).map_err(io_err)?;
        match req.stdin {
            StdinMode::Bytes(bytes) => {
                tokio::spawn(async move {
                    // EPIPE means the command did not read all of its input; that is its choice.
                    let _ = write_all(&fd, &bytes).await;
                });
            }
            _ => *shared.stdin.lock().await = Some(fd),
        }
    }
    // Only now is the process usable (stdin attached): report it started.
    *shared.child.lock().unwrap() = Some(child.clone());
    shared.start.send_replace(if sandbox_type == SandboxType::Bwrap { StartState::Spawned { pid } } else { StartState::Running { pid } });

    // Supervise until the spawned process exits. A signal (timeout, kill(), abort) that arrives
    // while bwrap is still setting up is kept pending and delivered as soon as the command runs;
    // `timedOut` is set only once the timeout's signal actually reached the command.
    let deadline = req.timeout.map(|t| tokio::time::Instant::now() + t);
    let mut exit_rx = exit_rx;
    let mut timed_out = false;
    let mut deadline_passed = false;
    let mut killed = false;
    let mut pending: Option<(Signal, Cause)> = None;
    // Record what a signal that actually reached the tree means for the result.
    let landed = |cause: Cause, timed_out: &mut bool, killed: &mut bool| match cause {
        Cause::Timeout => *timed_out = true,
        Cause::Request => *killed = true,
    };
    let mut force: Option<(tokio::time::Instant, Cause)> = None;
    let status = loop {
        let timeout_fut = async {
            match deadline {
                Some(d) if !deadline_passed => tokio::time::sleep_until(d).await,
                _ => std::future::pending().await,
            }
        };
        let force_fut = async {
            match force {
                Some((t, _)) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        let retry_fut = async {
            match pending {
                Some(_) => tokio::time::sleep(PENDING_SIGNAL_RETRY).await,
                None => std::future::pending().await,
            }
        };
        let mut request: Option<(Signal, Cause)> = None;
        tokio::select! {
            st = &mut exit_rx => break st.unwrap_or(ExitStatus::Signaled(libc::SIGKILL)),
            Some(sig) = control.recv() => request = Some((sig, Cause::Request)),
            _ = timeout_fut => {
                deadline_passed = true;
                // The command may have finished just as the timer fired: then it did not time out.
                let finished = sandbox_type == SandboxType::Bwrap && parser.lock().unwrap().status.exit_code.is_some();
                if !finished && !child.has_exited() {
                    request = Some((req.kill_signal, Cause::Timeout));
                }
            }
            _ = force_fut => {
                if let Some((_, cause)) = force.take() {
                    child.force_kill();
                    pending = None;
                    landed(cause, &mut timed_out, &mut killed)
                }
            }
            _ = retry_fut => {}
        }
        if let Some((sig, cause)) = request {
            if sig == Signal::SIGKILL {
                child.force_kill();
                pending = None;
                landed(cause, &mut timed_out, &mut killed)
            } else {
                pending = Some((sig, cause));
                if force.is_none() {
                    force = Some((tokio::time::Instant::now() + req.force_kill_after, cause));
                }
            }
        }
        if let Some((sig, cause)) = pending {
            if child.signal_tree(sig) {
                pending = None;
                landed(cause, &mut timed_out, &mut killed)
            }
        }
    };

    sampler.abort();
    // Drain: to EOF normally; past the grace period stop at the first empty read. A terminal is
    // read to EIO (every slave descriptor closed): its last bytes can reach the master a moment
    // after the command exited, so an empty read proves nothing there.
    if let Some(t) = &shared.terminal {
        t.command_exited();
    }
    let aborts = [Some(out_task.abort_handle()), err_task.as_ref().map(|t| t.abort_handle()), status_task.as_ref().map(|t| t.abort_handle())];
    let drain = async {
        let _ = out_task.await;
        if let Some(t) = err_task {
            let _ = t.await;
        }
        if let Some(t) = status_task {
            let _ = t.await;
        }
    };
    tokio::pin!(drain);
    let grace = if shared.terminal.is_some() { DRAIN_MAX } else { DRAIN_GRACE };
    if tokio::time::timeout(grace, &mut drain).await.is_err() {
        stop_tx.send_replace(true);
        if tokio::time::timeout(DRAIN_MAX, &mut drain).await.is_err() {
            for a in aborts.into_iter().flatten() {
                a.abort();
            }
        }
    }
    // The sandbox's init (known once the status stream is drained) and the killed group's
    // members end just after this; reap those the host adopted without delaying the result.
    let orphans = child.take_orphans();
    if !orphans.is_empty() {
        tokio::spawn(super::reap::reap_orphans(orphans));
    }
    drop(cache_run);
    let duration_ms = spawned_at.elapsed().as_secs_f64() * 1000.0;
    // The run is over: close the proxy's listeners and every connection it holds.
    let network_denials = match proxy {
        Some(p) => p.finish().await,
        None => Vec::new(),
    };

    let capture = std::mem::replace(&mut *capture.lock().unwrap(), Capture::new(1));
    let truncated = capture.truncated();
    let (omitted_stdout, omitted_stderr) = (capture.stdout.omitted(), capture.stderr.omitted());
    let text = capture.finish();
    let stderr_text = text.stderr;
    // What bwrap and the helper said when they failed: on the terminal, when there is one.
    let setup_words = if shared.terminal.is_some() { &text.stdout } else { &stderr_text };
    // The helper (inside bwrap, or in front of the command to set limits) wrote its record before
    // it exited, so before bwrap reported that exit.
    if let Some(failure) = report_ours.as_ref().and_then(read_report) {
        return Err(helper_failure(&failure, &req.command[0], setup_words));
    }
    let (exit_code, signal) = if sandbox_type == SandboxType::Bwrap {
        let bwrap_status = parser.lock().unwrap().status.clone();
        if bwrap_status.exit_code.is_none() && !killed && !timed_out && matches!(status, ExitStatus::Exited(_)) {
            return Err(setup_failure(setup_words));
        }
        from_bwrap(bwrap_status.exit_code, status)
    } else if sandbox_type == SandboxType::Landlock {
        // The supervisor exits as the command did; a record on the report pipe means it never ran.
        if let Some(failure) = report_ours.as_ref().and_then(read_report) {
            return Err(helper_failure(&failure, &req.command[0], &stderr_text));
        }
        from_wait_status(status)
    } else {
        from_wait_status(status)
    };

    // What the mounts (or the Landlock rules) could not prevent (Linux), after the placeholders
    // are gone.
    let host_risks = if matches!(sandbox_type, SandboxType::Bwrap | SandboxType::Landlock) {
        let baseline = req.policy.planted.clone();
        let keep_absent = req.policy.missing_read_only();
        tokio::task::spawn_blocking(move || {
            let mut risks = keeper.map(|k| k.finish()).unwrap_or_default();
            risks.extend(crate::planted::detect(&baseline));
            // Placeholders of plans other programs ran, at paths this run kept absent.
            crate::plan::mount_targets::remove_leftovers(&keep_absent);
            risks
        })
        .await
        .map_err(|e| internal("checking for planted configuration failed", e))?
    } else {
        Vec::new()
    };

    let mut result = RunResult {
        command: req.command.clone(),
        cwd: req.cwd.to_string_lossy().into_owned(),
        pid,
        exit_code,
        signal: signal.clone(),
        stdout: text.stdout,
        stderr: stderr_text,
        aggregated_output: match text.aggregated {
            Some(t) => Aggregated::Text(t),
            None if text.same_as == Stream::Stderr => Aggregated::SameAsStderr,
            None => Aggregated::SameAsStdout,
        },
        truncated,
        omitted_stdout,
        omitted_stderr,
        timed_out,
        duration_ms,
        sandbox_type,
        sandbox_denied: false,
        denial: None,
        policy: req.policy.clone(),
        sandbox_details: details,
        host_risks,
        network_denials,
        pty: shared.terminal.as_ref().map(|t| t.size()),
        limit_exceeded: crate::limits::exceeded(&limits, signal.as_deref()),
        applied_limits: limits.applied,
        resource_usage: crate::limits::own_usage(child.usage(), *tree_usage.lock().unwrap(), sandbox_type == SandboxType::Bwrap, host_peak),
    };
    result.classify();
    Ok(result)
}

/// A spawn error: for the sandbox tool itself that means the sandbox is unavailable; for the
/// command it is ENOENT/EACCES as Node would report them.
fn spawn_error(e: io::Error, command: &str, sandbox: SandboxType, program: &std::path::Path) -> SandboxError {
    if e.raw_os_error() == Some(libc::E2BIG) {
        return SandboxError::invalid(
            "env",
            format!("the environment and argument list are larger than the system allows for one command ({e}); pass fewer or smaller variables (extendEnv: false) or arguments"),
        );
    }
    if sandbox != SandboxType::None {
        return SandboxError::unavailable(
            format!("{} could not be executed ({e})", program.display()),
            "reinstall the sandbox tool (Linux: `sudo apt-get install -y bubblewrap`)",
        );
    }
    match e.raw_os_error() {
        Some(libc::ENOENT) => SandboxError::new(ErrorCode::NotFound, format!("spawn {command} ENOENT: command not found")),
        Some(libc::EACCES) | Some(libc::ENOEXEC) | Some(libc::EISDIR) => {
            SandboxError::new(ErrorCode::NotExecutable, format!("spawn {command} EACCES: command is not executable ({e})"))
        }
        _ => SandboxError::new(ErrorCode::SetupFailed, format!("spawn {command} failed: {e}")),
    }
}

/// What the helper wrote on its report descriptor: present only when the command never ran.
fn read_report(fd: &OwnedFd) -> Option<Failure> {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 4096];
    let raw = fd.as_raw_fd();
    // Never wait: every writer has written (or never will) once the sandbox has exited.
    unsafe { libc::fcntl(raw, libc::F_SETFL, libc::fcntl(raw, libc::F_GETFL) | libc::O_NONBLOCK) };
    let n = unsafe { libc::read(raw, buf.as_mut_ptr().cast(), buf.len()) };
    (n > 0).then(|| Failure::decode(&buf[..n as usize])).flatten()
}

/// The helper could not start the command: ENOENT/EACCES as Node reports them, or a setup failure
/// in the helper's words.
fn helper_failure(f: &Failure, command: &str, stderr: &str) -> SandboxError {
    let stderr = stderr.trim();
    let (code, message) = match (f.stage, f.errno) {
        (Stage::Exec, libc::ENOENT | libc::ENOTDIR) => {
            (ErrorCode::NotFound, format!("spawn {command} ENOENT: the command was not found inside the sandbox ({})", f.message))
        }
        (Stage::Exec, libc::EACCES | libc::ENOEXEC | libc::EISDIR | libc::EPERM) => {
            (ErrorCode::NotExecutable, format!("spawn {command} EACCES: the command is not executable inside the sandbox ({})", f.message))
        }
        (Stage::Exec, _) => (ErrorCode::SetupFailed, format!("spawn {command} failed inside the sandbox: {}", f.message)),
        (Stage::Setup, _) => (ErrorCode::SetupFailed, format!("sandbox setup failed before the command ran: sandspawn-helper: {}", f.message)),
    };
    SandboxError::new(code, message).with_stderr(stderr)
}

/// bwrap exited without running the command: say why, in its own words and ours.
fn setup_failure(stderr: &str) -> SandboxError {
    let trimmed = stderr.trim();
    if let Some(d) = crate::capabilities::diagnose_with_host(trimmed, &crate::capabilities::HostFacts::read()) {
        let message = match d.code {
            ErrorCode::Unavailable => format!("sandbox unavailable: {}. Fix: {}", d.reason, d.fix),
            _ => format!("sandbox setup failed: {}. Fix: {}", d.reason, d.fix),
        };
        return SandboxError::new(d.code, message).with_stderr(trimmed);
    }
    SandboxError::setup_failed(format!("sandbox setup failed before the command ran: {}", if trimmed.is_empty() { "bwrap exited without a message" } else { trimmed }), trimmed)
}

#[cfg(test)]
mod helper_failure_tests {
    use super::*;

    fn failure(stage: Stage, errno: i32) -> Failure {
        Failure { stage, errno, message: "cannot run 'x': words".into() }
    }

    #[test]
    fn maps_the_helpers_report_to_node_style_codes() {
        let code = |f: Failure| helper_failure(&f, "x", "sandspawn-helper: cannot run 'x': words\n").code;
        assert_eq!(code(failure(Stage::Exec, libc::ENOENT)), ErrorCode::NotFound);
        assert_eq!(code(failure(Stage::Exec, libc::ENOTDIR)), ErrorCode::NotFound);
        assert_eq!(code(failure(Stage::Exec, libc::EACCES)), ErrorCode::NotExecutable);
        assert_eq!(code(failure(Stage::Exec, libc::ENOEXEC)), ErrorCode::NotExecutable);
        assert_eq!(code(failure(Stage::Exec, libc::E2BIG)), ErrorCode::SetupFailed);
        let setup = helper_failure(&failure(Stage::Setup, libc::EINVAL), "x", " words \n");
        assert_eq!(setup.code, ErrorCode::SetupFailed);
        assert!(setup.message.starts_with("sandbox setup failed before the command ran: sandspawn-helper: "), "{}", setup.message);
        assert_eq!(setup.stderr.as_deref(), Some("words"));
    }
}
