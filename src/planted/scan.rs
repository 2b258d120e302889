//! The bounded walk of the writable roots that finds repositories (`.git` entries) and protected
//! names at any depth. The same walk runs before the run (what to protect) and after it (what was
//! planted), so both see the same area.
//!
//! The bound (documented in the README): at most `MAX_DEPTH` directories below a root and at most
//! `MAX_DIRS` directories read per run over all roots, breadth first (shallow directories first).
//! It never follows symlinks, never descends into a `.git` directory (protected whole), into
//! `node_modules` (package managers own it; git tools and editors do not look for repositories
//! there), into a denied path, or into another writable root (walked on its own). Only directory
//! listings are read (`listing`: through one descriptor opened without following a symlink; the
//! entry type comes with the name), no file is opened or stat'ed; but the walk after a run
//! `fstatat`s each symlink in a directory it reads, to keep only those the run made (`Found::links`).
//!
//! What a walk keeps of the entries it finds is bounded too (`MAX_NAMED`, `MAX_LINKS`), each past
//! the bound counted (`Found::named_unkept`, `links_unkept`) for the caller to say: each kept entry
//! costs its whole path, and a run can make a hundred thousand at a 4 KB path.
//!
//! A walk keeps what it read (`Index`) so that the next walk of the same area reads only the
//! directories that changed: the walk after a run (`walk_indexed`, which reports only what it read
//! again: what changed), and the walk before the next run (`walk_reusing`, which reports what the
//! reused directories hold too). An agent running command after command in one workspace pays for
//! the directories that changed, not for the whole tree every time. A listing is kept when:
//! - the watcher vouches for it (`watch`, Linux): no entry was added, removed or renamed in it since
//!   it was read, and its path still leads to it (below a kept listing a name keeps its inode; below
//!   a listing read again the name must have the same inode number; a root's path is `lstat`'ed; a
//!   mount over a path changes the mount table, which makes the watcher lose track). Nothing else
//!   is looked at: no syscall for the directory at all;
//! - otherwise (not watched, or the watcher lost track), the stat rule: its `lstat` shows the same
//!   inode and ctime, and that ctime was older than the walk that read it. Adding, removing or
//!   renaming an entry sets the directory's ctime to now, and ctime cannot be set from user space
//!   (unlike mtime), so such a directory has exactly the entries it had. A directory the watcher
//!   lost track of but still watches is vouched for again from there on.
//!
//! A kept listing is shared (`Arc`), not copied, by the indexes that keep it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::listing::{self, Stamp};
use super::vouch::Vouch;
use super::watch::{self, Watcher};

pub use compare::Seen;
pub use index::{Found, Index, Unkept, WalkSpec};
use dir_key::DirKey;
use index::{DirState, Listing, Unlisted};

/// Directories below a root that are still read.
pub const MAX_DEPTH: usize = 32;
/// Directories read per walk, over all roots together: a quarter of a million directories and a
/// thousand repositories are ordinary (a folder of clones, a monorepo), and must be covered whole;
/// the first walk of such a tree takes about a second, later ones read what changed.
pub const MAX_DIRS: usize = 300_000;
/// Entries named like protected names that a walk reports (`Found::named`), in the order it meets
/// them: a folder of a thousand clones holds a few thousand. Past it they are counted, not kept (an
/// attacker's review: 115,000 empty names at a 3.6 KB path cost the host 1.6 GB and every later run
/// seconds). The index keeps every name (a name each, not a path: `Listing::named`).
pub const MAX_NAMED: usize = 10_000;
/// Symlinks made by the run that the walk after it keeps, to be judged by where they lead (as many
/// as are judged: `detect::MAX_LINKS_JUDGED`); past it they are counted, not kept.
pub const MAX_LINKS: usize = 10_000;
/// Symlinks into `node_modules` a walk reports (`Found::links_out`): each is judged again after
/// every run (`unwalked_links`), a few dozen `lstat`s at most. Past it they are counted.
pub const MAX_LINKS_OUT: usize = 1_000;

/// The other symlinks a walk reports (`Found::links_via`): each one's way is followed before and
/// after every run to tell whether it leads into `node_modules` now (`unwalked_links`), within a
/// budget of steps that a few thousand ordinary links fill. Past it they are counted.
pub const MAX_LINKS_VIA: usize = 4_000;
/// How many unexamined directories a truncated walk names.
pub const UNEXAMINED_SHOWN: usize = 3;

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Walk the area. With `prior` (the index of an earlier walk of the same spec) unchanged
/// directories are not read again, and their entries are not reported again (they are the same):
/// what changed since `prior` (the walk after a run), with the symlinks made since `links_since`
/// (ns since the epoch: the baseline's time) in the directories read.
pub fn walk_indexed(spec: &WalkSpec, prior: Option<&Index>, links_since: i64) -> (Found, Index) {
    walk_until(spec, prior, false, Some(links_since), watch::global(), &|| false).unwrap_or_default()
}

/// Walk the area, reading only the directories that changed since `prior`, and report everything
/// there is, unchanged directories' entries included (the walk before a run).
pub fn walk_reusing(spec: &WalkSpec, prior: Option<&Index>) -> (Found, Index) {
    walk_with(spec, prior, true, watch::global())
}

/// `walk_reusing`, unless `ended` (the run was cut: timed out, killed) says so before a directory:
/// then `None`, and nothing of the part walked is kept (a cut run's walk kept the host busy for
/// seconds after it settled, found by an attacker's review).
pub fn walk_reusing_until(spec: &WalkSpec, prior: Option<&Index>, ended: &dyn Fn() -> bool) -> Option<(Found, Index)> {
    walk_until(spec, prior, true, None, watch::global(), ended)
}

/// A directory waiting to be walked.
struct Queued {
    path: DirKey,
    depth: usize,
    /// The inode number its parent's listing gave it; `None` for a root.
    listed_ino: Option<u64>,
}

enum Read {
    Listed(DirState),
    /// There but not readable: it holds nothing the command could plant either (it runs as the
    /// same user, with fewer rights).
    Unreadable,
    /// No directory there (any more).
    Gone,
}

struct Walk<'a> {
    spec: &'a WalkSpec,
    /// The prior index's directories: a key found there is used again, not made anew (its name kept once).
    prior: Option<&'a HashMap<DirKey, DirState>>,
    names: HashSet<OsString>,
    skip: HashSet<&'a Path>,
    watcher: Option<&'a Arc<Watcher>>,
    started: i64,
    /// Keep the symlinks made since then (ns), in the directories read; `None`: none.
    links_since: Option<i64>,
    found: Found,
    /// Everything there is, reused directories included (kept in the index: `Index::totals`).
    totals: Found,
    /// A directory's path, built into one buffer for an `lstat` (the stat rule).
    path: PathBuf,
}

/// A walk that keeps no symlinks.
fn walk_with(spec: &WalkSpec, prior: Option<&Index>, report_reused: bool, watcher: Option<&Arc<Watcher>>) -> (Found, Index) {
    walk_until(spec, prior, report_reused, None, watcher, &|| false).unwrap_or_default()
}

/// The walk; `None` when `ended` says so before a directory is taken.
fn walk_until(
    spec: &WalkSpec,
    prior: Option<&Index>,
    report_reused: bool,
    links_since: Option<i64>,
    watcher: Option<&Arc<Watcher>>,
    ended: &dyn Fn() -> bool,
) -> Option<(Found, Index)> {
    if spec.roots.is_empty() || (spec.names.is_empty() && !spec.repositories) {
        return Some((Found::default(), Index::default()));
    }
    if let Some(w) = watcher {
        w.drain();
        // Nothing changed since `prior` was made: its findings, without a walk (see `quiet`).
        if let Some(found) = prior.and_then(|p| quiet::findings(p, w, spec, report_reused)) {
            return Some((found, prior.cloned().unwrap_or_default()));
        }
    }
    // Taken before anything is listed: an event drained during the walk (by a concurrent run's
    // walk in this process) after its directory was listed counts as a change since this index.
    // Taken at the end, such an event was counted before it, and a later run trusted the stale
    // listing without a walk (a reviewer's suspicion, from reading `quiet`).
    let counter_at = watcher.map(|w| w.now());
    let mut walk = Walk {
        spec,
        prior: prior.map(|p| &*p.dirs),
        names: spec.names.iter().map(|n| OsString::from(if spec.fold_case { n.to_ascii_lowercase() } else { n.clone() })).collect(),
        skip: spec.skip.iter().chain(spec.roots.iter()).map(PathBuf::as_path).collect(),
        watcher,
        started: now_secs(),
        links_since,
        path: PathBuf::new(),
        found: Found::default(),
        totals: Found::default(),
    };
    let mut dirs = HashMap::with_capacity(prior.map_or(0, |p| p.dirs.len()));
    let mut queue: VecDeque<Queued> = spec.roots.iter().map(|r| Queued { path: walk.known(DirKey::new(r)), depth: 0, listed_ino: None }).collect();
    let mut unlisted = Vec::new();
    // Read and kept directories both count: the bound covers the same area with or without `prior`.
    let mut visited = 0;
    while let Some(q) = queue.pop_front() {
        if ended() {
            return None;
        }
        if visited >= MAX_DIRS {
            walk.found.truncated = true;
            let rest = std::iter::once(q.path).chain(queue.into_iter().map(|q| q.path));
            walk.found.unexamined.extend(rest.take(UNEXAMINED_SHOWN).map(|q| q.to_path_buf()));
            break;
        }
        let old = prior.and_then(|p| p.dirs.get(&q.path));
        let kept = old.and_then(|old| walk.keep(&q, old));
        // Unchanged, but holding fewer names than this walk reports from here: read again, and
        // reported as a kept one would be (the walk after a run reports what changed).
        let report_read = kept.is_none() || report_reused;
        let state = match kept.and_then(|state| walk.fitted(state, report_reused)) {
            Some(state) => {
                walk.report(&state, &q.path, report_reused);
                state
            }
            None => match walk.read(&q, old, report_read) {
                Read::Listed(state) => {
                    walk.report(&state, &q.path, report_read);
                    state
                }
                Read::Unreadable => {
                    visited += 1;
                    // Every one, however many: which of them to report is decided after the
                    // filter (`unreadable`), and a cap here let 24 harmless ones hide the one the
                    // run made unreadable (an attacker's review). `MAX_DIRS` bounds them.
                    let path = q.path.to_path_buf();
                    let stamp = path.symlink_metadata().ok().map(|m| Stamp::of(&m));
                    walk.found.unreadable.push(path);
                    unlisted.push(Unlisted { path: q.path, stamp, walk_started: walk.started });
                    continue;
                }
                Read::Gone => continue,
            },
        };
        visited += 1;
        if state.listing.too_deep {
            walk.found.truncated = true;
            if walk.found.unexamined.len() < UNEXAMINED_SHOWN {
                walk.found.unexamined.push(q.path.to_path_buf());
            }
        }
        queue.extend(state.listing.subdirs.iter().map(|(path, ino)| Queued { path: path.clone(), depth: q.depth + 1, listed_ino: Some(*ino) }));
        dirs.insert(q.path, state);
    }
    let mut totals = walk.totals;
    (totals.truncated, totals.unexamined) = (walk.found.truncated, walk.found.unexamined.clone());
    let owned = |d: &DirState| matches!((watcher, &d.watch), (Some(w), Some(watch)) if w.owns(watch));
    let unwatched = dirs.iter().filter(|(_, d)| !owned(d)).map(|(k, _)| k.clone()).collect();
    let index = Index {
        dirs: Arc::new(dirs),
        totals: Arc::new(totals),
        counter_at,
        unwatched: Arc::new(unwatched),
        unlisted: Arc::new(unlisted),
    };
    Some((walk.found, index))
}

impl Walk<'_> {
    /// How many more names of each kind (protected, symlinks into a `node_modules`, other
    /// symlinks) a listing reported now (to what this walk reports too when `report`) is taken
    /// from: what a listing keeps (`KeptNames`). What this walk reports holds no more than the
    /// totals, so its room is the larger.
    fn rooms(&self, report: bool) -> [usize; 3] {
        let f = if report { &self.found } else { &self.totals };
        [MAX_NAMED.saturating_sub(f.named.len()), MAX_LINKS_OUT.saturating_sub(f.links_out.len()), MAX_LINKS_VIA.saturating_sub(f.links_via.len())]
    }

    /// `state`, kept, as this walk reports it from here: `None` when its listing holds fewer names
    /// than that (it was read where less room was left: read it again); with a copy of its listing
    /// that keeps no more than that when it holds more, so that the index keeps no more names than
    /// a walk reports, however the areas before a kept listing change from walk to walk.
    fn fitted(&self, state: DirState, report: bool) -> Option<DirState> {
        let rooms = self.rooms(report);
        let l = &state.listing;
        let names = [&l.named, &l.links_out, &l.links_via];
        if names.iter().zip(rooms).any(|(n, room)| n.short_of(room)) {
            return None;
        }
        if !names.iter().zip(rooms).any(|(n, room)| n.over(room)) {
            return Some(state);
        }
        let listing = Listing {
            subdirs: l.subdirs.clone(),
            git: l.git.clone(),
            named: l.named.trimmed(rooms[0]),
            links_out: l.links_out.trimmed(rooms[1]),
            links_via: l.links_via.trimmed(rooms[2]),
            git_dir: l.git_dir,
            too_deep: l.too_deep,
        };
        Some(DirState { listing: Arc::new(listing), ..state })
    }

    /// Add what `state`'s listing holds to the totals, and to what this walk reports when `report`.
    fn report(&mut self, state: &DirState, key: &DirKey, report: bool) {
        let listing = &state.listing;
        // Built only for a listing that holds something reported by its directory's path.
        let needs_path = listing.git_dir || !listing.git.is_empty() || !listing.named.is_empty() || !listing.links_out.is_empty() || !listing.links_via.is_empty();
        let dir = if needs_path { key.to_path_buf() } else { PathBuf::new() };
        let dir = dir.as_path();
        let targets: &mut [&mut Found] = if report { &mut [&mut self.found, &mut self.totals] } else { &mut [&mut self.totals] };
        for found in targets.iter_mut() {
            for (name, ino) in &listing.git {
                // Of its own length (`join` may leave twice that).
                let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
                path.push(dir);
                path.push(name);
                found.git_entries.push(path.clone());
                found.git_inodes.insert(path.into_os_string(), *ino);
            }
            if listing.git_dir {
                found.git_dirs.push((dir.to_path_buf(), (state.stamp.dev, state.stamp.ino)));
            }
            // Joined to the directory's path only within the bound (see `MAX_NAMED`).
            let room = MAX_NAMED.saturating_sub(found.named.len());
            let before = found.named.len();
            found.named.extend(listing.named.iter().take(room).map(|n| dir.join(n)));
            found.named_unkept.add(dir, listing.named.len() - (found.named.len() - before));
            let room = MAX_LINKS_OUT.saturating_sub(found.links_out.len());
            let before = found.links_out.len();
            found.links_out.extend(listing.links_out.iter().take(room).map(|n| dir.join(n)));
            found.links_out_unkept.add(dir, listing.links_out.len() - (found.links_out.len() - before));
            let room = MAX_LINKS_VIA.saturating_sub(found.links_via.len());
            let before = found.links_via.len();
            found.links_via.extend(listing.links_via.iter().take(room).map(|n| dir.join(n)));
            found.links_via_unkept.add(dir, listing.links_via.len() - (found.links_via.len() - before));
        }
    }

    /// The prior listing of `q`, if it still holds (see the module comment).
    fn keep(&mut self, q: &Queued, old: &DirState) -> Option<DirState> {
        let watched = match (self.watcher, &old.watch) {
            (Some(w), Some(watch)) if w.owns(watch) => Some((w, w.vouch(watch, old.read_at))),
            _ => None,
        };
        match watched {
            Some((_, Vouch::Unchanged)) => self.same_inode(q, old).then(|| old.clone()),
            Some((_, Vouch::Changed)) => None,
            Some((w, Vouch::Unknown)) => {
                // Watched all along: confirmed now, the watch vouches for it again from now on.
                let now = w.now();
                self.stat_rule(q, old).then(|| DirState { read_at: now, ..old.clone() })
            }
            None => self.stat_rule(q, old).then(|| old.clone()),
        }
    }

    /// Whether `q`'s path still leads to the inode that was read. A name changes its inode only
    /// by an entry added, removed or renamed in its parent, which the parent's watch or ctime tells
    /// (then the parent is read again and gives the name's inode number now). A root's parents are
    /// not watched: its path is looked up.
    fn same_inode(&mut self, q: &Queued, old: &DirState) -> bool {
        match q.listed_ino {
            Some(ino) => ino == old.listed_ino,
            None => {
                self.found.dirs_checked += 1;
                q.path.to_path_buf().symlink_metadata().is_ok_and(|m| {
                    let now = Stamp::of(&m);
                    (now.dev, now.ino) == (old.stamp.dev, old.stamp.ino)
                })
            }
        }
    }

    /// The same inode with the same ctime, older than the walk that read it.
    fn stat_rule(&mut self, q: &Queued, old: &DirState) -> bool {
        self.found.dirs_checked += 1;
        q.path.path_into(&mut self.path);
        let Ok(meta) = self.path.symlink_metadata() else { return false };
        meta.is_dir() && Stamp::of(&meta) == old.stamp && old.stamp.ctime.0 < old.walk_started
    }

    /// `key`, or the prior index's equal key: a directory's name is then kept once, by both.
    fn known(&self, key: DirKey) -> DirKey {
        match self.prior.and_then(|p| p.get_key_value(&key)) {
            Some((known, _)) => known.clone(),
            None => key,
        }
    }

    /// Read `q`'s directory (`old`: its prior state, whose watch may serve again).
    fn read(&mut self, q: &Queued, old: Option<&DirState>, report: bool) -> Read {
        let path = q.path.to_path_buf();
        // The names kept of each kind: as many as the walk reports from here (`KeptNames`).
        let [named_room, out_room, via_room] = self.rooms(report);
        let dir = match listing::open(&path) {
            Ok(dir) => dir,
            Err(e) if listing::is_gone(&e) => return Read::Gone,
            Err(_) => {
                self.found.dirs_read += 1;
                return Read::Unreadable;
            }
        };
        self.found.dirs_read += 1;
        // Watched before it is listed: a change made after the listing raises an event.
        let (read_at, watch) = match self.watcher {
            Some(w) => {
                let same_inode = |o: &&DirState| (o.stamp.dev, o.stamp.ino) == (dir.stamp.dev, dir.stamp.ino);
                w.watch(dir.fd(), old.filter(same_inode).and_then(|o| o.watch.as_deref()))
            }
            None => (0, None),
        };
        #[cfg(test)]
        hooks::at(hooks::Step::Watched, &path);
        let stamp = dir.stamp;
        let mut listing = Listing::default();
        let mut subdirs = Vec::new();
        let (spec, names, skip) = (self.spec, &self.names, &self.skip);
        let mut git_dir_parts = GitDirParts::default();
        let fold = spec.fold_case;
        // The symlinks the run made, within `MAX_LINKS` over the walk; the rest counted.
        let (mut links, mut links_unkept) = (Vec::new(), 0);
        let links_room = MAX_LINKS.saturating_sub(self.found.links.len());
        let links_since = self.links_since;
        let listed = dir.list(|name, kind, ino, fd| {
            let is_dir = kind == listing::EntryKind::Dir;
            if name == ".git" || (fold && name.as_encoded_bytes().eq_ignore_ascii_case(b".git")) {
                // Gone since the listing: not listed (its parent's change is seen next time).
                if let Some(id) = spec.repositories.then(|| super::listing::id_at(fd, name)).flatten() {
                    listing.git.push((name.to_os_string(), id));
                }
                return;
            }
            git_dir_parts.see(name, is_dir, fold);
            // The patterns (`name_patterns`) beside the names: a suffix and a parent compared, and a
            // `.github` that is a symlink (the listing's type: no system call). A virtual environment's
            // files are kept as names are (`venv`: judged after the walk).
            let patterned = || {
                let link = kind == listing::EntryKind::Symlink && super::name_patterns::of_link(name).is_some();
                !names.is_empty() && (link || super::name_patterns::what_it_does(path.file_name(), name).is_some())
            };
            if names.contains(name) || (fold && names.contains(&name.to_ascii_lowercase())) || patterned() || super::venv::walked(&path, name) {
                listing.named.push(name, named_room);
            }
            if kind == listing::EntryKind::Symlink {
                // By its text (one `readlinkat`), else by its way, followed later (`unwalked_links`).
                match listing::link_into_node_modules(fd, name, fold) {
                    true => listing.links_out.push(name, out_room),
                    false => listing.links_via.push(name, via_room),
                }
            }
            if kind == listing::EntryKind::Symlink && links_since.is_some_and(|since| listing::link_made_since(fd, name, since)) {
                match links.len() < links_room {
                    true => links.push(path.join(name)),
                    false => links_unkept += 1,
                }
            }
            if is_dir && name != "node_modules" {
                if skip.contains(path.join(name).as_path()) {
                    return;
                }
                if q.depth + 1 > MAX_DEPTH {
                    listing.too_deep = true;
                    return;
                }
                subdirs.push((DirKey::child(&q.path, name), ino));
            }
        });
        #[cfg(test)]
        hooks::at(hooks::Step::Listed, &path);
        if listed.is_err() {
            return Read::Unreadable;
        }
        self.found.links.extend(links);
        self.found.links_unkept.add(&path, links_unkept);
        listing.subdirs = subdirs.into_iter().map(|(k, ino)| (self.known(k), ino)).collect();
        listing.git_dir = spec.repositories && git_dir_parts.is_git_dir();
        Read::Listed(DirState {
            listing: Arc::new(listing),
            stamp,
            walk_started: self.started,
            listed_ino: q.listed_ino.unwrap_or(0),
            watch: watch.map(Arc::new),
            read_at,
        })
    }
}

/// The entries that make a directory a git directory to git's discovery (`is_git_directory`):
/// `HEAD` and `objects/` and `refs/`, or `HEAD` and `commondir` (a linked worktree's).
#[derive(Default)]
struct GitDirParts {
    head: bool,
    objects: bool,
    refs: bool,
    commondir: bool,
}

impl GitDirParts {
    /// Any entry of these names counts but a directory `HEAD`: git follows symlinks (`objects`
    /// may be one to a directory elsewhere), and saying too much here costs a warning, too little a
    /// hook run on the host. `fold`: in any case (`WalkSpec::fold_case`).
    fn see(&mut self, name: &std::ffi::OsStr, is_dir: bool, fold: bool) {
        let name = name.as_encoded_bytes();
        let is = |want: &[u8]| name == want || (fold && name.eq_ignore_ascii_case(want));
        if is(b"HEAD") {
            self.head = !is_dir;
        } else if is(b"objects") {
            self.objects = true;
        } else if is(b"refs") {
            self.refs = true;
        } else if is(b"commondir") {
            self.commondir = true;
        }
    }

    fn is_git_dir(&self) -> bool {
        self.head && ((self.objects && self.refs) || self.commondir)
    }
}

/// A walk that keeps nothing (no watches are made for it).
pub fn walk(spec: &WalkSpec) -> Found {
    walk_with(spec, None, false, None).0
}

#[cfg(test)]
mod hooks;
mod compare;
mod dir_key;
mod index;
mod kept_names;
mod quiet;

#[cfg(test)]
impl Index {
    /// For the watch tests (inotify: Linux only).
    #[cfg(target_os = "linux")]
    fn get(&self, dir: &Path) -> Option<&DirState> {
        self.dirs.iter().find(|(k, _)| k.to_path_buf() == dir).map(|(_, d)| d)
    }

    pub fn holds(&self, dir: &Path) -> bool {
        self.dirs.keys().any(|k| k.to_path_buf() == dir)
    }

    /// As if every directory had been read two seconds later than it was: the stat rule trusts a
    /// ctime only from the second after (within the same second everything is read again). Then
    /// waits until a change gets a later ctime than any recorded: filesystems stamp changes with
    /// the kernel's coarse clock (a few milliseconds on tmpfs and ext4), so a change made at once
    /// could carry the very ctime the walk saw, which after a real walk's second cannot happen.
    pub(crate) fn age(&mut self) {
        let newest = self.dirs.values().map(|d| d.stamp.ctime).max().unwrap_or((0, 0));
        for d in Arc::make_mut(&mut self.dirs).values_mut() {
            d.walk_started = now_secs() + 2;
        }
        let probe = tempfile::NamedTempFile::new().expect("a probe file");
        for _ in 0..1000 {
            std::fs::write(probe.path(), b"tick").expect("the probe");
            let m = probe.path().symlink_metadata().expect("the probe");
            use std::os::unix::fs::MetadataExt;
            if (m.ctime(), m.ctime_nsec()) > newest {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("the clock that stamps changes did not move for a second");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod watch_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(root: &Path, names: &[&str]) -> WalkSpec {
        WalkSpec { roots: vec![root.to_path_buf()], skip: vec![], names: names.iter().map(|s| s.to_string()).collect(), repositories: true, fold_case: false }
    }

    #[test]
    fn finds_repositories_and_names_at_depth_but_not_inside_git_or_node_modules() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("a/b/c/d/e/.git/hooks")).unwrap();
        std::fs::create_dir_all(r.join(".git/x/.git")).unwrap();
        std::fs::create_dir_all(r.join("node_modules/p/.git")).unwrap();
        std::fs::create_dir_all(r.join("denied/.git")).unwrap();
        std::fs::write(r.join("a/.envrc"), "x").unwrap();
        std::fs::write(r.join("sub.git"), "").unwrap();
        std::fs::write(r.join("a/b/.git"), "gitdir: ../x").unwrap();
        std::os::unix::fs::symlink("/", r.join("a/link")).unwrap();
        let mut s = spec(&r, &[".envrc"]);
        s.skip.push(r.join("denied"));
        let f = walk(&s);
        assert_eq!(f.git_entries, vec![r.join(".git"), r.join("a/b/.git"), r.join("a/b/c/d/e/.git")]);
        assert_eq!(f.named, vec![r.join("a/.envrc")]);
        assert!(!f.truncated);
    }

    #[test]
    fn depth_bound_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let mut deep = r.clone();
        for i in 0..=MAX_DEPTH + 1 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        let f = walk(&spec(&r, &[]));
        assert!(f.truncated);
        assert_eq!(f.dirs_read, MAX_DEPTH + 1);
    }

    /// The stat rule alone (no watcher): what every walk falls back to.
    fn stat_indexed(s: &WalkSpec, prior: Option<&Index>) -> (Found, Index) {
        walk_with(s, prior, false, None)
    }

    fn stat_reusing(s: &WalkSpec, prior: Option<&Index>) -> (Found, Index) {
        walk_with(s, prior, true, None)
    }

    fn now_ns() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64
    }

    #[test]
    fn a_second_walk_reads_only_changed_directories() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("a/b/c")).unwrap();
        std::fs::create_dir_all(r.join("x/y")).unwrap();
        let s = spec(&r, &[".envrc"]);
        let (first, mut index) = stat_indexed(&s, None);
        assert_eq!(first.dirs_read, 6);
        index.age();
        let (again, _) = stat_indexed(&s, Some(&index));
        assert_eq!((again.dirs_read, again.dirs_checked), (0, 6), "nothing changed: each directory lstat'ed");
        std::fs::create_dir_all(r.join("a/b/c/new/.git")).unwrap();
        std::fs::write(r.join("x/.envrc"), "x").unwrap();
        let (changed, _) = stat_indexed(&s, Some(&index));
        assert_eq!(changed.git_entries, vec![r.join("a/b/c/new/.git")]);
        assert_eq!(changed.named, vec![r.join("x/.envrc")]);
        assert_eq!(changed.dirs_read, 3, "c, its new directory, and x");
    }

    #[test]
    fn a_reusing_walk_reports_everything_but_reads_only_what_changed() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("a/b/.git")).unwrap();
        std::fs::create_dir_all(r.join("x/y")).unwrap();
        std::fs::write(r.join("x/.envrc"), "x").unwrap();
        let s = spec(&r, &[".envrc"]);
        let (first, mut index) = stat_reusing(&s, None);
        assert_eq!((first.dirs_read, first.git_entries.clone(), first.named.clone()), (5, vec![r.join("a/b/.git")], vec![r.join("x/.envrc")]));
        index.age();
        let (again, index2) = stat_reusing(&s, Some(&index));
        assert_eq!(again.dirs_read, 0, "nothing changed: nothing read");
        assert_eq!((again.git_entries, again.named), (first.git_entries.clone(), first.named.clone()), "but everything reported");
        assert_eq!(index2.dirs.len(), index.dirs.len(), "the index carries the reused directories on");
        std::fs::remove_file(r.join("x/.envrc")).unwrap();
        std::fs::create_dir_all(r.join("x/y/.git")).unwrap();
        let (changed, _) = stat_reusing(&s, Some(&index));
        assert_eq!(changed.dirs_read, 2, "x and y changed");
        let mut git = changed.git_entries.clone();
        git.sort();
        assert_eq!(git, vec![r.join("a/b/.git"), r.join("x/y/.git")]);
        assert!(changed.named.is_empty(), "a removed name is gone");
    }

    /// An attacker's review: the walk kept the first 24 directories it could not open and dropped
    /// the rest, so that what decides which to report never saw them.
    #[test]
    fn every_directory_the_walk_cannot_open_is_kept() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (top, names) = crate::planted::tests::past_path_max(&r, 30);
        let f = walk(&spec(&r, &[]));
        let mut seen = f.unreadable.clone();
        seen.sort();
        assert_eq!(seen.len(), names.len());
        assert!(seen == names.iter().map(|n| top.join(n)).collect::<Vec<_>>(), "each of them");
    }

    /// An attacker's review (bounds17, names_index.sh): a run wrote 115 protected and report-only
    /// names, empty, in each of 1,000 directories at a ~3.6 KB path. The index kept each entry's
    /// full path, in its directory's listing and again in the walk's totals: 1.6 GB in the host,
    /// remembered for the next run, which spent seconds on them again.
    #[test]
    fn the_named_entries_a_walk_keeps_are_bounded_and_the_rest_counted() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let names = [".envrc", ".vscode", ".idea", ".npmrc"];
        let long = r.join("x".repeat(200));
        let dirs = 10_000 / names.len() + 50;
        for d in 0..dirs {
            let dir = long.join(format!("a{d:05}"));
            std::fs::create_dir_all(&dir).unwrap();
            for n in names {
                std::fs::write(dir.join(n), "").unwrap();
            }
        }
        let s = spec(&r, &names);
        let (f, mut index) = stat_reusing(&s, None);
        let past = dirs * names.len() - MAX_NAMED;
        assert_eq!((f.named.len(), f.named_unkept.count), (MAX_NAMED, past));
        assert!(f.named_unkept.first_dir.as_ref().is_some_and(|d| d.parent() == Some(long.as_path())), "{:?}", f.named_unkept.first_dir);
        assert_eq!((index.totals.named.len(), index.totals.named_unkept.count), (MAX_NAMED, past), "the index's totals alike");
        // Each name once, without its directory's path (the index's key) again.
        let kept: usize = index.dirs.values().map(|d| d.listing.named.iter().map(|n| n.as_os_str().len()).sum::<usize>()).sum();
        assert!(kept <= dirs * names.len() * 8, "{kept} bytes of names in the listings");
        // The next walk before a run, reusing the index, and the walk after a run that changed each
        // directory: bounded the same.
        index.age();
        let (again, _) = stat_reusing(&s, Some(&index));
        assert_eq!((again.dirs_read, again.named.len(), again.named_unkept.count), (0, MAX_NAMED, past));
        for d in 0..dirs {
            std::fs::write(long.join(format!("a{d:05}/.envrc")), "x").unwrap();
            std::fs::write(long.join(format!("a{d:05}/new")), "").unwrap();
        }
        let (after, _) = stat_indexed(&s, Some(&index));
        assert_eq!((after.dirs_read, after.named.len(), after.named_unkept.count), (dirs, MAX_NAMED, past));
    }

    /// An attacker's review (cross30): a listing kept every symlink's name (and every protected
    /// name's) of its directory, however many, for the host process's life, where a walk reports at
    /// most `MAX_LINKS_VIA` (`MAX_LINKS_OUT`, `MAX_NAMED`) of them: a run that made 1,000,000 links
    /// with 250-byte names left the host holding 295 MB after it ended. Now the index keeps no more
    /// names than a walk reports, the rest counted; and a kept listing that holds fewer than a later
    /// walk could report (the names before it went) is read again.
    #[test]
    fn the_names_the_index_keeps_are_no_more_than_a_walk_reports() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (top, below) = (MAX_LINKS_VIA + 1_500, 1_000);
        for i in 0..top {
            std::os::unix::fs::symlink("t", r.join(format!("{i:06}{}", "l".repeat(100)))).unwrap();
        }
        std::fs::create_dir(r.join("sub")).unwrap();
        for i in 0..below {
            std::os::unix::fs::symlink("t", r.join(format!("sub/{i:06}"))).unwrap();
        }
        let s = spec(&r, &[".envrc"]);
        let (f, mut index) = stat_reusing(&s, None);
        assert_eq!((f.links_via.len(), f.links_via_unkept.count), (MAX_LINKS_VIA, top + below - MAX_LINKS_VIA));
        let kept: usize = index.dirs.values().map(|d| d.listing.links_via.iter().count()).sum();
        assert!(kept <= MAX_LINKS_VIA, "{kept} names of symlinks kept in the listings, {MAX_LINKS_VIA} reported at most");
        // Reused as it is: the same report.
        index.age();
        let (again, mut index) = stat_reusing(&s, Some(&index));
        assert_eq!((again.dirs_read, again.links_via.len(), again.links_via_unkept.count), (0, MAX_LINKS_VIA, top + below - MAX_LINKS_VIA));
        // The top's links gone but 100: `sub`, unchanged, is reported whole again.
        index.age();
        for i in 100..top {
            std::fs::remove_file(r.join(format!("{i:06}{}", "l".repeat(100)))).unwrap();
        }
        let (fewer, _) = stat_reusing(&s, Some(&index));
        assert_eq!((fewer.links_via.len(), fewer.links_via_unkept.count), (100 + below, 0));
        assert!(fewer.links_via.contains(&r.join("sub/000999")));
    }

    /// An attacker's review (bounds17, links_memory.sh): the walk after a run kept the path of every
    /// symlink in the directories it read (100,000 at a ~3.6 KB path: 700 MB in the host), where at
    /// most `MAX_LINKS_JUDGED` of those the run made are judged.
    #[test]
    fn the_walk_after_a_run_keeps_no_more_links_than_are_judged() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let dir = r.join("links");
        std::fs::create_dir(&dir).unwrap();
        for i in 0..50 {
            std::os::unix::fs::symlink("t", dir.join(format!("old{i}"))).unwrap();
        }
        let s = spec(&r, &[".envrc"]);
        let (_, mut index) = stat_indexed(&s, None);
        index.age();
        // Past the clock slack (`listing::changed_since`) of the baseline taken now.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let since = now_ns();
        let max = crate::planted::MAX_LINKS_JUDGED;
        for i in 0..max + 100 {
            std::os::unix::fs::symlink("t", dir.join(format!("{i:06}"))).unwrap();
        }
        let (f, _) = walk_until(&s, Some(&index), false, Some(since), None, &|| false).unwrap();
        assert_eq!((f.links.len(), f.links_unkept.count, f.links_unkept.first_dir.clone()), (max, 100, Some(dir.clone())));
        assert!(!f.links.iter().any(|l| l.to_string_lossy().contains("old")), "one the run did not make is not kept");
        // The walk before a run keeps none.
        let (before, _) = stat_reusing(&s, None);
        assert!(before.links.is_empty() && before.links_unkept.count == 0);
    }

    /// An attacker's review (cross30): a workspace-write run made 20,000 directories holding an
    /// empty `.git` each at a 3.3 KB path, and the index kept each one's path in its directory's
    /// listing (twice its length, as `join` grew it) besides the totals' two: 13.8 KB a `.git`
    /// entry, some 276 MB in the host for its life. The listing keeps the entry's name.
    #[test]
    fn a_listing_keeps_the_name_of_its_git_entry_not_its_path() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let mut deep = r.clone();
        for i in 0..13 {
            deep.push(format!("{i:02}{}", "d".repeat(250)));
        }
        for i in 0..20 {
            let d = deep.join(format!("r{i:02}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(".git"), "").unwrap();
        }
        let (f, index) = stat_reusing(&spec(&r, &[]), None);
        assert_eq!(f.git_entries.len(), 20);
        assert!(f.git_entries.contains(&deep.join("r07/.git")) && f.git_inodes.contains_key(deep.join("r07/.git").as_os_str()));
        let kept: usize = index.dirs.values().flat_map(|d| d.listing.git.iter()).map(|(p, _)| p.as_os_str().len()).sum();
        assert!(kept <= 20 * ".git".len(), "{kept} bytes of .git entries' paths in the listings");
        // Reused, the same entries at the same paths.
        let (again, _) = stat_reusing(&spec(&r, &[]), Some(&index));
        assert_eq!((again.git_entries, again.git_inodes), (f.git_entries, f.git_inodes));
    }

    /// An attacker's review (res23, deepdirs_mem.js): the index kept each directory's full path, for
    /// every later run: 60,000 directories a run made at the bottom of a chain of long names, at a
    /// 3.5 KB path each, cost the host 246 MB (300,000 allowed, in each of 8 kept areas). What it
    /// keeps of a directory is its name; its parent's is shared.
    #[test]
    fn the_index_keeps_a_name_per_directory_not_its_path() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (depth, leaves) = (12, 300);
        let mut deep = r.clone();
        for i in 0..depth {
            deep.push(format!("{i:02}{}", "d".repeat(200)));
        }
        for i in 0..leaves {
            std::fs::create_dir_all(deep.join(format!("{i:04}{}", "e".repeat(200)))).unwrap();
        }
        std::fs::write(deep.join(".envrc"), "").unwrap();
        let names = depth * 202 + leaves * 204 + r.as_os_str().len();
        let s = spec(&r, &[".envrc"]);
        let (f, mut index) = stat_reusing(&s, None);
        assert_eq!(index.dirs.len(), 1 + depth + leaves);
        assert_eq!(f.named, vec![deep.join(".envrc")], "a full path where one is reported");
        assert!(index.kept_path_bytes() <= names, "{} bytes of path kept for {names} bytes of names", index.kept_path_bytes());
        // The top of the chain changed (read again: its subdirectory found anew), then nothing: the
        // names are shared with the prior index, not kept twice.
        index.age();
        std::fs::write(r.join(format!("00{}", "d".repeat(200))).join("new"), "").unwrap();
        let (again, index) = stat_reusing(&s, Some(&index));
        assert_eq!((again.dirs_read, again.named.clone()), (1, vec![deep.join(".envrc")]));
        let (_, index) = stat_reusing(&s, Some(&index));
        assert!(index.kept_path_bytes() <= names, "{} bytes of path kept for {names} bytes of names", index.kept_path_bytes());
        assert!(index.holds(&deep) && index.holds(&deep.join(format!("0299{}", "e".repeat(200)))));
    }

    #[test]
    fn nothing_to_look_for_reads_nothing() {
        let t = tempfile::tempdir().unwrap();
        let mut s = spec(t.path(), &[]);
        s.repositories = false;
        assert_eq!(walk(&s).dirs_read, 0);
    }
}
