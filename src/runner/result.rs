//! The result of a run as the API reports it, and the rules that turn wait statuses into
//! `exitCode`/`signal`.

use serde::Serialize;

use crate::capabilities::SandboxDetails;
use crate::denial::{classify_sandbox_denial, is_likely_sandbox_denied, output_is_read, CommandOutput, DenialContext, SandboxDenial};
use crate::limits::{Limit, Mechanism, ResourceUsage};
use crate::planted::HostRisk;
use crate::platform::SandboxType;
use crate::policy::ResolvedPolicy;

use super::child::ExitStatus;
use crate::signals::signal_from_number;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    pub command: Vec<String>,
    pub cwd: String,
    pub pid: u32,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub stdout: String,
    pub stderr: String,
    /// stdout and stderr interleaved; see `aggregated()`.
    pub aggregated_output: Aggregated,
    pub truncated: bool,
    pub omitted_stdout: u64,
    pub omitted_stderr: u64,
    pub timed_out: bool,
    pub duration_ms: f64,
    pub sandbox_type: SandboxType,
    pub sandbox_denied: bool,
    pub denial: Option<SandboxDenial>,
    /// The policy the run was held to (for `classifySandboxDenial(result)`).
    pub policy: ResolvedPolicy,
    /// Which sandbox mechanism ran (which bwrap, on Linux).
    pub sandbox_details: SandboxDetails,
    /// Planted configuration the sandbox could not prevent (Linux), found after the run.
    pub host_risks: Vec<HostRisk>,
    /// Review mode: the change set the run's writes went to.
    pub change_set: Option<crate::review::summary::Summary>,
    /// What the network allow-list's proxy refused (empty without a `NetworkPolicy`).
    pub network_denials: Vec<crate::network::NetworkDenial>,
    /// Refused requests `network_denials` leaves out (its distinct entries are bounded).
    pub network_denials_omitted: u64,
    /// What `onRequest` decided (empty without one).
    pub network_decisions: Vec<crate::network::ask::NetworkDecision>,
    /// Decisions `network_decisions` leaves out (denials past its bound, repeated allows past theirs).
    pub network_decisions_omitted: u64,
    /// Of them, allows for a host, port and kind `network_decisions` already lists an allow for
    /// (never an allow for any other: that question is refused unasked).
    pub network_repeated_allows_omitted: u64,
    /// The terminal's size at the end, for `pty` runs.
    pub pty: Option<crate::pty::PtySize>,
    /// Each requested resource limit and what enforced it.
    pub applied_limits: Vec<(Limit, Mechanism)>,
    /// The limit that ended the run, from kernel evidence only (see `limits::exceeded`).
    pub limit_exceeded: Option<Limit>,
    pub resource_usage: ResourceUsage,
}

/// The interleaved output. When only one stream wrote, it is that stream, and no copy is kept.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Aggregated {
    Text(String),
    SameAsStdout,
    SameAsStderr,
}

impl RunResult {
    /// stdout and stderr interleaved in arrival order.
    pub fn aggregated(&self) -> &str {
        match &self.aggregated_output {
            Aggregated::Text(t) => t,
            Aggregated::SameAsStdout => &self.stdout,
            Aggregated::SameAsStderr => &self.stderr,
        }
    }

    /// Whether `classify` has anything to read: a run that exited 0 is no denial by any of the
    /// verdicts (`output_is_read`, and the proxy's `network_denial`), whatever it printed.
    pub fn output_to_classify(&self) -> bool {
        self.exit_code != Some(0)
    }

    /// Fill `sandbox_denied` and `denial` from the output. A timed-out run is judged by what it
    /// printed before the kill, like any other (a timeout alone is no evidence of a denial), so
    /// both stay equal to what `isLikelySandboxDenied`/`classifySandboxDenial` say of the result.
    pub fn classify(&mut self) {
        if !self.output_to_classify() {
            (self.sandbox_denied, self.denial) = (false, None);
            return;
        }
        let out = CommandOutput {
            exit_code: self.exit_code,
            signal: self.signal.as_deref(),
            stdout: &self.stdout,
            stderr: &self.stderr,
            aggregated: self.aggregated(),
            cwd: Some(std::path::Path::new(&self.cwd)),
        };
        // The proxy's own record beats reading the output: a failed run its policy refused something
        // for (not the command's own malformed or excess requests: `deciding_refusal`).
        let refused = crate::denial::deciding_refusal(self.network_denials.iter().map(|d| (d.host.as_str(), d.reason)));
        let network = refused.and_then(|(host, why)| crate::denial::network_denial(&out, host, why));
        let (denied, denial) = match network {
            Some(d) => (true, Some(d)),
            // The policy's context copies every path it rules (a `.git` per nested repository):
            // made only for output that is read.
            None if !output_is_read(self.sandbox_type, self.exit_code) => (false, None),
            None => {
                let ctx = DenialContext::from(&self.policy).with_cwd(self.cwd.clone());
                (is_likely_sandbox_denied(self.sandbox_type, &out), classify_sandbox_denial(self.sandbox_type, &out, Some(&ctx)))
            }
        };
        self.sandbox_denied = denied;
        self.denial = denial;
    }
}

/// `(exitCode, signal)` for a process we waited for directly (no sandbox, Seatbelt).
pub fn from_wait_status(status: ExitStatus) -> (Option<i32>, Option<String>) {
    match status {
        ExitStatus::Exited(code) => (Some(code), None),
        ExitStatus::Signaled(n) => (None, Some(signal_label(n))),
    }
}

/// `(exitCode, signal)` under bwrap. bwrap's init reports a signal death of the command as exit
/// code 128 + n, exactly like a shell. The rule: an exit code 129..=159 (128 + a standard signal
/// 1..=31) is reported as that signal with `exitCode: null`; anything else is an exit code. So a
/// command that really calls `exit 143` reads as `SIGTERM` under bwrap (documented in the README).
/// When bwrap itself was killed (our SIGKILL after `forceKillAfterDelay`) there is no exit code
/// and bwrap's own wait status is the answer.
pub fn from_bwrap(exit_code: Option<i32>, bwrap_status: ExitStatus) -> (Option<i32>, Option<String>) {
    match exit_code {
        Some(code) if (129..=159).contains(&code) => (None, Some(signal_label(code - 128))),
        Some(code) => (Some(code), None),
        None => from_wait_status(bwrap_status),
    }
}

fn signal_label(n: i32) -> String {
    signal_from_number(n).map(|s| s.as_str().to_string()).unwrap_or_else(|| format!("SIG{n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bwrap_exit_codes() {
        assert_eq!(from_bwrap(Some(0), ExitStatus::Exited(0)), (Some(0), None));
        assert_eq!(from_bwrap(Some(42), ExitStatus::Exited(42)), (Some(42), None));
        assert_eq!(from_bwrap(Some(255), ExitStatus::Exited(255)), (Some(255), None));
        assert_eq!(from_bwrap(Some(128), ExitStatus::Exited(128)), (Some(128), None));
        assert_eq!(from_bwrap(Some(143), ExitStatus::Exited(143)), (None, Some("SIGTERM".into())));
        assert_eq!(from_bwrap(Some(137), ExitStatus::Exited(137)), (None, Some("SIGKILL".into())));
        assert_eq!(from_bwrap(Some(139), ExitStatus::Exited(139)), (None, Some("SIGSEGV".into())));
        assert_eq!(from_bwrap(Some(159), ExitStatus::Exited(159)), (None, Some("SIGSYS".into())));
        assert_eq!(from_bwrap(Some(160), ExitStatus::Exited(160)), (Some(160), None));
        assert_eq!(from_bwrap(None, ExitStatus::Signaled(9)), (None, Some("SIGKILL".into())));
    }

    #[test]
    fn direct_wait_status() {
        assert_eq!(from_wait_status(ExitStatus::Exited(143)), (Some(143), None));
        assert_eq!(from_wait_status(ExitStatus::Signaled(15)), (None, Some("SIGTERM".into())));
    }
}
