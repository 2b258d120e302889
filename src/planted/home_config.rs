//! The host user's home in a directly written root, beyond the held list (`home`): a list of the
//! tools whose configuration runs code always lags (an attacker's review, rfix23b, found fourteen
//! more after fifty were added). So whatever a run creates or renames into place directly in the
//! XDG configuration directory (`~/.config/*`), one level below it (`~/.config/<tool>/*`), or as
//! a dot-entry at the home's top is reported after the run. Not blocked: sandboxed tools save
//! their own settings there. A change set holds the same back (`review::risks`).
//!
//! Cheap on warm runs: a directory is listed only when the walk after the run read it again (an
//! entry was added, removed or renamed in it); one whose listing the walk kept is not looked at.
//! In a directory read again, a subdirectory is new when the walk before the run did not list it
//! with the same inode (a directory's ctime moves with its content), any other entry when its
//! ctime is not older than the baseline (made, renamed into place, or written). A directory no
//! walk lists (the top of `/tmp`, which the walk skips) is listed every run, by ctime alone.
//! A file rewritten in place in a directory that took no new entry is not seen (README).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::listing::changed_since;
use super::scan::{Index, Seen};

/// Entries of one directory judged; past it the directory itself is reported (a run that makes a
/// hundred thousand files there costs the host no more than this).
pub const MAX_ENTRIES: usize = 10_000;

/// The homes and XDG configuration directories a directly written root holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Watched {
    pub homes: Vec<PathBuf>,
    pub config: Vec<PathBuf>,
}

impl Watched {
    /// Those of `bases` that lie in one of `direct` (the directly written roots).
    pub fn of(bases: &super::home::Bases, direct: &[PathBuf]) -> Watched {
        let held = |p: &Path| direct.iter().any(|r| p.starts_with(r));
        let config = bases.config.iter().map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.clone()));
        Watched { homes: bases.homes.iter().filter(|h| held(h)).cloned().collect(), config: config.filter(|c| held(c)).collect() }
    }
}

/// The entries made or changed since `since_ns` (the baseline), as above, that `skip` does not
/// rule out (held paths, reported already): each the topmost such entry.
pub fn after_run(w: &Watched, prior: &Index, now: &Index, since_ns: i64, skip: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let look = |dir: &Path, dots_only: bool, found: &mut Vec<PathBuf>| {
        let seen = now.seen(prior, dir);
        if seen != Seen::Kept {
            found.extend(new_entries(dir, &seen, since_ns, dots_only).into_iter().filter(|p| !skip(p)));
        }
    };
    for h in &w.homes {
        look(h, true, &mut found);
    }
    for c in &w.config {
        if found.iter().any(|f| c.starts_with(f)) || skip(c) {
            continue;
        }
        look(c, false, &mut found);
        let subdirs = now.subdirs(c).unwrap_or_else(|| real_subdirs(c));
        for s in subdirs {
            if !found.contains(&s) && !skip(&s) {
                look(&s, false, &mut found);
            }
        }
    }
    found
}

/// The entries of `dir` made or changed during the run (see the module comment).
fn new_entries(dir: &Path, seen: &Seen, since_ns: i64, dots_only: bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for (n, e) in entries.flatten().enumerate() {
        if n >= MAX_ENTRIES {
            return vec![dir.to_path_buf()];
        }
        let name = e.file_name();
        let bytes = name.as_encoded_bytes();
        if (dots_only && !bytes.starts_with(b".")) || super::undo::is_held_aside(bytes) {
            continue;
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
    out
}

/// The real directories in `dir` (no walk listed it).
fn real_subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().take(MAX_ENTRIES).filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
}

/// What the host may do with such an entry, for its `hostRisks` detail.
pub fn detail(p: &Path, w: &Watched) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let place = if p.parent().is_some_and(|d| w.homes.iter().any(|h| h == d)) { "at the top of the host user's home" } else { "in the XDG configuration directory of the host user's home" };
    format!(
        "{name} was created or changed during the run {place}, which a writable root holds: tools read their configuration there, \
         and many run what it names when they start (an init script, a plugin, an exec line); it is not on sandspawn's list of \
         such paths and was left in place: look at it before running the tool it belongs to"
    )
}
