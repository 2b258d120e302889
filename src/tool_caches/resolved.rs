//! What one run's tool caches are (`ToolCaches`: the mode, the store, each covered cache), as the
//! plans mount them (Linux) or point the tools at them (macOS), and `SpawnResult.toolCaches`
//! reports them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// A store per set of writable roots (`scope`).
    Private,
    /// One store for every workspace of this user (the caller's explicit choice).
    Shared,
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
    /// Set by `RunGuard::prepare`: the store's layers under this run's writes (newest first),
    /// and this run's upper and work directories.
    #[serde(skip)]
    pub layers: Vec<PathBuf>,
    #[serde(skip)]
    pub upper: Option<PathBuf>,
    #[serde(skip)]
    pub work: Option<PathBuf>,
    /// macOS: the store directory the tool is pointed at, set by `macos::prepare` (the profile
    /// lets the command write it).
    #[serde(skip)]
    pub dir: Option<PathBuf>,
    /// macOS: the variables that point the tool there (and at the host's cache where the tool
    /// reads one read-only), set by `macos::prepare`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, String>,
    /// `(device, inode)` of the location before the run, where a writable root holds it (`moved`).
    #[serde(skip)]
    pub before: Option<(u64, u64)>,
}

impl PrivateCache {
    pub(super) fn new(name: &str, path: PathBuf) -> PrivateCache {
        PrivateCache { name: name.to_string(), path, layers: Vec::new(), upper: None, work: None, dir: None, variables: BTreeMap::new(), before: None }
    }
}

/// What `SpawnResult.toolCaches` reports, and what the plan builders mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCaches {
    pub mode: Mode,
    /// Where this run's cache writes are kept: the workspace's directory in the store (or the
    /// shared one).
    pub store: Option<PathBuf>,
    /// The store's root (the user's, for every workspace).
    #[serde(skip)]
    pub root: Option<PathBuf>,
    /// What the store directory is recorded as (`'private'`: its writable roots, see `scope`).
    #[serde(skip)]
    pub record: Option<super::scope::Record>,
    pub host_content: Option<HostContent>,
    pub caches: Vec<PrivateCache>,
    /// Names this run's work directories (`store/NAME/work/RUN`).
    #[serde(skip)]
    pub run_id: String,
    /// `'private'` was asked for, not the default: a plan that cannot mount the caches (the
    /// Landlock mode) refuses it instead of treating it as unavailable.
    #[serde(skip)]
    pub explicit: bool,
    /// Why the run keeps no private caches where it would have (its store lies where it could
    /// write: `store::writable_by_the_run`), for `sandboxDetails.notEnforced`.
    #[serde(skip)]
    pub not_enforced: Option<String>,
}

impl ToolCaches {
    pub fn none() -> ToolCaches {
        ToolCaches { mode: Mode::None, store: None, root: None, record: None, host_content: None, caches: Vec::new(), run_id: String::new(), explicit: false, not_enforced: None }
    }

    /// The host's cache directories a private copy covers in a sandbox of `platform`: on Linux each
    /// cache's (an overlay or a bind over it); none on macOS, where the tools are pointed at the
    /// store and the host's directory stays where it is.
    pub fn covering(&self, platform: crate::platform::Platform) -> Vec<PathBuf> {
        let private = matches!(self.mode, Mode::Private | Mode::Shared) && platform == crate::platform::Platform::Linux;
        self.caches.iter().filter(|_| private).map(|c| c.path.clone()).collect()
    }
}
