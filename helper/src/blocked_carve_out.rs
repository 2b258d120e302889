//! Whether a carve-out the helper cannot look up (EACCES) may be left alone: it lies behind a
//! directory the sandbox may not search, which the host's walk went through because it runs as
//! root (the sandbox's root maps the host's root alone: a directory another user owns, mode 0700,
//! shuts it out, and the command, with no more rights, cannot reach what lies behind it either).
//!
//! Not otherwise (found by an attacker's review, fix33): a run in the same workspace that, between
//! another run's plan and its helper's setup, made a directory on the way a link to a directory the
//! sandbox cannot search (`/root`, for a user other than root), then put it back, had the helper
//! take the EACCES as "nothing to protect" and skip every carve-out below it; that run's command
//! then wrote a hook into a repository's `.git`, `hostRisks: []`. So the EACCES is taken as a
//! change since the plan (the runner plans again) when:
//! - a symlink lies on the way: the plan's paths are canonical, so one there now was made since,
//!   and may lead anywhere;
//! - the host's user is not root: its walk ran with the credentials this process has (the sandbox
//!   only adds capabilities to them), so what it went through, the helper can go through.
//!
//! Left: a root host whose writable root holds a directory another user owns and may alone enter
//! (a container's data directory); a run can rename it onto another's path for the moment of that
//! run's setup (README).

use std::path::Path;

/// Whether `path`, which the helper's lookup refused with EACCES, may be as the plan met it.
pub fn as_planned(path: &Path) -> bool {
    host_user_is_root() && !changed_on_the_way(path)
}

/// Whether a directory on the way to `path` (not `path` itself, opened without following a link
/// at the end) is now a symlink or gone; looked at from `/` down until one cannot be searched.
fn changed_on_the_way(path: &Path) -> bool {
    let mut ways: Vec<&Path> = path.ancestors().skip(1).collect();
    ways.reverse();
    for dir in ways {
        match dir.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => return true,
            Ok(_) => {}
            // Below a directory the helper cannot search: a real one (it was no link above).
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => return false,
            Err(_) => return true,
        }
    }
    false
}

/// Whether the user outside the sandbox's user namespace is root (this process's uid maps to 0).
/// A map that cannot be read counts as not root: the EACCES is then taken as a change.
fn host_user_is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let Ok(map) = std::fs::read_to_string("/proc/self/uid_map") else { return false };
    sandspawn_helper::id_map::outside_of(&map, uid) == Some(0)
}
