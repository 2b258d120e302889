//! `SandboxPolicy.toolCaches: 'private' | 'none'`: package managers' caches (npm, pip, cargo, Go,
//! ...) writable inside the sandbox without the host's own caches ever being written.
//!
//! With `'private'` every existing cache location (`locations`) is covered, inside the sandbox
//! only, by a copy-on-write overlay: the host's cache below, read-only, and above it this cache's
//! directory in sandspawn's per-user store (`store`), which receives every write and persists
//! across runs. So what the host already cached stays readable (no second download), what a
//! sandboxed command writes is kept for the next sandboxed run, and nothing it writes can reach
//! what the host installs later. bwrap 0.8 cannot mount overlays; the helper does it inside the
//! sandbox (see `helper/src/private_mounts.rs` for why that is as tight as bwrap). On kernels
//! older than 5.11 (no overlayfs in user namespaces) the store directory is bound over the cache
//! instead: still private and persistent, but the host's cached content is not visible
//! (`hostContent: 'hidden'`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, SandboxError};
use crate::platform::Platform;
use crate::policy::{ResolvedPolicy, SandboxMode, TmpMode};

mod bwrap_mounts;
pub mod locations;
pub mod store;

pub use bwrap_mounts::{plan, Mounts};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Private,
    None,
}

/// How the host's cached content appears under a private cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostContent {
    /// An overlay: the host's content readable, writes in the store.
    Visible,
    /// The store alone (kernel without overlayfs in user namespaces).
    Hidden,
}

/// One covered cache location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrivateCache {
    /// The store's name for it (`npm`, `xdg-cache`, `cargo-registry`, ...).
    pub name: String,
    /// The cache as the command sees it (canonical host path).
    pub path: PathBuf,
}

/// What `SpawnResult.toolCaches` reports, and what the plan builders mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCaches {
    pub mode: Mode,
    /// The store's root (`'private'` only).
    pub store: Option<PathBuf>,
    pub host_content: Option<HostContent>,
    pub caches: Vec<PrivateCache>,
    /// Names this run's work directories (`store/NAME/work/RUN`).
    #[serde(skip)]
    pub run_id: String,
    /// `'private'` was asked for, not the default: a plan that cannot mount the caches (the
    /// Landlock mode) refuses it instead of treating it as unavailable.
    #[serde(skip)]
    pub explicit: bool,
}

impl ToolCaches {
    pub fn none() -> ToolCaches {
        ToolCaches { mode: Mode::None, store: None, host_content: None, caches: Vec::new(), run_id: String::new(), explicit: false }
    }

    /// Where this cache's writes go.
    pub fn upper(&self, c: &PrivateCache) -> Option<PathBuf> {
        Some(self.store.as_ref()?.join(&c.name).join("upper"))
    }

    /// This run's overlay work directory for `c` (created by the helper, removed by `release`).
    pub fn work(&self, c: &PrivateCache) -> Option<PathBuf> {
        Some(self.store.as_ref()?.join(&c.name).join("work").join(&self.run_id))
    }

    /// Create the store's directories before bwrap binds them.
    pub fn prepare(&self) -> Result<()> {
        match &self.store {
            Some(root) if !self.caches.is_empty() => {
                let names: Vec<&str> = self.caches.iter().map(|c| c.name.as_str()).collect();
                store::create(root, &names)
            }
            _ => Ok(()),
        }
    }

    /// After the run: remove its work directories (the upper directories stay).
    pub fn release(&self) {
        for c in &self.caches {
            if let Some(w) = self.work(c) {
                let _ = store::remove_tree(&w);
            }
        }
    }
}

/// One run's hold on the store: created before the run, its work directories removed after it.
pub struct RunGuard(ToolCaches);

impl RunGuard {
    pub fn prepare(tc: &ToolCaches) -> Result<RunGuard> {
        tc.prepare()?;
        Ok(RunGuard(tc.clone()))
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Parse `sandbox.toolCaches` (`None`: not given).
pub(crate) fn parse(value: Option<&Value>) -> Result<Option<Mode>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "private" => Ok(Some(Mode::Private)),
        Some(Value::String(s)) if s == "none" => Ok(Some(Mode::None)),
        Some(v) => Err(SandboxError::invalid("sandbox.toolCaches", format!("must be 'private' or 'none', got {v}"))),
    }
}

/// Resolve the option for a policy whose every other field is resolved. `env` is the command's
/// environment (its `HOME` and XDG variables say where its caches are).
pub(crate) fn resolve(
    value: Option<&Value>,
    policy: &ResolvedPolicy,
    env: &BTreeMap<String, String>,
    platform: Platform,
) -> Result<ToolCaches> {
    let asked = parse(value)?;
    let workspace = policy.mode == SandboxMode::WorkspaceWrite;
    if asked == Some(Mode::Private) && !workspace {
        return Err(SandboxError::invalid(
            "sandbox.toolCaches",
            "'private' needs mode 'workspace-write' (in 'read-only' nothing is writable, and 'danger-full-access' writes the host's caches)",
        ));
    }
    if asked == Some(Mode::Private) && platform == Platform::Darwin {
        return Err(SandboxError::unsupported(
            "sandbox.toolCaches 'private' is not supported on macOS yet; use 'none' (the caches stay read-only)",
        ));
    }
    // The default follows the mode; macOS has no private caches yet, so it keeps today's behaviour.
    let mode = asked.unwrap_or(if workspace && platform == Platform::Linux { Mode::Private } else { Mode::None });
    let explicit = asked == Some(Mode::Private);
    if mode == Mode::None {
        return Ok(ToolCaches::none());
    }
    let Some(root) = store::root(env) else {
        // No HOME: no cache locations to cover either.
        return Ok(ToolCaches { mode, store: None, host_content: None, caches: Vec::new(), run_id: String::new(), explicit });
    };
    // A store the policy hides (a `denyRead` over it, a private /tmp) cannot be bound into the
    // sandbox: its mount point would appear in what should be empty.
    let hidden = policy.deny_read.iter().any(|d| locations::overlaps(&root, d))
        || (policy.tmp == TmpMode::Private && root.starts_with("/tmp"));
    let caches = locations::existing(env)
        .into_iter()
        .filter(|_| !hidden)
        .filter(|l| coverable(&l.path, policy, &root))
        .map(|l| PrivateCache { name: l.name.to_string(), path: l.path })
        .collect();
    let overlay = platform != Platform::Linux || Platform::host() != Platform::Linux || kernel_has_userns_overlay();
    Ok(ToolCaches {
        mode,
        store: Some(root),
        host_content: Some(if overlay { HostContent::Visible } else { HostContent::Hidden }),
        caches,
        run_id: store::run_id(),
        explicit,
    })
}

/// A cache location is covered only when no other rule of the policy lies in it or over it: the
/// overlay is mounted last, after bwrap's mounts, and overlayfs sees the lower directory without
/// the mounts below it, so a deny mask or read-only carve-out inside would be undone and a
/// writable root inside would be replaced by the private copy. A cache the user made writable
/// (inside a writable root) is left as the user asked.
fn coverable(path: &Path, policy: &ResolvedPolicy, store: &Path) -> bool {
    use locations::overlaps;
    let inside = |p: &Path| p.starts_with(path);
    let roots = policy.writable_roots.iter();
    !(locations::overlaps(path, store)
        || roots.clone().any(|r| overlaps(path, &r.root))
        || roots.clone().flat_map(|r| r.read_only.iter()).any(|p| inside(p))
        || roots.flat_map(|r| r.missing_read_only.iter()).any(|m| inside(&m.path))
        || policy.read_only_paths.iter().any(|p| inside(p))
        || policy.deny_read.iter().any(|d| overlaps(path, d))
        || (policy.tmp == TmpMode::Private && path.starts_with("/tmp")))
}

/// Linux 5.11 and later mount overlayfs in a user namespace.
fn kernel_has_userns_overlay() -> bool {
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
