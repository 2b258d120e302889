//! sandspawn's stores on the host, which no sandbox may read: the tool caches' (what the runs of
//! every workspace wrote into their private caches: a token a tool saved, a package it built) and
//! the change sets' (the files reviewed runs wrote, in every workspace). A run reading them would
//! read another workspace's writes, and a copy of what its own `denyRead` hides (found by an
//! attacker's review: the store was unmounted after the caches' overlays were made, and its host
//! view, read-only but readable, was left at its path).
//!
//! The Landlock mode's run directories (`runs_root`) are kept with them: each run's own directory
//! (its npm cache, its `TMPDIR` where needed) was made in the shared `/tmp`, which every other run
//! may write, and a concurrent run planted a package in one (found by an attacker's review).
//!
//! So are the lock files of the directories plans another program runs hold
//! (`placeholders::locks_root`): a run that could replace one could let a cleanup remove a
//! placeholder a plan has mounted over, and one that could lock it would stall such plans (in a
//! Landlock run, which restricts no reads, it can, for at most the helper's patience: README).
//!
//! Each existing store is covered with an empty read-only directory by the helper, after it has
//! mounted the run's own caches and change set from them and detached those binds.

use std::path::PathBuf;

use crate::policy::ResolvedPolicy;

/// The stores to cover in a sandbox for `policy`, whose command gets `env`: canonical, not inside
/// another. The plan leaves out those hidden already (under a `denyRead` or a private `/tmp`).
/// Read here, from the host process's environment and file system, and passed to the plan
/// (`PlanRequest::stores`), which stays a function of its request.
///
/// The host process's stores are made (mode 0700, as their first use makes them) when they do not
/// exist yet: a run planned before the first review run made the change sets' store read the sets
/// that run wrote while it lived (found by a review of this cover). Another environment's store is
/// covered when it exists.
pub fn to_cover(policy: &ResolvedPolicy, env: &std::collections::BTreeMap<String, String>) -> Vec<PathBuf> {
    // The caches' root as resolved for the run, as the run's environment names it, and as the
    // host process's does (where this process's other runs keep theirs); the change sets' root is
    // the host process's.
    // The run directories only where the Landlock mode makes them (a store nobody uses elsewhere).
    let linux = crate::platform::Platform::host() == crate::platform::Platform::Linux;
    let runs = if linux { runs_root() } else { None };
    // The lock files of the directories plans hold, where plans make placeholders (see the module).
    let held = if linux { crate::placeholders::locks_root() } else { None };
    let host_stores = [crate::tool_caches::store::host_root(), crate::review::store::root(), runs, held];
    for store in host_stores.iter().flatten().filter(|s| !s.exists()) {
        use std::os::unix::fs::DirBuilderExt;
        // A failure leaves nothing to cover (a home that cannot be written holds no store either).
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(store);
    }
    let candidates = [policy.tool_caches.root.clone(), crate::tool_caches::store::root(env)].into_iter().chain(host_stores);
    let mut out: Vec<PathBuf> = candidates
        .into_iter()
        .flatten()
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out.dedup();
    let all = out.clone();
    out.retain(|p| !all.iter().any(|o| o != p && p.starts_with(o)));
    out
}

/// Where the Landlock mode makes each run's own directory (`runner::scratch`), from the host
/// process's environment: `$XDG_STATE_HOME/sandspawn/runs`, else `~/.local/state/sandspawn/runs`.
/// Beside the stores, so covered in every bwrap sandbox, kept read-only (and in place) in a Landlock
/// run whose writable root holds it, and in no other writable root by default.
pub fn runs_root() -> Option<PathBuf> {
    crate::state_dir::path(|k| std::env::var_os(k).map(PathBuf::from), "runs")
}
