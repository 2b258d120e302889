//! The driver of one run: spawn on an owner thread, pump output, enforce the timeout and kill
//! requests, wait for the exit, drain what is left, and build the result.
//!
//! The timeout counts from the request, and kill requests are heard from then on: the steps
//! before the spawn (the plan, the tool caches' layers, the walk for planted configuration) run
//! on blocking threads and can take long (a fold of the last run's cache writes held the next
//! run's setup 14 s, found by an attacker's review), so a run whose deadline passes, or that is
//! killed, in one of them ends there (`before_spawn`), with nothing spawned.

use std::sync::{Arc, Mutex};

use nix::sys::signal::Signal;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::error::{ErrorCode, Result, SandboxError};
use crate::options::SpawnRequest;
use crate::platform::SandboxType;

use super::launch_child::launch_child;
use super::overlap;
use super::output::Stream;
use super::prepare::{prepare, Prepared};
use super::result::{from_bwrap, from_wait_status, Aggregated, RunResult};
use super::side_services::SideServices;
use super::streams::{attach_stdin, Streams};
use super::until_exit::{sleep_until, supervise, Deadlines, Ending};
use super::wiring::{wire, OurSide};
use super::shared::{Shared, StartState};
use super::sink::OutputSink;

/// Drive the run asked for at `requested` (when its timeout begins) to its end.
pub(super) async fn drive(req: SpawnRequest, requested: Instant, sink: Option<Arc<dyn OutputSink>>, shared: Arc<Shared>, control: mpsc::UnboundedReceiver<Signal>) {
    let outcome = attempts(req, requested, sink, &shared, control).await;
    match &outcome {
        // Nothing was spawned (its deadline passed, or it was killed, before): there is no
        // process to report started (`Unspawned`).
        Ok(result) if result.pid == 0 => {
            let e = not_started(result);
            shared.start.send_if_modified(|s| match s {
                StartState::Pending | StartState::Spawned { .. } => {
                    *s = StartState::Failed(e);
                    true
                }
                _ => false,
            });
        }
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
    // A write still waiting for room holds `stdin`'s lock: end it first, or a command that never
    // reads (or a terminal that hung up) would keep the run from ever ending.
    shared.input_closed.send_replace(true);
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

/// Why `startSandboxed` has no process to give for a run that ended before its spawn.
fn not_started(result: &RunResult) -> SandboxError {
    let why = if result.timed_out { "its timeout passed" } else { "it was killed" };
    SandboxError::new(ErrorCode::SetupFailed, format!("the command never started: {why} while the sandbox was being set up ({:.0} ms)", result.duration_ms))
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

async fn attempts(mut req: SpawnRequest, requested: Instant, sink: Option<Arc<dyn OutputSink>>, shared: &Arc<Shared>, mut control: mpsc::UnboundedReceiver<Signal>) -> Result<RunResult> {
    let mut attempt = 1;
    // One deadline for every attempt: the request's.
    let deadline = req.timeout.map(|t| requested + t);
    loop {
        match run(req, requested, deadline, sink.clone(), shared, &mut control).await? {
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
                let unspawned = Unspawned::of(&again, shared);
                let planning = tokio::task::spawn_blocking(move || {
                    let mut req = *again;
                    crate::options::resolve_policy_again(&req).map(|policy| {
                        req.policy = policy;
                        req
                    })
                });
                let ended = std::sync::atomic::AtomicBool::new(false);
                req = match before_spawn(planning, deadline, &mut control, &ended, "planning the sandbox again failed").await? {
                    Ok(planned) => planned?,
                    Err(cut) => return Ok(unspawned.result(cut, requested)),
                };
            }
        }
    }
}

/// One run, step by step: prepare the plan, wire the child's descriptors, start the side
/// services, spawn, stream and supervise until the exit, drain, then the result.
async fn run(
    req: SpawnRequest,
    requested: Instant,
    deadline: Option<Instant>,
    sink: Option<Arc<dyn OutputSink>>,
    shared: &Arc<Shared>,
    control: &mut mpsc::UnboundedReceiver<Signal>,
) -> Result<Attempt> {
    let unspawned = Unspawned::of(&req, shared);
    // Set when the run is cut before its spawn: a step that waits for a lock (a tool cache's) hears it.
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ended_seen = ended.clone();
    let preparing = tokio::task::spawn_blocking(move || {
        let mut req = req;
        #[cfg(test)]
        super::test_hooks::preparing(&req.cwd);
        let p = prepare(&mut req, &|| ended_seen.load(std::sync::atomic::Ordering::Relaxed));
        (req, p)
    });
    let (req, prepared) = match before_spawn(preparing, deadline, control, &ended, "preparing the sandbox failed").await? {
        Ok(done) => done,
        Err(cut) => return Ok(Attempt::Ran(unspawned.result(cut, requested))),
    };
    let Prepared { plan, mut details, limits, cache_run, bwrap_path, proxy_listener, scratch, review_run, walk_deferred } = prepared?;
    let sandbox_type = plan.sandbox_type;
    // Walked while bwrap sets up: spawned with the helper's arguments to come (`overlap`).
    // Never a deferred walk left undone: a plan that cannot be spawned first fails the run.
    let first = match walk_deferred {
        None => None,
        Some(d) => Some((d, overlap::First::of(&plan).ok_or_else(|| internal("planning the sandbox failed", "its walk was deferred but the plan is not bwrap's"))?)),
    };
    // (A run walked after its spawn calls it once walked: `overlap::walk_and_plan`.)
    #[cfg(test)]
    if first.is_none() {
        super::test_hooks::planned(&req.cwd);
    }
    let (mut child_side, ours) = wire(&req, first.as_ref().map_or(&plan, |(_, f)| &f.plan))?;
    let to_helper = match first {
        Some(_) => {
            let (from_host, to_helper) = super::spawn::pipe_above(crate::child_fds::FIRST_FREE).map_err(|e| internal("creating pipes failed", e))?;
            child_side.give(crate::child_fds::HELPER_ARGS, from_host);
            Some(to_helper)
        }
        None => None,
    };
    let OurSide { output, stdin, status, report, control: control_end, bridge } = ours;
    // The keeper asks for the end of the run when a name it keeps absent is made again past its
    // bound; the supervisor below kills the tree then (a permit waits if it is not listening yet).
    let end_asked = Arc::new(tokio::sync::Notify::new());
    let asking = end_asked.clone();
    let end_run: crate::planted::keeper::EndRun = Box::new(move || asking.notify_one());
    let (end_run_now, end_run_later) = if first.is_some() { (None, Some(end_run)) } else { (Some(end_run), None) };
    let mut services = SideServices::start(&req, sandbox_type, bridge, proxy_listener, end_run_now, &mut details.not_enforced)?;
    // The room the run's writable filesystems have: said in the result if they ran out (`disk_room`).
    let own_dirs = [scratch.as_ref().map(super::scratch::Scratch::path), review_run.as_ref().map(crate::review::run::ReviewRun::dir)];
    let rooms = disk_rooms(&req, sandbox_type, own_dirs.into_iter().flatten());
    // What the child inherits as its own peak until it executes (see `limits::own_usage`).
    let host_peak = crate::limits::host_peak_rss_bytes();
    let (tree, exited) = launch_child(first.as_ref().map_or(&plan, |(_, f)| &f.plan), child_side, bwrap_path, &req.command[0]).await?;
    let (req, plan, limits) = match (first, to_helper, end_run_later) {
        (Some((deferred, first)), Some(to_helper), Some(end_run)) => {
            let own_links = services.own_links();
            let ended_seen = ended.clone();
            let walking = tokio::task::spawn_blocking(move || {
                let (mut req, limits) = (req, limits);
                let ended = || ended_seen.load(std::sync::atomic::Ordering::Relaxed);
                let walked = overlap::walk_and_plan(&mut req, &deferred, &limits, &first, &own_links, end_run, &ended);
                (req, limits, walked)
            });
            // Cut, failed or not sent: bwrap is killed (its helper got nothing) and reaped.
            let (req, limits, walked) = match before_spawn(walking, deadline, control, &ended, "walking the workspace failed").await {
                Ok(Ok(done)) => done,
                Ok(Err(cut)) => {
                    end_unsent(tree, exited, (cache_run, scratch, review_run)).await;
                    return Ok(Attempt::Ran(unspawned.result(cut, requested)));
                }
                Err(e) => {
                    end_unsent(tree, exited, (cache_run, scratch, review_run)).await;
                    return Err(e);
                }
            };
            let walked = match walked {
                Ok(w) => w,
                Err(e) => {
                    end_unsent(tree, exited, (cache_run, scratch, review_run)).await;
                    return Err(e);
                }
            };
            details.not_enforced.extend(walked.not_enforced);
            services.keep_with(walked.keeper);
            let Some(framed) = walked.args else {
                end_unsent(tree, exited, (cache_run, scratch, review_run)).await;
                let mut again = req;
                again.walk_before_spawn = true;
                super::walk_first::remember(&again.policy.planted.spec.roots);
                let e = SandboxError::new(ErrorCode::SetupFailed, "the workspace changed while the sandbox was being set up");
                return Ok(Attempt::Changed(e, Box::new(again)));
            };
            // From here the run is a started one (no cut before its spawn any more): its kill and
            // its timeout end it below, with the check after it.
            let cwd = req.cwd.clone();
            tokio::task::spawn_blocking(move || overlap::send(to_helper, framed, cwd));
            (req, walked.plan, limits)
        }
        _ => (req, plan, limits),
    };
    let child = tree.0.clone();
    if let Some(w) = control_end {
        child.hold_control(w);
    }
    let pid = child.pid.as_raw() as u32;
    let streams = Streams::start(output, status, &child, req.max_buffer, sink, shared)?;
    let tree_usage = Arc::new(Mutex::new(crate::limits::ResourceUsage::default()));
    let sampler = streams.sample(sandbox_type, pid as i32, tree_usage.clone());
    let (disk_watch, disk_lowest) = super::disk_room::watch(&rooms);
    // A clone (input bytes are shared, not copied): another attempt writes them again.
    attach_stdin(stdin, req.stdin.clone(), shared).await?;
    // Only now is the process usable (stdin attached): report it started.
    *shared.child.lock().unwrap() = Some(child.clone());
    shared.start.send_replace(if sandbox_type == SandboxType::Bwrap { StartState::Spawned { pid } } else { StartState::Running { pid } });

    let deadlines = Deadlines { deadline, kill_signal: req.kill_signal, force_kill_after: req.force_kill_after, end_asked };
    let parser = streams.parser.clone();
    let command_exited = || sandbox_type == SandboxType::Bwrap && parser.lock().unwrap().status.exit_code.is_some();
    let ending = supervise(&child, exited, control, &deadlines, command_exited).await;
    sampler.abort();
    disk_watch.abort();
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
    // Looked at before the run's directory goes, which frees what the run wrote there (found by an
    // attacker's review, rev44: a Landlock-mode run filled the home's filesystem through it unsaid).
    details.not_enforced.extend(super::disk_room::ran_out(&rooms, &disk_lowest));
    // Removed before the result (a caller may look for it gone), on a blocking thread: the tree
    // is the command's, of any size, and a runtime worker removing it stalls every other run.
    if let Some(scratch) = scratch {
        let _ = tokio::task::spawn_blocking(move || drop(scratch)).await;
    }
    let duration_ms = requested.elapsed().as_secs_f64() * 1000.0;
    let network = services.stop_proxy().await;

    let truncated = capture.truncated();
    let (omitted_stdout, omitted_stderr) = (capture.stdout.omitted(), capture.stderr.omitted());
    let mut text = capture.finish();
    if ending.supervisor_killed {
        text.stderr.push_str(&supervisor_killed());
    }
    // What bwrap and the helper said when they failed: on the terminal, when there is one.
    let setup_words = if shared.terminal.is_some() { &text.stdout } else { &text.stderr };
    let bwrap_status = parser.lock().unwrap().status.clone();
    let failure = report.as_ref().and_then(super::failure::read_report);
    if let Some(f) = failure.as_ref().filter(|f| may_plan_again(f, sandbox_type, &ending, shared, &req)) {
        let e = super::failure::helper_failure(f, &req.command[0], setup_words);
        return Ok(Attempt::Changed(e, Box::new(req)));
    }
    // bwrap stopped before the helper at a path the plan named that another process has removed
    // or swapped since (the directories pinned above a store in a writable root: found when a
    // test's temporary home holding a listed store was removed while another run started, and
    // that run failed with "Can't find source path"; a `denyRead` path; a root swapped for a link
    // while bwrap set up, `overlap`): planned again from what is there now. With stdin a pipe or
    // a terminal (what the caller wrote went to this attempt) it fails at once, as a changed
    // workspace. bwrap's line must be all the run printed (on a terminal, all it holds).
    let bwrap_stopped = failure.is_none() && sandbox_type == SandboxType::Bwrap && bwrap_status.exit_code.is_none() && matches!(ending.status, super::child::ExitStatus::Exited(_));
    let alone = shared.terminal.is_some() || text.stdout.is_empty();
    if bwrap_stopped && alone && !ending.killed && !ending.timed_out {
        if let Some(e) = super::setup_changed::changed(setup_words, &plan.args, &req.policy.writable_roots) {
            if !nothing_reached_the_caller(&ending, shared, &req) {
                return Err(e);
            }
            return Ok(Attempt::Changed(e, Box::new(req)));
        }
    }
    let (exit_code, signal) = exit_of(sandbox_type, &ending, bwrap_status.exit_code, failure.as_ref(), &req.command[0], setup_words)?;
    // The policy goes to the check and comes back for the result (`host_risks`), never copied.
    let (host_risks, policy) = services.host_risks(req.policy, &req.env, sandbox_type).await?;
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
        // Moved, not cloned (~550 read-only paths and more: ~15 µs a run).
        policy,
        sandbox_details: details,
        host_risks,
        change_set,
        network_denials: network.denials,
        network_denials_omitted: network.denials_omitted,
        network_decisions: network.decisions,
        network_decisions_omitted: network.decisions_omitted.denials + network.decisions_omitted.repeated_allows,
        network_repeated_allows_omitted: network.decisions_omitted.repeated_allows,
        pty: shared.terminal.as_ref().map(|t| t.size()),
        limit_exceeded: crate::limits::exceeded(&limits, signal.as_deref()),
        applied_limits: limits.applied,
        resource_usage: crate::limits::own_usage(child.usage(), *tree_usage.lock().unwrap(), sandbox_type == SandboxType::Bwrap, host_peak),
    };
    // Reading the output (up to maxBuffer per stream) is CPU work: on a blocking thread, so the
    // addon's two async workers stay free for every other run's timers and pipes. A run that
    // exited 0 has nothing read: no thread hop for it (its verdict is the result's default).
    if !result.output_to_classify() {
        return Ok(Attempt::Ran(result));
    }
    let result = tokio::task::spawn_blocking(move || {
        result.classify();
        result
    })
    .await
    .map_err(|e| internal("classify the output", e))?;
    Ok(Attempt::Ran(result))
}

/// The room of the filesystems a sandboxed run writes: its writable roots', its tool caches'
/// store's, and `own`: the Landlock mode's run directory and a review-mode run's change set, in
/// the state directory under the home, which may be another filesystem (found by an attacker's
/// review, rev44: a run filled the home's through either unsaid) (`disk_room`); none without a
/// sandbox, whose writes are the caller's own.
fn disk_rooms<'a>(req: &'a SpawnRequest, sandbox: SandboxType, own: impl Iterator<Item = &'a std::path::Path>) -> Vec<super::disk_room::Room> {
    if sandbox == SandboxType::None {
        return Vec::new();
    }
    let roots = req.policy.writable_roots.iter().map(|r| r.root.as_path());
    super::disk_room::before(roots.chain(req.policy.tool_caches.store.as_deref()).chain(own))
}

/// What the result's `stderr` ends with when the Landlock supervisor had to be SIGKILLed
/// (`until_exit::SUPERVISOR_EXIT_BOUND`): it could not end the tree, which may outlive the run.
fn supervisor_killed() -> String {
    let after = super::until_exit::SUPERVISOR_EXIT_BOUND.as_secs();
    format!("sandspawn: the Landlock supervisor had not ended the command's processes {after} s after the kill and was killed itself; some of them may outlive the run\n")
}

/// A bwrap spawned before its walk whose helper was sent nothing (`overlap`): killed (its helper
/// blocks on the arguments, so nothing of the command ran) and reaped before the run goes on.
/// What the run held for its sandbox (`held`: its tool caches' layers, its directory, its change
/// set) is let go on a blocking thread, as after any run.
async fn end_unsent<T: Send + 'static>(tree: super::child::KillOnDrop, exited: tokio::sync::oneshot::Receiver<super::child::ExitStatus>, held: T) {
    let child = tree.0.clone();
    drop(tree);
    let _ = exited.await;
    let _ = tokio::task::spawn_blocking(move || drop(held)).await;
    let orphans = child.take_orphans();
    if !orphans.is_empty() {
        tokio::spawn(super::reap::reap_orphans(orphans));
    }
}

/// Why a run ended before its process was spawned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    Timeout,
    Request,
}

/// `work`, a step before the spawn on a blocking thread, unless the run's deadline passes or a kill
/// request comes first (`Cut`): the run then ends without waiting for it, `ended` is set (a wait
/// for a lock in `work` gives up, freeing its thread), and what it makes is dropped on a blocking
/// thread once it is done (a run's hold on the tool caches folds as it goes).
async fn before_spawn<T: Send + 'static>(
    mut work: tokio::task::JoinHandle<T>,
    deadline: Option<Instant>,
    control: &mut mpsc::UnboundedReceiver<Signal>,
    ended: &std::sync::atomic::AtomicBool,
    what: &str,
) -> Result<std::result::Result<T, Cut>> {
    let cut = tokio::select! {
        biased;
        done = &mut work => return done.map(Ok).map_err(|e| internal(what, e)),
        _ = sleep_until(deadline) => Cut::Timeout,
        // Any signal: a kill request ends the tree (SIGKILL follows any signal), and there is none.
        Some(_) = control.recv() => Cut::Request,
    };
    ended.store(true, std::sync::atomic::Ordering::Relaxed);
    tokio::spawn(async move {
        if let Ok(made) = work.await {
            let _ = tokio::task::spawn_blocking(move || drop(made));
        }
    });
    Ok(Err(cut))
}

/// What the result of a run that ended before its spawn says, taken before the request goes to a
/// blocking thread.
struct Unspawned {
    command: Vec<String>,
    cwd: String,
    policy: crate::policy::ResolvedPolicy,
    sandbox_type: SandboxType,
    pty: Option<crate::pty::PtySize>,
}

impl Unspawned {
    fn of(req: &SpawnRequest, shared: &Shared) -> Unspawned {
        use crate::platform::Platform;
        // The mechanism the platform's plans use (the Landlock mode is known only once probed).
        let sandbox_type = match (req.policy.mode, req.platform) {
            (crate::policy::SandboxMode::DangerFullAccess, _) | (_, Platform::Other) => SandboxType::None,
            (_, Platform::Darwin) => SandboxType::Seatbelt,
            (_, Platform::Linux) => SandboxType::Bwrap,
        };
        let pty = shared.terminal.as_ref().map(|t| t.size());
        Unspawned { command: req.command.clone(), cwd: req.cwd.to_string_lossy().into_owned(), policy: req.policy.clone(), sandbox_type, pty }
    }

    /// The result: no process (`pid` 0), no exit code, no signal, no output; `timedOut` for a
    /// deadline, and `durationMs` from the request.
    fn result(self, cut: Cut, requested: Instant) -> RunResult {
        RunResult {
            command: self.command,
            cwd: self.cwd,
            pid: 0,
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            aggregated_output: Aggregated::SameAsStdout,
            truncated: false,
            omitted_stdout: 0,
            omitted_stderr: 0,
            timed_out: cut == Cut::Timeout,
            duration_ms: requested.elapsed().as_secs_f64() * 1000.0,
            sandbox_type: self.sandbox_type,
            sandbox_denied: false,
            denial: None,
            policy: self.policy,
            sandbox_details: Default::default(),
            host_risks: Vec::new(),
            change_set: None,
            network_denials: Vec::new(),
            network_denials_omitted: 0,
            network_decisions: Vec::new(),
            network_decisions_omitted: 0,
            network_repeated_allows_omitted: 0,
            pty: self.pty,
            applied_limits: Vec::new(),
            limit_exceeded: None,
            resource_usage: Default::default(),
        }
    }
}

/// Whether the run may be planned again after `failure`: the helper found the workspace changed
/// (only its mounts under bwrap and its grants in the Landlock mode report that, before any exec),
/// and nothing of this attempt reached
/// the caller: not after a kill or the timeout (the request was for this run), not with a terminal
/// or a stdin the caller writes.
fn may_plan_again(failure: &sandspawn_helper::report::Failure, sandbox: SandboxType, ending: &Ending, shared: &Shared, req: &SpawnRequest) -> bool {
    failure.stage == sandspawn_helper::report::Stage::Changed && matches!(sandbox, SandboxType::Bwrap | SandboxType::Landlock) && nothing_reached_the_caller(ending, shared, req)
}

/// Whether nothing of an attempt that never ran its command reached the caller (see `may_plan_again`).
fn nothing_reached_the_caller(ending: &Ending, shared: &Shared, req: &SpawnRequest) -> bool {
    !ending.killed && !ending.timed_out && shared.terminal.is_none() && req.stdin != crate::options::StdinMode::Pipe
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
