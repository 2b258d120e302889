//! Supervising a spawned tree until it exits: the timeout, kill requests (kill(), abort), the
//! forced kill after `forceKillAfterDelay`, and the end the host asks for (`Deadlines::end_asked`).
//! A signal that arrives while bwrap is still setting up is kept pending and delivered as soon as
//! the command runs; `timedOut` and `killed` are set only once a signal actually reached the command.

use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::child::{Child, ExitStatus};

/// How often a signal that arrived during bwrap's setup is retried until the command runs.
const PENDING_SIGNAL_RETRY: Duration = Duration::from_millis(2);
/// How long the Landlock supervisor may take to end its tree and exit after the force kill before
/// it is SIGKILLed itself: it gives up on what is left after 10 s (`tree_end::END_BOUND` in the
/// helper), so only a supervisor that is stuck itself gets here. Found by an attacker's review:
/// the run waited for the supervisor without bound, and never settled while it could not end the
/// tree, whatever the timeout, abort or kill.
pub(super) const SUPERVISOR_EXIT_BOUND: Duration = Duration::from_secs(30);

/// Why the tree is being signalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Timeout,
    Request,
}

/// How the tree ended.
pub(super) struct Ending {
    pub status: ExitStatus,
    pub timed_out: bool,
    pub killed: bool,
    /// The Landlock supervisor did not exit within `SUPERVISOR_EXIT_BOUND` of the force kill and
    /// was SIGKILLed: processes of the run may outlive it.
    pub supervisor_killed: bool,
}

/// The run's deadline and kill settings.
pub(super) struct Deadlines {
    /// When the timeout ends the run: counted from the request (`supervise::drive`).
    pub deadline: Option<Instant>,
    pub kill_signal: Signal,
    pub force_kill_after: Duration,
    /// Notified when the host ends the run: its keeper moved a name that must stay absent as often
    /// as it may (`planted::keeper::EndRun`), and the command must not go on making it. The tree is
    /// SIGKILLed at once, as a kill request with `SIGKILL` would (the result's `signal`; not
    /// `timedOut`); the result's `hostRisks` say why.
    pub end_asked: Arc<tokio::sync::Notify>,
}

/// Signals on their way to the tree.
struct Signalling<'a> {
    child: &'a Arc<Child>,
    force_kill_after: Duration,
    /// Asked for but not delivered yet (the command is still in setup).
    pending: Option<(Signal, Cause)>,
    /// When SIGKILL follows a signal the tree may ignore.
    force: Option<(Instant, Cause)>,
    /// When a supervisor still there after the force kill is SIGKILLed itself.
    stuck_after: Option<Instant>,
    timed_out: bool,
    killed: bool,
}

impl Signalling<'_> {
    /// Record what a signal that reached the tree means for the result.
    fn landed(&mut self, cause: Cause) {
        match cause {
            Cause::Timeout => self.timed_out = true,
            Cause::Request => self.killed = true,
        }
    }

    fn request(&mut self, sig: Signal, cause: Cause) {
        if sig == Signal::SIGKILL {
            self.kill_now(cause);
            return;
        }
        self.pending = Some((sig, cause));
        if self.force.is_none() {
            self.force = Some((Instant::now() + self.force_kill_after, cause));
        }
    }

    fn kill_now(&mut self, cause: Cause) {
        self.child.force_kill();
        self.pending = None;
        self.landed(cause);
        self.stuck_after.get_or_insert(Instant::now() + SUPERVISOR_EXIT_BOUND);
    }

    /// Deliver the pending signal if the command runs by now.
    fn deliver(&mut self) {
        if let Some((sig, cause)) = self.pending {
            if self.child.signal_tree(sig) {
                self.pending = None;
                self.landed(cause);
            }
        }
    }
}

/// Wait for the exit while enforcing the deadlines and kill requests. `finished` says the command
/// itself has already exited (bwrap reported its exit code): a timer firing then is no timeout.
pub(super) async fn supervise(
    child: &Arc<Child>,
    mut exited: oneshot::Receiver<ExitStatus>,
    control: &mut mpsc::UnboundedReceiver<Signal>,
    deadlines: &Deadlines,
    finished: impl Fn() -> bool,
) -> Ending {
    let deadline = deadlines.deadline;
    let mut deadline_passed = false;
    let mut s = Signalling { child, force_kill_after: deadlines.force_kill_after, pending: None, force: None, stuck_after: None, timed_out: false, killed: false };
    let mut supervisor_killed = false;
    let status = loop {
        let timeout = sleep_until((!deadline_passed).then_some(deadline).flatten());
        let force = sleep_until(s.force.map(|(t, _)| t));
        let stuck = sleep_until(s.stuck_after);
        let retry = sleep_until(s.pending.map(|_| Instant::now() + PENDING_SIGNAL_RETRY));
        tokio::select! {
            st = &mut exited => break st.unwrap_or(ExitStatus::Signaled(libc::SIGKILL)),
            Some(sig) = control.recv() => s.request(sig, Cause::Request),
            // No grace: a command that loops must not make the name once more meanwhile.
            _ = deadlines.end_asked.notified() => s.kill_now(Cause::Request),
            _ = timeout => {
                deadline_passed = true;
                // The command may have finished just as the timer fired: then it did not time out.
                if !finished() && !child.has_exited() {
                    s.request(deadlines.kill_signal, Cause::Timeout);
                }
            }
            _ = force => {
                if let Some((_, cause)) = s.force.take() {
                    s.kill_now(cause);
                }
            }
            _ = stuck => {
                s.stuck_after = None;
                supervisor_killed = child.kill_stuck_supervisor();
            }
            _ = retry => {}
        }
        s.deliver();
    };
    Ending { status, timed_out: s.timed_out, killed: s.killed, supervisor_killed }
}

/// Sleep until `at`, or forever without one.
pub(super) async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
