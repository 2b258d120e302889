//! `SandboxPolicy.toolCaches: 'private' | 'none'`: package managers' caches (npm, pip, cargo, Go,
//! ...) writable inside the sandbox without the host's own caches ever being written.
//!
//! With `'private'` every existing cache location (`locations`) is covered, inside the sandbox
//! only, by a copy-on-write overlay: the host's cache below, read-only, above it what earlier runs
//! with the same writable roots wrote (`layers`, in sandspawn's per-user store, `store`, in the
//! roots' scope, `scope`), and on top the run's own writes, kept for the next such run. So what the host already cached
//! stays readable (no second download), what a sandboxed command writes is reused by the next
//! sandboxed run with the same writable roots (`scope`), and nothing it writes can reach what the
//! host installs later, or what a run with other roots builds (`'shared'` opts into one store for
//! every workspace). bwrap 0.8 cannot mount overlays; the helper does it inside the
//! sandbox (see `helper/src/private_mounts.rs` for why that is as tight as bwrap). On kernels
//! older than 5.11 (no overlayfs in user namespaces) the store directory is bound over the cache
//! instead: still private and persistent, but the host's cached content is not visible
//! (`hostContent: 'hidden'`).
//!
//! On macOS there is no overlay: each tool is pointed at a directory of the store by its own
//! variable (`macos`, prepared for a run by `macos_run`, seeded by `seed`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Result, SandboxError};
use crate::platform::Platform;
use crate::policy::{SandboxMode, TmpMode, WritableRoot};

mod bwrap_mounts;
mod dir;
pub mod env_key;
pub(crate) mod held_home;
mod layers;
pub mod linked;
mod linked_config;
mod linked_sample;
mod lock;
mod resolved;
mod scope;
pub mod locations;
pub mod macos;
pub mod macos_run;
mod merge;
mod releasing;
pub mod moved;
mod owner_access;
mod seed;
mod slots;
pub mod store;
mod work_leftovers;

pub use bwrap_mounts::{plan, Mounts};
pub use resolved::{HostContent, Mode, PrivateCache, ToolCaches};


/// How long a workspace's store stays when no run uses it.
pub(crate) const UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 86400);

/// One run's hold on the store, from before its plan is built (the layers it mounts are listed
/// then) until its sandbox is gone; then its writes become a layer for the next run (`layers`).
pub struct RunGuard(Vec<layers::CacheRun>);

impl RunGuard {
    /// Create the run's directories and fill in each cache's layers and directories in `tc`.
    /// `ended`: whether the run ended meanwhile (its deadline, a kill, an abort), which ends any
    /// wait for a cache's lock (`layers::CacheRun::open`).
    pub fn prepare(tc: &mut ToolCaches, ended: &dyn Fn() -> bool) -> Result<RunGuard> {
        let (Some(root), Some(scope)) = (tc.root.clone(), tc.store.clone()) else { return Ok(RunGuard(Vec::new())) };
        if tc.caches.is_empty() {
            return Ok(RunGuard(Vec::new()));
        }
        let (root, scope) = scope::create(&root, &scope, tc.record.as_ref())?;
        store::evict_unused(&root, UNUSED_FOR);
        let mut runs = Vec::new();
        for c in &mut tc.caches {
            let run = layers::CacheRun::open(&scope, &c.name, &tc.run_id, ended)?;
            (c.layers, c.upper, c.work) = (run.lowers.clone(), Some(run.upper.clone()), Some(run.work.clone()));
            runs.push(run);
        }
        Ok(RunGuard(runs))
    }

    /// The sandbox is gone: publish every cache's writes now (what the next run mounts). The rest
    /// (removing the run's directories, whose mode-000 `work/work` and the ext4 journal made it
    /// 0.7 ms and up to 20 ms, and folding) is left to the value returned, which the runner drops
    /// on a blocking thread of its own, off the result's path; `settle` waits for it. A host that
    /// exits first leaves the run's directories behind; the next fold in that cache removes them
    /// (`layers::fold_if_alone`).
    pub fn publish(mut self) -> Releasing {
        for run in &mut self.0 {
            run.publish();
        }
        releasing::began();
        Releasing(Some(self))
    }
}

/// A published run's hold on the store until it has let go (see `RunGuard::publish`).
pub struct Releasing(Option<RunGuard>);

impl Drop for Releasing {
    fn drop(&mut self) {
        drop(self.0.take());
        releasing::ended();
    }
}

pub use releasing::settle;

impl Drop for RunGuard {
    fn drop(&mut self) {
        for run in self.0.drain(..) {
            run.finish();
        }
    }
}

/// Parse `sandbox.toolCaches` (`None`: not given).
pub(crate) fn parse(value: Option<&Value>) -> Result<Option<Mode>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "private" => Ok(Some(Mode::Private)),
        Some(Value::String(s)) if s == "shared" => Ok(Some(Mode::Shared)),
        Some(Value::String(s)) if s == "none" => Ok(Some(Mode::None)),
        Some(v) => Err(SandboxError::invalid("sandbox.toolCaches", format!("must be 'private', 'shared' or 'none', got {v}"))),
    }
}

/// The rest of the policy, resolved, as far as the caches depend on it.
pub(crate) struct Rules<'a> {
    pub mode: SandboxMode,
    pub writable_roots: &'a [WritableRoot],
    pub read_only_paths: &'a [PathBuf],
    pub deny_read: &'a [PathBuf],
    pub tmp: TmpMode,
    /// Roots judged on their change set (review mode): a cache in one is left as it is.
    pub reviewed: &'a [PathBuf],
    /// Everything else that bounds what the run reaches (`policy::resolve::confinement`): part of
    /// the scope's key, so that runs confined otherwise in the same roots share no caches. Made
    /// only for a private scope (most runs have no caches to key).
    pub confinement: &'a dyn Fn() -> Vec<u8>,
}

/// Resolve the option for a policy whose every other field is resolved. `env` is the command's
/// environment (its `HOME` and XDG variables say where its caches are).
pub(crate) fn resolve(
    value: Option<&Value>,
    policy: &Rules,
    env: &BTreeMap<String, String>,
    platform: Platform,
    cwd: &Path,
) -> Result<ToolCaches> {
    let asked = parse(value)?;
    let workspace = policy.mode == SandboxMode::WorkspaceWrite;
    let writable = matches!(asked, Some(Mode::Private | Mode::Shared));
    if writable && !workspace {
        return Err(SandboxError::invalid(
            "sandbox.toolCaches",
            "'private' and 'shared' need mode 'workspace-write' (in 'read-only' nothing is writable, and 'danger-full-access' writes the host's caches)",
        ));
    }
    // The default follows the mode.
    let mode = asked.unwrap_or(if workspace && platform != Platform::Other { Mode::Private } else { Mode::None });
    let explicit = writable;
    if mode == Mode::None {
        return Ok(ToolCaches::none());
    }
    let Some(root) = store::root(env) else {
        // No HOME: no cache locations to cover either.
        return Ok(ToolCaches { mode, explicit, ..ToolCaches::none() });
    };
    if let Some(holder) = store::writable_by_the_run(&root, policy.writable_roots, store::host_root().as_deref()) {
        let why = format!("lies in the writable root {}, where the command could plant links that the host would follow when it keeps the caches' writes", holder.display());
        return unusable_store(mode, explicit, &root, &why);
    }
    // Even this process's own store, which its runs cover: another process's runs, with the
    // default writable /tmp, do not (see `state_dir::under_shared_tmp`).
    if crate::state_dir::under_shared_tmp(&root) {
        let why = "lies under /tmp, which every workspace-write run of any process may write (tmp: 'writable', the default): \
                   another process's run could plant what this workspace's next build runs";
        return unusable_store(mode, explicit, &root, why);
    }
    // 'private': the scope of the run's writable roots (`scope`). Without one (no writable root,
    // or one that cannot be inspected) the run keeps no caches: they stay read-only, as with
    // 'none', so it fills no scope that runs with other roots use.
    let (scope, record) = match mode {
        Mode::Private => match scope::of(&root, policy.writable_roots, policy.reviewed, &(policy.confinement)(), cwd) {
            Some((dir, record)) => (dir, Some(record)),
            None => return Ok(ToolCaches { mode, explicit, ..ToolCaches::none() }),
        },
        _ => (store::shared_dir(&root), None),
    };
    // A store the policy hides (a `denyRead` over it, a private /tmp) cannot be bound into the
    // sandbox: its mount point would appear in what should be empty.
    let hidden = policy.deny_read.iter().any(|d| locations::overlaps(&root, d))
        || (policy.tmp == TmpMode::Private && root.starts_with("/tmp"))
        || (platform == Platform::Darwin && holds_read_only(&root, policy));
    let locations: Vec<(&str, PathBuf)> = match platform {
        // Every tool, whether the host has its cache yet or not (see `macos`).
        Platform::Darwin => macos::known(env).into_iter().map(|t| (t.name, t.host)).collect(),
        _ => locations::existing(env).into_iter().map(|l| (l.name, l.path)).collect(),
    };
    let home = env.get("HOME").and_then(|h| std::fs::canonicalize(h).ok());
    // A location with another filesystem mounted below it (a container's volume at `~/.cache/pip`)
    // cannot be overlaid from the sandbox's user namespace (`crate::mounts_below`): every run failed
    // setup with "Invalid argument" on it. It is left uncovered, read-only as with 'none'.
    let linux = platform == Platform::Linux && Platform::host() == Platform::Linux && !locations.is_empty() && !hidden;
    let mounts = if linux { crate::mounts_below::table() } else { Vec::new() };
    let mut caches: Vec<PrivateCache> = locations
        .into_iter()
        .filter(|_| !hidden)
        .filter(|(_, path)| coverable(path, policy, &root, home.as_deref()))
        .filter(|(_, path)| crate::mounts_below::first_below(path, &mounts).is_none())
        .map(|(name, path)| PrivateCache::new(name, path))
        .collect();
    // Those of a held home: checked after the run (`moved`).
    moved::watch(&mut caches, policy.writable_roots);
    let overlay = platform != Platform::Linux || Platform::host() != Platform::Linux || kernel_has_userns_overlay();
    Ok(ToolCaches {
        mode,
        store: Some(scope),
        root: Some(root),
        record,
        host_content: Some(if overlay { HostContent::Visible } else { HostContent::Hidden }),
        caches,
        run_id: store::run_id(),
        explicit,
        not_enforced: None,
    })
}

/// A store the run could write (`store::writable_by_the_run`), or another process's run
/// (`state_dir::under_shared_tmp`), keeps nothing: the run gets no private
/// caches (they stay read-only, as with `'none'`: `held_home`), and says why; an explicit
/// `'private'` or `'shared'` is refused.
fn unusable_store(mode: Mode, explicit: bool, root: &Path, place: &str) -> Result<ToolCaches> {
    let why = format!("the tool cache store {} {place}", root.display());
    if explicit {
        return Err(SandboxError::invalid(
            "sandbox.toolCaches",
            format!("{why}; set SANDSPAWN_TOOL_CACHE_DIR (or XDG_STATE_HOME) in the command's environment to a directory outside the writable roots and /tmp, or use 'none'"),
        ));
    }
    let note = format!("tool caches: {why}: the run has no private caches (they stay read-only, as with toolCaches: 'none'); set SANDSPAWN_TOOL_CACHE_DIR outside the writable roots and /tmp to have them");
    Ok(ToolCaches { mode, explicit, not_enforced: Some(note), ..ToolCaches::none() })
}

/// A cache location is covered only when no other rule of the policy lies in it or over it: the
/// overlay is mounted last, after bwrap's mounts, and overlayfs sees the lower directory without
/// the mounts below it, so a deny mask or read-only carve-out inside would be undone and a
/// writable root inside would be replaced by the private copy. A cache the user made writable
/// (inside a writable root) is left as the user asked, but for the caches of a home the root holds
/// (a cwd of `$HOME`, `HOME=/tmp` with a writable `/tmp`): those are the host's own, which the
/// host's next `npx` or `pip` runs from (found by an attacker's review), covered as when the home
/// is not writable; one of those that cannot be covered (a rule inside it) is kept read-only
/// instead (`held_home`). `home`: the command's `HOME`, canonical, where the cache locations are.
fn coverable(path: &Path, policy: &Rules, store: &Path, home: Option<&Path>) -> bool {
    use locations::overlaps;
    let inside = |p: &Path| p.starts_with(path);
    let roots = policy.writable_roots.iter();
    let of_a_held_home = |r: &WritableRoot| home.is_some_and(|h| h.starts_with(&r.root) && path.starts_with(h)) && !policy.reviewed.contains(&r.root);
    !(locations::overlaps(path, store)
        || roots.clone().any(|r| r.root.starts_with(path) || (path.starts_with(&r.root) && !of_a_held_home(r)))
        || roots.clone().flat_map(|r| r.read_only.iter()).any(|p| inside(p))
        || roots.flat_map(|r| r.missing_read_only.iter()).any(|m| inside(&m.path))
        || policy.read_only_paths.iter().any(|p| inside(p))
        || policy.deny_read.iter().any(|d| overlaps(path, d))
        || (policy.tmp == TmpMode::Private && path.starts_with("/tmp")))
}

/// A read-only path of the policy inside the store (macOS): the profile's write rule for the
/// cache directories follows the carve-outs and would undo one there, so no cache is covered.
fn holds_read_only(root: &Path, policy: &Rules) -> bool {
    let roots = policy.writable_roots.iter();
    roots.clone().flat_map(|r| r.read_only.iter()).chain(roots.flat_map(|r| r.missing_read_only.iter().map(|m| &m.path))).chain(policy.read_only_paths.iter()).any(|p| p.starts_with(root))
}

/// Linux 5.11 and later mount overlayfs in a user namespace.
pub(crate) fn kernel_has_userns_overlay() -> bool {
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut uts) } != 0 {
        return false;
    }
    let release = unsafe { std::ffi::CStr::from_ptr(uts.release.as_ptr()) }.to_string_lossy().into_owned();
    release_at_least(&release, (5, 11))
}

fn release_at_least(release: &str, want: (u32, u32)) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major, minor) >= want
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
#[cfg(test)]
#[path = "tests_macos.rs"]
mod tests_macos;
#[cfg(all(test, target_os = "linux"))]
#[path = "tests_links.rs"]
mod tests_links;
