//! The words a policy is made of (modes, writable roots and their carve-outs, placeholders), which
//! every capability's own rules (planted configuration, tool caches, plans) speak too.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::paths::{depth, sort_shallowest_first, sort_shallowest_first_by};

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
/// `placeholders`), and the helper covers it inside the sandbox.
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
    /// The `(device, inode)` of `root` when the policy resolved it, reached without following a
    /// symlink (`no_symlinks::identity`): bwrap binds the root by its path, following links, and
    /// the helper checks that what it bound there is this directory (the Landlock mode's helper,
    /// that its grant is). `None` only in policies made by hand (tests).
    #[serde(skip)]
    pub id: Option<(u64, u64)>,
}

/// Each root's carve-outs shallowest first, without duplicates (bwrap applies them in this order).
pub(crate) fn sort_carve_outs(roots: &mut [WritableRoot]) {
    for root in roots {
        sort_shallowest_first(&mut root.read_only);
        sort_shallowest_first_by(&mut root.missing_read_only, |m| &m.path);
        root.missing_read_only.dedup_by(|a, b| a.path.as_os_str() == b.path.as_os_str());
    }
}

/// The index of the deepest writable root containing `p`: its carve-out must come after that
/// root's bind, or the bind would hide it.
pub(crate) fn deepest_root(roots: &[WritableRoot], p: &Path) -> Option<usize> {
    roots.iter().enumerate().filter(|(_, r)| p.starts_with(&r.root)).max_by_key(|(_, r)| depth(&r.root)).map(|(i, _)| i)
}
