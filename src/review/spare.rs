//! Spare sets: the directories and files a new change set needs, made ahead of time while a run's
//! sandbox lives, so that beginning the next set allocates no inode on the run's path.
//!
//! Why: a new set is about eight new inodes in the store (`store::skeleton`: its directory, its
//! first root's overlay directories, `lock`, `last-used`, the metadata). Where the store's part of
//! the disk is crowded, or the disk is busy, ext4 took 0.2 to 0.6 ms per inode here (strace, under
//! a parallel build), about 3 ms of a review run's extra cost. Renaming a spare into place costs
//! one `rename`.
//!
//! A spare is `ROOT/.spare-<random>`, built as `.spare-<random>.part` and renamed when complete, so
//! a spare is always whole; `ids` never lists either (they are not ids). At most `MAX_SPARES` per
//! store; a `.part` left by a process that died is removed after an hour, and a spare nobody took
//! with the unused sets (`store::evict_now`). Spares cover one root (the usual run: its cwd); a set
//! with more roots makes the others itself.

use std::path::Path;
use std::time::Duration;

/// Spares kept ready in one store (concurrent runs may each take one).
pub const MAX_SPARES: usize = 2;
const PREFIX: &str = ".spare-";
const PARTIAL: &str = ".part";

/// The complete spares and the partial ones in a listing of the store's root (entry names).
pub fn in_listing(names: &[String]) -> (Vec<&str>, Vec<&str>) {
    let spares = names.iter().filter(|n| n.starts_with(PREFIX));
    spares.map(String::as_str).partition(|n| !n.ends_with(PARTIAL))
}

/// Take a spare as the directory `dir` (not existing yet): `true` when one was renamed there and
/// `private` says it is a private directory of this user's (else nothing was taken; a spare that is
/// not is removed).
pub fn take(root: &Path, spares: &[&str], dir: &Path, private: impl Fn(&Path) -> bool) -> bool {
    for name in spares {
        // Another process may take the same one first: then the rename finds nothing.
        if std::fs::rename(root.join(name), dir).is_err() {
            continue;
        }
        if private(dir) {
            return true;
        }
        let _ = crate::tool_caches::store::remove_tree(dir);
    }
    false
}

/// Make one spare in `root`, whose entries are `names`, with `skeleton` (`store::skeleton`: what a
/// new set is made of), unless `MAX_SPARES` are ready. Best effort: a spare is only a saving.
pub fn make(root: &Path, names: &[String], skeleton: impl Fn(&Path) -> std::io::Result<()>) {
    let (ready, partial) = in_listing(names);
    // Partial spares older than an hour: their maker died.
    remove_older(root, &partial, Duration::from_secs(3600), std::time::SystemTime::now());
    if ready.len() >= MAX_SPARES {
        return;
    }
    let name = format!("{PREFIX}{}", super::id::new().trim_start_matches("cs-"));
    let part = root.join(format!("{name}{PARTIAL}"));
    if skeleton(&part).and_then(|_| std::fs::rename(&part, root.join(&name))).is_err() {
        let _ = crate::tool_caches::store::remove_tree(&part);
    }
}

/// Remove the spares (entry names in `root`) last changed more than `age` before `now` (by their
/// ctime: `changed_at`).
pub fn remove_older(root: &Path, spares: &[&str], age: Duration, now: std::time::SystemTime) {
    for name in spares {
        let p = root.join(name);
        let made = std::fs::symlink_metadata(&p).ok().map(|m| super::changed_at::changed_at(&m));
        if made.is_some_and(|t| now.duration_since(t).is_ok_and(|a| a > age)) {
            let _ = crate::tool_caches::store::remove_tree(&p);
        }
    }
}
