//! A walk that need not happen: when the watcher has seen no event at all since an index was
//! made (no entry added, removed or renamed in any watched directory, no watch lost, no change of
//! the mount table), every watched listing of that index still holds, and so does what the walk
//! found. Only what no watch vouches for is checked: each root's path (the same inode) and each
//! unwatched directory (the stat rule). A run that changes no directory, and the next run after it,
//! then cost as little in a tree of 60,000 directories as in an empty one; the full walk (which
//! visits every kept directory, reading only the changed ones) is for when something changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::super::listing::Stamp;
use super::super::watch::Watcher;
use super::dir_key::DirKey;
use super::index::{DirState, Found, Index, Unlisted, WalkSpec};

/// What a walk of `spec` would find, if nothing changed since `prior`: everything (`report_all`,
/// the walk before a run) or what changed, nothing (the walk after a run). `None`: walk.
pub(super) fn findings(prior: &Index, watcher: &Arc<Watcher>, spec: &WalkSpec, report_all: bool) -> Option<Found> {
    let counter = prior.counter_at?;
    if !watcher.quiet_since(counter) || prior.dirs.is_empty() {
        return None;
    }
    let roots_there = spec.roots.iter().all(|r| prior.dirs.get(&DirKey::new(r)).is_some_and(|d| same_inode(r, d)));
    if !roots_there {
        return None;
    }
    // One buffer for every path: a run that changed nothing must cost no more in a large tree.
    let mut path = PathBuf::new();
    for key in prior.unwatched.iter() {
        let state = prior.dirs.get(key)?;
        key.path_into(&mut path);
        if !stat_rule(&path, state) {
            return None;
        }
    }
    // Nothing in them is watched: a change in or below one raises no event (nor does a `chmod` of
    // it). One whose `lstat` shows what it showed then is what the walk after a run would leave
    // out all the same (`unreadable`: judged by its ctime); one that cannot even be `lstat`ed is
    // walked to, and reported, every time.
    if !prior.unlisted.iter().all(unlisted_unchanged) {
        return None;
    }
    let checked = prior.unwatched.len() + prior.unlisted.len() + spec.roots.len();
    let totals = &prior.totals;
    Some(if report_all {
        Found { dirs_read: 0, dirs_checked: checked, ..(**totals).clone() }
    } else {
        Found { truncated: totals.truncated, unexamined: totals.unexamined.clone(), dirs_checked: checked, ..Found::default() }
    })
}

fn same_inode(path: &Path, state: &DirState) -> bool {
    path.symlink_metadata().is_ok_and(|m| {
        let now = Stamp::of(&m);
        (now.dev, now.ino) == (state.stamp.dev, state.stamp.ino)
    })
}

/// The walk's stat rule (see the module comment of `scan`).
fn stat_rule(path: &Path, state: &DirState) -> bool {
    let Ok(meta) = path.symlink_metadata() else { return false };
    meta.is_dir() && Stamp::of(&meta) == state.stamp && state.stamp.ctime.0 < state.walk_started
}

/// The same inode with the same ctime as when the walk could not list it, older than that walk.
fn unlisted_unchanged(u: &Unlisted) -> bool {
    let Some(then) = u.stamp else { return false };
    u.path.to_path_buf().symlink_metadata().is_ok_and(|m| Stamp::of(&m) == then && then.ctime.0 < u.walk_started)
}
