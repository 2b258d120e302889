//! Running the sandbox tool once for real, with the same namespace and mount flags real runs use.
//!
//! Processes are run with `std::process::Command`, stdin `/dev/null`, in their own process group,
//! with `LC_ALL=C` (bwrap's messages include `strerror` text, which must stay English to be
//! matched). The child is reaped with `waitpid` on its own pid only (`Child::try_wait`), polled with
//! a short back-off, so no SIGCHLD handler or global reaper is involved; output pipes are
//! non-blocking and drained while polling, so a grandchild that keeps them open cannot hang us.
//! On timeout the whole process group gets SIGKILL.

use std::path::Path;

use std::time::Duration;

use serde::Serialize;

use super::diagnose::{diagnose_seatbelt_failure, diagnose_with_host, Diagnosis, HostFacts};
use super::discover::{bwrap_version, supports_disable_userns};
pub use super::timed_run::{run_with_timeout, RunOutput};
use crate::error::ErrorCode;

/// How long a probe may take before it is killed.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// What one probe of the sandbox tool showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeOutcome {
    /// The sandbox works here.
    pub ok: bool,
    /// The probe failed only because a fresh `/proc` cannot be mounted (it passes without
    /// `--proc /proc`). sandspawn then refuses to run rather than exposing the host's /proc.
    pub proc_unmountable: bool,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// What the tool printed on stderr (trimmed).
    pub stderr: String,
    /// Why it failed (always set when `ok` is false).
    pub diagnosis: Option<Diagnosis>,
    /// The probe command line (program first).
    pub argv: Vec<String>,
}

/// `/bin/true`, or `/usr/bin/true` on merged-/usr-less systems.
fn true_binary() -> &'static str {
    if Path::new("/bin/true").exists() {
        "/bin/true"
    } else {
        "/usr/bin/true"
    }
}

/// The probe's bwrap arguments: the namespace and mount flags of a real run, then `-- true`.
/// bwrap's status goes to stdout (`true` prints nothing): it names the sandbox's init, which
/// bwrap orphans and `reap_probe_init` reaps when the host adopts orphans.
pub fn bwrap_probe_args(disable_userns: bool, with_proc: bool) -> Vec<String> {
    let mut a: Vec<&str> = vec!["--new-session", "--die-with-parent", "--json-status-fd", "1", "--unshare-user"];
    if disable_userns {
        a.push("--disable-userns");
    }
    a.extend(["--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev"]);
    if with_proc {
        a.extend(["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]);
    }
    a.extend(["--", true_binary()]);
    a.into_iter().map(String::from).collect()
}

/// Reap the init a bwrap probe orphaned, if it landed on this process (see `runner::reap`).
fn reap_probe_init(out: &RunOutput) {
    if !crate::runner::reap::host_adopts_orphans() {
        return;
    }
    let mut parser = crate::runner::status::StatusParser::default();
    parser.feed(out.stdout.as_bytes());
    if let (Some(pid), Some(ns)) = (parser.status.child_pid, parser.status.pid_namespace) {
        crate::runner::reap::reap_orphans_blocking(crate::runner::reap::pin_sandbox_init(pid, ns).into_iter().collect());
    }
}

/// A shell-like rendering of an argv, for messages.
pub fn render_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.=:,+@".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// bwrap's success: exit 0 and no `bwrap:` complaint on stderr.
fn bwrap_succeeded(out: &RunOutput) -> bool {
    !out.timed_out && out.exit_code == Some(0) && !out.stderr.contains("bwrap:")
}

/// Probe `bwrap` (version and `--disable-userns` support detected here).
pub fn probe_bwrap(bwrap: &Path) -> ProbeOutcome {
    let version = bwrap_version(bwrap);
    let disable_userns = supports_disable_userns(bwrap, version.as_deref());
    probe_bwrap_with(bwrap, disable_userns, &HostFacts::read())
}

fn failed(argv: Vec<String>, out: Option<&RunOutput>, diagnosis: Diagnosis) -> ProbeOutcome {
    ProbeOutcome {
        ok: false,
        proc_unmountable: false,
        exit_code: out.and_then(|o| o.exit_code),
        timed_out: out.is_some_and(|o| o.timed_out),
        stderr: out.map(|o| o.stderr.trim().to_string()).unwrap_or_default(),
        diagnosis: Some(diagnosis),
        argv,
    }
}

/// Quote stderr for a message: trimmed, at most ~600 characters.
fn quote_stderr(s: &str) -> String {
    let t = s.trim();
    if t.is_empty() {
        return "(no output)".to_string();
    }
    let mut q: String = t.chars().take(600).collect();
    if q.len() < t.len() {
        q.push_str(" ...");
    }
    format!("\"{}\"", q.replace('\n', " | "))
}

/// Probe with known features and host facts.
pub fn probe_bwrap_with(bwrap: &Path, disable_userns: bool, host: &HostFacts) -> ProbeOutcome {
    let args = bwrap_probe_args(disable_userns, true);
    let mut argv = vec![bwrap.display().to_string()];
    argv.extend(args.iter().cloned());
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = match run_with_timeout(bwrap, &arg_refs, PROBE_TIMEOUT) {
        Ok(o) => {
            reap_probe_init(&o);
            o
        }
        Err(e) => {
            // Not started for lack of processes or memory: no verdict on this bwrap (and no reason
            // to try the bundled one, which `bwrap-exec-failed` would).
            let what = format!("{} could not be started", bwrap.display());
            if let Some(d) = super::diagnose::shortage_error(&what, &e) {
                return failed(argv, None, d);
            }
            return failed(
                argv,
                None,
                Diagnosis {
                    code: ErrorCode::Unavailable,
                    cause: "bwrap-exec-failed",
                    reason: format!("{} could not be executed: {e}", bwrap.display()),
                    fix: format!(
                        "check that {} is a working bwrap binary; {}",
                        bwrap.display(),
                        super::diagnose::FIX_INSTALL_BWRAP
                    ),
                },
            )
        }
    };
    if bwrap_succeeded(&out) {
        return ProbeOutcome {
            ok: true,
            proc_unmountable: false,
            exit_code: out.exit_code,
            timed_out: false,
            stderr: out.stderr.trim().to_string(),
            diagnosis: None,
            argv,
        };
    }
    if out.timed_out {
        let diag = Diagnosis {
            code: ErrorCode::Unavailable,
            cause: "probe-timeout",
            reason: format!(
                "the bwrap self-test did not finish within {} s and was killed (stderr: {})",
                PROBE_TIMEOUT.as_secs(),
                quote_stderr(&out.stderr)
            ),
            fix: format!("run `{}` by hand to see where it hangs", render_argv(&argv)),
        };
        return failed(argv, Some(&out), diag);
    }
    let diag = diagnose_with_host(&out.stderr, host).unwrap_or_else(|| Diagnosis {
        code: ErrorCode::Unavailable,
        cause: "unknown",
        reason: format!(
            "the bwrap self-test failed ({}) with stderr {}",
            match (out.exit_code, out.signal) {
                (Some(c), _) => format!("exit code {c}"),
                (None, Some(s)) => format!("signal {s}"),
                _ => "unknown status".to_string(),
            },
            quote_stderr(&out.stderr)
        ),
        fix: format!("run `{}` by hand to see the error", render_argv(&argv)),
    });
    let diag = host_level(diag, &argv);
    let mut outcome = failed(argv, Some(&out), diag);
    if outcome.diagnosis.as_ref().is_some_and(|d| d.cause == "proc-masked") {
        // Does everything but /proc work? Then record it precisely.
        let args = bwrap_probe_args(disable_userns, false);
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        if let Ok(o2) = run_with_timeout(bwrap, &arg_refs, PROBE_TIMEOUT) {
            reap_probe_init(&o2);
            if bwrap_succeeded(&o2) {
                outcome.proc_unmountable = true;
                if let Some(d) = outcome.diagnosis.as_mut() {
                    d.reason.push_str(
                        "; everything else works (bwrap runs without --proc), but sandspawn will not expose the host's /proc",
                    );
                }
            }
        }
    }
    outcome
}

/// The fixed path of sandbox-exec on macOS (never looked up in PATH).
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Probe Seatbelt: `sandbox-exec -p '(version 1)(allow default)' /usr/bin/true`. Compiled on every
/// platform (tested with a fake on Linux); only used on macOS.
pub fn probe_seatbelt(sandbox_exec: &Path) -> ProbeOutcome {
    let args = ["-p", "(version 1)(allow default)", "/usr/bin/true"];
    let mut argv = vec![sandbox_exec.display().to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let out = match run_with_timeout(sandbox_exec, &args, PROBE_TIMEOUT) {
        Ok(o) => o,
        Err(e) => {
            if let Some(d) = super::diagnose::shortage_error(&format!("{} could not be started", sandbox_exec.display()), &e) {
                return failed(argv, None, d);
            }
            return failed(
                argv,
                None,
                Diagnosis {
                    code: ErrorCode::Unavailable,
                    cause: "seatbelt-failed",
                    reason: format!("{} could not be executed: {e}", sandbox_exec.display()),
                    fix: "sandspawn needs macOS's /usr/bin/sandbox-exec; use sandbox: 'danger-full-access' where it is missing"
                        .to_string(),
                },
            )
        }
    };
    if !out.timed_out && out.exit_code == Some(0) {
        return ProbeOutcome {
            ok: true,
            proc_unmountable: false,
            exit_code: Some(0),
            timed_out: false,
            stderr: out.stderr.trim().to_string(),
            diagnosis: None,
            argv,
        };
    }
    let diag = diagnose_seatbelt_failure(&out.stderr).unwrap_or_else(|| Diagnosis {
        code: ErrorCode::Unavailable,
        cause: if out.timed_out { "probe-timeout" } else { "unknown" },
        reason: format!(
            "the sandbox-exec self-test failed (exit code {:?}{}) with stderr {}",
            out.exit_code,
            if out.timed_out { ", timed out" } else { "" },
            quote_stderr(&out.stderr)
        ),
        fix: format!("run `{}` by hand to see the error", render_argv(&argv)),
    });
    failed(argv, Some(&out), diag)
}

/// The self-test mounts nothing of the user's, so a mount failure there is the host's problem:
/// report it as unavailable, with advice about the host rather than about a policy path.
/// A shortage stays what it is: it passes, and the run that met it is the one to retry.
fn host_level(mut d: Diagnosis, argv: &[String]) -> Diagnosis {
    if d.code != ErrorCode::SetupFailed || d.cause == super::diagnose::RESOURCE_SHORTAGE {
        return d;
    }
    d.code = ErrorCode::Unavailable;
    let by_hand = format!("run `{}` by hand to see the error", render_argv(argv));
    match d.cause {
        "mount-limit" => {
            d.reason = format!("the bwrap self-test hit the kernel's mount limit: {}", d.reason);
            d.fix = format!("raise the limit with `sudo sysctl -w fs.mount-max=100000`; {by_hand}");
        }
        "bad-source" => {
            d.reason = format!("a system path the bwrap self-test binds (/, /proc/sys) does not exist: {}", d.reason);
            d.fix = format!("create or remount the missing system path named by bwrap (or remove what hides it); {by_hand}");
        }
        _ => {
            d.reason = format!("the bwrap self-test, which mounts no paths of yours, failed: {}", d.reason);
            d.fix = format!(
                "this is a property of the host or container, not of your policy: {}; {by_hand}",
                super::diagnose::FIX_DOCKER
            );
        }
    }
    d
}
