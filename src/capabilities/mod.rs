//! Can the platform sandbox run here, and if not, why and how to fix it.
//!
//! * Linux: find bwrap (`discover`: `SANDSPAWN_BWRAP`, then the first `bwrap` on `PATH` outside the
//!   cwd), read its version and features, and run it once for real with the namespace and mount
//!   flags of a real run (`probe`). A failure is diagnosed from bwrap's exact words plus the host's
//!   sysctls (`diagnose`).
//! * macOS: `/usr/bin/sandbox-exec` (fixed path, never `PATH`) is run once with an allow-all
//!   profile; `sandbox_apply: Operation not permitted` means we are already inside a sandbox.
//! * Elsewhere: no sandbox; only `danger-full-access` runs.
//!
//! Environment: `SANDSPAWN_BWRAP=/abs/path/to/bwrap` selects the bwrap binary explicitly (it must be
//! an executable file outside the cwd; when it is unusable, sandspawn reports that instead of
//! falling back to `PATH`).
//!
//! `capabilities_cached` re-runs discovery (a few `stat` calls) every time, so a `bwrap` inside the
//! current cwd is never used, and caches the expensive probe per (bwrap path and file identity,
//! `PATH`, `SANDSPAWN_BWRAP`).

pub mod diagnose;
pub mod discover;
pub mod probe;

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Serialize, Serializer};

pub use diagnose::{
    diagnose_bwrap_failure, diagnose_seatbelt_failure, diagnose_with_host, Diagnosis, HostFacts, ALL_CAUSES,
};
pub use discover::{bwrap_version, discover, find_bwrap, supports_disable_userns, Discovery, BWRAP_OVERRIDE_ENV};
pub use probe::{probe_bwrap, probe_seatbelt, ProbeOutcome, SANDBOX_EXEC};

use crate::error::SandboxError;
use crate::plan::BwrapInfo;
use crate::platform::{Platform, SandboxType};

fn ser_platform<S: Serializer>(p: &Platform, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.as_str())
}

/// What `sandboxCapabilities()` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    #[serde(serialize_with = "ser_platform")]
    pub platform: Platform,
    pub sandbox_type: SandboxType,
    pub available: bool,
    /// What is wrong, in words (when not available).
    pub reason: Option<String>,
    /// How to fix it (when not available).
    pub fix: Option<String>,
    /// A short stable id of the cause, e.g. `apparmor-userns` (see `diagnose::ALL_CAUSES`).
    pub cause: Option<String>,
    /// The bwrap that was found and probed (Linux), also when the probe failed.
    pub bwrap: Option<BwrapInfo>,
    /// What the sandbox tool printed when its self-test failed.
    pub stderr: Option<String>,
}

impl Capabilities {
    fn unavailable(platform: Platform, sandbox_type: SandboxType, cause: &str, reason: String, fix: String) -> Self {
        Capabilities {
            platform,
            sandbox_type,
            available: false,
            reason: Some(reason),
            fix: Some(fix),
            cause: Some(cause.to_string()),
            bwrap: None,
            stderr: None,
        }
    }
}

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
static CACHE: Mutex<Vec<(CacheKey, Capabilities)>> = Mutex::new(Vec::new());

fn identity(p: &Path) -> (u64, u64, u64, i64) {
    match std::fs::metadata(p) {
        Ok(m) => (m.dev(), m.ino(), m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec()),
        Err(_) => (0, 0, 0, 0),
    }
}

fn cached_probe(key: CacheKey, compute: impl FnOnce() -> Capabilities) -> Capabilities {
    {
        let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = cache.iter().find(|(k, _)| *k == key) {
            return c.clone();
        }
    }
    // Not holding the lock while probing: two racing callers may both probe, which is harmless.
    let c = compute();
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(k, _)| *k != key);
    if cache.len() >= CACHE_SLOTS {
        cache.remove(0);
    }
    cache.push((key, c.clone()));
    c
}

// ---- capabilities ------------------------------------------------------------------------------

/// The host's sandbox capabilities, probed now (uncached).
pub fn capabilities(path_env: Option<&str>, cwd: &Path) -> Capabilities {
    capabilities_for(Platform::host(), path_env, cwd, false)
}

/// Like `capabilities`, but the probe result is cached per process, keyed by the bwrap found (and
/// its file identity), `PATH` and `SANDSPAWN_BWRAP`. Discovery itself runs on every call.
pub fn capabilities_cached(path_env: Option<&str>, cwd: &Path) -> Capabilities {
    capabilities_for(Platform::host(), path_env, cwd, true)
}

fn capabilities_for(platform: Platform, path_env: Option<&str>, cwd: &Path, cached: bool) -> Capabilities {
    match platform {
        Platform::Linux => linux_capabilities(std::env::var_os(BWRAP_OVERRIDE_ENV), path_env, cwd, cached),
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

/// The Linux capabilities with the `SANDSPAWN_BWRAP` value passed in.
pub(crate) fn linux_capabilities(
    override_env: Option<OsString>,
    path_env: Option<&str>,
    cwd: &Path,
    cached: bool,
) -> Capabilities {
    let bwrap = match discover(override_env.as_deref(), path_env, cwd) {
        Discovery::Found(p) => p,
        Discovery::OverrideInvalid(why) => {
            return Capabilities::unavailable(
                Platform::Linux,
                SandboxType::Bwrap,
                "bwrap-override-invalid",
                why,
                format!(
                    "unset {BWRAP_OVERRIDE_ENV}, or set it to the absolute path of a working bwrap outside the working directory"
                ),
            )
        }
        Discovery::NotFound => {
            let mut reason = "bubblewrap (bwrap) is not installed or not on PATH".to_string();
            let ignored = discover::bwraps_inside_cwd(path_env, cwd);
            if !ignored.is_empty() {
                let list: Vec<String> = ignored.iter().map(|p| p.display().to_string()).collect();
                reason.push_str(&format!(
                    " (ignored {}: a bwrap inside the working directory is never used, since the sandboxed command could replace it)",
                    list.join(", ")
                ));
            }
            return Capabilities::unavailable(
                Platform::Linux,
                SandboxType::Bwrap,
                "bwrap-missing",
                reason,
                diagnose::FIX_INSTALL_BWRAP.to_string(),
            );
        }
    };
    let compute = || linux_probe(&bwrap);
    if cached {
        let key = CacheKey {
            platform: Platform::Linux,
            identity: identity(&bwrap),
            tool: bwrap.clone(),
            path_env: path_env.map(str::to_string),
            override_env,
        };
        cached_probe(key, compute)
    } else {
        compute()
    }
}

fn linux_probe(bwrap: &Path) -> Capabilities {
    let version = bwrap_version(bwrap);
    let disable_userns = supports_disable_userns(bwrap, version.as_deref());
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
                fix: Some(d.fix),
                cause: Some(d.cause.to_string()),
                bwrap,
                stderr: (!o.stderr.is_empty()).then_some(o.stderr),
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

/// The sandbox every sandboxed run needs: `Ok(Some(bwrap))` on Linux, `Ok(None)` on macOS, an
/// `ERR_SANDBOX_UNAVAILABLE` error (with reason and fix) when it cannot run here, and
/// `ERR_SANDBOX_UNSUPPORTED` on other platforms. Uses the cached probe.
pub fn require_sandbox(platform: Platform, path_env: Option<&str>, cwd: &Path) -> crate::Result<Option<BwrapInfo>> {
    if platform == Platform::Other {
        return Err(SandboxError::unsupported(format!(
            "no OS sandbox on {}; only sandbox: 'danger-full-access' runs",
            std::env::consts::OS
        )));
    }
    let caps = capabilities_for(platform, path_env, cwd, true);
    if !caps.available {
        let mut e = SandboxError::unavailable(
            caps.reason.as_deref().unwrap_or("the sandbox self-test failed"),
            caps.fix.as_deref().unwrap_or("run `sandspawn doctor`"),
        );
        if let Some(s) = caps.stderr {
            e = e.with_stderr(s);
        }
        return Err(e);
    }
    Ok(match platform {
        Platform::Linux => caps.bwrap,
        _ => None,
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
    s
}

#[cfg(test)]
mod tests;
