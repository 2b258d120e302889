//! What a walk is asked (`WalkSpec`), what it found (`Found`), and what it keeps for the next walk
//! of the same area (`Index`: each directory's listing and what tells whether it still holds).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::super::listing::Stamp;
use super::super::watch::Watch;
use super::dir_key::DirKey;
use super::kept_names::KeptNames;

/// What to walk and what to look for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct WalkSpec {
    /// The roots to walk, canonical.
    pub roots: Vec<PathBuf>,
    /// Directories not to enter (denied paths, other writable roots are added automatically).
    pub skip: Vec<PathBuf>,
    /// Protected names to report wherever they are.
    pub names: Vec<String>,
    /// Whether to report `.git` entries.
    pub repositories: bool,
    /// Names compared in any (ASCII) case: on macOS, whose volumes are case-insensitive by default,
    /// `.GIT` is a repository's `.git` to git, and `head` a git directory's `HEAD`.
    pub fold_case: bool,
}

/// What one walk found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Found {
    /// Every `.git` entry (directory, file or symlink), breadth first.
    pub git_entries: Vec<PathBuf>,
    /// The `(device, inode)` of each `.git` entry, taken when its parent was listed (kept with
    /// the listing: no system call while the parent is unchanged). What the helper checks a
    /// carve-out against, and what `detect` compares after the run.
    /// Keyed by bytes (canonical paths): std hashes a `Path` component by component.
    pub git_inodes: HashMap<std::ffi::OsString, (u64, u64)>,
    /// Every directory that is itself a git directory (a bare repository, or one planted into an
    /// ordinary folder: `HEAD` with `objects/` and `refs/`, or with `commondir`), as git's
    /// discovery would take it when run there, with its `(device, inode)` (the listing's: what the
    /// helper checks its carve-out against).
    pub git_dirs: Vec<(PathBuf, (u64, u64))>,
    /// Every entry named like a protected name, breadth first, at most `scan::MAX_NAMED`: those
    /// past it are counted in `named_unkept`.
    pub named: Vec<PathBuf>,
    pub named_unkept: Unkept,
    /// The bound was reached: some directories were not read.
    pub truncated: bool,
    /// Where the walk stopped at its bound: the first directories it did not read (at most
    /// `UNEXAMINED_SHOWN`), to name the area in a report.
    pub unexamined: Vec<PathBuf>,
    /// Every directory the walk could not list (this user lacks read permission: a run can `chmod
    /// 300` a directory it then plants in; or no path names it, longer than PATH_MAX), breadth
    /// first; each counts towards `MAX_DIRS` like a directory read.
    pub unreadable: Vec<PathBuf>,
    /// The symlinks the run made (their ctime not older than the walk's `links_since`) in the
    /// directories the walk after it read (not in those it kept), at most `scan::MAX_LINKS`: those
    /// past it are counted in `links_unkept`. Judged by where they lead (`links`), which the walk
    /// never follows. The walk before a run keeps none.
    pub links: Vec<PathBuf>,
    pub links_unkept: Unkept,
    /// Every symlink (whoever made it, whenever) whose target holds a `node_modules` component,
    /// where no walk reads: judged again after each run (`unwalked_links`), at most
    /// `scan::MAX_LINKS_OUT`; those past it are counted in `links_out_unkept`.
    pub links_out: Vec<PathBuf>,
    pub links_out_unkept: Unkept,
    /// Every other symlink, at most `scan::MAX_LINKS_VIA` (those past it counted in
    /// `links_via_unkept`): one may lead into `node_modules` through another link, which only
    /// following its way tells (`unwalked_links`). Found by an attacker's review (rfix23c).
    pub links_via: Vec<PathBuf>,
    pub links_via_unkept: Unkept,
    /// Directories read.
    pub dirs_read: usize,
    /// Directories kept from the prior index after an `lstat` of their path (roots, and directories
    /// the watcher does not vouch for). Those it vouches for cost no syscall.
    pub dirs_checked: usize,
}

/// The entries a walk found past one of its bounds and did not keep: each kept one costs its whole
/// path, and a run can make a hundred thousand at a 4 KB path (an attacker's review: gigabytes in the
/// host). How many, and where the first was, for a report to name the area.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unkept {
    pub count: usize,
    /// The directory holding the first of them.
    pub first_dir: Option<PathBuf>,
}

impl Unkept {
    pub fn add(&mut self, dir: &Path, n: usize) {
        if n > 0 {
            self.count += n;
            self.first_dir.get_or_insert_with(|| dir.to_path_buf());
        }
    }
}

/// What one directory held when it was read; shared by every index that keeps it.
#[derive(Debug, PartialEq, Eq, Default)]
pub(super) struct Listing {
    /// Its subdirectories that the walk enters, each with the inode number the listing gave it.
    pub(super) subdirs: Vec<(DirKey, u64)>,
    /// Its `.git` entry (with its inode number) and protected names, as the walk reported them.
    /// Each `.git` entry's name (`.git`, or another case of it where case is folded) and its
    /// `(device, inode)` (`listing::id_at`); joined to the directory's path when it is reported.
    /// Its whole path cost the host 6.6 KB at a 3.3 KB path (`join` grew it to twice that), kept
    /// for every `.git` entry a run made (an attacker's review, cross30).
    pub(super) git: Vec<(OsString, (u64, u64))>,
    /// The names alone: the directory's path is the index's key, and a name is joined to it only
    /// when it is reported (`Found::named`, bounded). A full path each cost the host 1.6 GB for
    /// 115,000 empty names a run wrote at a 3.6 KB path (an attacker's review). Only as many as
    /// the walk could report from here, the rest counted (`KeptNames`).
    pub(super) named: KeptNames,
    /// Its symlinks that lead into a `node_modules` (`Found::links_out`), names alone as `named`.
    pub(super) links_out: KeptNames,
    /// Its other symlinks (`Found::links_via`), names alone.
    pub(super) links_via: KeptNames,
    /// It is a git directory itself (see `Found::git_dirs`).
    pub(super) git_dir: bool,
    /// A subdirectory was not entered: it lies deeper than `MAX_DEPTH`.
    pub(super) too_deep: bool,
}

/// One directory of an index: its listing, and what tells whether the listing still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DirState {
    pub(super) listing: Arc<Listing>,
    /// Taken before it was listed (for the stat rule).
    pub(super) stamp: Stamp,
    /// When the walk that read it started (unix seconds): the stat rule trusts only a ctime older
    /// than that (a timestamp is coarser than the time between two changes).
    pub(super) walk_started: i64,
    /// The inode number its parent's listing gave it (0 for a root).
    pub(super) listed_ino: u64,
    pub(super) watch: Option<Arc<Watch>>,
    /// The watcher's counter when it was read (or last confirmed by the stat rule).
    pub(super) read_at: u64,
}

/// Every directory a walk read or kept, for the next walk of the same area.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Index {
    pub(super) dirs: Arc<HashMap<DirKey, DirState>>,
    /// Everything the walk that made it found (reused directories' entries included).
    pub(super) totals: Arc<Found>,
    /// The watcher's counter when that walk ended (`None` without a watcher).
    pub(super) counter_at: Option<u64>,
    /// The directories whose listing no watch vouches for (the stat rule keeps them): what a walk
    /// must still check when nothing changed, besides each root's path.
    pub(super) unwatched: Arc<Vec<DirKey>>,
    /// The directories the walk could not list: no listing kept, no watch on them, so nothing it
    /// would hear of tells what changed below them. A walk must look at each again (`quiet`).
    pub(super) unlisted: Arc<Vec<Unlisted>>,
}

/// A directory a walk could not list, and what its `lstat` gave then (`None`: it failed too, and
/// nothing tells whether it changed: EACCES from a parent this user cannot search, ENAMETOOLONG).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unlisted {
    pub(super) path: DirKey,
    pub(super) stamp: Option<Stamp>,
    pub(super) walk_started: i64,
}

impl Index {
    /// Everything the walk that made it found, reused directories' entries included.
    pub fn totals(&self) -> &Found {
        &self.totals
    }
}

#[cfg(test)]
impl Index {
    /// The bytes of path the index keeps for its directories: each key's own name, each key (a
    /// directory's, or a parent's it holds on to) counted once.
    pub(super) fn kept_path_bytes(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        let keys = self.dirs.iter().flat_map(|(k, d)| std::iter::once(k).chain(d.listing.subdirs.iter().map(|(k, _)| k)));
        let keys = keys.chain(self.unwatched.iter()).chain(self.unlisted.iter().map(|u| &u.path));
        let mut bytes = 0;
        for key in keys {
            let mut at = Some(key);
            while let Some(k) = at.filter(|k| seen.insert(Arc::as_ptr(&k.0))) {
                bytes += k.name().len();
                at = k.parent();
            }
        }
        bytes
    }
}
