//! What a plan is (`LaunchPlan`: program, argv, environment, the runner's descriptors) and what
//! building one takes (`PlanRequest`, `BwrapInfo`).

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
    /// bwrap plans: where in `args` the in-sandbox helper's own arguments begin (after bwrap's
    /// `-- HELPER`), which the runner may send through a pipe instead (`runner::overlap`).
    #[serde(skip)]
    pub inside_args_at: Option<usize>,
}

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
    /// sandspawn's stores on the host (`stores::to_cover`), covered in a bwrap sandbox.
    pub stores: &'a [PathBuf],
    /// macOS with a `NetworkPolicy`: the run's proxy on the host's loopback (bound by the runner
    /// before the plan, `network::loopback`); its port goes into the profile, its URL with the
    /// credential into the environment. `None` in a plan for another spawner, which then refuses
    /// the allow-list.
    pub proxy: Option<&'a crate::network::loopback::Endpoint>,
}
