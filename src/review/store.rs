//! Where change sets live, and their life: created for a run, continued by later runs (one at a
//! time: `Lock`), listed, expired, removed.
//!
//! Location: `$SANDSPAWN_CHANGE_SET_DIR`, else `$XDG_STATE_HOME/sandspawn/change-sets`, else
//! `$HOME/.local/state/sandspawn/change-sets`, from the host process's environment (a set outlives
//! the run that made it, and `applyChangeSet` has no run to ask). Mode 0700, owned by this user.
//!
//! ```text
//! ROOT/ID/meta.json        what the set covers and when it began (`Meta`); written once
//! ROOT/ID/lock             a run, an apply or a discard holds it exclusively
//! ROOT/ID/last-used        its time: a set unused for `UNUSED_FOR` is removed
//! ROOT/ID/roots/N/upper    the writes under the set's Nth root (overlayfs's upper directory)
//! ROOT/ID/roots/N/work     overlayfs's scratch directory
//! ROOT/.spare-*            a set's directories and files made ahead of time (`spare`)
//! ```

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, Result, SandboxError};
use crate::planted::home::Bases;

/// A set nobody ran, applied or read for this long is removed.
pub const UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(14 * 86400);
/// At most this many open sets per store: a new one beyond is refused (apply or discard some).
pub const MAX_SETS: usize = 256;

/// What a set covers, fixed when it begins, and how it is judged (as strict as the strictest run
/// that wrote it: `tighten`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub id: String,
    /// The cwd of the run that began it.
    pub cwd: PathBuf,
    /// Milliseconds since the epoch.
    pub created: u64,
    /// When it began (nanoseconds since the epoch, the fine realtime clock, read when the run
    /// that began it was asked for): a host path whose ctime is not older was changed since (a
    /// conflict). A host change before it carries an older ctime (a ctime is never later than the
    /// change); one after it a later ctime, because that run's command starts only once the
    /// kernel's coarse clock, which stamps ctimes, has reached it (the helper's `--exec-after`).
    pub begin_ns: i64,
    /// The reviewed roots (canonical, none inside another), each with `roots/N` in the set.
    pub roots: Vec<PathBuf>,
    /// Missing `readOnlyPaths` and `denyRead` entries under those roots: what a run creates there is held back.
    pub held: Vec<PathBuf>,
    pub protect_git: bool,
    pub protected_names: Vec<String>,
    /// The report-only tier (`reportedNames`): in review mode held back like protected names, since
    /// holding back costs a confirmation where direct mode could only report. Absent in the
    /// metadata of sets made before it was kept: none.
    #[serde(default)]
    pub reported_names: Vec<String>,
    /// The host user's homes (`planted::home::Bases`: `$HOME` and the user database's) of the
    /// host processes that ran it, canonical: what the host runs from a home a root holds is
    /// judged on the set (`risks`), also by a process with another `HOME` that applies it.
    /// Absent in the metadata of sets made before they were kept: judged by the applying
    /// process's homes alone.
    #[serde(default)]
    pub homes: Vec<PathBuf>,
    /// Their XDG configuration directories (`$XDG_CONFIG_HOME`, each home's `.config`).
    #[serde(default)]
    pub config_homes: Vec<PathBuf>,
    /// The host's symlinks in those roots that `denyRead` paths are resolved through (canonical
    /// directory, own name: `policy::paths::links_on_the_way`): the set must not remove or replace
    /// one, or the next run's mask would land where the set points it (direct runs put such a
    /// link back: `planted::Baseline::deny_links`). Absent in sets made before they were kept: none.
    #[serde(default)]
    pub deny_links: Vec<PathBuf>,
    /// Each root's upper directory's mode when the set was made, which `create` sets to the host
    /// root's: the run sees the root with the upper's mode, and a `chmod .` is the upper's mode
    /// differing from this (`Differ::root_change`). Absent in sets made before it was kept (their
    /// uppers were made `0700` whatever the root's mode): no change of the root's mode is listed.
    #[serde(default)]
    pub root_modes: Vec<u32>,
    /// The package manager's links to sandspawn's command line (`node_modules/.bin/sandspawn`,
    /// `own_links::entries`) of each installed sandspawn that ran the set, those in its roots:
    /// what `npx sandspawn` runs, which a direct run puts back (`own_links`). Recorded by the host
    /// process that ran, before the command starts: the apply may be made by another copy of
    /// sandspawn (a global CLI's `review apply`), which knows nothing of the package that ran, and
    /// the metadata is out of the command's reach. Absent in sets made before they were kept: none
    /// (a `.bin/sandspawn` anywhere is still judged by name: `npx_bin`).
    #[serde(default)]
    pub own_links: Vec<PathBuf>,
}

impl Meta {
    /// Judge the set at least as strictly as a run continuing it asks: `protectGit` if either
    /// did, the names, held paths and host homes of both. Found by an attacker's review: a set begun by a
    /// run with `protectGit: false` (or a plain `true` with the defaults) kept that policy, so a
    /// strict run continuing it planted `core.fsmonitor`, a hook and its own `readOnlyPaths`
    /// entry, none of them a risk, and apply landed them. Whether anything changed.
    pub fn tighten(&mut self, protect_git: bool, protected_names: &[String], reported_names: &[String], held: &[PathBuf], home: &Bases, deny_links: &[PathBuf], own_links: &[PathBuf]) -> bool {
        let before = self.clone();
        add_new(&mut self.homes, &home.homes);
        add_new(&mut self.config_homes, &home.config);
        self.protect_git |= protect_git;
        add_new(&mut self.protected_names, protected_names);
        add_new(&mut self.reported_names, reported_names);
        // A name protected by one run and reported by another is protected (as in one policy).
        let protected = self.protected_names.clone();
        self.reported_names.retain(|n| !protected.contains(n));
        add_new(&mut self.held, held);
        add_new(&mut self.deny_links, deny_links);
        add_new(&mut self.own_links, own_links);
        *self != before
    }
}

fn add_new<T: Clone + PartialEq>(to: &mut Vec<T>, items: &[T]) {
    for item in items {
        if !to.contains(item) {
            to.push(item.clone());
        }
    }
}

/// The file whose mtime says when a set was last used (and which `clock_floor` probes).
pub const LAST_USED: &str = "last-used";
/// The file that counts the runs that wrote the set (`Lock::writes`); held by `EXCLUSIVE`, not locked itself.
const LOCK: &str = "lock";
/// What a run, apply or discard holds a set by (`exclusive_file`).
const EXCLUSIVE: &str = "lock.exclusive";
/// The metadata is written here, then renamed to `meta.json`.
const META_TMP: &str = "meta.json.tmp";

/// An open change set.
#[derive(Debug, Clone)]
pub struct ChangeSet {
    pub dir: PathBuf,
    pub meta: Meta,
}

impl ChangeSet {
    pub fn upper(&self, root: usize) -> PathBuf {
        root_dir(&self.dir, root).join("upper")
    }

    pub fn work(&self, root: usize) -> PathBuf {
        root_dir(&self.dir, root).join("work")
    }

    /// The set's root holding `path` and the path below it, if any.
    pub fn locate<'a>(&self, path: &'a Path) -> Option<(usize, &'a Path)> {
        self.meta.roots.iter().enumerate().find_map(|(i, r)| path.strip_prefix(r).ok().map(|rel| (i, rel)))
    }

    /// Record a use (runs, applies, reads): the expiry counts from here (`LAST_USED`'s mtime).
    pub fn touch(&self) {
        let _ = std::fs::write(self.dir.join(LAST_USED), b"");
    }
}

/// Where the set in `dir` keeps its `root`th root's overlay directories.
fn root_dir(dir: &Path, root: usize) -> PathBuf {
    dir.join("roots").join(root.to_string())
}

/// A new set's directory `dir` with what every set holds before its metadata is written: its
/// first root's overlay directories, the lock, the last-use time and the metadata's file to write.
/// Not recursive at the top: an existing directory is an error, never shared. Also what a spare is
/// made of (`spare`), so that a spare becomes a set with nothing left to create.
pub fn skeleton(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)?;
    let first = root_dir(dir, 0);
    for d in [first.join("upper"), first.join("work")] {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(d)?;
    }
    for (f, mode) in [(LOCK, 0o600), (EXCLUSIVE, 0o200), (LAST_USED, 0o600), (META_TMP, 0o600)] {
        std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(dir.join(f))?;
    }
    Ok(())
}

/// The store's root for the host process's environment.
pub fn root() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).map(PathBuf::from);
    if let Some(dir) = var("SANDSPAWN_CHANGE_SET_DIR").filter(|p| p.is_absolute()) {
        return Some(dir);
    }
    crate::state_dir::path(var, "change-sets")
}

/// The root, or an error saying how to give one.
pub fn require_root() -> Result<PathBuf> {
    root().ok_or_else(|| {
        SandboxError::unsupported("the reviewable workspace keeps change sets in the state directory, but neither HOME, XDG_STATE_HOME nor SANDSPAWN_CHANGE_SET_DIR is an absolute path")
    })
}

fn io(what: &str, p: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::setup_failed(format!("{what} {} failed: {}", p.display(), sandspawn_helper::report::os_words(&e)), "")
}

/// A directory of the store must be this user's and writable by nobody else: whoever could write
/// a set's metadata could choose where `applyChangeSet` writes.
fn check_private(p: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(p).map_err(|e| io("inspecting", p, e))?;
    if !crate::state_dir::is_private(&meta) {
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        return Err(SandboxError::setup_failed(
            format!("{} must be a directory owned by uid {uid} and writable by nobody else; fix or remove it, or set SANDSPAWN_CHANGE_SET_DIR", p.display()),
            "",
        ));
    }
    Ok(())
}

/// The store's root as the host opens it: no symlink this user owns on its path, and, when it
/// exists, private (`check_private`). A run whose writable root holds the path (a cwd of $HOME)
/// could plant such a link, and the host would keep sets where that run chose, read them from
/// there, and apply what it wrote (found by an attacker's review; the bwrap plans pin the
/// directories above the store, `plan::pins`, this is the host's own check).
pub fn check_root(root: &Path) -> Result<()> {
    crate::tool_caches::store::no_own_link("change set store", root, "SANDSPAWN_CHANGE_SET_DIR")?;
    match std::fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        _ => check_private(root),
    }
}

/// The fine realtime clock in nanoseconds. Not the coarse one: it lags by a tick or more, and a
/// file changed just before this moment may carry a later ctime than the coarse clock reads (a
/// fine-grained one: Linux 6.13's multigrain timestamps), a false conflict.
pub fn realtime_now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// Begin a set for `meta` (its id, creation time and directories are filled in here; its
/// `begin_ns` is the caller's), locked for the run.
pub fn create(root: &Path, mut meta: Meta) -> Result<(ChangeSet, Lock)> {
    // Before anything is made through a planted link, and again once the root is there.
    check_root(root)?;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder.create(root).map_err(|e| io("creating the change set store", root, e))?;
    check_root(root)?;
    evict_unused(root, UNUSED_FOR);
    let names = names(root);
    if names.iter().filter(|n| super::id::check(n).is_ok()).count() >= MAX_SETS {
        return Err(SandboxError::setup_failed(
            format!("{} already holds {MAX_SETS} open change sets: apply or discard some (sandspawn review list)", root.display()),
            "",
        ));
    }
    meta.id = super::id::new();
    meta.created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let dir = root.join(&meta.id);
    // A spare made during an earlier run, else the same made now.
    if !super::spare::take(root, &super::spare::in_listing(&names).0, &dir, |d| check_private(d).is_ok()) {
        skeleton(&dir).map_err(|e| io("creating the change set", &dir, e))?;
    }
    let mut set = ChangeSet { dir, meta };
    let lock = lock(&set)?;
    // A set of more roots than a skeleton has (the first root's are there: no error, no inode).
    for i in 0..set.meta.roots.len() {
        for d in [set.upper(i), set.work(i)] {
            builder.create(&d).map_err(|e| io("creating", &d, e))?;
        }
    }
    set.meta.root_modes = (0..set.meta.roots.len()).map(|i| root_mode(&set.meta.roots[i], &set.upper(i))).collect::<Result<_>>()?;
    write_meta(&set, &lock)?;
    set.touch();
    Ok((set, lock))
}

/// Give `upper` the mode of the host's `root` (the run sees the root with its upper's mode, and
/// `0700` hid the root's real mode), and return the mode it has then (a set-group-id bit the
/// kernel would not set is left out, not reported as the run's change).
fn root_mode(root: &Path, upper: &Path) -> Result<u32> {
    use std::os::unix::fs::PermissionsExt;
    // A root that cannot be read (the run will fail on it): the upper as it was made.
    if let Ok(host) = std::fs::metadata(root) {
        let mode = host.permissions().mode() & 0o7777;
        std::fs::set_permissions(upper, std::fs::Permissions::from_mode(mode)).map_err(|e| io("setting the mode of", upper, e))?;
    }
    Ok(std::fs::symlink_metadata(upper).map_err(|e| io("reading", upper, e))?.permissions().mode() & 0o7777)
}

/// Write `set`'s metadata (held by `_lock`): whole, then renamed into place.
pub fn write_meta(set: &ChangeSet, _lock: &Lock) -> Result<()> {
    let text = serde_json::to_vec_pretty(&set.meta).map_err(|e| SandboxError::setup_failed(format!("writing the change set's metadata failed: {e}"), ""))?;
    let tmp = set.dir.join(META_TMP);
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, set.dir.join("meta.json"))).map_err(|e| io("writing", &set.dir, e))
}

fn unknown(id: &str) -> SandboxError {
    SandboxError::invalid("changeSet", format!("no change set {id} (it was applied, discarded or expired, or it was made with another state directory)"))
}

/// Open an existing set by id (well-formed, in this user's store, with readable metadata).
pub fn open(id: &str) -> Result<ChangeSet> {
    let id = super::id::check(id)?;
    let root = require_root()?;
    let dir = root.join(id);
    check_root(&root)?;
    // Its directories' and files' owner bits, if a sandboxed command took them (`own_modes`).
    super::own_modes::give_back(&root, Some(id));
    if std::fs::symlink_metadata(&dir).is_err() {
        return Err(unknown(id));
    }
    check_private(&dir)?;
    let text = std::fs::read(dir.join("meta.json")).map_err(|_| unknown(id))?;
    let meta: Meta = serde_json::from_slice(&text).map_err(|e| SandboxError::setup_failed(format!("the metadata of change set {id} is unreadable: {e}"), ""))?;
    if meta.id != id || meta.roots.iter().any(|r| !r.is_absolute()) {
        return Err(SandboxError::setup_failed(format!("the metadata of change set {id} does not describe it"), ""));
    }
    Ok(ChangeSet { dir, meta })
}

/// Open a set and hold it, its metadata read once held: a run continuing the set meanwhile may
/// have made its policy stricter (`Meta::tighten`), and what is judged must be judged by that.
pub fn open_locked(id: &str) -> Result<(ChangeSet, Lock)> {
    let lock = lock(&open(id)?)?;
    Ok((open(id)?, lock))
}

/// The ids in the store, sorted.
pub fn ids(root: &Path) -> Vec<String> {
    let mut ids: Vec<String> = names(root).into_iter().filter(|n| super::id::check(n).is_ok()).collect();
    ids.sort();
    ids
}

/// Every entry name in the store's root (sets, spares, anything else), unsorted; the root given
/// its owner's bits back first if a sandboxed command took them (`own_modes`).
pub fn names(root: &Path) -> Vec<String> {
    super::own_modes::give_back(root, None);
    std::fs::read_dir(root).into_iter().flatten().flatten().filter_map(|e| e.file_name().into_string().ok()).collect()
}

/// Exclusive hold on a set: one run (which has its upper directory mounted), apply or discard at
/// a time. Released when dropped.
///
/// The lock file also holds how many runs have written the set (8 bytes, little-endian; empty: 0),
/// which its `revision` names: a run that continues a set, whatever it writes and whenever the
/// kernel's coarse clock stamps it, makes every revision shown before it stale.
#[derive(Debug)]
pub struct Lock {
    fd: OwnedFd,
    /// The `EXCLUSIVE` file the hold is on, let go of explicitly when dropped (a child another
    /// thread of the host forked holds a copy of the descriptor, and the lock, until its exec);
    /// never read: held for its drop.
    _exclusive: sandspawn_helper::file_lock::WholeFileHeld,
}

impl Lock {
    /// How many runs have written the set.
    pub fn writes(&self) -> u64 {
        let mut buf = [0u8; 8];
        // SAFETY: reading into our own buffer from our own descriptor.
        let n = unsafe { libc::pread(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n == buf.len() as isize { u64::from_le_bytes(buf) } else { 0 }
    }

    /// Count one more run writing the set, before its overlay is mounted. A count that cannot be
    /// written refuses the run: a revision shown before it must not stay valid after it.
    pub fn count_a_write(&self, set: &ChangeSet) -> Result<()> {
        let buf = self.writes().wrapping_add(1).to_le_bytes();
        // SAFETY: writing our own buffer to our own descriptor.
        let n = unsafe { libc::pwrite(self.fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), 0) };
        if n != buf.len() as isize {
            return Err(io("counting a run in", &set.dir.join(LOCK), std::io::Error::last_os_error()));
        }
        Ok(())
    }
}

pub fn lock(set: &ChangeSet) -> Result<Lock> {
    let path = set.dir.join(LOCK);
    // Its owner's bits given back if a reader took them: a Landlock command's `chmod 0` of it made
    // the set refuse its runs and its apply for good (found by an attacker's review, fix29).
    let f = sandspawn_helper::file_lock::open_own(&path, libc::O_RDWR | libc::O_CREAT, 0o600).map_err(|e| io("opening", &path, e))?;
    let fd: OwnedFd = f.into();
    let Some(exclusive) = exclusive_file(&set.dir)? else {
        return Err(SandboxError::new(
            ErrorCode::InvalidOptions,
            format!("options.changeSet: change set {} is in use by another run, apply or discard; one at a time", set.meta.id),
        ));
    };
    Ok(Lock { fd, _exclusive: sandspawn_helper::file_lock::WholeFileHeld(exclusive) })
}

/// The set's `EXCLUSIVE` file, open for writing only (made if missing, never followed if a symlink),
/// its mode 0200. What one run, apply or discard at a time holds is an open file description lock
/// on it, not a `flock` of `LOCK`: the Landlock mode restricts no reads, and a command in another
/// workspace that `flock`ed every set's lock file through a descriptor opened for reading made each
/// pending set refuse its apply, its discard and a run continuing it for as long as it lived (found
/// by an attacker's review, cross28). A lock that a reader cannot take needs a file it cannot
/// open: an OFD write lock needs a descriptor open for writing, which no sandbox gets on the store
/// (bwrap covers it, the Landlock mode reads it only), and a read lock (which would refuse the write
/// lock) one open for reading, which mode 0200 gives nobody (the Landlock mode's command has no
/// capability that passes over a mode, root's neither) until the file's owner gives it back: the
/// Landlock mode does not govern modes, and its command could `chmod u+r` the file and read-lock it
/// (lock28), so a file read-locked with no holder's write lock on it is replaced (`exclusive_at`).
fn exclusive_file(dir: &Path) -> Result<Option<OwnedFd>> {
    let d = std::fs::File::open(dir).map_err(|e| io("opening", dir, e))?;
    exclusive_held_at(&d, dir)
}

/// `EXCLUSIVE` held in `d` (`file_lock::exclusive_at`: a file a reader spoiled, its read bit given
/// back by a `chmod` the Landlock mode does not govern and read-locked, is replaced; found by an
/// attacker's review, lock28); `None`: another holder has it.
#[cfg(target_os = "linux")]
fn exclusive_held_at(d: &std::fs::File, dir: &Path) -> Result<Option<OwnedFd>> {
    sandspawn_helper::file_lock::exclusive_at(d, c"lock.exclusive").map_err(|e| io("locking", &dir.join(EXCLUSIVE), e))
}

/// Elsewhere (macOS: no sandbox reads the store) a `flock` of the file.
#[cfg(not(target_os = "linux"))]
fn exclusive_held_at(_d: &std::fs::File, dir: &Path) -> Result<Option<OwnedFd>> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(EXCLUSIVE);
    let f = std::fs::OpenOptions::new().write(true).create(true).mode(0o200).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(&path).map_err(|e| io("opening", &path, e))?;
    Ok(sandspawn_helper::file_lock::whole_file(&f, libc::LOCK_EX | libc::LOCK_NB).is_ok().then(|| f.into()))
}

/// Remove a set (held by `_lock`).
pub fn remove(set: &ChangeSet, _lock: &Lock) -> Result<()> {
    crate::tool_caches::store::remove_tree(&set.dir).map_err(|e| io("removing the change set", &set.dir, e))
}

/// Sets not used for `max_age`, removed; checked at most once an hour per process (a run's set
/// was used when it began). A set in use (locked) is left.
pub fn evict_unused(root: &Path, max_age: std::time::Duration) {
    static LAST: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);
    if crate::tool_caches::store::hour_passed(&LAST) {
        evict_now(root, max_age);
    }
}

pub(crate) fn evict_now(root: &Path, max_age: std::time::Duration) {
    evict_at(root, max_age, std::time::SystemTime::now());
}

/// `evict_now` as if it were `now`. A set's use is the last change of its `last-used` file (of
/// its directory, without one): the ctime, which no process can set, not the mtime, which any
/// process of the user can (`touch -d`): a Landlock command in another workspace (the mode does
/// not govern file times) set a pending set's back to 2000, and the next process to list the sets
/// removed it, the agent's work in it gone (found by an attacker's review, cross31).
pub(crate) fn evict_at(root: &Path, max_age: std::time::Duration, now: std::time::SystemTime) {
    let names = names(root);
    for id in names.iter().filter(|n| super::id::check(n).is_ok()).cloned() {
        let dir = root.join(&id);
        let used = std::fs::metadata(dir.join(LAST_USED)).or_else(|_| std::fs::metadata(&dir)).ok().map(|m| super::changed_at::changed_at(&m));
        if !used.is_some_and(|t| now.duration_since(t).is_ok_and(|age| age > max_age)) {
            continue;
        }
        let set = ChangeSet { dir: dir.clone(), meta: Meta { id, cwd: PathBuf::new(), created: 0, begin_ns: 0, roots: Vec::new(), held: Vec::new(), protect_git: true, protected_names: Vec::new(), reported_names: Vec::new(), homes: Vec::new(), config_homes: Vec::new(), deny_links: Vec::new(), root_modes: Vec::new(), own_links: Vec::new() } };
        if let Ok(l) = lock(&set) {
            let _ = remove(&set, &l);
        }
    }
    // Spares nobody took for as long (review mode no longer used here): nothing to keep them for.
    super::spare::remove_older(root, &super::spare::in_listing(&names).0, max_age, now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn meta(roots: Vec<PathBuf>) -> Meta {
        Meta { id: String::new(), cwd: "/w".into(), created: 0, begin_ns: 0, roots, held: Vec::new(), protect_git: true, protected_names: Vec::new(), reported_names: Vec::new(), homes: Vec::new(), config_homes: Vec::new(), deny_links: Vec::new(), root_modes: Vec::new(), own_links: Vec::new() }
    }

    #[test]
    fn a_continuing_run_makes_the_policy_stricter_never_laxer() {
        let mut m = meta(vec!["/w".into()]);
        (m.protect_git, m.protected_names, m.reported_names) = (false, vec![".envrc".into()], vec!["mise.toml".into()]);
        let (held, links) = ([PathBuf::from("/w/prod.cfg")], [PathBuf::from("/w/cfg")]);
        m.homes = vec!["/h".into()];
        let home = Bases { homes: vec!["/w/home".into()], config: vec!["/w/home/.config".into()], macos: false };
        let bins = [PathBuf::from("/w/node_modules/.bin/sandspawn")];
        assert!(m.tighten(true, &[".vscode".into(), "mise.toml".into()], &[".envrc".into(), ".bazelrc".into()], &held, &home, &links, &bins));
        assert_eq!(m.own_links, bins, "the bin links of each package that ran it");
        assert!(m.protect_git);
        assert_eq!(m.protected_names, [".envrc", ".vscode", "mise.toml"]);
        assert_eq!(m.reported_names, [".bazelrc"], "a name protected by one run is protected");
        assert_eq!((&m.held[..], &m.deny_links[..]), (&held[..], &links[..]));
        assert_eq!((&m.homes[..], &m.config_homes[..]), (&[PathBuf::from("/h"), "/w/home".into()][..], &[PathBuf::from("/w/home/.config")][..]), "the homes of both");
        let strict = m.clone();
        assert!(!m.tighten(false, &[], &[], &[], &Bases::default(), &[], &[]), "a laxer run changes nothing");
        assert_eq!(m, strict);
    }

    #[test]
    fn create_lock_expire() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("cs");
        let (set, l) = create(&root, meta(vec!["/w".into()])).unwrap();
        assert!(set.upper(0).is_dir() && set.work(0).is_dir());
        assert_eq!(std::fs::metadata(&root).unwrap().mode() & 0o777, 0o700);
        assert!(lock(&set).is_err(), "one holder at a time");
        drop(l);
        let l = lock(&set).unwrap();
        drop(l);
        assert_eq!(ids(&root), vec![set.meta.id.clone()]);
        // A `last-used` whose mtime was set back (a Landlock command's `touch -d`) is still in use.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 86400);
        std::fs::File::options().write(true).open(set.dir.join("last-used")).unwrap().set_modified(old).unwrap();
        std::fs::File::open(&set.dir).unwrap().set_modified(old).unwrap();
        evict_now(&root, UNUSED_FOR);
        assert!(set.dir.exists(), "an mtime set back is no sign of disuse");
        let month_on = std::time::SystemTime::now() + std::time::Duration::from_secs(30 * 86400);
        let held = lock(&set).unwrap();
        evict_at(&root, UNUSED_FOR, month_on);
        assert!(set.dir.exists(), "a set in use stays");
        drop(held);
        evict_at(&root, UNUSED_FOR, month_on);
        assert!(!set.dir.exists());
        super::super::spare::make(&root, &names(&root), skeleton);
        let listing = names(&root);
        let spare = root.join(super::super::spare::in_listing(&listing).0[0]);
        std::fs::File::open(&spare).unwrap().set_modified(old).unwrap();
        evict_now(&root, UNUSED_FOR);
        assert!(spare.exists(), "a fresh spare stays, whatever its mtime says");
        evict_at(&root, UNUSED_FOR, month_on);
        assert!(!spare.exists(), "a spare nobody took for as long as an unused set is removed");
    }

    /// A set's lock is free once its holder drops it, even while a child another thread forked
    /// (and has not yet exec'd) holds a copy of the descriptor: found by an attacker's review
    /// (fix28) from the tool caches' like bug; a lock released by the close alone stayed held.
    #[test]
    fn a_lock_dropped_is_free_while_a_forked_child_keeps_a_copy() {
        let t = tempfile::tempdir().unwrap();
        let (set, l) = create(&t.path().join("cs"), meta(vec!["/w".into()])).unwrap();
        // SAFETY: the child only sleeps and exits (async-signal-safe calls).
        let child = unsafe { libc::fork() };
        if child == 0 {
            unsafe {
                libc::sleep(30);
                libc::_exit(0);
            }
        }
        assert!(child > 0);
        drop(l);
        let again = lock(&set);
        // SAFETY: our own child.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        }
        assert!(again.is_ok(), "the dropped lock stayed held by the child's copy: {again:?}");
    }

    /// `(name, inode)` of everything under `dir`, by path relative to it, sorted.
    fn inodes(dir: &Path) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let m = e.metadata().unwrap();
                out.push((e.path().strip_prefix(dir).unwrap().to_path_buf(), m.ino()));
                if m.is_dir() {
                    todo.push(e.path());
                }
            }
        }
        out.sort();
        out
    }

    /// A store holding one set (unlocked), made without a spare.
    fn store_with_a_set() -> (tempfile::TempDir, PathBuf, ChangeSet) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("cs");
        let (set, _) = create(&root, meta(vec!["/w".into()])).unwrap();
        (t, root, set)
    }

    #[test]
    fn a_new_set_takes_a_spare_whole_and_allocates_nothing() {
        // Without a spare: what a set holds.
        let (_t, root, plain) = store_with_a_set();
        let made: Vec<PathBuf> = inodes(&plain.dir).into_iter().map(|(p, _)| p).collect();
        super::super::spare::make(&root, &names(&root), skeleton);
        let listing = names(&root);
        let (ready, _) = super::super::spare::in_listing(&listing);
        assert_eq!(ready.len(), 1);
        let spare = root.join(ready[0]);
        let spare_dir_ino = std::fs::metadata(&spare).unwrap().ino();
        let before: Vec<(PathBuf, u64)> = inodes(&spare).into_iter().map(|(p, i)| (if p == Path::new(META_TMP) { "meta.json".into() } else { p }, i)).collect();
        let (set, _l) = create(&root, meta(vec!["/w".into()])).unwrap();
        assert_eq!(std::fs::metadata(&set.dir).unwrap().ino(), spare_dir_ino, "the spare became the set");
        let mut before = before;
        before.sort();
        assert_eq!(inodes(&set.dir), before, "every entry of the set is the spare's: none was allocated");
        assert_eq!(inodes(&set.dir).into_iter().map(|(p, _)| p).collect::<Vec<_>>(), made, "the same entries as a set made without a spare");
        assert_eq!(std::fs::read(set.dir.join("meta.json")).unwrap(), serde_json::to_vec_pretty(&set.meta).unwrap());
        assert!(super::super::spare::in_listing(&names(&root)).0.is_empty());
        assert_eq!(ids(&root).len(), 2, "spares are not sets");
    }

    #[test]
    fn spares_are_bounded_and_only_whole_private_ones_are_taken() {
        let (t, root, _) = store_with_a_set();
        for _ in 0..4 {
            super::super::spare::make(&root, &names(&root), skeleton);
        }
        assert_eq!(super::super::spare::in_listing(&names(&root)).0.len(), super::super::spare::MAX_SPARES);
        let listing = names(&root);
        for name in super::super::spare::in_listing(&listing).0 {
            crate::tool_caches::store::remove_tree(&root.join(name)).unwrap();
        }
        // A partial one (its maker died) and a symlink posing as one: neither becomes a set.
        std::fs::create_dir(root.join(".spare-0000.part")).unwrap();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(".spare-1111")).unwrap();
        let (set, _l) = create(&root, meta(vec!["/w".into()])).unwrap();
        assert!(!std::fs::symlink_metadata(&set.dir).unwrap().file_type().is_symlink());
        assert!(set.upper(0).is_dir() && std::fs::read_dir(&elsewhere).unwrap().next().is_none(), "nothing went through the link");
        assert!(!root.join(".spare-1111").exists() && root.join(".spare-0000.part").is_dir());
    }

    #[test]
    fn a_loose_store_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("cs");
        std::fs::create_dir(&root).unwrap();
        std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        assert!(create(&root, meta(vec![])).unwrap_err().message.contains("writable by nobody else"));
    }

    #[test]
    fn a_store_reached_through_an_own_symlink_is_refused_before_anything_is_made() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("decoy")).unwrap();
        std::os::unix::fs::symlink("decoy", t.path().join("state")).unwrap();
        let e = create(&t.path().join("state/change-sets"), meta(vec![])).unwrap_err();
        assert!(e.message.contains("symlink") && e.message.contains("SANDSPAWN_CHANGE_SET_DIR"), "{}", e.message);
        assert!(std::fs::read_dir(t.path().join("decoy")).unwrap().next().is_none());
    }
}
