//! Which mechanism enforces each requested limit on this host, or why none can.
//!
//! The rlimit each limit maps to, and when that rlimit keeps the option's meaning:
//! - `memory` → `RLIMIT_DATA` (private writable memory per process; no shared memory, which no
//!   rlimit bounds: README, "Resource limits"). Not `RLIMIT_AS`: Node needs about 1 GB of address
//!   space just to start, wasm 2 GB, the JVM 4 GB. macOS counts the whole VM
//!   map against both and refuses limits below current usage (hundreds of GiB): unsupported there.
//! - `processes` → `RLIMIT_NPROC` set inside the command's own user namespace, which since Linux
//!   5.14 counts only that namespace's tasks (bwrap's init is outside it). It never limits root
//!   (kuid 0), counts the whole uid without a namespace (danger-full-access) or before 5.14, and
//!   macOS counts it per uid system-wide: unsupported in all those cases.
//! - `cpuTime` → `RLIMIT_CPU`, whole seconds (rounded up), per process; the hard limit one second
//!   later, so the command first gets the recognisable SIGXCPU.
//! - `fileSize` → `RLIMIT_FSIZE`; `openFiles` → `RLIMIT_NOFILE`.
//! - and `RLIMIT_CORE` 0 with any of them: SIGXCPU and SIGXFSZ would otherwise dump core in the cwd.

use sandspawn_helper::rlimit::{Resource, Rlimit};

use super::{Limit, Limits, Mechanism};
use crate::error::{Result, SandboxError};
use crate::platform::Platform;

/// What the decision depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    /// The platform the plan is for.
    pub platform: Platform,
    /// false for danger-full-access (no sandbox, no user namespace).
    pub sandboxed: bool,
    /// The sandbox runs as kuid 0 (sandspawn runs as root).
    pub root: bool,
    /// Linux >= 5.14: `RLIMIT_NPROC` inside a user namespace counts that namespace only.
    pub nproc_per_userns: bool,
}

impl HostFacts {
    /// The facts of this host for a plan on `platform`.
    pub fn read(platform: Platform, sandboxed: bool) -> HostFacts {
        let root = unsafe { libc::geteuid() } == 0;
        let nproc_per_userns = platform == Platform::Linux && Platform::host() == Platform::Linux && kernel_at_least(5, 14);
        HostFacts { platform, sandboxed, root, nproc_per_userns }
    }
}

/// The running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut uts) } != 0 {
        return false;
    }
    let release = unsafe { std::ffi::CStr::from_ptr(uts.release.as_ptr()) }.to_string_lossy().into_owned();
    release_at_least(&release, major, minor)
}

fn release_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse::<u32>().unwrap_or(0));
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else { return false };
    (a, b) >= (major, minor)
}

/// How the requested limits are enforced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitPlan {
    /// Each requested limit and its mechanism, in `Limit::ALL` order.
    pub applied: Vec<(Limit, Mechanism)>,
    /// What the helper sets before it execs the command.
    pub rlimits: Vec<Rlimit>,
}

impl LimitPlan {
    pub fn requested(&self, limit: Limit) -> bool {
        self.applied.iter().any(|(l, _)| *l == limit)
    }
}

/// The mechanism for one limit here, or why it cannot be enforced.
pub fn mechanism(limit: Limit, facts: &HostFacts) -> std::result::Result<Mechanism, String> {
    match (facts.platform, limit) {
        (Platform::Other, _) => Err(format!("limits are enforced on Linux and macOS only, not on {}", facts.platform.as_str())),
        (Platform::Darwin, Limit::Memory) => Err(
            "macOS has no per-sandbox memory limit: it counts RLIMIT_DATA and RLIMIT_AS against the whole address space and \
             refuses values below current use, and it has no cgroups"
                .into(),
        ),
        (Platform::Darwin, Limit::Processes) => {
            Err("macOS counts RLIMIT_NPROC for the whole user across the system, and it has no cgroups".into())
        }
        (Platform::Linux, Limit::Processes) if !facts.sandboxed => Err(
            "without a sandbox (danger-full-access) RLIMIT_NPROC counts every process of the user, and no cgroup v2 is available to sandspawn"
                .into(),
        ),
        (Platform::Linux, Limit::Processes) if facts.root => Err(
            "sandspawn runs as root, whom RLIMIT_NPROC never limits, and no cgroup v2 is available to sandspawn; run as an \
             unprivileged user"
                .into(),
        ),
        (Platform::Linux, Limit::Processes) if !facts.nproc_per_userns => Err(
            "this kernel is older than 5.14, where RLIMIT_NPROC counts every process of the user instead of the sandbox's, \
             and no cgroup v2 is available to sandspawn"
                .into(),
        ),
        _ => Ok(Mechanism::Rlimit),
    }
}

/// Decide every requested limit; a limit that cannot be enforced rejects the run with
/// `ERR_SANDBOX_UNSUPPORTED` naming it and why (all such limits, when several).
pub fn decide(limits: &Limits, facts: &HostFacts) -> Result<LimitPlan> {
    let mut plan = LimitPlan::default();
    let mut refused = Vec::new();
    for limit in Limit::ALL {
        let Some(value) = limits.get(limit) else { continue };
        match mechanism(limit, facts) {
            Ok(m) => {
                plan.applied.push((limit, m));
                plan.rlimits.push(rlimit(limit, value));
            }
            Err(why) => refused.push(format!("limits.{} cannot be enforced here: {why}", limit.as_str())),
        }
    }
    if !refused.is_empty() {
        return Err(SandboxError::unsupported(refused.join("; ")));
    }
    if !plan.rlimits.is_empty() {
        plan.rlimits.push(Rlimit { resource: Resource::Core, soft: 0, hard: 0 });
    }
    Ok(plan)
}

fn rlimit(limit: Limit, value: u64) -> Rlimit {
    let same = |resource| Rlimit { resource, soft: value, hard: value };
    match limit {
        Limit::Memory => same(Resource::Data),
        Limit::Processes => same(Resource::Nproc),
        Limit::CpuTime => {
            let seconds = value.div_ceil(1000);
            Rlimit { resource: Resource::Cpu, soft: seconds, hard: seconds + 1 }
        }
        Limit::FileSize => same(Resource::Fsize),
        Limit::OpenFiles => same(Resource::Nofile),
    }
}

#[cfg(test)]
pub(super) fn release_at_least_for_tests(release: &str, major: u32, minor: u32) -> bool {
    release_at_least(release, major, minor)
}

/// For `sandboxCapabilities().limits` and `sandspawn doctor`: per limit, the mechanism a sandboxed
/// run on this host would use, or why it would be refused.
pub fn host_report(platform: Platform) -> serde_json::Value {
    let facts = HostFacts::read(platform, true);
    let entries = Limit::ALL.iter().map(|l| {
        let v = match mechanism(*l, &facts) {
            Ok(m) => serde_json::json!({ "mechanism": m, "reason": null }),
            Err(why) => serde_json::json!({ "mechanism": null, "reason": why }),
        };
        (l.as_str().to_string(), v)
    });
    serde_json::Value::Object(entries.collect())
}
