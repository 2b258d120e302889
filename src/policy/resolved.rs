//! A resolved policy: every rule of a run, validated and canonical, as plans and checks read it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::terms::{MissingReadOnly, SandboxMode, TmpMode, UnixSockets, WritableRoot};
use crate::platform::Platform;

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
    /// `workspace: 'review'`: the roots whose writes go to a change set (see `review`).
    pub review: Option<crate::review::option::ReviewPolicy>,
    /// The Landlock mode's run only: the directories the command could change whole (see
    /// `plan::landlock_grants`; a writable root split around a read-only path is not among them, its
    /// unprotected subdirectories are). The denial classifier judges by these, not by the roots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landlock_writable_dirs: Option<Vec<PathBuf>>,
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

impl ResolvedPolicy {
    /// Whether `root` is one of the roots a change set covers (review mode).
    pub fn is_reviewed(&self, root: &std::path::Path) -> bool {
        self.review.as_ref().is_some_and(|r| r.roots.iter().any(|x| x == root))
    }

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

    /// Keep the tool caches of a home a writable root holds read-only where no private copy covers
    /// them in a sandbox of `platform` for a command with `env`, and the missing ones for the walk to
    /// keep absent after the run (see `tool_caches::held_home`).
    pub fn keep_home_caches(&mut self, env: &BTreeMap<String, String>, platform: Platform) {
        let covered = self.tool_caches.covering(platform);
        let reviewed = self.review.as_ref().map_or(&[][..], |r| r.roots.as_slice());
        let policy = crate::tool_caches::held_home::Policy { writable_roots: &mut self.writable_roots, deny_read: &self.deny_read, reviewed, covered };
        let missing = crate::tool_caches::held_home::keep_read_only(policy, env, platform);
        let known = |m: &crate::planted::HeldCache| self.planted.held_caches.iter().any(|h| h.path == m.path);
        let new: Vec<crate::planted::HeldCache> = missing.into_iter().filter(|m| !known(m)).collect();
        if !new.is_empty() {
            // After the walk (the Landlock mode drops the private caches then), `detect` finds them.
            std::sync::Arc::make_mut(&mut self.planted).held_caches.extend(new);
        }
    }

    /// No private caches after all (the Landlock mode, a plan for another spawner): the caches stay
    /// read-only, those of a held home too.
    pub fn drop_tool_caches(&mut self, env: &BTreeMap<String, String>, platform: Platform) {
        self.tool_caches = crate::tool_caches::ToolCaches::none();
        self.keep_home_caches(env, platform);
    }

    /// Walk the writable roots for nested repositories and protect them (see `planted`); once.
    pub fn walk_and_protect(&mut self, absent: crate::planted::Absent) {
        // Never abandoned: nothing ends it.
        let _ = self.walk_and_protect_until(absent, &|| false);
    }

    /// `walk_and_protect`, for a run that can be cut meanwhile (`ended`): then the policy is left
    /// unwalked and `Abandoned` says so.
    pub fn walk_and_protect_until(&mut self, absent: crate::planted::Absent, ended: &dyn Fn() -> bool) -> std::result::Result<(), crate::planted::Abandoned> {
        crate::planted::walk_and_protect(crate::planted::Walked {
            absent,
            writable_roots: &mut self.writable_roots,
            deny_read: &self.deny_read,
            protected_names: &self.protected_names,
            protect_git: self.protect_git,
            planted: &mut self.planted,
            reviewed: self.review.as_ref().map_or(&[], |r| r.roots.as_slice()),
            ended,
        })
    }
}
