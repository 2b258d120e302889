//! Launch plans: the exact program, argv, environment and extra file descriptors that enforce a
//! `ResolvedPolicy` for one command. Pure: nothing here spawns anything.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::platform::SandboxType;

/// Why an extra file descriptor is handed to the sandbox tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FdPurpose {
    /// A seccomp BPF program for `bwrap --seccomp`.
    Seccomp,
    /// Content for `bwrap --ro-bind-data` (e.g. an empty, unreadable file masking a denied file).
    Data,
}

/// A file descriptor the spawner must provide in the child, filled with `data` and then closed
/// (a pipe whose write end is written fully before or during the spawn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraFd {
    pub fd: i32,
    pub purpose: FdPurpose,
    #[serde(skip)]
    pub data: Vec<u8>,
}

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
    /// Extra descriptors numbered from 3 upwards, in order.
    pub extra_fds: Vec<ExtraFd>,
    /// When set, `--json-status-fd N` is in `args` and the runner must give the child a pipe at N.
    pub status_fd: Option<i32>,
}

pub mod bwrap;
pub mod seatbelt;
pub mod seccomp;
pub mod mount_targets;

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
    /// Add `--json-status-fd` so the runner can tell setup failures from the command's exit code.
    pub with_status_fd: bool,
}
