//! The host user's home in a directly written root, beyond the held list (`home`): a list of the
//! tools whose configuration runs code always lags (an attacker's review, rfix23b, found fourteen
//! more after fifty were added; rfix23c lxsession's `LXDE-pi/autostart`, the browsers' native
//! messaging hosts and fish's `vendor_conf.d`, each deeper than this looked then). So whatever a
//! run creates or renames into place is reported after the run when it lies
//! - in the XDG configuration directory (`~/.config`) or data directory (`~/.local/share`), up to
//!   three levels below it (`~/.config/<tool>/<dir>/*`),
//! - as a dot-entry at the home's top, or up to two levels below one of its dot-directories
//!   (`~/.mozilla/native-messaging-hosts/*`), but not in `~/.cache` (tools regenerate it all the
//!   time: reporting there would flood every run that builds anything).
//!
//! Not blocked: sandboxed tools save their own settings there. A change set holds the same back
//! (`review::home_config`).
//!
//! Cheap on warm runs: a directory is listed only when the walk after the run read it again (an
//! entry was added, removed or renamed in it); one whose listing the walk kept is not even visited
//! (`Walk::changed_only` starts from `Index::read_again`), but past the walk's bound.
//! In a directory read again, a subdirectory is new when the walk before the run did not list it
//! with the same inode (a directory's ctime moves with its content), any other entry when its
//! ctime is not older than the baseline (made, renamed into place, or written). A directory no
//! walk lists (the top of `/tmp`, which the walk skips) is listed every run, by ctime alone.
//! A file rewritten in place in a directory that took no new entry is not seen (README). Bounded:
//! past `MAX_DIRS` directories or `MAX_LISTED` entries read, the rest is said (`Found::cut`).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::listing::changed_since;
use super::scan::{Index, Seen};

/// Entries of one directory judged; past it the directory itself is reported (a run that makes a
/// hundred thousand files there costs the host no more than this).
pub const MAX_ENTRIES: usize = 10_000;
/// Directories looked at per run (those the walk read again, and those it did not list).
pub const MAX_DIRS: usize = 10_000;
/// Entries read per run, over all the directories the walk read again (or did not list).
pub const MAX_LISTED: usize = 100_000;

/// Levels of directories looked in: the XDG directories and the `<tool>` and `<tool>/<dir>` below.
const XDG_LEVELS: usize = 3;
/// A dot-directory at the home's top and the directories in it.
const DOT_DIR_LEVELS: usize = 2;
/// Not looked in (see the module comment).
const UNWATCHED: &[&str] = &[".cache"];

/// The homes and XDG configuration and data directories a directly written root holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Watched {
    pub homes: Vec<PathBuf>,
    pub config: Vec<PathBuf>,
    pub data: Vec<PathBuf>,
}

impl Watched {
    /// Those of `bases` that lie in one of `direct` (the directly written roots).
    pub fn of(bases: &super::home::Bases, direct: &[PathBuf]) -> Watched {
        let held = |p: &Path| direct.iter().any(|r| p.starts_with(r));
        let config = bases.config.iter().map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.clone()));
        let homes: Vec<PathBuf> = bases.homes.iter().filter(|h| held(h)).cloned().collect();
        let data = homes.iter().map(|h| h.join(".local/share")).collect();
        Watched { homes, config: config.filter(|c| held(c)).collect(), data }
    }
}

/// What `after_run` found: the entries made or changed, each the topmost such, and where it
/// stopped past its bounds.
#[derive(Debug, Default)]
pub struct Found {
    pub entries: Vec<PathBuf>,
    /// Where the look stopped past `MAX_DIRS` or `MAX_LISTED`.
    pub cut: Option<PathBuf>,
    /// Directories holding more than `MAX_ENTRIES` candidates: not judged entry by entry. Said
    /// apart, never as an entry made: such a directory names none of what it holds, so it neither
    /// passes for one (the home is an ancestor of sandspawn's own state, which `skip` passes over)
    /// nor stands in for the XDG directories below it (found by an attacker's review, rfix23c:
    /// 10,001 links at the home's top).
    pub unjudged: Vec<PathBuf>,
    /// Directories looked at (for tests: a warm run that changed nothing looks at next to none).
    pub looked: usize,
}

/// The entries made or changed since `since_ns` (the baseline), as above, that `skip` does not
/// rule out (held paths, reported already); `not_below`: directories not looked into (held
/// paths, sandspawn's own state).
pub fn after_run(w: &Watched, prior: &Index, now: &Index, since_ns: i64, skip: &dyn Fn(&Path) -> bool, not_below: &dyn Fn(&Path) -> bool) -> Found {
    let mut walk = Walk { prior, now, since_ns, skip, not_below, looked: HashSet::new(), reported: HashSet::new(), listed: 0, found: Found::default() };
    // Past the walk's bound directories lie in no listing, changed or not: each is looked at.
    match prior.truncated() || now.truncated() {
        true => walk.everywhere(w),
        false => {
            walk.changed_only(w);
            walk.all_node_modules(w);
        }
    }
    walk.found.entries = topmost(walk.found.entries);
    walk.found.looked = walk.looked.len();
    walk.found
}

/// The levels `everywhere` looks in at and below `dir`, and whether only its dot-entries count
/// (a home's top); `None` outside them.
fn levels_of(w: &Watched, dir: &Path) -> Option<(usize, bool)> {
    if w.homes.iter().any(|h| h == dir) {
        return Some((1, true));
    }
    let depth = |base: &Path| dir.strip_prefix(base).ok().map(|r| r.components().count());
    let xdg = w.config.iter().chain(&w.data).filter_map(|b| depth(b)).filter(|n| *n < XDG_LEVELS).map(|n| XDG_LEVELS - n);
    let dot = w.homes.iter().filter_map(|h| {
        let top = dir.strip_prefix(h).ok()?.components().next()?.as_os_str().to_os_string();
        let n = depth(h)?;
        let watched = top.as_encoded_bytes().starts_with(b".") && !UNWATCHED.iter().any(|u| top == *u);
        (watched && n <= DOT_DIR_LEVELS).then(|| DOT_DIR_LEVELS + 1 - n)
    });
    xdg.chain(dot).max().map(|l| (l, false))
}

/// `found` without those below another of them (a dot-directory's look and an XDG directory's
/// find the same new directory at two depths).
fn topmost(mut found: Vec<PathBuf>) -> Vec<PathBuf> {
    found.sort();
    found.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in found {
        if !out.last().is_some_and(|q| p.starts_with(q)) {
            out.push(p);
        }
    }
    out
}

/// One run's look (`after_run`), with its bounds.
struct Walk<'a> {
    prior: &'a Index,
    now: &'a Index,
    since_ns: i64,
    skip: &'a dyn Fn(&Path) -> bool,
    not_below: &'a dyn Fn(&Path) -> bool,
    looked: HashSet<PathBuf>,
    /// `found.entries`, asked by each ancestor of a directory (a run may make thousands).
    reported: HashSet<PathBuf>,
    listed: usize,
    found: Found,
}

impl Walk<'_> {
    /// Every directory within the levels. The XDG directories before the dot-directories holding
    /// them: a directory is looked at once, with the most levels any base gives it.
    fn everywhere(&mut self, w: &Watched) {
        for h in &w.homes {
            self.below(h, 1, true);
        }
        for base in w.config.iter().chain(&w.data) {
            self.below(base, XDG_LEVELS, false);
        }
        for d in self.dot_dirs(w) {
            self.below(&d, DOT_DIR_LEVELS, false);
        }
    }

    /// Only the directories the walk read again (`Index::read_again`), and those no walk lists
    /// (each read, and what lies below it within the levels): a listing the walk kept holds the
    /// entries it held before the run, none made, removed or renamed since, so nothing below it
    /// is new but in a directory read again. A warm run that changed nothing then looks at the
    /// bases alone, not at the 3,000 directories of a full `~/.config` (171 ms a run, against 94).
    fn changed_only(&mut self, w: &Watched) {
        let now = self.now;
        let unwalked = |d: &PathBuf| now.subdirs(d).is_none();
        for h in w.homes.iter().filter(|h| unwalked(h)) {
            self.below(h, 1, true);
        }
        for base in w.config.iter().chain(&w.data).filter(|b| unwalked(b)) {
            self.below(base, XDG_LEVELS, false);
        }
        for d in self.dot_dirs(w).into_iter().filter(unwalked) {
            self.below(&d, DOT_DIR_LEVELS, false);
        }
        // Parents first: what a directory reports as made is not looked into again.
        let mut again: Vec<(PathBuf, usize, bool)> = self.now.read_again(self.prior).into_iter().filter_map(|d| levels_of(w, &d).map(|(l, dots)| (d, l, dots))).collect();
        again.sort_by_key(|(d, _, _)| d.components().count());
        for (dir, levels, dots_only) in again {
            if self.look(&dir, dots_only) && levels > 1 {
                for s in self.subdirs(&dir).into_iter().filter(unwalked) {
                    self.below(&s, levels - 1, false);
                }
            }
        }
    }

    /// The dot-directories at the top of each home, but `UNWATCHED`.
    fn dot_dirs(&mut self, w: &Watched) -> Vec<PathBuf> {
        let dot = |d: &PathBuf| d.file_name().is_some_and(|n| n.as_encoded_bytes().starts_with(b".") && !UNWATCHED.iter().any(|u| n == *u));
        w.homes.iter().flat_map(|h| self.subdirs(h)).filter(dot).collect()
    }

    /// Looks in `dir` and, for `levels` above one, in the directories below it.
    fn below(&mut self, dir: &Path, levels: usize, dots_only: bool) {
        if levels == 0 || !self.look(dir, dots_only) {
            return;
        }
        if levels > 1 {
            for s in self.subdirs(dir) {
                self.below(&s, levels - 1, false);
            }
            self.node_modules(dir);
        }
    }

    /// Every `node_modules` within the levels, changed or not the directory holding it: one
    /// `lstat` per directory that can hold one (the bases, the `<tool>` directories in them, the
    /// dot-directories), through the walk's listings. `changed_only` visits only directories the
    /// walk read again, and a package added to an existing `node_modules` changes no listing the
    /// walk keeps (it never lists one).
    fn all_node_modules(&mut self, w: &Watched) {
        let bases: Vec<PathBuf> = w.config.iter().chain(&w.data).cloned().collect();
        for base in bases {
            self.node_modules(&base);
            for tool in self.subdirs(&base) {
                self.node_modules(&tool);
            }
        }
        for d in self.dot_dirs(w) {
            self.node_modules(&d);
        }
    }

    /// `dir/node_modules`, which the walk never lists (`scan`), so `subdirs` never gives it. Found
    /// by an attacker's review (rfix25, config_nm.js): a package a run put in an existing
    /// `~/.config/<tool>/node_modules` or `~/.<tool>/node_modules` (Node-RED's, yarn's global
    /// directory, coc's extensions: tools load them) was never reported. Its own listing only (its
    /// packages, by ctime), not what they hold, and only when an entry was added, removed or
    /// renamed in it since the baseline (its ctime): a big one costs a warm run one `lstat`.
    fn node_modules(&mut self, dir: &Path) {
        let nm = dir.join("node_modules");
        let Ok(m) = nm.symlink_metadata() else { return };
        if m.is_dir() && changed_since((m.ctime(), m.ctime_nsec()), self.since_ns) {
            self.below(&nm, 1, false);
        }
    }

    /// Lists `dir` unless the walk kept its listing; false when it is not looked at (looked at
    /// already, below what was reported or what is not looked into, past the bounds).
    fn look(&mut self, dir: &Path, dots_only: bool) -> bool {
        let reported = dir.ancestors().any(|a| self.reported.contains(a));
        if self.found.cut.is_some() || reported || (self.not_below)(dir) || self.looked.contains(dir) {
            return false;
        }
        if self.looked.len() >= MAX_DIRS || self.listed >= MAX_LISTED {
            self.found.cut = Some(dir.to_path_buf());
            return false;
        }
        self.looked.insert(dir.to_path_buf());
        let seen = self.now.seen(self.prior, dir);
        if seen != Seen::Kept {
            match new_entries(dir, &seen, self.since_ns, dots_only, &mut self.listed) {
                Some(new) => {
                    for p in new.into_iter().filter(|p| !(self.skip)(p)) {
                        self.reported.insert(p.clone());
                        self.found.entries.push(p);
                    }
                }
                None => self.found.unjudged.push(dir.to_path_buf()),
            }
        }
        true
    }

    /// The subdirectories of `dir`: the walk's, else read (counted against `MAX_LISTED`).
    fn subdirs(&mut self, dir: &Path) -> Vec<PathBuf> {
        self.now.subdirs(dir).unwrap_or_else(|| real_subdirs(dir, &mut self.listed))
    }
}

/// The entries of `dir` made or changed during the run (see the module comment); `None` past
/// `MAX_ENTRIES` candidates. Only those counted that are looked at (a dot-entry at the home's top):
/// the names alone cost what the walk after the run paid already to list the directory (each
/// read counts against `MAX_LISTED` all the same).
fn new_entries(dir: &Path, seen: &Seen, since_ns: i64, dots_only: bool, listed: &mut usize) -> Option<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Some(Vec::new()) };
    let mut out = Vec::new();
    let mut looked = 0;
    for e in entries.flatten() {
        *listed += 1;
        let name = e.file_name();
        let bytes = name.as_encoded_bytes();
        if (dots_only && !bytes.starts_with(b".")) || super::undo::is_held_aside(bytes) {
            continue;
        }
        looked += 1;
        if looked > MAX_ENTRIES {
            return None;
        }
        let Ok(m) = e.metadata() else { continue };
        let path = e.path();
        let new = match seen {
            Seen::ReadAgain { before } if m.is_dir() => !before.iter().any(|(p, ino)| *p == path && *ino == m.ino()),
            _ => changed_since((m.ctime(), m.ctime_nsec()), since_ns),
        };
        if new && !crate::placeholders::is_placeholder(&path, &m) {
            out.push(path);
        }
    }
    Some(out)
}

/// The real directories in `dir` (no walk listed it).
fn real_subdirs(dir: &Path, listed: &mut usize) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let entries: Vec<_> = entries.flatten().take(MAX_ENTRIES).collect();
    *listed += entries.len();
    entries.into_iter().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
}

/// What the host may do with such an entry, for its `hostRisks` detail.
pub fn detail(p: &Path, w: &Watched) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let place = if p.parent().is_some_and(|d| w.homes.iter().any(|h| h == d)) {
        "at the top of the host user's home"
    } else if w.config.iter().any(|c| p.starts_with(c)) {
        "in the XDG configuration directory of the host user's home"
    } else if w.data.iter().any(|d| p.starts_with(d)) {
        "in the XDG data directory of the host user's home"
    } else {
        "in a dot-directory at the top of the host user's home"
    };
    format!(
        "{name} was created or changed during the run {place}, which a writable root holds: tools read their configuration there, \
         and many run what it names when they start (an init script, a plugin, an exec line); it is not on sandspawn's list of \
         such paths and was left in place: look at it before running the tool it belongs to"
    )
}

/// For a directory `after_run` could not judge entry by entry.
pub fn unjudged_detail() -> String {
    format!(
        "holds more than {MAX_ENTRIES} entries that may be the configuration of a host tool (dot-entries at the top of the host user's \
         home, or entries in its XDG configuration or data directory or a dot-directory): those the run created or changed were not told apart and are not \
         named: look at them before running host tools"
    )
}

/// The `scan-incomplete` detail of a look cut short at `at`.
pub fn cut_detail() -> String {
    format!(
        "looking for entries a run made in the host user's home (its XDG configuration and data directories and its dot-directories) \
         stopped past {MAX_DIRS} directories or {MAX_LISTED} entries read: this directory and those after it were not looked at; \
         look at what the run made there before running host tools"
    )
}

#[cfg(test)]
#[path = "home_config_tests.rs"]
mod warm_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by an attacker's review (rfix23c): past the bound the home was returned as an entry
    /// made, which the caller passes over (an ancestor of sandspawn's own state), and which stood
    /// in for `~/.config`. Now a directory of its own, and only dot-entries count at the top.
    #[test]
    fn a_home_past_the_bound_is_said_apart_and_the_config_below_it_still_judged() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        // Under the home, not a dot-entry itself (`XDG_CONFIG_HOME=~/xdg`).
        let config = home.join("xdg");
        std::fs::create_dir(&config).unwrap();
        for i in 0..=MAX_ENTRIES {
            std::os::unix::fs::symlink("x", home.join(format!("l{i}"))).unwrap();
        }
        std::fs::write(home.join(".evilrc"), "x").unwrap();
        std::fs::create_dir(config.join("newtool")).unwrap();
        let w = Watched { homes: vec![home.clone()], config: vec![config.clone()], data: Vec::new() };
        let (none, skip, not_below) = (Index::default(), |_: &Path| false, |_: &Path| false);
        let after = after_run(&w, &none, &none, 0, &skip, &not_below);
        assert!(after.unjudged.is_empty(), "links are not dot-entries: {:?}", after.unjudged);
        assert!(after.entries.contains(&home.join(".evilrc")) && after.entries.contains(&config.join("newtool")), "{:?}", after.entries);
        for i in 0..=MAX_ENTRIES {
            std::fs::write(home.join(format!(".d{i}")), "").unwrap();
        }
        let after = after_run(&w, &none, &none, 0, &skip, &not_below);
        assert_eq!(after.unjudged, [home.clone()]);
        assert!(after.entries.contains(&config.join("newtool")), "{:?}", after.entries);
    }
}
