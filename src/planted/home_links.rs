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
//! On every run's path, so the listings are remembered per directory: vouched for by the
//! directory watcher (`watch`, Linux) without a system call, else by a `stat` of the directory
//! (an entry added, removed or renamed changes its times).

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
/// `names` at each home's top.
pub fn linked(bases: &Bases, names: &[String]) -> Vec<Linked> {
    found(bases, names).0
}

/// The regular files directly in those of the same paths that are real directories (`~/.ssh/config`
/// when `~/.ssh` is one), from the same listings: `home_hard` looks at each for other names.
pub fn files_in_dirs(bases: &Bases, names: &[String]) -> Vec<PathBuf> {
    found(bases, names).1
}

/// `linked` and `files_in_dirs`, remembered together.
fn found(bases: &Bases, names: &[String]) -> (Vec<Linked>, Vec<PathBuf>) {
    if let Some(w) = watch::global() {
        w.drain();
    }
    let mut guard = LISTINGS.lock().unwrap_or_else(|e| e.into_inner());
    let listings = guard.get_or_insert_with(Listings::default);
    // The last answer, while the same bases and names were asked and no directory it read
    // changed: a lock and a look-up per directory, no path built (this runs every run).
    if let Some(m) = listings.memo.as_ref().filter(|m| m.bases == *bases && m.names == names) {
        if m.read.iter().all(|d| listings.dirs.get(d).is_some_and(|l| still(d, l))) {
            return m.out.clone();
        }
    }
    listings.read.clear();
    let mut out = (Vec::new(), Vec::new());
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
            None if dangles(base) => push(&mut out.0, Linked { path: base.join(rel), dir, what }),
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
fn follow(listings: &mut Listings, base: &Path, real: &Path, rel: &str, dir: bool, what: &'static str, out: &mut (Vec<Linked>, Vec<PathBuf>)) {
    let mut at = real.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let kind = listings.kind(&at, part.as_ref());
        at.push(part);
        match kind {
            Some(Kind::Link) => return push(&mut out.0, Linked { path: base.join(rel), dir, what }),
            Some(Kind::Dir) if i + 1 == parts.len() => {
                for name in listings.named_in(&at, Kind::Link) {
                    push(&mut out.0, Linked { path: base.join(rel).join(name), dir: false, what });
                }
                let files = listings.named_in(&at, Kind::File).into_iter().map(|name| base.join(rel).join(name));
                out.1.extend(files.filter(|f| !out.1.contains(f)).collect::<Vec<_>>());
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

/// One directory's entries that are directories or symlinks, and what vouches for them.
struct Listing {
    entries: HashMap<OsString, Kind>,
    /// The directory's watch and the watcher's counter when it was read.
    watch: Option<(Watch, u64)>,
    /// Its `stat` then, when settled (changed before the current second).
    stat: Option<Stat>,
}

#[derive(Default)]
struct Listings {
    dirs: HashMap<PathBuf, Listing>,
    /// The directories consulted by the current `linked`.
    read: Vec<PathBuf>,
    memo: Option<Memo>,
}

/// `found`'s last answer and the directories it consulted.
struct Memo {
    bases: Bases,
    names: Vec<String>,
    out: (Vec<Linked>, Vec<PathBuf>),
    read: Vec<PathBuf>,
}

static LISTINGS: Mutex<Option<Listings>> = Mutex::new(None);

impl Listings {
    fn kind(&mut self, dir: &Path, name: &std::ffi::OsStr) -> Option<Kind> {
        self.listing(dir)?.entries.get(name).copied()
    }

    fn named_in(&mut self, dir: &Path, kind: Kind) -> Vec<OsString> {
        let Some(l) = self.listing(dir) else { return Vec::new() };
        let mut links: Vec<OsString> = l.entries.iter().filter(|(_, k)| **k == kind).map(|(n, _)| n.clone()).collect();
        links.sort();
        links
    }

    /// The listing of `dir`, read again unless the watcher or the `stat` rule vouches for it.
    fn listing(&mut self, dir: &Path) -> Option<&Listing> {
        if !self.read.iter().any(|d| d == dir) {
            self.read.push(dir.to_path_buf());
        }
        let fresh = self.dirs.get(dir).is_some_and(|l| still(dir, l));
        if !fresh {
            let known = self.dirs.get(dir).and_then(|l| l.watch.as_ref()).map(|(w, _)| w);
            match read(dir, known) {
                Some(l) => self.dirs.insert(dir.to_path_buf(), l),
                None => self.dirs.remove(dir),
            };
        }
        self.dirs.get(dir)
    }
}

fn still(dir: &Path, l: &Listing) -> bool {
    if let (Some(w), Some((watch, read_at))) = (watch::global(), &l.watch) {
        if w.owns(watch) {
            match w.vouch(watch, *read_at) {
                Vouch::Unchanged => return true,
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

/// List `dir` (a real directory, not followed), watched first: a change from then on is seen.
/// `known`: the watch of its last listing (the same inode's is not one more for the cap).
fn read(dir: &Path, known: Option<&Watch>) -> Option<Listing> {
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(dir).ok()?;
    let watch = watch::global().and_then(|w| {
        let (read_at, watch) = w.watch(file.as_raw_fd(), known);
        watch.map(|wt| (wt, read_at))
    });
    let meta = file.metadata().ok()?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    // Timestamps are coarse: what changed in this very second may change again unseen.
    let stat = (meta.ctime() < now && meta.mtime() < now).then(|| stat_of(&meta));
    let mut entries = HashMap::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(t) = e.file_type() else { continue };
        if t.is_symlink() {
            entries.insert(e.file_name(), Kind::Link);
        } else if t.is_dir() {
            entries.insert(e.file_name(), Kind::Dir);
        } else if t.is_file() {
            entries.insert(e.file_name(), Kind::File);
        }
    }
    Some(Listing { entries, watch, stat })
}

#[cfg(test)]
mod tests {
    use super::*;

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
