//! What a command may touch: the user's `sandbox` option, validated and resolved against the real
//! filesystem (canonical paths, existing roots, `.git` carve-outs). Launch plans are built from a
//! `ResolvedPolicy` only, so every check happens once, here.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::platform::Platform;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TmpMode {
    /// Host `/tmp` and `$TMPDIR` are writable roots.
    Writable,
    /// An empty `/tmp` of the command's own, gone when it ends (Linux only).
    Private,
    /// `/tmp` stays as read-only as the rest of the host.
    ReadOnly,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum UnixSockets {
    /// No connecting to any Unix socket of the host (only meaningful with the network off).
    Blocked,
    /// Every Unix socket may be used.
    All,
    /// Only these socket paths (canonical). Enforceable on macOS only.
    Only(Vec<PathBuf>),
}

/// What kind of empty placeholder protects a path that does not exist yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PlaceholderKind {
    /// An empty read-only directory (`.git` and the directory-like protected names).
    Dir,
    /// An empty read-only file (file-like protected names, other missing read-only paths).
    File,
}

impl From<PlaceholderKind> for sandspawn_helper::placeholder::Kind {
    fn from(k: PlaceholderKind) -> Self {
        match k {
            PlaceholderKind::Dir => Self::Dir,
            PlaceholderKind::File => Self::File,
        }
    }
}

/// A path inside a writable root that must stay read-only but does not exist (or is an empty
/// placeholder left by a concurrent run). Something must exist at that path on the host while the
/// run is in flight, so a placeholder is made there for the run and removed afterwards (see
/// `plan::mount_targets`), and the helper covers it inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingReadOnly {
    pub path: PathBuf,
    pub kind: PlaceholderKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WritableRoot {
    /// Canonical (symlinks resolved) existing directory.
    pub root: PathBuf,
    /// Existing paths under `root` that stay read-only (`.git`, the real git dir, `readOnlyPaths`),
    /// canonical, shallowest first.
    pub read_only: Vec<PathBuf>,
    /// Missing paths under `root` that must not be creatable.
    pub missing_read_only: Vec<MissingReadOnly>,
}

/// A validated policy. Everything in it is absolute and canonical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedPolicy {
    pub mode: SandboxMode,
    /// Shallowest first; empty unless `mode` is workspace-write.
    pub writable_roots: Vec<WritableRoot>,
    /// Existing paths the command can neither read nor list, canonical.
    pub deny_read: Vec<PathBuf>,
    /// Read-only paths given by the user that are not under any writable root (kept for the
    /// classifier; they are read-only anyway).
    pub read_only_paths: Vec<PathBuf>,
    /// `false` also when `network_proxy` is set: the command's own namespace stays empty.
    pub network: bool,
    /// The allow-list: the command reaches these hosts through the run's proxy (`crate::network`).
    pub network_proxy: Option<crate::network::NetworkPolicy>,
    pub unix_sockets: UnixSockets,
    pub tmp: TmpMode,
    pub protect_git: bool,
    /// `toolCaches`: which package-manager caches are private writable overlays.
    pub tool_caches: crate::tool_caches::ToolCaches,
    /// `protectedNames` (validated; the defaults when not given).
    pub protected_names: Vec<String>,
    /// What the walk for planted configuration saw before the run (see `planted`); compared with
    /// the tree after the run to report `hostRisks`.
    #[serde(skip)]
    pub planted: std::sync::Arc<crate::planted::Baseline>,
}

/// What resolving a policy needs to know about the run.
#[derive(Debug, Clone)]
pub struct PolicyContext {
    /// The run's working directory, already validated and canonical.
    pub cwd: PathBuf,
    /// `TMPDIR` as the child will see it, if set and non-empty.
    pub tmpdir: Option<String>,
    /// The platform the plan is for (`buildSandboxCommand` may ask for another than the host).
    pub platform: Platform,
    /// The command's environment (where its `HOME` and caches are).
    pub env: BTreeMap<String, String>,
}

mod parse;
pub(crate) mod paths;
mod resolve;

pub use resolve::resolve_policy;
pub(crate) use resolve::sort_carve_outs;

impl ResolvedPolicy {
    /// `true` when `path` (canonical) lies inside one of the writable roots.
    pub fn is_writable(&self, path: &std::path::Path) -> bool {
        self.writable_roots.iter().any(|r| path.starts_with(&r.root))
    }

    /// Every missing read-only path of every writable root: the mount points bwrap will create on
    /// the host in a plan another program runs (the helper in front of bwrap makes them); the runner's
    /// own runs keep them absent by moving aside what a run creates there (`planted::undo`).
    pub fn missing_read_only(&self) -> Vec<MissingReadOnly> {
        self.writable_roots.iter().flat_map(|r| r.missing_read_only.iter().cloned()).collect()
    }
}
