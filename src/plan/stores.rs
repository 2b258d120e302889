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
//! So is every other place a sandspawn process of this user keeps its state (`state_dirs`, and the
//! others' own in `known_stores`): a run that reached another process's pending change set could
//! choose where that process's `applyChangeSet` writes (found by an attacker's review).
//!
//! Each existing store is covered with an empty read-only directory by the helper, after it has
//! mounted the run's own caches and change set from them and detached those binds.

use std::path::{Path, PathBuf};

use crate::error::Result;
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
pub fn to_cover(policy: &ResolvedPolicy, env: &std::collections::BTreeMap<String, String>) -> Result<Vec<PathBuf>> {
    use super::store_lookup::lookup;
    // Each path looked up once for this list (`canonical_memo`: why it cannot go stale).
    let _lookups = crate::canonical_memo::Scope::begin();
    // A lookup that fails for anything but absence refuses the run (`store_lookup`): found by an
    // attacker's review (rfix25), a run's `chmod 000 ~/.local/state` made every store here drop
    // out of the next run's cover.
    let own = host_stores(env).into_iter().map(|p| own_store(&p)).collect::<Result<Vec<_>>>()?;
    let own: Vec<PathBuf> = own.into_iter().flatten().filter(|p| p.is_dir()).collect();
    // The run's environment's (and the caches' root resolved for the run) only as named, with no
    // symlink at or on the way: found by an attacker's review (rfix24), a run whose `HOME` was its
    // workspace made `.local/state/sandspawn` a link to the real home, and every later run of that
    // workspace covered the home (and recorded it: every process's did).
    let (_, other_state) = state_dirs(env);
    let mut run = Vec::new();
    for p in [crate::tool_caches::store::root(env)].into_iter().chain(other_state).flatten().filter(|p| p.is_absolute()) {
        if super::store_lookup::lookup_as_named(&p)?.is_some() && p.is_dir() {
            run.push(p);
        }
    }
    // The caches' root the policy resolved (the caller's choice, as the host's environment is).
    let resolved = match policy.tool_caches.root.as_ref() {
        Some(r) => lookup(r)?.filter(|p| p.is_dir()),
        None => None,
    };
    // With those this user's other processes keep, wherever their environments put them; only
    // this process's own are recorded (a run's environment is the caller's, or a run's, choice).
    let known = super::known_stores::record_and_list(&own)?;
    Ok(outermost(own.into_iter().chain(resolved).chain(run).chain(known).collect()))
}

/// The host process's own stores, as its environment names them (not looked up): the caches' root
/// as the host process's environment resolves it (where this process's other runs keep theirs),
/// the change sets' root, the run directories only where the Landlock mode makes them (a store
/// nobody uses elsewhere), the lock files of the directories plans hold where plans make
/// placeholders (see the module), and its state directories (`state_dirs`).
pub fn host_stores(env: &std::collections::BTreeMap<String, String>) -> Vec<PathBuf> {
    let linux = crate::platform::Platform::host() == crate::platform::Platform::Linux;
    let runs = if linux { runs_root() } else { None };
    let held = if linux { crate::placeholders::locks_root() } else { None };
    let (host_state, _) = state_dirs(env);
    let mut stores: Vec<PathBuf> = [crate::tool_caches::store::host_root(), crate::review::store::root(), runs, held].into_iter().chain(host_state).flatten().collect();
    // Each once: without `XDG_STATE_HOME` the three state directories are one (`$HOME`'s default is
    // the user database's), and each copy was looked up, checked and listed again, before and
    // after every run (ro35).
    let mut seen = std::collections::HashSet::new();
    stores.retain(|p| seen.insert(p.clone()));
    stores
}

/// One of the host process's stores, made (mode 0700) when missing; `None` when it cannot be
/// (a home that cannot be written holds no store either).
fn own_store(store: &Path) -> Result<Option<PathBuf>> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(c) = super::store_lookup::lookup(store)? {
        return Ok(Some(c));
    }
    let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(store);
    super::store_lookup::lookup(store)
}

/// `dirs` sorted, without duplicates and without those inside another. Paths sort by component, so
/// what lies inside a directory follows it directly: one comparison each with the last one kept
/// (each against all, as before, was 1,000,000 for the 1,000 stores another process may list:
/// pstores40).
fn outermost(mut dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    dirs.sort();
    dirs.dedup();
    let mut kept: Vec<PathBuf> = Vec::with_capacity(dirs.len());
    for p in dirs {
        if !kept.last().is_some_and(|o| p.starts_with(o)) {
            kept.push(p);
        }
    }
    kept
}

/// sandspawn's whole state directories, besides the stores this process uses: where another
/// sandspawn process of this user keeps its own (found by an attacker's review: a process with
/// `SANDSPAWN_CHANGE_SET_DIR` set covered only that store, and its run, with the cwd at `$HOME`,
/// rewrote a pending set in `~/.local/state/sandspawn/change-sets`, whose `applyChangeSet` then
/// wrote outside its workspace). The host process's (`$XDG_STATE_HOME/sandspawn`, and its home's
/// default `~/.local/state/sandspawn`, which a process without `XDG_STATE_HOME` uses), made where
/// missing like its stores, and the user database's home's default, which holds the list of the
/// others (`known_stores`); then the run's environment's (the same, and its change sets'
/// override), covered where they exist.
fn state_dirs(env: &std::collections::BTreeMap<String, String>) -> ([Option<PathBuf>; 3], [Option<PathBuf>; 3]) {
    use crate::state_dir::{base, home_base};
    let host = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let run = |k: &str| env.get(k).map(PathBuf::from);
    let run_sets = run("SANDSPAWN_CHANGE_SET_DIR").filter(|p| p.is_absolute());
    let database = home_base(crate::planted::home::database_home());
    ([base(host), home_base(host("HOME")), database], [base(run), home_base(run("HOME")), run_sets])
}

/// Where the Landlock mode makes each run's own directory (`runner::scratch`), from the host
/// process's environment: `$XDG_STATE_HOME/sandspawn/runs`, else `~/.local/state/sandspawn/runs`.
/// Beside the stores, so covered in every bwrap sandbox, kept read-only (and in place) in a Landlock
/// run whose writable root holds it, and in no other writable root by default.
pub fn runs_root() -> Option<PathBuf> {
    crate::state_dir::host_path("runs")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// What lies inside another is left out wherever it sorts (a sibling whose name extends the
    /// directory's, `/a b` or `/a-b`, sorts between them bytewise, not by component).
    #[test]
    fn outermost_leaves_out_what_lies_inside_another() {
        let dirs: Vec<PathBuf> = ["/a/c/d", "/a b", "/a-b/x", "/a/c", "/a", "/a-b", "/b/x", "/b/x", "/ab/c"].iter().map(PathBuf::from).collect();
        let got = super::outermost(dirs.clone());
        let want: Vec<PathBuf> = ["/a", "/a b", "/a-b", "/ab/c", "/b/x"].iter().map(PathBuf::from).collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        assert_eq!(got_sorted, want);
        // The same answer as every pair's comparison.
        let mut all = dirs.clone();
        all.sort();
        all.dedup();
        let pairwise: Vec<PathBuf> = all.iter().filter(|p| !all.iter().any(|o| o != *p && p.starts_with(o))).cloned().collect();
        assert_eq!(got, pairwise);
    }

    /// The host's stores are each named once: without `XDG_STATE_HOME`, `$HOME`'s default state
    /// directory and the user database's home's are one directory, and each copy was looked up
    /// and checked again, before and after every run (ro35).
    #[test]
    fn the_host_stores_are_each_named_once() {
        let stores = super::host_stores(&Default::default());
        let mut unique = stores.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(stores.len(), unique.len(), "{stores:?}");
    }
}
