//! What the walk saw before a run (`Baseline`), to tell afterwards what the run planted; and the
//! last walk of each area this process made, which the next walk starts from.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::scan;

/// What the walk saw before the run, to tell what the run planted. Kept with the resolved policy
/// (not serialized).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Baseline {
    pub spec: scan::WalkSpec,
    /// `.git` entries that existed (any depth), with their `(device, inode)`.
    pub git: HashMap<std::ffi::OsString, (u64, u64)>,
    /// Directories that were git directories themselves (`scan::Found::git_dirs`), with their
    /// `(device, inode)`.
    pub git_dirs: HashMap<PathBuf, (u64, u64)>,
    /// Each writable root's top and its `.git` before the run: their `(device, inode)` (after it, the
    /// same paths must still be the same directories: `workspace-replaced`; see `identities`), and
    /// their permission bits and ACLs (one the run opened to others is reported: `opened_tops`).
    pub top_modes: super::opened_tops::TopModes,
    /// The symlinks in directly written roots that `denyRead`, `readOnlyPaths` and `writableRoots`
    /// paths are resolved through (named for the first: `policy::policy_links`), as they
    /// were, held while the run lives (`policy::held_links`): one the run replaced or removed is
    /// put back after it (`detect`), so that the next run's mask lands where the caller meant it.
    pub deny_links: Vec<crate::policy::held_links::HeldLink>,
    /// The symlinks in directly written roots on the way to a host path kept where it leads (a home
    /// link's, a global git file's, a repository's git directory's: `Carver::hold_links_on_the_way`),
    /// held as `deny_links` are: one the run replaced or removed is put back after it (`detect`).
    pub links_on_the_way: Vec<crate::policy::held_links::HeldLink>,
    /// The entries kept read-only because a fixed path of the host's leads to them (a home link's
    /// target, a global git file or program): pinned where they are (`plan::pins::kept`) even when
    /// their name is a protected one, which the walk would find again elsewhere, but the host
    /// would not.
    pub named_from_outside: HashSet<PathBuf>,
    /// Paths that must stay absent (the policy's `missing_read_only`): what a run creates there is
    /// moved aside after it (`undo`) and reported.
    pub absent: Vec<PathBuf>,
    /// The directories between a writable root and a root nested below it (`between`): the keeper
    /// watches them as it watches the roots' tops, since git's discovery from the workspace finds a
    /// `.git` made there (the host's prompt or editor runs `git status` during the run).
    pub between: Vec<PathBuf>,
    /// Tops of nested repositories whose missing protected names are not listed in `absent` (the
    /// runner's own runs, `Absent::UndoneAfter`): a protected name that appears at one of these
    /// during the run is moved aside after it all the same. A set, not hundreds of repositories
    /// times dozens of names listed one by one for every run.
    pub protected_tops: HashSet<std::ffi::OsString>,
    /// The protected names (the report-only ones are in `spec.names` too).
    /// Shared with the run's keeper (`keeper::start`), not copied for it.
    pub protected_names: std::sync::Arc<HashSet<String>>,
    /// Protected-name entries that existed (any depth), with their `(device, inode)`.
    pub named: HashMap<PathBuf, (u64, u64)>,
    /// The report-only ones among them, with their newest ctime (`named_stamp`): one rewritten in
    /// place keeps its inode, but not its ctime, which no command can set back.
    pub named_changed_at: HashMap<PathBuf, super::named_stamp::Stamp>,
    /// The configuration files of the version-control stores below the tops (`store_configs`):
    /// one created, replaced or rewritten during the run is reported.
    pub store_configs: super::store_configs::Kept,
    /// The virtual environments one level below a top (`venv`): their files the walk after the
    /// run finds are judged, those of other directories are not.
    pub venvs: HashSet<PathBuf>,
    /// The way from each of them to its site-packages (`venv_way`), checked after the run.
    pub venv_ways: HashMap<PathBuf, super::venv_way::Way>,
    /// The files of their `bin` kept read-only (`activate`, a `python` that is no symlink): the
    /// Landlock mode grants them (`plan::landlock_grants`), and the check after the run reports a
    /// change, as `bin` would otherwise take no new entries.
    pub venv_bin: HashSet<PathBuf>,
    /// Whether new repositories are reported (`protectGit`).
    pub report_repositories: bool,
    /// The walk hit its bound: repositories below it are neither protected nor watched.
    pub truncated: bool,
    /// The entries named like protected names past the walk's bound (`scan::MAX_NAMED`): not in
    /// `named` nor `named_changed_at`, said in the run's `notEnforced` (`not_enforced`).
    pub named_unkept: scan::Unkept,
    /// The symlinks into `node_modules` the walk found, judged again after the run.
    pub unwalked_links: super::unwalked_links::Kept,
    /// When the baseline was taken (unix seconds, rounded down).
    pub taken_at: i64,
    /// The same, in nanoseconds: what the symlinks the run made are told by (`links::made_since`),
    /// finer than a second so that a link the host made just before the run is not taken for one.
    pub taken_at_ns: i64,
    /// The directories the walk read, so that the walk after the run reads only changed ones.
    pub index: Arc<scan::Index>,
    /// Where the host user's configuration lives (`home`): what a path kept absent there does.
    pub home: super::home::Bases,
    /// The homes and XDG configuration directories directly written roots hold: what a run makes
    /// there beyond `home`'s list is reported after it (`home_config`).
    pub home_config: super::home_config::Watched,
    /// A plan for macOS (`Request::macos`).
    pub macos: bool,
    /// The tool caches of a held home that did not exist (`tool_caches::held_home`): the command's
    /// tools may create them during the run, and what they created is moved aside after it.
    pub held_caches: Vec<HeldCache>,
    /// The hooks that lead elsewhere (`hook_links`): said in the run's result, checked after it.
    pub hook_links: super::hook_risks::Kept,
    /// What the host's global git configuration names as programs that nothing here resolves
    /// (`global_git::Global::not_enforced`): said in the run's result.
    pub global_git_unresolved: Vec<String>,
    /// The host's configuration files that are hard links on a written root's device (`home_hard`):
    /// said in the run's result, checked after it.
    pub home_hard: super::home_hard::Kept,
    /// The repositories' configuration files and the protected names kept read-only that are hard
    /// links (`config_hard`): said in the run's result, granted no rule in Landlock mode, checked
    /// after the run.
    pub config_hard: super::config_hard::Kept,
    /// What the run's result says of the `readOnlyPaths` files that are hard links (`read_only_hard`).
    pub read_only_hard: Vec<String>,
    /// `walk_and_protect` ran (until then only the tops are protected).
    pub walked: bool,
}

/// A missing tool cache of a home a writable root holds (its first missing component), and what the
/// host's tools take from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldCache {
    pub path: PathBuf,
    pub what: &'static str,
}

impl Baseline {
    /// What `named_unkept` leaves unjudged, for `sandboxDetails.notEnforced`.
    pub fn not_enforced(&self) -> Option<String> {
        let unkept = &self.named_unkept;
        let area = unkept.first_dir.as_ref()?;
        Some(format!(
            "planted configuration: the walk found more than {} entries named like protected names ({} past them, the first \
             in {}); those past them were not recorded before the run: one rewritten in place during the run (a reportedName \
             changed through the same inode) is not reported, one created or replaced is reported as created",
            scan::MAX_NAMED,
            unkept.count,
            area.display()
        ))
    }

    /// The `(device, inode)` this baseline holds for `p`: a `.git` entry, a git directory or a
    /// protected name the walk saw, or a root's top or its `.git`. A carve-out must still be that entry when the
    /// sandbox is set up, or a rename since could have put a decoy there (see the helper's
    /// `ReadOnly`); `detect` compares against the same numbers after the run.
    pub fn entry_id(&self, p: &std::path::Path) -> Option<(u64, u64)> {
        let top = || self.identities().find(|(q, _)| *q == p).map(|(_, id)| id);
        self.git.get(p.as_os_str()).or_else(|| self.named.get(p)).or_else(|| self.git_dirs.get(p)).copied().or_else(top)
    }

    /// Each writable root's top and its `.git` that existed before the run, with its `(device, inode)`.
    pub fn identities(&self) -> impl Iterator<Item = (&std::path::Path, (u64, u64))> {
        self.top_modes.iter().map(|(p, id, ..)| (p.as_path(), *id))
    }
}

/// The last walk of each area this process walked (a few areas): the next run in the same
/// workspace reads only the directories that changed since (see `scan`). The walk after a run
/// leaves its index here too (`detect`), so that the run's own changes are not read twice.
/// `None` when `ended` stopped the walk (the run was cut): an abandoned walk is no picture of the
/// area, and is not kept.
pub(super) fn walk_with_cache(spec: &scan::WalkSpec, ended: &dyn Fn() -> bool) -> Option<(scan::Found, Arc<scan::Index>)> {
    // Not holding the lock while walking: concurrent runs walk side by side.
    let (found, index) = scan::walk_reusing_until(spec, recall(spec).as_deref(), ended)?;
    let index = Arc::new(index);
    remember(spec, Arc::clone(&index));
    Some((found, index))
}

const SLOTS: usize = 8;
static WALKS: Mutex<Vec<(scan::WalkSpec, Arc<scan::Index>)>> = Mutex::new(Vec::new());

pub(super) fn recall(spec: &scan::WalkSpec) -> Option<Arc<scan::Index>> {
    WALKS.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(s, _)| s == spec).map(|(_, i)| Arc::clone(i))
}

/// Drop the kept walk of `spec`'s area: the next walk there reads every directory again. For a run
/// planned again because the sandbox found a protected path changed: a listing kept because its
/// directory did not change can still hold a stale entry (a mount made over a `.git` since, which
/// changes no directory), and planning from it again would fail the same way.
pub fn forget(spec: &scan::WalkSpec) {
    let mut walks = WALKS.lock().unwrap_or_else(|e| e.into_inner());
    let dropped = walks.iter().position(|(s, _)| s == spec).map(|i| walks.remove(i));
    drop(walks);
    drop(dropped);
}

/// Keep `index` as the latest walk of `spec`'s area (every index is a consistent picture, so when
/// concurrent runs race, whichever lands last is as good).
pub(super) fn remember(spec: &scan::WalkSpec, index: Arc<scan::Index>) {
    let mut walks = WALKS.lock().unwrap_or_else(|e| e.into_inner());
    // The slot of an equal spec (every run's but the first in a workspace) is moved to the end
    // with its new index, its spec kept: a clone of a spec (its skipped paths and protected names,
    // hundreds) cost each run ~25 µs of the host's CPU. Equal specs are the same key, so nothing
    // read later differs.
    if let Some(i) = walks.iter().position(|(s, _)| s == spec) {
        let (kept, old) = walks.remove(i);
        walks.push((kept, index));
        drop(walks);
        // Dropped after the lock, as below.
        drop(old);
        return;
    }
    let dropped = (walks.len() >= SLOTS).then(|| walks.remove(0));
    walks.push((spec.clone(), index));
    drop(walks);
    // Dropped after the lock: dropping an index releases the watches only it held (`watch`).
    drop(dropped);
}
