//! The host user's home paths (`home`'s lists and the protected names at a home's top) that are
//! symlinks, wherever the home lies: a dotfiles manager (GNU stow, chezmoi's symlink mode, yadm's
//! alternates) makes `~/.bashrc`, `~/.ssh/config` or `~/bin` links into a checkout such as
//! `~/dotfiles`. Found by an attacker's review: a run working in `~/dotfiles` appended to
//! `.bashrc`, added a `ProxyCommand` to `.ssh/config` and rewrote `bin/fsmon` (the global
//! `core.fsmonitor`), since only a home inside a writable root had its paths kept; the host's next
//! interactive shell and `git status` ran them.
//!
//! What is found: each listed path that is a symlink or lies below one (`.local` a link: all of
//! `.local/bin`, `.local/lib`, ...), and for a listed directory that is a real one, the symlinks
//! directly in it (stow links the highest directory that does not exist yet: `~/.ssh/config` when
//! `~/.ssh` does). A link deeper in a listed directory is not looked for (README says so). The
//! caller resolves each and keeps those that lead into a writable root (`Carver::home`,
//! `review::home_links`).
//!
//! On every run's path, so what was seen is remembered per directory: vouched for by the
//! directory watcher (`watch`, Linux) and an `lstat` saying the path still names the directory it
//! read (a directory above renamed away is nothing its watch hears), else by a `stat` of the
//! directory (an entry added, removed or renamed changes its times). Of a directory on the way (the home's
//! top, `~/.config`, `~/.local/share`) only the names looked up are kept, each seen by an `lstat`;
//! only a listed directory is listed, and at most `MAX_ENTRIES` of its entries are read. Found by
//! an attacker's review: with the home in a writable root, a run made 300,000 names at its top and
//! the host process kept a listing of every one for its life (98 MB), read again after every change
//! (740 ms). Past the bound the rest is said in the run's result (`Found::cut_short`).

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use super::home::Bases;
use super::names;
use super::vouch::Vouch;
use super::watch::{self, Watch};
use crate::policy::paths::canonical_lenient;
use crate::policy::PlaceholderKind;

/// A home path of the host's that is a symlink or lies below one, as named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    pub path: PathBuf,
    /// Whether the host takes it for a directory (a missing target is kept absent as one).
    pub dir: bool,
    /// What the host does with it.
    pub what: &'static str,
}

/// The linked paths of `bases`' homes and configuration directories, and of the protected
/// `names` at each home's top (`all`'s `linked`).
pub fn linked(bases: &Bases, names: &[String]) -> Vec<Linked> {
    all(bases, names).linked
}

/// Entries read of a listed directory (`~/.ssh`, `~/.local/bin`): the host keeps its links and
/// files for its life, and `home_hard` `stat`s each file every run.
pub const MAX_ENTRIES: usize = 1_000;

/// What one look at the home's listings finds.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The linked paths of the homes and configuration directories, and of the protected names at
    /// each home's top.
    pub linked: Vec<Linked>,
    /// The regular files directly in those of the same paths that are real directories
    /// (`~/.ssh/config` when `~/.ssh` is one): `home_hard` looks at each for other names.
    pub files_in_dirs: Vec<PathBuf>,
    /// Of the same paths, the real directories holding more than `MAX_ENTRIES` entries: the links
    /// and files past them were not looked for (said in `sandboxDetails.notEnforced`, `home_hard`).
    pub cut_short: Vec<PathBuf>,
}

/// The three at once, remembered together: a plan that uses them all (`walk_and_protect`) checks
/// the memo once.
pub fn all(bases: &Bases, names: &[String]) -> Found {
    if let Some(w) = watch::global() {
        w.drain();
    }
    let mut guard = lock_listings();
    let listings = guard.get_or_insert_with(Listings::default);
    // The last answer, while the same bases and names were asked and no directory it read
    // changed: a lock and a look-up per directory, no path built (this runs every run).
    if let Some(m) = listings.memo.as_ref().filter(|m| m.bases == *bases && m.names == names) {
        if m.read.iter().all(|d| listings.dirs.get(d).is_some_and(|l| still(d, l))) {
            return m.out.clone();
        }
    }
    listings.read.clear();
    let mut out = Found::default();
    let named = bases.homes.iter().flat_map(|h| {
        names.iter().map(move |n| (h.as_path(), n.as_str(), names::placeholder_kind(n) == PlaceholderKind::Dir, names::what_it_does(n)))
    });
    let mut real_bases: HashMap<&Path, Option<PathBuf>> = HashMap::new();
    for (base, rel, dir, what) in bases.below_bases(|_| true).into_iter().chain(named) {
        let real = real_bases.entry(base).or_insert_with(|| real_base(listings, bases, base));
        match real {
            Some(real) => follow(listings, base, real, rel, dir, what, &mut out),
            // A dangling link on the base's way: all below it leads where the command could
            // create it (`leads_to` follows it).
            None if dangles(base) => push(&mut out.linked, Linked { path: base.join(rel), dir, what }),
            None => {}
        }
    }
    let read = std::mem::take(&mut listings.read);
    // A base that is no home's own directory was resolved anew, a dangling one too (its target
    // may be made): not remembered.
    let settled = real_bases.iter().all(|(b, r)| r.as_deref().map_or_else(|| !dangles(b), |r| r == *b));
    listings.memo = settled.then(|| Memo { bases: bases.clone(), names: names.to_vec(), out: out.clone(), read });
    out
}

/// `p`, or where it leads when a dangling symlink is on its way (at its end, or a base such as a
/// `~/.config` linked to a directory not there yet): the links followed, their missing
/// directories too, and from the first missing name on the rest kept verbatim. `canonical_lenient`
/// takes a dangling link for missing itself, and the command could create what it leads to (a
/// dotfile deleted from the checkout, still linked; found by an attacker's review, stow2.sh).
pub fn leads_to(p: &Path) -> PathBuf {
    if p.exists() || !p.is_absolute() {
        return p.to_path_buf();
    }
    walk(Path::new("/"), p, &mut 0).unwrap_or_else(|| p.to_path_buf())
}

/// The symlinks met while resolving `p`, in order (each as its canonical directory and name).
pub fn links_on_the_way(p: &Path) -> Vec<crate::policy::paths::LinkOnTheWay> {
    crate::policy::paths::walk_links(p, &|_| None).1
}

/// What resolving a path crossed: each name looked up on the way (a link's own path among them,
/// every one canonical) and where it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Way {
    pub crossed: Vec<PathBuf>,
    pub end: PathBuf,
}

/// Each of `paths` resolved through the listings (in order), when everything on its way exists:
/// while the watcher vouches for every directory crossed, no system call but an `lstat` of each
/// (this runs every run for every home link, wherever the home lies: rustup's 15 proxies in
/// `~/.cargo/bin` cost ~300 system calls a run resolved from `/`). A symlink's text is read once
/// (it cannot change without its directory changing). `None` for a missing name or one of another
/// kind on the way, a directory that cannot be opened, or past 40 links: the caller resolves it
/// the slow way.
///
/// All under one hold of the listings, each directory on their ways vouched for (`still`: the
/// watcher's word and an `lstat`) once for them all, not once per name looked up in it: rustup's
/// 13 proxies here, each a link to `rustup` beside it, cost 6 `lstat`s each (`/`, `~`, `~/.cargo`,
/// and `~/.cargo/bin` for the link, its text and its target), 78 a run; 4 in all now. The batch is
/// forgotten when this returns: the next call (the next run's plan) vouches for each directory
/// again, so nothing it skips outlives one plan.
pub fn ways(paths: &[&Path]) -> Vec<Option<Way>> {
    let mut guard = lock_listings();
    let listings = guard.get_or_insert_with(Listings::default);
    listings.batch = Some(Vec::new());
    let out = paths
        .iter()
        .map(|p| {
            if !p.is_absolute() {
                return None;
            }
            let mut crossed = Vec::new();
            let end = listings.resolve(Path::new("/"), p, &mut crossed, &mut 0)?;
            Some(Way { crossed, end })
        })
        .collect();
    listings.batch = None;
    out
}

/// Whether a dangling link is on `p`'s way: where it leads is not where its existing links do.
fn dangles(p: &Path) -> bool {
    canonical_lenient("HOME", p).is_ok_and(|l| l.path != leads_to(p))
}

/// `rest` resolved from the real directory `at` (no link in it): each link on the way followed,
/// a dangling one's target too. `None` past 40 links (a loop), or for a `..` after a missing name
/// (what it crosses does not exist yet).
fn walk(at: &Path, rest: &Path, hops: &mut u32) -> Option<PathBuf> {
    let mut at = at.to_path_buf();
    let mut missing = false;
    for c in rest.components() {
        match c {
            Component::RootDir => at = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir if missing => return None,
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(n) if missing => at.push(n),
            Component::Normal(n) => {
                let next = at.join(n);
                match next.symlink_metadata() {
                    Ok(m) if m.file_type().is_symlink() => {
                        *hops += 1;
                        if *hops > 40 {
                            return None;
                        }
                        at = walk(&at, &std::fs::read_link(&next).ok()?, hops)?;
                        missing = at.symlink_metadata().is_err();
                    }
                    Ok(_) => at = next,
                    Err(_) => {
                        missing = true;
                        at = next;
                    }
                }
            }
            Component::Prefix(_) => return None,
        }
    }
    Some(at)
}

/// Where `base` is listed: a home as it is (canonical), `~/.config` too when it is a real
/// directory of a home, else where it resolves now (a link's target may change between runs;
/// the listing is kept by that path). `None` when it does not exist.
fn real_base(listings: &mut Listings, bases: &Bases, base: &Path) -> Option<PathBuf> {
    if bases.homes.iter().any(|h| h == base) {
        return Some(base.to_path_buf());
    }
    let in_home = base.parent().filter(|p| bases.homes.iter().any(|h| h == p));
    if let (Some(home), Some(name)) = (in_home, base.file_name()) {
        if listings.kind(home, name) == Some(Kind::Dir) {
            return Some(base.to_path_buf());
        }
    }
    std::fs::canonicalize(base).ok()
}

/// `rel` below `base` (listed at `real`), walked through the listings: a link on its way makes
/// the whole path linked; a real directory at its end gives the links (and the files) directly in it.
fn follow(listings: &mut Listings, base: &Path, real: &Path, rel: &str, dir: bool, what: &'static str, out: &mut Found) {
    let mut at = real.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let kind = listings.kind(&at, part.as_ref());
        at.push(part);
        match kind {
            Some(Kind::Link) => return push(&mut out.linked, Linked { path: base.join(rel), dir, what }),
            Some(Kind::Dir) if i + 1 == parts.len() => {
                let Some(whole) = listings.whole(&at) else { return };
                let named = |kind| whole.entries.iter().filter(move |(_, k)| *k == kind).map(|(n, _)| base.join(rel).join(n));
                let (links, files, cut): (Vec<PathBuf>, Vec<PathBuf>, bool) = (named(Kind::Link).collect(), named(Kind::File).collect(), whole.cut);
                for path in links {
                    push(&mut out.linked, Linked { path, dir: false, what });
                }
                out.files_in_dirs.extend(files.into_iter().filter(|f| !out.files_in_dirs.contains(f)).collect::<Vec<_>>());
                if cut && !out.cut_short.contains(&base.join(rel)) {
                    out.cut_short.push(base.join(rel));
                }
            }
            Some(Kind::Dir) => {}
            Some(Kind::File) | None => return,
        }
    }
}

fn push(out: &mut Vec<Linked>, l: Linked) {
    if !out.iter().any(|o| o.path == l.path) {
        out.push(l);
    }
}

/// What an entry of a listing is, of what matters here (a file ends the way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Link,
    /// A regular file (its other names are `home_hard`'s).
    File,
}

type Stat = (u64, u64, i64, i64, i64, i64);

/// What was seen of one directory, and what vouches for it.
struct Listing {
    /// The names looked up in it and what each is (`None`: missing, or of no kind that matters).
    looked: HashMap<OsString, Option<Kind>>,
    /// The text of the links among them that `way` followed.
    texts: HashMap<OsString, PathBuf>,
    /// Its links and files, when it is a listed directory (read on first need).
    whole: Option<Whole>,
    /// The directory's watch and the watcher's counter when it was opened.
    watch: Option<(Watch, u64)>,
    /// Its `stat` then, when settled (changed before the current second).
    stat: Option<Stat>,
    /// The device and inode of the directory it read: what its path must still name (`still`).
    id: (u64, u64),
}

/// A listed directory's links and files, sorted, of its first `MAX_ENTRIES` entries.
struct Whole {
    entries: Vec<(OsString, Kind)>,
    /// More entries than that: the rest were not read.
    cut: bool,
}

#[derive(Default)]
struct Listings {
    dirs: HashMap<PathBuf, Listing>,
    /// The directories consulted by the current `linked`.
    read: Vec<PathBuf>,
    memo: Option<Memo>,
    /// During one `ways` call: the directories already vouched for in it (`fresh`).
    batch: Option<Vec<PathBuf>>,
}

/// `all`'s last answer and the directories it consulted.
struct Memo {
    bases: Bases,
    names: Vec<String>,
    out: Found,
    read: Vec<PathBuf>,
}

static LISTINGS: Mutex<Option<Listings>> = Mutex::new(None);

/// The listings, held. A holder that panicked (a poisoned lock) may have left a `ways` batch set:
/// it is dropped here, so no later reader takes a directory as vouched for by a call that ended.
fn lock_listings() -> std::sync::MutexGuard<'static, Option<Listings>> {
    LISTINGS.lock().unwrap_or_else(|e| {
        let mut guard = e.into_inner();
        if let Some(listings) = guard.as_mut() {
            listings.batch = None;
        }
        guard
    })
}

impl Listings {
    /// What `name` is in `dir`: an `lstat` the first time while `dir` is unchanged. Only a single
    /// name is looked up (the parts of a listed path are split at `/`).
    fn kind(&mut self, dir: &Path, name: &std::ffi::OsStr) -> Option<Kind> {
        self.note_read(dir);
        self.kind_unnoted(dir, name)
    }

    /// `kind`, not counted among the directories `all`'s answer rests on (`way`'s lookups).
    fn kind_unnoted(&mut self, dir: &Path, name: &std::ffi::OsStr) -> Option<Kind> {
        if name.is_empty() || name == "." || name == ".." || name.as_encoded_bytes().contains(&b'/') {
            return None;
        }
        let l = self.fresh(dir)?;
        if let Some(k) = l.looked.get(name) {
            return *k;
        }
        let k = dir.join(name).symlink_metadata().ok().and_then(|m| kind_of(m.file_type()));
        l.looked.insert(name.to_os_string(), k);
        k
    }

    /// The links and files of the listed directory `dir`, read the first time while it is unchanged.
    fn whole(&mut self, dir: &Path) -> Option<&Whole> {
        let l = self.listing(dir)?;
        if l.whole.is_none() {
            l.whole = Some(list(dir)?);
        }
        l.whole.as_ref()
    }

    /// The text of the link `name` in `dir`, read the first time while `dir` is unchanged.
    fn text(&mut self, dir: &Path, name: &std::ffi::OsStr) -> Option<PathBuf> {
        let l = self.fresh(dir)?;
        if let Some(t) = l.texts.get(name) {
            return Some(t.clone());
        }
        let t = std::fs::read_link(dir.join(name)).ok()?;
        l.texts.insert(name.to_os_string(), t.clone());
        Some(t)
    }

    /// `rest` resolved from the real directory `at`, each name crossed noted (`way`).
    fn resolve(&mut self, at: &Path, rest: &Path, crossed: &mut Vec<PathBuf>, hops: &mut u32) -> Option<PathBuf> {
        let mut at = at.to_path_buf();
        for c in rest.components() {
            match c {
                Component::RootDir => at = PathBuf::from("/"),
                Component::CurDir => {}
                // `at` is a real directory (every link before it followed): its parent is `..`'s.
                Component::ParentDir => {
                    at.pop();
                }
                Component::Normal(n) => {
                    crossed.push(at.join(n));
                    match self.kind_unnoted(&at, n)? {
                        Kind::Link => {
                            *hops += 1;
                            if *hops > 40 {
                                return None;
                            }
                            let text = self.text(&at, n)?;
                            at = self.resolve(&at, &text, crossed, hops)?;
                        }
                        Kind::Dir | Kind::File => at.push(n),
                    }
                }
                Component::Prefix(_) => return None,
            }
        }
        Some(at)
    }

    fn note_read(&mut self, dir: &Path) {
        if !self.read.iter().any(|d| d == dir) {
            self.read.push(dir.to_path_buf());
        }
    }

    /// What was seen of `dir` (noted among the directories `all`'s answer rests on).
    fn listing(&mut self, dir: &Path) -> Option<&mut Listing> {
        self.note_read(dir);
        self.fresh(dir)
    }

    /// What was seen of `dir`, forgotten unless the watcher or the `stat` rule vouches for it.
    fn fresh(&mut self, dir: &Path) -> Option<&mut Listing> {
        let vouched = self.batch.as_ref().is_some_and(|b| b.iter().any(|d| d == dir)) && self.dirs.contains_key(dir);
        let fresh = vouched || self.dirs.get(dir).is_some_and(|l| still(dir, l));
        if !fresh {
            let known = self.dirs.get(dir).and_then(|l| l.watch.as_ref()).map(|(w, _)| w);
            match open(dir, known) {
                Some(l) => self.dirs.insert(dir.to_path_buf(), l),
                None => self.dirs.remove(dir),
            };
        }
        if let Some(b) = self.batch.as_mut().filter(|b| !vouched && !b.iter().any(|d| d == dir)) {
            b.push(dir.to_path_buf());
        }
        self.dirs.get_mut(dir)
    }
}

fn kind_of(t: std::fs::FileType) -> Option<Kind> {
    if t.is_symlink() {
        Some(Kind::Link)
    } else if t.is_dir() {
        Some(Kind::Dir)
    } else if t.is_file() {
        Some(Kind::File)
    } else {
        None
    }
}

/// Whether what was seen of `dir` holds: its watch vouches for the directory it read, and the path
/// still names that directory (an `lstat`); or, without a watch, the `stat` rule. The watch hears
/// nothing when a directory above is renamed away and another made in its place (found by an
/// attacker's review, cross40: the user's `mv ~/.config ~/.config.old` and a new `~/.config/git`
/// whose `config` links into a checkout were answered from the old `git`'s listing, no link).
fn still(dir: &Path, l: &Listing) -> bool {
    if let (Some(w), Some((watch, read_at))) = (watch::global(), &l.watch) {
        if w.owns(watch) {
            match w.vouch(watch, *read_at) {
                Vouch::Unchanged => return std::fs::symlink_metadata(dir).is_ok_and(|m| (m.dev(), m.ino()) == l.id),
                Vouch::Changed => return false,
                Vouch::Unknown => {}
            }
        }
    }
    l.stat.is_some() && std::fs::symlink_metadata(dir).ok().map(|m| stat_of(&m)) == l.stat
}

fn stat_of(m: &std::fs::Metadata) -> Stat {
    (m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
}

/// Start what is seen of `dir` (a real directory, not followed), watched first: a change from then
/// on is seen, and forgets all that is seen after. `known`: the watch of its last listing (the same
/// inode's is not one more for the cap).
fn open(dir: &Path, known: Option<&Watch>) -> Option<Listing> {
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(dir).ok()?;
    let watch = watch::global().and_then(|w| {
        let (read_at, watch) = w.watch(file.as_raw_fd(), known);
        watch.map(|wt| (wt, read_at))
    });
    let meta = file.metadata().ok()?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    // Timestamps are coarse: what changed in this very second may change again unseen.
    let stat = (meta.ctime() < now && meta.mtime() < now).then(|| stat_of(&meta));
    Some(Listing { looked: HashMap::new(), texts: HashMap::new(), whole: None, watch, stat, id: (meta.dev(), meta.ino()) })
}

/// The links and files among `dir`'s first `MAX_ENTRIES` entries.
fn list(dir: &Path) -> Option<Whole> {
    let mut entries = Vec::new();
    let mut cut = false;
    for (i, e) in std::fs::read_dir(dir).ok()?.flatten().enumerate() {
        if i == MAX_ENTRIES {
            cut = true;
            break;
        }
        match e.file_type().ok().and_then(kind_of) {
            Some(k @ (Kind::Link | Kind::File)) => entries.push((e.file_name(), k)),
            _ => {}
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Some(Whole { entries, cut })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ways` vouches for each directory once in a call, never for the next call: its answers are
    /// those of each path asked alone, and a `~/.cargo` renamed away between two calls, with a new
    /// one whose `bin/cargo` leads elsewhere, is seen by the second (cross40's case for the ways).
    #[test]
    fn ways_vouch_once_a_call_and_anew_the_next() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let bin = home.join(".cargo/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(home.join("dotfiles")).unwrap();
        std::fs::write(bin.join("rustup"), "").unwrap();
        std::fs::write(home.join("dotfiles/rustup"), "").unwrap();
        for n in ["cargo", "rustc", "rustdoc"] {
            std::os::unix::fs::symlink("rustup", bin.join(n)).unwrap();
        }
        let paths: Vec<PathBuf> = ["cargo", "rustc", "rustdoc", "missing"].iter().map(|n| bin.join(n)).collect();
        let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
        let batch = ways(&refs);
        let alone: Vec<Option<Way>> = refs.iter().map(|p| ways(&[p]).pop().flatten()).collect();
        assert_eq!(batch, alone);
        assert_eq!(batch[0].as_ref().map(|w| w.end.clone()), Some(bin.join("rustup")));
        assert_eq!(batch[3], None, "a missing name");
        std::fs::rename(home.join(".cargo"), home.join(".cargo.old")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("../../dotfiles/rustup", bin.join("cargo")).unwrap();
        let after = ways(&refs);
        assert_eq!(after[0].as_ref().map(|w| w.end.clone()), Some(home.join("dotfiles/rustup")), "the new ~/.cargo's link");
        assert_eq!(after[1], None, "rustc is gone with the old ~/.cargo");
    }

    /// What a `ways` call vouched for is not taken on trust by the listings' other readers after
    /// it (`linked`, every run): a listed `~/.cargo/bin` whose `~/.cargo` was renamed away after
    /// the call is listed anew.
    #[test]
    fn a_ways_batch_ends_with_its_call() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let bin = home.join(".cargo/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("rustup"), "").unwrap();
        std::os::unix::fs::symlink("rustup", bin.join("rustc")).unwrap();
        let bases = Bases::of([home.clone()].into_iter(), None);
        let names = vec![".bashrc".to_string()];
        let has_rustc = || linked(&bases, &names).iter().any(|l| l.path == bin.join("rustc"));
        assert!(has_rustc());
        assert!(ways(&[&bin.join("rustc")])[0].is_some());
        std::fs::rename(home.join(".cargo"), home.join(".cargo.old")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        assert!(!has_rustc(), "the new ~/.cargo/bin has no rustc");
    }

    /// A holder of the listings that panicked mid-batch leaves no batch behind for the next
    /// holder (revo42: a `ways` call that panicked would have left its vouching set).
    #[test]
    fn a_batch_left_by_a_panicked_holder_is_dropped() {
        let held = std::thread::spawn(|| {
            let mut guard = lock_listings();
            guard.get_or_insert_with(Listings::default).batch = Some(vec![PathBuf::from("/vouched-by-a-dead-call")]);
            panic!("a holder panics with its batch set");
        });
        assert!(held.join().is_err());
        assert!(lock_listings().as_ref().is_some_and(|l| l.batch.is_none()));
    }

    /// The stow layout of an attacker's review: links at the home's top, one inside a real
    /// `.ssh`, a linked `bin`; a link deeper than one level in a listed directory is not found.
    #[test]
    fn finds_links_at_and_directly_in_the_home_paths() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let d = home.join("dotfiles");
        std::fs::create_dir_all(d.join("ssh")).unwrap();
        std::fs::create_dir_all(d.join("bin")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join(".vim/deep")).unwrap();
        std::os::unix::fs::symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
        std::os::unix::fs::symlink("../dotfiles/ssh/config", home.join(".ssh/config")).unwrap();
        std::os::unix::fs::symlink("dotfiles/bin", home.join("bin")).unwrap();
        std::os::unix::fs::symlink("../../dotfiles/x", home.join(".vim/deep/x")).unwrap();
        std::fs::write(home.join(".profile"), "").unwrap();
        let bases = Bases::of([home.clone()].into_iter(), None);
        let names = vec![".bashrc".to_string(), ".profile".to_string()];
        let found: Vec<PathBuf> = linked(&bases, &names).into_iter().map(|l| l.path).collect();
        for p in [home.join(".bashrc"), home.join(".ssh/config"), home.join("bin")] {
            assert!(found.contains(&p), "{} in {found:?}", p.display());
        }
        assert!(!found.iter().any(|p| p.ends_with(".profile") || p.ends_with("x")), "{found:?}");
        // A link made since the last listing is seen (the directory changed).
        std::os::unix::fs::symlink("dotfiles/k", home.join(".kube")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let found: Vec<PathBuf> = linked(&bases, &names).into_iter().map(|l| l.path).collect();
        assert!(found.contains(&home.join(".kube/config")), "{found:?}");
    }

    /// Found by an attacker's review (cross40): a listing was kept by its directory's path while
    /// the watch on the directory it read vouched, and that watch hears nothing when a directory
    /// above is renamed away. The user's `mv ~/.config ~/.config.old` and a new `~/.config/git`
    /// whose `config` is a link into a checkout (restored from dotfiles, stow's layout) were
    /// answered from the old `git`'s listing: no link, so a run in the checkout could rewrite the
    /// global git configuration the host's git reads.
    #[test]
    fn a_directory_above_a_listed_one_renamed_away_is_seen() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".config/git/config"), "").unwrap();
        std::fs::create_dir_all(home.join("dotfiles")).unwrap();
        let bases = Bases::of([home.clone()].into_iter(), None);
        let names = vec![".bashrc".to_string()];
        let link = home.join(".config/git/config");
        assert!(!linked(&bases, &names).iter().any(|l| l.path == link));
        std::fs::rename(home.join(".config"), home.join(".config.old")).unwrap();
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::os::unix::fs::symlink("../../dotfiles/gitconfig", &link).unwrap();
        let found: Vec<PathBuf> = linked(&bases, &names).into_iter().map(|l| l.path).collect();
        assert!(found.contains(&link), "{found:?}");
    }

    /// Entries `LISTINGS` keeps for `dir` (what a later run's lookups rely on).
    fn kept(dir: &Path) -> usize {
        let guard = LISTINGS.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().and_then(|l| l.dirs.get(dir)).map_or(0, |l| l.looked.len() + l.whole.as_ref().map_or(0, |w| w.entries.len()))
    }

    /// Found by an attacker's review: with the home in a writable root, a run made 300,000 names at
    /// its top and the host process kept a listing of every one for its life (98 MB), read again
    /// on every later run. Only the names looked up are kept of a directory on the way; a listed
    /// directory's links and files are kept up to `MAX_ENTRIES`, the rest said (`cut_short`).
    #[test]
    fn keeps_only_the_names_looked_up_and_a_bounded_listing() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        for i in 0..3000 {
            std::fs::write(home.join(format!("junk{i:05}")), "").unwrap();
        }
        let bases = Bases::of([home.clone()].into_iter(), None);
        let names = vec![".bashrc".to_string()];
        assert!(linked(&bases, &names).is_empty());
        let looked = bases.below_bases(|_| true).len() + names.len();
        assert!(kept(&home) <= looked, "{} kept of the home's top", kept(&home));
        for i in 0..MAX_ENTRIES + 5 {
            std::fs::write(home.join(".ssh").join(format!("k{i:05}")), "").unwrap();
        }
        std::os::unix::fs::symlink("../dotfiles/ssh/config", home.join(".ssh/zz-config")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        linked(&bases, &names);
        assert!(kept(&home.join(".ssh")) <= MAX_ENTRIES, "{} kept of .ssh", kept(&home.join(".ssh")));
        assert_eq!(all(&bases, &names).cut_short, vec![home.join(".ssh")]);
        let said = super::super::home_hard::Kept { shared: Vec::new(), cut: all(&bases, &names).cut_short }.not_enforced();
        assert!(said[0].contains(&format!("{} holds more than", home.join(".ssh").display())), "{said:?}");
    }

    /// Where a dangling link leads, through a missing directory and a dangling link on the way;
    /// a loop and a `..` past a missing name leave the path as named.
    #[test]
    fn leads_to_follows_dangling_links_through_missing_directories() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        std::fs::create_dir(home.join("dots")).unwrap();
        std::os::unix::fs::symlink("dots/gone/.profile", home.join(".profile")).unwrap();
        std::os::unix::fs::symlink("../dots/cfg", home.join("dots/cfglink")).unwrap();
        std::os::unix::fs::symlink("dots/cfglink", home.join(".config")).unwrap();
        std::os::unix::fs::symlink("loop", home.join("loop")).unwrap();
        std::os::unix::fs::symlink("dots/gone/../x", home.join(".up")).unwrap();
        assert_eq!(leads_to(&home.join(".profile")), home.join("dots/gone/.profile"));
        assert_eq!(leads_to(&home.join(".config/git/config")), home.join("dots/cfg/git/config"));
        assert_eq!(leads_to(&home.join("loop")), home.join("loop"));
        assert_eq!(leads_to(&home.join(".up")), home.join(".up"));
        assert_eq!(leads_to(&home.join("dots")), home.join("dots"));
    }
}
