//! The driver of one run: spawn on an owner thread, pump output, enforce the timeout and kill
//! requests, wait for the exit, drain what is left, and build the result.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::sys::signal::Signal;
use tokio::sync::mpsc;

use crate::error::{ErrorCode, Result, SandboxError};
use crate::options::SpawnRequest;
use crate::platform::SandboxType;

use super::launch_child::launch_child;
use super::output::Stream;
use super::prepare::{prepare, Prepared};
use super::result::{from_bwrap, from_wait_status, Aggregated, RunResult};
use super::side_services::SideServices;
use super::streams::{attach_stdin, Streams};
use super::until_exit::{supervise, Deadlines, Ending};
use super::wiring::{wire, OurSide};
use super::shared::{Shared, StartState};
use super::sink::OutputSink;

pub(super) async fn drive(req: SpawnRequest, sink: Option<Arc<dyn OutputSink>>, shared: Arc<Shared>, control: mpsc::UnboundedReceiver<Signal>) {
    let outcome = attempts(req, sink, &shared, control).await;
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

/// Plans made for one run, at most. Between the host's plan and the helper's mounts another
/// process (a concurrent run in the same workspace, say) can remove or rename what the plan
/// protects; the helper then stops before the command (`Stage::Changed`) and the run is planned
/// again from its options. A workspace that changes under every attempt fails the run.
const ATTEMPTS: u32 = 3;

/// How one attempt ended.
enum Attempt {
    Ran(RunResult),
    /// Setup found the workspace changed since the plan: nothing ran, nothing of it was shown;
    /// the request comes back for the next plan.
    Changed(SandboxError, Box<SpawnRequest>),
}

async fn attempts(mut req: SpawnRequest, sink: Option<Arc<dyn OutputSink>>, shared: &Arc<Shared>, mut control: mpsc::UnboundedReceiver<Signal>) -> Result<RunResult> {
    let mut attempt = 1;
    loop {
        match run(req, sink.clone(), shared, &mut control).await? {
            Attempt::Ran(result) => return Ok(result),
            Attempt::Changed(mut e, _) if attempt == ATTEMPTS => {
                e.message.push_str(&format!(" (it changed under each of {ATTEMPTS} attempts)"));
                return Err(e);
            }
            Attempt::Changed(_, again) => {
                attempt += 1;
                // Nothing of the failed attempt is the run's: not its process, not its start.
                *shared.child.lock().unwrap() = None;
                shared.start.send_replace(StartState::Pending);
                crate::planted::forget_walk(&again.policy.planted.spec);
                req = tokio::task::spawn_blocking(move || {
                    let mut req = *again;
                    crate::options::resolve_policy_again(&req).map(|policy| {
                        req.policy = policy;
                        req
                    })
                })
                .await
                .map_err(|e| internal("planning the sandbox again failed", e))??;
            }
        }
    }
}

/// One run, step by step: prepare the plan, wire the child's descriptors, start the side
/// services, spawn, stream and supervise until the exit, drain, then the result.
async fn run(req: SpawnRequest, sink: Option<Arc<dyn OutputSink>>, shared: &Arc<Shared>, control: &mut mpsc::UnboundedReceiver<Signal>) -> Result<Attempt> {
    let (req, prepared) = tokio::task::spawn_blocking(move || {
        let mut req = req;
        let p = prepare(&mut req);
        (req, p)
    })
    .await
    .map_err(|e| internal("preparing the sandbox failed", e))?;
    let Prepared { plan, details, limits, cache_run, bwrap_path, proxy_listener, scratch, review_run } = prepared?;
    #[cfg(test)]
    super::test_hooks::planned(&req.cwd);
    let sandbox_type = plan.sandbox_type;
    let (child_side, ours) = wire(&req, &plan)?;
    let OurSide { output, stdin, status, report, control: control_end, bridge } = ours;
    let mut services = SideServices::start(&req, sandbox_type, bridge, proxy_listener)?;
    // What the child inherits as its own peak until it executes (see `limits::own_usage`).
    let host_peak = crate::limits::host_peak_rss_bytes();
    let (child, exited) = launch_child(&plan, child_side, bwrap_path, &req.command[0]).await?;
    if let Some(w) = control_end {
        child.hold_control(w);
    }
    let spawned_at = Instant::now();
    let pid = child.pid.as_raw() as u32;
    let streams = Streams::start(output, status, &child, req.max_buffer, sink, shared)?;
    let tree_usage = Arc::new(Mutex::new(crate::limits::ResourceUsage::default()));
    let sampler = streams.sample(sandbox_type, pid as i32, tree_usage.clone());
    // A clone (input bytes are shared, not copied): another attempt writes them again.
    attach_stdin(stdin, req.stdin.clone(), shared).await?;
    // Only now is the process usable (stdin attached): report it started.
    *shared.child.lock().unwrap() = Some(child.clone());
    shared.start.send_replace(if sandbox_type == SandboxType::Bwrap { StartState::Spawned { pid } } else { StartState::Running { pid } });

    let deadlines = Deadlines { timeout: req.timeout, kill_signal: req.kill_signal, force_kill_after: req.force_kill_after };
    let parser = streams.parser.clone();
    let command_exited = || sandbox_type == SandboxType::Bwrap && parser.lock().unwrap().status.exit_code.is_some();
    let ending = supervise(&child, exited, control, &deadlines, command_exited).await;
    sampler.abort();
    if let Some(t) = &shared.terminal {
        t.command_exited();
    }
    let capture = streams.drain(shared.terminal.is_some()).await;
    // The sandbox's init (known once the status stream is drained) and the killed group's
    // members end just after this; reap those the host adopted without delaying the result.
    let orphans = child.take_orphans();
    if !orphans.is_empty() {
        tokio::spawn(super::reap::reap_orphans(orphans));
    }
    if let Some(guard) = cache_run.map(crate::tool_caches::RunGuard::publish) {
        tokio::task::spawn_blocking(move || drop(guard));
    }
    drop(scratch);
    let duration_ms = spawned_at.elapsed().as_secs_f64() * 1000.0;
    let network = services.stop_proxy().await;

    let truncated = capture.truncated();
    let (omitted_stdout, omitted_stderr) = (capture.stdout.omitted(), capture.stderr.omitted());
    let text = capture.finish();
    // What bwrap and the helper said when they failed: on the terminal, when there is one.
    let setup_words = if shared.terminal.is_some() { &text.stdout } else { &text.stderr };
    let bwrap_status = parser.lock().unwrap().status.clone();
    let failure = report.as_ref().and_then(super::failure::read_report);
    if let Some(f) = failure.as_ref().filter(|f| may_plan_again(f, sandbox_type, &ending, shared, &req)) {
        let e = super::failure::helper_failure(f, &req.command[0], setup_words);
        return Ok(Attempt::Changed(e, Box::new(req)));
    }
    let (exit_code, signal) = exit_of(sandbox_type, &ending, bwrap_status.exit_code, failure.as_ref(), &req.command[0], setup_words)?;
    let host_risks = services.host_risks(&req, sandbox_type).await?;
    let change_set = describe_change_set(review_run).await?;

    let mut result = RunResult {
        command: req.command.clone(),
        cwd: req.cwd.to_string_lossy().into_owned(),
        pid,
        exit_code,
        signal: signal.clone(),
        stdout: text.stdout,
        stderr: text.stderr,
        aggregated_output: match text.aggregated {
            Some(t) => Aggregated::Text(t),
            None if text.same_as == Stream::Stderr => Aggregated::SameAsStderr,
            None => Aggregated::SameAsStdout,
        },
        truncated,
        omitted_stdout,
        omitted_stderr,
        timed_out: ending.timed_out,
        duration_ms,
        sandbox_type,
        sandbox_denied: false,
        denial: None,
        policy: req.policy.clone(),
        sandbox_details: details,
        host_risks,
        change_set,
        network_denials: network.denials,
        network_decisions: network.decisions,
        pty: shared.terminal.as_ref().map(|t| t.size()),
        limit_exceeded: crate::limits::exceeded(&limits, signal.as_deref()),
        applied_limits: limits.applied,
        resource_usage: crate::limits::own_usage(child.usage(), *tree_usage.lock().unwrap(), sandbox_type == SandboxType::Bwrap, host_peak),
    };
    result.classify();
    Ok(Attempt::Ran(result))
}

/// Whether the run may be planned again after `failure`: the helper found the workspace changed
/// (only its mounts under bwrap and its grants in the Landlock mode report that, before any exec),
/// and nothing of this attempt reached
/// the caller: not after a kill or the timeout (the request was for this run), not with a terminal
/// or a stdin the caller writes.
fn may_plan_again(failure: &sandspawn_helper::report::Failure, sandbox: SandboxType, ending: &Ending, shared: &Shared, req: &SpawnRequest) -> bool {
    failure.stage == sandspawn_helper::report::Stage::Changed
        && matches!(sandbox, SandboxType::Bwrap | SandboxType::Landlock)
        && !ending.killed
        && !ending.timed_out
        && shared.terminal.is_none()
        && req.stdin != crate::options::StdinMode::Pipe
}

/// The sandbox is gone: what the run's change set holds now (review mode), read on a blocking thread.
async fn describe_change_set(review: Option<crate::review::run::ReviewRun>) -> Result<Option<crate::review::summary::Summary>> {
    let Some(review) = review else { return Ok(None) };
    tokio::task::spawn_blocking(move || review.finish()).await.map_err(|e| internal("reading the change set failed", e))?.map(Some)
}

/// The command's exit code or signal, or why it never ran: the helper wrote its record before it
/// exited (so before bwrap reported that exit), and bwrap exiting with no exit code of the
/// command's, neither killed nor timed out, is a setup failure.
fn exit_of(
    sandbox: SandboxType,
    ending: &Ending,
    bwrap_exit_code: Option<i32>,
    failure: Option<&sandspawn_helper::report::Failure>,
    command: &str,
    setup_words: &str,
) -> Result<(Option<i32>, Option<String>)> {
    use super::child::ExitStatus;
    use super::failure::{helper_failure, setup_failure};
    if let Some(failure) = failure {
        return Err(helper_failure(failure, command, setup_words));
    }
    if sandbox != SandboxType::Bwrap {
        return Ok(from_wait_status(ending.status));
    }
    if bwrap_exit_code.is_none() && !ending.killed && !ending.timed_out && matches!(ending.status, ExitStatus::Exited(_)) {
        return Err(setup_failure(setup_words));
    }
    Ok(from_bwrap(bwrap_exit_code, ending.status))
}
