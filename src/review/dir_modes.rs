//! An entry's mode in a change set, judged before it lands (`Judge::judge`). Found by an
//! attacker's review: `chmod 777 .` in a review run was listed and landed with no host risk, and
//! the host's workspace became writable by every local user, who could then replace its `.git`,
//! `.envrc` or anything in it; a run's `chmod 000 .` landed too, locking the user out of it. A
//! later review: `chmod 1777 .` (the sticky bit stops replacing what others own, not creating new
//! names such as `.envrc`) and `chmod 666 Makefile` (every user could rewrite the build) landed.
//!
//! - **Opened to others**: a directory or regular file given write for others, or write for the
//!   group that the host's entry did not have, sticky bit or not. For an entry the host does not
//!   have yet, only other write counts: a new entry's group bit follows the user's umask (`002`
//!   with a group of one's own), which the run inherits.
//! - **The owner locked out**: the root's mode taking read, search or write from its owner.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::changes::{Change, ChangeKind, EntryType};
use crate::planted::{HostRisk, RiskKind};

const GROUP_OR_OTHER_WRITE: u32 = 0o022;
const GROUP_WRITE: u32 = 0o020;
const OWNER: u32 = 0o700;

/// The risk of `change`'s mode (a directory's or a regular file's) against what the host has at
/// it below `root` now.
pub fn risk(root: &Path, change: &Change) -> Option<HostRisk> {
    let dir = match change.entry_type {
        EntryType::Directory => true,
        EntryType::File => false,
        EntryType::Symlink => return None,
    };
    if change.kind == ChangeKind::Deleted {
        return None;
    }
    let mode = change.mode?;
    let at_root = change.rel.as_os_str().is_empty();
    let path = if at_root { root.to_path_buf() } else { root.join(&change.rel) };
    // The host's entry of the same type; another type there is replaced, as a new entry.
    let host = path.symlink_metadata().ok().filter(|m| if dir { m.is_dir() } else { m.is_file() }).map(|m| m.mode() & 0o7777);
    let was_open = host.map_or(GROUP_WRITE, |h| h & GROUP_OR_OTHER_WRITE);
    let detail = if mode & GROUP_OR_OTHER_WRITE & !was_open != 0 {
        if dir {
            format!("the change set makes this directory writable by other users (mode {mode:04o}): after apply any of them could create new names in it (an .envrc, hooks), and without the sticky bit remove or replace what is in it (its .git)")
        } else {
            format!("the change set makes this file writable by other users (mode {mode:04o}): after apply any of them could rewrite it (a build script, a Makefile)")
        }
    } else if at_root && host.unwrap_or(OWNER) & OWNER & !mode != 0 {
        format!("the change set takes read, search or write permission on the workspace root from its owner (mode {mode:04o}): after apply its user could not use the workspace")
    } else {
        return None;
    };
    Some(HostRisk { path: super::changes::shown(&path), kind: RiskKind::PermissionsChanged, detail })
}
