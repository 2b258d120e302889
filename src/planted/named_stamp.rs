//! When a report-only name (`.bundle`, `.tool-versions`, a user's `reportedNames`) last changed,
//! for the check after the run (`detect::changed_in_place`): a file's own ctime, which no command
//! can set back; for a directory, the newest ctime of everything in it as well. A directory's own
//! ctime moves only when an entry is added, removed or renamed, so a file rewritten in place
//! inside it (`.bundle/config` pointed at another Gemfile, which Bundler then loads as Ruby) left
//! it as it was, and the run was not reported (found by an attacker's review).
//!
//! Bounded: at most `MAX_ENTRIES` entries are looked at per directory, and `MAX_TOTAL` for all of a
//! run's (a run that made a thousand `.bundle` directories would otherwise make every later run
//! look at millions of entries); a symlink is stamped with its target too (`of`). A directory
//! with more (gems installed into `.bundle` by `bundle install --path .bundle`), past the total,
//! or one this process cannot list whole, gets a stamp marked incomplete, which the check reports
//! as not examined rather than as unchanged.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::policy::procfs::Followed;

/// Entries looked at per named directory, before and after each run.
pub const MAX_ENTRIES: usize = 4096;
/// Entries looked at for all of a run's named directories together, before and after it.
pub const MAX_TOTAL: usize = 16_384;

/// What is left of `MAX_TOTAL` for one walk over a run's named entries.
pub struct Budget(usize);

impl Default for Budget {
    fn default() -> Self {
        Budget(MAX_TOTAL)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The newest ctime, `(seconds, nanoseconds)`, of the entry and, for a directory, all it holds.
    pub newest: (i64, i64),
    /// Every entry was looked at (always, for a file).
    pub complete: bool,
}

/// The stamp of `path`, whose `lstat` is `meta`, looking at no more entries than `budget` has left.
/// A symlink (the name itself, or an entry inside a named directory) is stamped with what it leads
/// to as well, as the kernel resolves it: the host's tools read the name through it, so a run that
/// rewrote the file a `.python-version` or `.bundle/config` link leads to, elsewhere in the
/// workspace, changed what they read (found by a review of this module's first version, which
/// followed no link). A directory reached through a link is walked as one, within the same bounds.
/// A link whose way goes through a magic link of /proc, or ends on procfs, leaves the stamp
/// incomplete: what it leads to depends on the process following it (`.python-version ->
/// /proc/self/cwd/../shared/pv` is pyenv's cwd's, not this process's; found by an attacker's review).
pub fn of(path: &Path, meta: &std::fs::Metadata, budget: &mut Budget) -> Stamp {
    let mut stamp = Stamp { newest: (meta.ctime(), meta.ctime_nsec()), complete: true };
    let Some(meta) = stamp_target(path, meta, &mut stamp) else { return stamp };
    if !meta.is_dir() {
        return stamp;
    }
    let (mut pending, mut seen): (Vec<PathBuf>, usize) = (vec![path.to_path_buf()], 0);
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            stamp.complete = false;
            continue;
        };
        for entry in entries {
            seen += 1;
            let within = seen <= MAX_ENTRIES && budget.0 > 0;
            budget.0 = budget.0.saturating_sub(1);
            // `DirEntry::metadata` does not follow a symlink.
            let Some(m) = within.then(|| entry.and_then(|e| e.metadata().map(|m| (e.path(), m)))) else {
                stamp.complete = false;
                return stamp;
            };
            let Ok((p, m)) = m else {
                stamp.complete = false;
                continue;
            };
            stamp.newest = stamp.newest.max((m.ctime(), m.ctime_nsec()));
            if stamp_target(&p, &m, &mut stamp).is_some_and(|m| m.is_dir()) {
                pending.push(p);
            }
        }
    }
    stamp
}

/// What `path` (`meta` its `lstat`) leads to, its ctime added to `stamp`: itself, or a symlink's
/// target (`None` when it leads nowhere now: a dangling link has only its own stamp; or through
/// /proc, where the stamp is incomplete).
fn stamp_target(path: &Path, meta: &std::fs::Metadata, stamp: &mut Stamp) -> Option<std::fs::Metadata> {
    if !meta.file_type().is_symlink() {
        return Some(meta.clone());
    }
    let target = match crate::policy::path_walk::follow(path) {
        Followed::To(target) => target,
        Followed::Nowhere => return None,
        Followed::Unjudged => {
            stamp.complete = false;
            return None;
        }
    };
    stamp.newest = stamp.newest.max((target.ctime(), target.ctime_nsec()));
    Some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(p: &Path) -> Stamp {
        of(p, &p.symlink_metadata().unwrap(), &mut Budget::default())
    }

    #[test]
    fn a_file_rewritten_in_place_deep_in_a_directory_changes_its_stamp() {
        let t = tempfile::tempdir().unwrap();
        let bundle = t.path().join(".bundle");
        std::fs::create_dir_all(bundle.join("plugin")).unwrap();
        std::fs::write(bundle.join("config"), "BUNDLE_PATH: vendor\n").unwrap();
        std::fs::write(bundle.join("plugin/index"), "x").unwrap();
        let own = |p: &Path| p.symlink_metadata().map(|m| (m.ctime(), m.ctime_nsec())).unwrap();
        let (before, own_before) = (stamp(&bundle), own(&bundle));
        assert!(before.complete);
        std::thread::sleep(std::time::Duration::from_millis(20));
        // Truncate and write: the same inode, the directory's own ctime untouched.
        std::fs::write(bundle.join("plugin/index"), "y").unwrap();
        assert_eq!(own(&bundle), own_before, "what the check compared before");
        let after = stamp(&bundle);
        assert!(after.newest > before.newest, "{before:?} {after:?}");
    }

    /// Found by a review: `.python-version -> shared/pv` and `.bundle/config -> ../shared/bcfg`
    /// (and `.bundle -> shared/b`): the target rewritten, the link's own ctime unchanged.
    #[test]
    fn a_link_s_target_rewritten_changes_its_stamp() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        std::fs::create_dir_all(w.join("shared/b")).unwrap();
        std::fs::create_dir(w.join(".bundle")).unwrap();
        for f in ["shared/pv", "shared/bcfg", "shared/b/config"] {
            std::fs::write(w.join(f), "orig\n").unwrap();
        }
        std::os::unix::fs::symlink("shared/pv", w.join(".python-version")).unwrap();
        std::os::unix::fs::symlink("../shared/bcfg", w.join(".bundle/config")).unwrap();
        std::os::unix::fs::symlink("shared/b", w.join("linked-bundle")).unwrap();
        std::os::unix::fs::symlink("missing", w.join(".tool-versions")).unwrap();
        let names = [".python-version", ".bundle", "linked-bundle", ".tool-versions"];
        let before: Vec<Stamp> = names.iter().map(|n| stamp(&w.join(n))).collect();
        std::thread::sleep(std::time::Duration::from_millis(20));
        for f in ["shared/pv", "shared/bcfg", "shared/b/config"] {
            std::fs::write(w.join(f), "changed\n").unwrap();
        }
        std::fs::write(w.join("missing"), "made\n").unwrap();
        for (n, b) in names.iter().zip(before) {
            let after = stamp(&w.join(n));
            assert!(after.newest > b.newest && after.complete, "{n}: {b:?} {after:?}");
        }
        std::os::unix::fs::symlink(".", w.join("shared/b/loop")).unwrap();
        // Ends: each level is one more link on the way, and the kernel follows 40 at most.
        let looped = stamp(&w.join("linked-bundle"));
        assert!(looped.newest > (0, 0));
    }

    /// Found by an attacker's review: `.python-version -> /proc/self/cwd/...` was stamped by what
    /// this process's cwd leads to, not what pyenv's does. Through /proc, or onto it: incomplete.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_link_through_proc_is_incomplete() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path().canonicalize().unwrap();
        std::fs::write(w.join("pv"), "3.12\n").unwrap();
        std::fs::create_dir(w.join(".bundle")).unwrap();
        let ups = "../".repeat(w.components().count());
        std::os::unix::fs::symlink(format!("/proc/self/cwd/{ups}{}", w.join("pv").display()), w.join(".python-version")).unwrap();
        std::os::unix::fs::symlink("/proc/self/environ", w.join(".tool-versions")).unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd", w.join(".bundle/config")).unwrap();
        for n in [".python-version", ".tool-versions", ".bundle"] {
            assert!(!stamp(&w.join(n)).complete, "{n}");
        }
        std::os::unix::fs::symlink("pv", w.join(".node-version")).unwrap();
        assert!(stamp(&w.join(".node-version")).complete);
    }

    #[test]
    fn a_directory_past_the_bound_is_incomplete() {
        let t = tempfile::tempdir().unwrap();
        let big = t.path().join("big");
        std::fs::create_dir(&big).unwrap();
        for i in 0..=MAX_ENTRIES {
            std::fs::File::create(big.join(i.to_string())).unwrap();
        }
        assert!(!stamp(&big).complete);
        std::fs::remove_file(big.join("0")).unwrap();
        assert!(stamp(&big).complete, "exactly the bound is looked at whole");
        let mut spent = Budget(MAX_ENTRIES + 1);
        assert!(of(&big, &big.symlink_metadata().unwrap(), &mut spent).complete);
        assert!(!of(&big, &big.symlink_metadata().unwrap(), &mut spent).complete, "the total is shared");
        let file = t.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(stamp(&file).complete);
    }
}
