//! The Linux fallback ladder: which sandbox mechanism runs, and, when none can, what each rung
//! said and how to fix it.
//!
//! 1. `bwrap-system`: the system bwrap (`SANDSPAWN_BWRAP`, else the first on `PATH` outside the
//!    cwd), 0.8.0 or newer, passing the self-test.
//! 2. `bwrap-bundled`: the bwrap shipped with sandspawn (see `bundled`), tried only when the
//!    system one is missing, too old, fails its flag probe or cannot be executed. Never after a
//!    namespace failure: the same kernel/AppArmor/seccomp rule stops the bundled copy too (and on
//!    Ubuntu no AppArmor profile names its path). Not when `SANDSPAWN_BWRAP` is set: an explicit
//!    choice that does not work is reported, not replaced.
//! 3. `landlock`: only when allowed (`linux.allow` includes 'landlock'), never automatic: Landlock
//!    ABI >= 3 plus seccomp plus the helper as a subreaper supervisor (see `landlock_rung`).
//!
//! A rung that failed for lack of a resource that passes (`resource-shortage`: another run holding
//! this user's processes) ends the climb: no other rung stands in for it.
//!
//! Every rung tried is recorded as an `Attempt`; when the sandbox is available the last attempt is
//! the rung that runs.

use std::path::Path;


use super::bundled::{self, BundledBwrap};
use super::diagnose::{FIX_INSTALL_BWRAP, RESOURCE_SHORTAGE};
use super::{Capabilities, Discovery};

/// `linux` spawn option: which mechanisms may run, and whether the bundled bwrap may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinuxOptions {
    pub allow_bwrap: bool,
    pub allow_landlock: bool,
    pub bundled_bwrap: bool,
    /// `allow_*` came from `SANDSPAWN_LINUX_ALLOW`, not from the caller's `linux.allow`: what the
    /// variable chose or ruled out is said in its name (found by an attacker's review: a run in
    /// the weaker Landlock mode because of the variable looked like any other).
    pub allow_from_env: bool,
}

impl Default for LinuxOptions {
    fn default() -> Self {
        LinuxOptions { allow_bwrap: true, allow_landlock: false, bundled_bwrap: true, allow_from_env: false }
    }
}

/// `SANDSPAWN_LINUX_ALLOW=bwrap,landlock`: read in the host process only, never passed to a command.
pub const LINUX_ALLOW_ENV: &str = "SANDSPAWN_LINUX_ALLOW";

impl LinuxOptions {
    /// What decided the allowed mechanisms, as the user wrote it: `SANDSPAWN_LINUX_ALLOW=landlock`
    /// or `linux.allow`.
    pub fn allow_source(&self) -> String {
        if !self.allow_from_env {
            return "linux.allow".to_string();
        }
        let names: Vec<&str> = [(self.allow_bwrap, "bwrap"), (self.allow_landlock, "landlock")].into_iter().filter(|(on, _)| *on).map(|(_, n)| n).collect();
        format!("{LINUX_ALLOW_ENV}={}", names.join(","))
    }

    /// The `notEnforced` entry of a run the variable put in the Landlock mode (none when the
    /// caller's own `linux.allow` did: that caller asked for it).
    fn landlock_chosen_by_env(&self) -> Option<String> {
        if !self.allow_from_env {
            return None;
        }
        let why = if self.allow_bwrap {
            format!("bwrap cannot run here, and {} in the host's environment allowed the weaker Landlock mode", self.allow_source())
        } else {
            format!("{} in the host's environment chose the weaker Landlock mode over bwrap; unset it to use bwrap", self.allow_source())
        };
        Some(format!("bwrap: {why} (no PID isolation, no private /proc)"))
    }
}

/// Mechanism names, as `attempts[].mechanism`.
pub const SYSTEM: &str = "bwrap-system";
pub const BUNDLED: &str = "bwrap-bundled";
pub const LANDLOCK: &str = "landlock";

pub use crate::error::Attempt;

impl Attempt {
    fn new(mechanism: &'static str, cause: &str, message: impl Into<String>) -> Self {
        Attempt { mechanism, cause: cause.to_string(), message: message.into() }
    }
}

pub use super::report::{BwrapSource, SandboxDetails};

/// System-bwrap causes after which the bundled copy is tried: the binary is absent, old or broken,
/// which says nothing about the host's namespaces.
const BUNDLED_AFTER: &[&str] = &["bwrap-missing", "bwrap-too-old", "old-bwrap", "bwrap-exec-failed"];

/// Everything the ladder needs from outside (tests pass fakes).
pub struct LadderInput<'a> {
    pub system: Discovery,
    pub override_set: bool,
    pub bundled: &'a BundledBwrap,
    pub options: LinuxOptions,
    /// Probe one bwrap (cached or not, decided by the caller).
    pub probe: &'a dyn Fn(&Path) -> Capabilities,
    /// The system-missing reason in words (with any bwrap ignored inside the cwd).
    pub missing_reason: String,
    /// The kernel's Landlock ABI (0: none), probed only when the rung is allowed.
    pub landlock_abi: &'a dyn Fn() -> u32,
}

/// Walk the ladder. The returned capabilities' `reason`/`fix`/`cause` describe the system bwrap's
/// rung (the one users know), unless that bwrap was only missing or old and the bundled one then
/// failed because of the host: that failure is the real cause (a system bwrap would fail the same
/// way; "install bubblewrap" would not help), so it is the one described. `attempts`/`fixes`
/// cover the whole ladder.
pub fn climb(input: LadderInput) -> Capabilities {
    let mut attempts = Vec::new();
    let mut bundled_host_failure = false;
    let source = input.options.allow_source();
    let first = if !input.options.allow_bwrap && input.options.allow_landlock {
        let msg = format!("not allowed: {source} does not include 'bwrap'");
        attempts.push(Attempt::new(SYSTEM, "not-allowed", msg.clone()));
        attempts.push(Attempt::new(BUNDLED, "not-allowed", msg));
        let fix = if input.options.allow_from_env {
            format!("allow bwrap: unset {LINUX_ALLOW_ENV}, or set it to bwrap,landlock")
        } else {
            "allow bwrap: linux: { allow: ['bwrap', 'landlock'] }".to_string()
        };
        Capabilities::unavailable(
            crate::platform::Platform::Linux,
            crate::platform::SandboxType::Landlock,
            "landlock-unavailable",
            format!("{source} names only 'landlock', which cannot run here"),
            fix,
        )
    } else if !input.options.allow_bwrap {
        let msg = format!("not allowed: {source} does not include 'bwrap'");
        attempts.push(Attempt::new(SYSTEM, "not-allowed", msg.clone()));
        attempts.push(Attempt::new(BUNDLED, "not-allowed", msg));
        Capabilities::unavailable(
            crate::platform::Platform::Linux,
            crate::platform::SandboxType::Bwrap,
            "not-allowed",
            "linux.allow does not include 'bwrap', and no other Linux sandbox is available in this build".to_string(),
            "allow bwrap: linux: { allow: ['bwrap'] } (the default)".to_string(),
        )
    } else {
        let system = match &input.system {
            Discovery::Found(p) => {
                let caps = (input.probe)(p);
                if caps.available {
                    attempts.push(Attempt::new(SYSTEM, "ok", format!("{} works", p.display())));
                    return finish(caps, attempts, BwrapSource::System);
                }
                caps
            }
            Discovery::OverrideInvalid(why) => Capabilities::unavailable(
                crate::platform::Platform::Linux,
                crate::platform::SandboxType::Bwrap,
                "bwrap-override-invalid",
                why.clone(),
                format!(
                    "unset {}, or set it to the absolute path of a working bwrap outside the working directory",
                    super::BWRAP_OVERRIDE_ENV
                ),
            ),
            Discovery::NotFound => Capabilities::unavailable(
                crate::platform::Platform::Linux,
                crate::platform::SandboxType::Bwrap,
                "bwrap-missing",
                input.missing_reason.clone(),
                FIX_INSTALL_BWRAP.to_string(),
            ),
        };
        let cause = system.cause.clone().unwrap_or_else(|| "unknown".to_string());
        attempts.push(Attempt::new(SYSTEM, &cause, system.reason.clone().unwrap_or_default()));
        let mut shown = system;
        let eligible = BUNDLED_AFTER.contains(&cause.as_str());
        if cause == RESOURCE_SHORTAGE {
            return short(shown, attempts, BUNDLED);
        }
        if input.override_set {
            attempts.push(Attempt::new(
                BUNDLED,
                "not-tried-override",
                format!("not tried: {} names the bwrap to use", super::BWRAP_OVERRIDE_ENV),
            ));
        } else if !input.options.bundled_bwrap {
            attempts.push(Attempt::new(BUNDLED, "disabled", "not tried: linux.bundledBwrap is false"));
        } else if !eligible {
            attempts.push(Attempt::new(
                BUNDLED,
                "not-tried-host",
                "not tried: the system bwrap failed because of the host (user namespaces or mounts are blocked), which stops the bundled copy the same way",
            ));
        } else {
            match bundled::verify(input.bundled) {
                Err(problem) => attempts.push(Attempt::new(BUNDLED, problem.cause(), problem.message())),
                Ok(path) => {
                    let caps = (input.probe)(&path);
                    if caps.available {
                        attempts.push(Attempt::new(BUNDLED, "ok", format!("{} works", path.display())));
                        return finish(caps, attempts, BwrapSource::Bundled);
                    }
                    let c = caps.cause.clone().unwrap_or_else(|| "unknown".to_string());
                    attempts.push(Attempt::new(BUNDLED, &c, caps.reason.clone().unwrap_or_default()));
                    if c == RESOURCE_SHORTAGE {
                        return short(caps, attempts, LANDLOCK);
                    }
                    if !BUNDLED_AFTER.contains(&c.as_str()) {
                        bundled_host_failure = true;
                        shown = caps;
                    }
                }
            }
        }
        shown
    };
    if input.options.allow_landlock {
        match super::landlock_rung::landlock((input.landlock_abi)()) {
            Ok(caps) => {
                attempts.push(Attempt::new(LANDLOCK, "ok", format!("Landlock ABI {} works", caps.sandbox_details.landlock_abi.unwrap_or(0))));
                let mut caps = caps;
                // First: the reason the rest of the list applies.
                if let Some(why) = input.options.landlock_chosen_by_env() {
                    caps.sandbox_details.not_enforced.insert(0, why);
                }
                caps.attempts = attempts;
                return caps;
            }
            Err((cause, message)) => attempts.push(Attempt::new(LANDLOCK, cause, message)),
        }
    } else {
        attempts.push(Attempt::new(
            LANDLOCK,
            "not-allowed",
            "not allowed: opt in with linux: { allow: ['bwrap', 'landlock'] }, SANDSPAWN_LINUX_ALLOW=bwrap,landlock or the CLI's --allow-landlock",
        ));
    }
    let mut caps = first;
    caps.fixes = fixes(&caps, &attempts, input.bundled, bundled_host_failure);
    caps.attempts = attempts;
    caps
}

/// A rung failed for lack of a resource another process holds for now: the rungs from `from` on
/// are not tried (a weaker sandbox because someone took this user's processes would be a
/// downgrade anyone could cause), and the only fix is to retry.
fn short(mut caps: Capabilities, mut attempts: Vec<Attempt>, from: &'static str) -> Capabilities {
    let rest: &[&'static str] = if from == BUNDLED { &[BUNDLED, LANDLOCK] } else { &[LANDLOCK] };
    for mechanism in rest {
        attempts.push(Attempt::new(mechanism, "not-tried-shortage", "not tried: the sandbox could not be set up for lack of a resource that passes; retry the run"));
    }
    caps.fixes = caps.fix.iter().cloned().collect();
    caps.attempts = attempts;
    caps
}

fn finish(mut caps: Capabilities, attempts: Vec<Attempt>, source: BwrapSource) -> Capabilities {
    caps.attempts = attempts;
    caps.sandbox_details = SandboxDetails { bwrap_source: Some(source), ..SandboxDetails::default() };
    caps
}

const FIX_OPT_IN_LANDLOCK: &str = "if user namespaces cannot be enabled here, opt into the Landlock mode (no PID isolation; see README \"Linux: the fallback ladder\"): linux: { allow: ['bwrap', 'landlock'] }, SANDSPAWN_LINUX_ALLOW=bwrap,landlock or --allow-landlock";

/// The fixes, least invasive first: what would make the system bwrap work, then what would make
/// the bundled one work, without repeats. After a host failure of the bundled bwrap, `shown` is
/// that rung's and the Landlock opt-in follows its fix.
fn fixes(shown: &Capabilities, attempts: &[Attempt], bundled: &BundledBwrap, bundled_host_failure: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    if let Some(f) = &shown.fix {
        add(f.clone());
    }
    if bundled_host_failure {
        add(FIX_OPT_IN_LANDLOCK.to_string());
    }
    for a in attempts.iter().filter(|a| a.mechanism == BUNDLED) {
        match a.cause.as_str() {
            "disabled" => add("allow sandspawn's bundled bwrap: linux: { bundledBwrap: true } (the default)".to_string()),
            c if c.starts_with("bundled-bwrap-") => {
                let problem = match c {
                    "bundled-bwrap-not-built" => bundled::Problem::NotBuilt,
                    _ => bundled::Problem::Missing(bundled.path.clone()),
                };
                add(problem.fix().to_string());
            }
            "not-tried-host" => add(FIX_OPT_IN_LANDLOCK.to_string()),
            _ => {}
        }
    }
    out
}

/// The rungs as one sentence, appended to an `ERR_SANDBOX_UNAVAILABLE` message.
pub fn summary(attempts: &[Attempt]) -> String {
    attempts.iter().map(|a| format!("{}: {}", a.mechanism, a.message)).collect::<Vec<_>>().join("; ")
}
