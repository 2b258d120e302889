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

/// What `after_run` found.
#[derive(Debug, Default)]
pub struct After {
    /// Each the topmost entry made or changed.
    pub made: Vec<PathBuf>,
    /// Directories holding more than `MAX_ENTRIES` candidates: not judged entry by entry.
    pub unjudged: Vec<PathBuf>,
}

/// The entries made or changed since `since_ns` (the baseline), as above, that `skip` does not
/// rule out (held paths, reported already). A directory past the bound is said apart, never as an
/// entry made: it names none of what it holds, so it neither passes for one (the home is an
/// ancestor of sandspawn's own state, which `skip` passes over) nor stands in for the XDG
/// directory below it (found by an attacker's review, rfix23c: 10,001 links at the home's top).
pub fn after_run(w: &Watched, prior: &Index, now: &Index, since_ns: i64, skip: &dyn Fn(&Path) -> bool) -> After {
    let mut out = After::default();
    let look = |dir: &Path, dots_only: bool, out: &mut After| {
        let seen = now.seen(prior, dir);
        if seen != Seen::Kept {
            match new_entries(dir, &seen, since_ns, dots_only) {
                Some(made) => out.made.extend(made.into_iter().filter(|p| !skip(p))),
                None => out.unjudged.push(dir.to_path_buf()),
            }
        }
    };
    for h in &w.homes {
        look(h, true, &mut out);
    }
    for c in &w.config {
        if out.made.iter().any(|f| c.starts_with(f)) || skip(c) {
            continue;
        }
        look(c, false, &mut out);
        let subdirs = now.subdirs(c).unwrap_or_else(|| real_subdirs(c));
        for s in subdirs {
            if !out.made.contains(&s) && !skip(&s) {
                look(&s, false, &mut out);
            }
        }
    }
    out
}

/// The entries of `dir` made or changed during the run (see the module comment); `None` past
/// `MAX_ENTRIES` candidates. Only those counted that are looked at (a dot-entry at the home's top):
/// the names alone cost what the walk after the run paid already to list the directory.
fn new_entries(dir: &Path, seen: &Seen, since_ns: i64, dots_only: bool) -> Option<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Some(Vec::new()) };
    let mut out = Vec::new();
    let mut looked = 0;
    for e in entries.flatten() {
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

/// For a directory `after_run` could not judge entry by entry.
pub fn unjudged_detail() -> String {
    format!(
        "holds more than {MAX_ENTRIES} entries that may be the configuration of a host tool (dot-entries at the top of the host user's \
         home, or entries in its XDG configuration directory): those the run created or changed were not told apart and are not \
         named: look at them before running host tools"
    )
}

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
        let w = Watched { homes: vec![home.clone()], config: vec![config.clone()] };
        let (none, skip) = (Index::default(), |_: &Path| false);
        let after = after_run(&w, &none, &none, 0, &skip);
        assert!(after.unjudged.is_empty(), "links are not dot-entries: {:?}", after.unjudged);
        assert!(after.made.contains(&home.join(".evilrc")) && after.made.contains(&config.join("newtool")), "{:?}", after.made);
        for i in 0..=MAX_ENTRIES {
            std::fs::write(home.join(format!(".d{i}")), "").unwrap();
        }
        let after = after_run(&w, &none, &none, 0, &skip);
        assert_eq!(after.unjudged, [home.clone()]);
        assert!(after.made.contains(&config.join("newtool")), "{:?}", after.made);
    }
}
