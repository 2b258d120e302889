//! Launch plans: the exact program, argv and environment that enforce a `ResolvedPolicy` for one
//! command. Pure: nothing here spawns anything. A plan is self-contained: whatever must happen
//! inside the sandbox before the command (seccomp, ...) is done by `sandspawn-helper`, which the
//! plan runs in place of the command, so any spawner with plain stdio can run it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::platform::SandboxType;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchPlan {
    /// Absolute path of the program to execute (bwrap, sandbox-exec, or the resolved command).
    pub program: PathBuf,
    /// `argv[0]` for the program (`bwrap`, `sandbox-exec`, or `command[0]` as the user gave it).
    pub argv0: String,
    /// `argv[1..]`.
    pub args: Vec<String>,
    /// The complete environment of the spawned program.
    pub env: BTreeMap<String, String>,
    /// Working directory for the spawned program.
    pub cwd: PathBuf,
    pub sandbox_type: SandboxType,
    /// The Seatbelt SBPL profile text (darwin), else None.
    pub profile: Option<String>,
    /// Runner only: `--json-status-fd N` is in `args` and the child needs a pipe at N.
    pub status_fd: Option<i32>,
    /// Runner only: the helper reports a failure before the command on this descriptor.
    pub report_fd: Option<i32>,
    /// The in-sandbox helper the plan runs before the command (bwrap plans).
    pub helper: Option<PathBuf>,
    /// Runner only, with a `NetworkPolicy`: the child needs the sandbox end of the network
    /// bridge's socket pair at this descriptor (the helper's `--net-listen`).
    pub net_ctl_fd: Option<i32>,
    /// Runner only, Landlock mode: the helper-supervisor's control pipe (EOF kills the tree).
    pub control_fd: Option<i32>,
}

pub mod bwrap;
pub mod limited;
pub mod landlock;
pub mod seatbelt;
#[cfg(test)]
pub(crate) mod seatbelt_eval;
#[cfg(test)]
mod seatbelt_eval_regex;
mod seatbelt_network;
mod seatbelt_planted;
pub mod mount_targets;
pub mod pins;

/// What sandspawn knows about the bwrap binary it will run (found and probed by `capabilities`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BwrapInfo {
    /// Absolute path of the bwrap binary.
    pub path: PathBuf,
    /// `bwrap --version` without the `bubblewrap ` prefix, e.g. `0.8.0`.
    pub version: Option<String>,
    /// bwrap >= 0.8 understands `--disable-userns`.
    pub disable_userns: bool,
    /// `--proc /proc` cannot be mounted here (masked `/proc` in a container); see `capabilities`.
    pub proc_unmountable: bool,
}

/// Everything needed to build a plan for one command.
#[derive(Debug, Clone)]
pub struct PlanRequest<'a> {
    /// The argv as the user gave it (`command[0]` may be a bare name).
    pub command: &'a [String],
    /// Canonical working directory.
    pub cwd: &'a std::path::Path,
    /// The child's environment before sandspawn's `SANDSPAWN_*` markers are added.
    pub env: &'a BTreeMap<String, String>,
    pub policy: &'a crate::policy::ResolvedPolicy,
    pub platform: crate::platform::Platform,
    /// The bwrap to use on Linux. `None` when building a plan for another host (explain, tests):
    /// the plan then names `/usr/bin/bwrap` and assumes a current bwrap.
    pub bwrap: Option<&'a BwrapInfo>,
    /// `command[0]` resolved to an absolute path on the host (used for danger-full-access, where no
    /// sandbox tool does the PATH lookup). `None` when it could not be resolved (explain).
    pub resolved_program: Option<&'a std::path::Path>,
    /// The in-sandbox helper (absolute, canonical), needed by bwrap plans.
    pub helper: Option<&'a std::path::Path>,
    /// For the runner: add bwrap's `--json-status-fd` and the helper's `--report-fd`, so that setup
    /// failures are told apart from the command's exit code. Plans for other spawners have neither.
    pub runner_fds: bool,
    /// The command runs in a pseudo-terminal on its stdio (`pty`) and must take it as its
    /// controlling terminal: the helper's `--controlling-tty` step under a sandbox and on macOS.
    pub terminal: bool,
    /// Resource limits the helper sets before the command (from `limits::decide`).
    pub rlimits: &'a [sandspawn_helper::rlimit::Rlimit],
    /// sandspawn's own files (`own_files`), which the plan keeps where they are and read-only.
    pub own_files: &'a [PathBuf],
    /// macOS with a `NetworkPolicy`: the run's proxy on the host's loopback (bound by the runner
    /// before the plan, `network::loopback`); its port goes into the profile, its URL with the
    /// credential into the environment. `None` in a plan for another spawner, which then refuses
    /// the allow-list.
    pub proxy: Option<&'a crate::network::loopback::Endpoint>,
}

/// Build the launch plan for one command: direct for danger-full-access, bwrap on Linux, Seatbelt
/// on macOS. Pure: nothing is spawned and nothing on disk is changed.
pub fn build(req: &PlanRequest) -> crate::Result<LaunchPlan> {
    use crate::error::SandboxError;
    use crate::platform::Platform;
    use crate::policy::SandboxMode;

    if req.command.is_empty() {
        return Err(SandboxError::invalid_command("must have at least one element"));
    }
    if req.policy.mode == SandboxMode::DangerFullAccess {
        return limited::behind_helper(direct(req), req);
    }
    match req.platform {
        Platform::Linux => bwrap::build(req),
        Platform::Darwin => limited::behind_helper(seatbelt::build(req)?, req),
        Platform::Other => Err(SandboxError::unsupported(format!(
            "no sandbox is available on {}: only 'danger-full-access' runs here",
            req.platform.as_str()
        ))),
    }
}

/// No sandbox: the command itself, with the host's PATH lookup done by the caller. With a terminal
/// on Linux the runner's posix_spawn makes it the controlling tty (SETSID, then the slave opened
/// without O_NOCTTY), so no helper is needed; macOS goes through the helper (see `seatbelt`).
fn direct(req: &PlanRequest) -> LaunchPlan {
    LaunchPlan {
        program: req.resolved_program.map(PathBuf::from).unwrap_or_else(|| PathBuf::from(&req.command[0])),
        argv0: req.command[0].clone(),
        args: req.command[1..].to_vec(),
        env: child_env(req, SandboxType::None),
        cwd: req.cwd.to_path_buf(),
        sandbox_type: SandboxType::None,
        profile: None,
        status_fd: None,
        report_fd: None,
        helper: None,
        net_ctl_fd: None,
        control_fd: None,
    }
}

/// The child's environment: the caller's plus the `SANDSPAWN_*` markers API.md promises.
pub(crate) fn child_env(req: &PlanRequest, sandbox: SandboxType) -> BTreeMap<String, String> {
    let mut env = req.env.clone();
    // The host's opt-in into weaker modes is not the command's business (nor its to pass on).
    env.remove("SANDSPAWN_LINUX_ALLOW");
    if sandbox != SandboxType::None {
        env.insert("SANDSPAWN_SANDBOX".into(), sandbox.as_str().into());
    }
    // With an allow-list the proxy variables and `SANDSPAWN_NETWORK=proxy` are set by the helper
    // inside bwrap (Linux) or by the Seatbelt plan (macOS).
    if !req.policy.network && req.policy.network_proxy.is_none() {
        env.insert("SANDSPAWN_NETWORK_DISABLED".into(), "1".into());
        if sandbox != SandboxType::None {
            for (name, value) in OFFLINE_NO_RETRIES {
                env.entry(name.to_string()).or_insert_with(|| value.to_string());
            }
        }
    }
    env
}

/// With the network off a failed request cannot succeed later, yet npm retries even a final
/// "name not found" for about 70 s and pip for about 10 s, so an agent's timeout kills them
/// before they print why. Set unless the caller set them. pip gets one retry, which costs nothing
/// (urllib3 waits only from the second) and is what makes it print the cause of the failure.
const OFFLINE_NO_RETRIES: [(&str, &str); 2] = [("npm_config_fetch_retries", "0"), ("PIP_RETRIES", "1")];

/// A plan for another spawner (`buildSandboxCommand`) cannot include the allow-list's proxy, which
/// lives in the host process that runs the plan: refused rather than run with no network or all
/// of it.
pub(crate) fn proxy_needs_runner() -> crate::error::SandboxError {
    crate::error::SandboxError::unsupported(
        "sandbox.network as a NetworkPolicy (allow-list) needs the proxy that spawnSandboxed/startSandboxed run in \
         their own process; a launch plan for another spawner cannot include it. Run the command with \
         spawnSandboxed or startSandboxed, or build the plan with network: true or false",
    )
}

/// A path as an argv string. Paths reach the plan canonicalized, so a symlink could lead to a name
/// that is not UTF-8; `args` are strings, and a lossy conversion would name another path.
pub(crate) fn path_arg(p: &std::path::Path) -> crate::Result<String> {
    p.to_str().map(str::to_owned).ok_or_else(|| {
        crate::error::SandboxError::unsupported(format!("path {} is not valid UTF-8", p.display()))
    })
}

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_limits;
