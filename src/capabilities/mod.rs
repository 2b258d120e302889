//! Can the platform sandbox run here, and if not, why and how to fix it.
//!
//! * Linux: find bwrap (`discover`: `SANDSPAWN_BWRAP`, then the first `bwrap` on `PATH` outside the
//!   cwd), read its version and features, and run it once for real with the namespace and mount
//!   flags of a real run (`probe`). A failure is diagnosed from bwrap's exact words plus the host's
//!   sysctls (`diagnose`). When the system bwrap is missing or too old, the bwrap shipped with
//!   sandspawn (`bundled`) is verified and probed the same way; `ladder` decides and records each
//!   rung's outcome.
//! * macOS: `/usr/bin/sandbox-exec` (fixed path, never `PATH`) is run once with an allow-all
//!   profile; `sandbox_apply: Operation not permitted` means we are already inside a sandbox.
//! * Elsewhere: no sandbox; only `danger-full-access` runs.
//!
//! Environment: `SANDSPAWN_BWRAP=/abs/path/to/bwrap` selects the bwrap binary explicitly (it must be
//! an executable file outside the cwd, reached only through entries no other user and no run may
//! change, see `override_path`; when it is unusable, sandspawn reports that instead of falling
//! back to `PATH`).
//!
//! `capabilities_cached` re-runs discovery (a few `stat` calls) every time, so a `bwrap` inside the
//! current cwd is never used, and caches the probe per (bwrap path and file identity, `PATH`,
//! `SANDSPAWN_BWRAP`): a working sandbox for the life of the process, a failure for a few seconds,
//! and a failure that may pass by itself (another run holding this user's processes) not at all.

pub(crate) mod acl_writers;
pub mod bundled;
pub mod diagnose;
pub mod discover;
pub mod ladder;
pub mod landlock_rung;
pub mod override_path;
pub(crate) mod private_group;
pub mod probe;
mod report;
mod timed_run;
pub(crate) mod unmapped_owner;

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};


pub use diagnose::{
    diagnose_bwrap_failure, diagnose_seatbelt_failure, diagnose_with_host, Diagnosis, HostFacts, ALL_CAUSES,
};
pub use discover::{bwrap_version, discover, find_bwrap, supports_disable_userns, Discovery, BWRAP_OVERRIDE_ENV};
pub use bundled::BundledBwrap;
pub use ladder::{Attempt, BwrapSource, LinuxOptions, SandboxDetails, LINUX_ALLOW_ENV};
pub use report::Capabilities;
pub use probe::{probe_bwrap, probe_seatbelt, ProbeOutcome, SANDBOX_EXEC};

use crate::error::SandboxError;
use crate::plan::BwrapInfo;
use crate::platform::{Platform, SandboxType};


// ---- cache -------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
struct CacheKey {
    platform: Platform,
    tool: PathBuf,
    /// (dev, ino, size, mtime ns) of the tool: an upgraded or replaced binary is probed again.
    identity: (u64, u64, u64, i64),
    path_env: Option<String>,
    override_env: Option<OsString>,
}

const CACHE_SLOTS: usize = 16;
/// Each probe's verdict, and until when it holds (`None`: for the life of the process).
static CACHE: Mutex<Vec<(CacheKey, Capabilities, Option<Instant>)>> = Mutex::new(Vec::new());

/// How long a probe's failure is reused. A probe costs a few milliseconds (`bwrap --version` and
/// one bwrap run, ~7 ms here), so this is not about speed: a burst of runs makes one probe, a
/// bwrap whose self-test hangs (`PROBE_TIMEOUT`) does not hold up each run, and a host fixed
/// meanwhile (a sysctl set) or a failure nobody foresaw as passing is seen again within seconds.
pub(crate) const FAILURE_KEPT: Duration = Duration::from_secs(5);

/// How long a verdict may be reused: `Some(None)` for the life of the process (the tool's file
/// identity is part of the key), `Some(Some(d))` for `d`, `None` not at all: a failure that may
/// pass by itself (a shortage of this user's processes that another run causes; see
/// `diagnose::may_pass`) would otherwise break sandboxing in this process for good.
fn kept_for(c: &Capabilities) -> Option<Option<Duration>> {
    match (c.available, c.cause.as_deref()) {
        (true, _) => Some(None),
        (false, Some(cause)) if diagnose::may_pass(cause) => None,
        (false, _) => Some(Some(FAILURE_KEPT)),
    }
}

fn identity(p: &Path) -> (u64, u64, u64, i64) {
    match std::fs::metadata(p) {
        Ok(m) => (m.dev(), m.ino(), m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec()),
        Err(_) => (0, 0, 0, 0),
    }
}

fn cached_probe(key: CacheKey, compute: impl FnOnce() -> Capabilities) -> Capabilities {
    {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        cache.retain(|(_, _, until)| until.is_none_or(|t| now < t));
        if let Some((_, c, _)) = cache.iter().find(|(k, _, _)| *k == key) {
            return c.clone();
        }
    }
    // Not holding the lock while probing: two racing callers may both probe, which is harmless.
    let c = compute();
    let Some(kept) = kept_for(&c) else { return c };
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(k, _, _)| *k != key);
    if cache.len() >= CACHE_SLOTS {
        cache.remove(0);
    }
    cache.push((key, c.clone(), kept.map(|d| Instant::now() + d)));
    c
}

// ---- capabilities ------------------------------------------------------------------------------

/// The host's sandbox capabilities with the default `linux` options, probed now (uncached).
pub fn capabilities(path_env: Option<&str>, cwd: &Path) -> Capabilities {
    capabilities_for(Platform::host(), path_env, cwd, &LinuxOptions::default(), false)
}

/// Like `capabilities`, but the probe result is cached per process, keyed by the bwrap found (and
/// its file identity), `PATH` and `SANDSPAWN_BWRAP`. Discovery itself runs on every call.
pub fn capabilities_cached(path_env: Option<&str>, cwd: &Path) -> Capabilities {
    capabilities_cached_with(path_env, cwd, &LinuxOptions::default())
}

/// `capabilities_cached` for given `linux` options (what `sandboxCapabilities(options)` reports).
pub fn capabilities_cached_with(path_env: Option<&str>, cwd: &Path, linux: &LinuxOptions) -> Capabilities {
    capabilities_for(Platform::host(), path_env, cwd, linux, true)
}

fn capabilities_for(platform: Platform, path_env: Option<&str>, cwd: &Path, linux: &LinuxOptions, cached: bool) -> Capabilities {
    match platform {
        Platform::Linux => with_helper(linux_ladder(
            std::env::var_os(BWRAP_OVERRIDE_ENV),
            path_env,
            cwd,
            linux,
            &BundledBwrap::installed(),
            cached,
        )),
        Platform::Darwin => darwin_capabilities(Path::new(SANDBOX_EXEC), cached),
        Platform::Other => Capabilities::unavailable(
            Platform::Other,
            SandboxType::None,
            "unsupported-platform",
            format!("no OS sandbox on {}; only sandbox: 'danger-full-access' runs", std::env::consts::OS),
            "use sandbox: 'danger-full-access' (no isolation), or run on Linux (bubblewrap) or macOS (Seatbelt)"
                .to_string(),
        ),
    }
}

/// A working bwrap is not enough on Linux: every plan runs `sandspawn-helper` inside the sandbox.
fn with_helper(mut caps: Capabilities) -> Capabilities {
    if let (true, Some(problem)) = (caps.available, crate::helper::problem()) {
        caps.available = false;
        caps.reason = Some(problem.reason.clone());
        caps.fix = Some(problem.fix.clone());
        caps.cause = Some(if problem.shortage { diagnose::RESOURCE_SHORTAGE } else { "helper-unusable" }.to_string());
        caps.fixes = vec![problem.fix.clone()];
    }
    caps
}

/// The Linux fallback ladder (see `ladder`) over the system bwrap found from `override_env` /
/// `path_env` and the given bundled one.
pub(crate) fn linux_ladder(
    override_env: Option<OsString>,
    path_env: Option<&str>,
    cwd: &Path,
    linux: &LinuxOptions,
    bundled: &BundledBwrap,
    cached: bool,
) -> Capabilities {
    let system = discover(override_env.as_deref(), path_env, cwd);
    let mut missing_reason = "bubblewrap (bwrap) is not installed or not on PATH".to_string();
    if system == Discovery::NotFound {
        let ignored = discover::skipped_bwraps(path_env, cwd);
        if !ignored.is_empty() {
            let list: Vec<String> = ignored.iter().map(|(p, why)| format!("{}: {why}", p.display())).collect();
            missing_reason.push_str(&format!(" (ignored {})", list.join("; ")));
        }
    }
    let override_set = override_env.as_ref().is_some_and(|v| !v.is_empty());
    let probe = |bwrap: &Path| {
        let compute = || linux_probe(bwrap);
        if cached {
            let key = CacheKey {
                platform: Platform::Linux,
                identity: identity(bwrap),
                tool: bwrap.to_path_buf(),
                path_env: path_env.map(str::to_string),
                override_env: override_env.clone(),
            };
            cached_probe(key, compute)
        } else {
            compute()
        }
    };
    ladder::climb(ladder::LadderInput { system, override_set, bundled, options: *linux, probe: &probe, missing_reason, landlock_abi: &landlock_rung::kernel_abi })
}

fn linux_probe(bwrap: &Path) -> Capabilities {
    let version = bwrap_version(bwrap);
    let disable_userns = supports_disable_userns(bwrap, version.as_deref());
    if !disable_userns && version.is_some() {
        // Too old to be trusted: without --disable-userns the command could create a user
        // namespace and regain capabilities in it. The bundled bwrap takes over (see `ladder`).
        let v = version.clone().unwrap_or_default();
        let mut caps = Capabilities::unavailable(
            Platform::Linux,
            SandboxType::Bwrap,
            "bwrap-too-old",
            format!("{} is bubblewrap {v}, older than 0.8.0: it lacks --disable-userns", bwrap.display()),
            diagnose::FIX_UPGRADE.to_string(),
        );
        caps.bwrap = Some(BwrapInfo { path: bwrap.to_path_buf(), version, disable_userns, proc_unmountable: false });
        return caps;
    }
    let outcome = probe::probe_bwrap_with(bwrap, disable_userns, &HostFacts::read());
    let info =
        BwrapInfo { path: bwrap.to_path_buf(), version, disable_userns, proc_unmountable: outcome.proc_unmountable };
    from_outcome(Platform::Linux, SandboxType::Bwrap, outcome, Some(info))
}

fn from_outcome(platform: Platform, st: SandboxType, o: ProbeOutcome, bwrap: Option<BwrapInfo>) -> Capabilities {
    match (o.ok, o.diagnosis) {
        (true, _) => Capabilities {
            platform,
            sandbox_type: st,
            available: true,
            reason: None,
            fix: None,
            cause: None,
            bwrap,
            stderr: None,
            sandbox_details: SandboxDetails::default(),
            attempts: Vec::new(),
            fixes: Vec::new(),
        },
        (false, d) => {
            let d = d.unwrap_or_else(|| Diagnosis {
                code: crate::ErrorCode::Unavailable,
                cause: "unknown",
                reason: "the sandbox self-test failed".to_string(),
                fix: "run `sandspawn doctor`".to_string(),
            });
            Capabilities {
                platform,
                sandbox_type: st,
                available: false,
                reason: Some(d.reason),
                fixes: vec![d.fix.clone()],
                fix: Some(d.fix),
                cause: Some(d.cause.to_string()),
                bwrap,
                stderr: (!o.stderr.is_empty()).then_some(o.stderr),
                sandbox_details: SandboxDetails::default(),
                attempts: Vec::new(),
            }
        }
    }
}

fn darwin_capabilities(sandbox_exec: &Path, cached: bool) -> Capabilities {
    if !sandbox_exec.is_file() {
        return Capabilities::unavailable(
            Platform::Darwin,
            SandboxType::Seatbelt,
            "seatbelt-failed",
            format!("{} is missing", sandbox_exec.display()),
            "sandspawn needs macOS's built-in /usr/bin/sandbox-exec; use sandbox: 'danger-full-access' where it is missing"
                .to_string(),
        );
    }
    let compute = || from_outcome(Platform::Darwin, SandboxType::Seatbelt, probe_seatbelt(sandbox_exec), None);
    if cached {
        let key = CacheKey {
            platform: Platform::Darwin,
            identity: identity(sandbox_exec),
            tool: sandbox_exec.to_path_buf(),
            path_env: None,
            override_env: None,
        };
        cached_probe(key, compute)
    } else {
        compute()
    }
}

/// What a sandboxed run uses: the bwrap to run (Linux) and what to report about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub bwrap: Option<BwrapInfo>,
    /// The Landlock mode runs (no bwrap) at `details.landlock_abi`.
    pub landlock: bool,
    pub details: SandboxDetails,
}

/// The sandbox every sandboxed run needs: a bwrap on Linux (system or bundled, per `linux`),
/// nothing on macOS, an `ERR_SANDBOX_UNAVAILABLE` error (with reason, fix, `attempts` and `fixes`)
/// when it cannot run here, and `ERR_SANDBOX_UNSUPPORTED` on other platforms. Uses the cached probe.
pub fn require_sandbox(platform: Platform, path_env: Option<&str>, cwd: &Path, linux: &LinuxOptions) -> crate::Result<Sandbox> {
    if platform == Platform::Other {
        return Err(SandboxError::unsupported(format!(
            "no OS sandbox on {}; only sandbox: 'danger-full-access' runs",
            std::env::consts::OS
        )));
    }
    let caps = capabilities_for(platform, path_env, cwd, linux, true);
    if caps.cause.as_deref() == Some(diagnose::RESOURCE_SHORTAGE) {
        // The sandbox may well work in a moment: this run is refused (nothing ran), with a retry
        // rather than the fixes of a host that cannot sandbox (which turn the sandbox off).
        let reason = caps.reason.as_deref().unwrap_or("the sandbox could not be set up for lack of a resource");
        let e = SandboxError::setup_failed_for(reason, caps.fix.as_deref().unwrap_or("retry the run"));
        return Err(match caps.stderr {
            Some(s) => e.with_stderr(s),
            None => e,
        });
    }
    if !caps.available {
        let mut reason = caps.reason.clone().unwrap_or_else(|| "the sandbox self-test failed".to_string());
        if caps.attempts.len() > 1 {
            reason.push_str(&format!(" [tried: {}]", ladder::summary(&caps.attempts)));
        }
        let mut e = SandboxError::unavailable(reason, caps.fix.as_deref().unwrap_or("run `sandspawn doctor`"))
            .with_ladder(caps.attempts, caps.fixes);
        if let Some(s) = caps.stderr {
            e = e.with_stderr(s);
        }
        return Err(e);
    }
    Ok(match platform {
        Platform::Linux => Sandbox { bwrap: caps.bwrap, landlock: caps.sandbox_type == SandboxType::Landlock, details: caps.sandbox_details },
        _ => Sandbox { bwrap: None, landlock: false, details: SandboxDetails::default() },
    })
}

/// The text `sandspawn doctor` prints.
pub fn doctor_report(c: &Capabilities) -> String {
    let mut s = format!("platform:     {}\nsandbox:      {}\n", c.platform.as_str(), c.sandbox_type.as_str());
    if let Some(b) = &c.bwrap {
        s.push_str(&format!(
            "bwrap:        {} (version {})\n",
            b.path.display(),
            b.version.as_deref().unwrap_or("unknown")
        ));
        s.push_str(&format!("              --disable-userns: {}\n", if b.disable_userns { "yes" } else { "no" }));
        if b.proc_unmountable {
            s.push_str("              /proc: cannot be mounted (sandboxed runs are refused)\n");
        }
    }
    s.push_str(&format!("available:    {}\n", if c.available { "yes" } else { "no" }));
    if let Some(cause) = &c.cause {
        s.push_str(&format!("cause:        {cause}\n"));
    }
    if let Some(r) = &c.reason {
        s.push_str(&format!("reason:       {r}\n"));
    }
    if let Some(f) = &c.fix {
        s.push_str(&format!("fix:          {f}\n"));
    }
    if let Some(e) = &c.stderr {
        s.push_str(&format!("stderr:       {}\n", e.replace('\n', "\n              ")));
    }
    for (i, a) in c.attempts.iter().enumerate() {
        let head = if i == 0 { "ladder:" } else { "" };
        s.push_str(&format!("{head:<14}{}: {} ({})\n", a.mechanism, a.message, a.cause));
    }
    s
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ladder;
#[cfg(test)]
mod tests_discover;
#[cfg(test)]
mod tests_override;
