//! Looking up a store to cover (`stores::to_cover`, `known_stores`), failing closed. Found by an
//! attacker's review (rfix25, chmod_apply.js): a run with the cwd at `$HOME` did `chmod 000
//! ~/.local/state` (the directories above a store are pinned against a rename, not a mode change);
//! the next plan's lookups of the host's own stores failed with EACCES and every store was dropped
//! as if missing, so that run covered none, chmodded the directory back and rewrote a pending
//! change set, whose `applyChangeSet` wrote the run's file outside its workspace.
//!
//! So a lookup that fails for anything but absence refuses the run, naming the directory and the
//! fix, unless the directory that denies the search is another user's: the run (this user, also
//! inside its user namespace, where another's inode is not mapped) can neither change its mode nor
//! pass it, and the store behind it is out of its reach as it is out of the host's.

use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};
use crate::search_blocker::hidden;

/// `p`'s canonical path; `None` when nothing is there (or a non-directory is on its way), or when
/// a directory of another user's keeps it out of this user's reach. Any other failure refuses.
pub fn lookup(p: &Path) -> Result<Option<PathBuf>> {
    let err = match crate::canonical_memo::canonicalize(p) {
        Ok(c) => return Ok(Some(c)),
        Err(e) => e,
    };
    match hidden(p, &err) {
        None => Ok(None),
        Some((why, fix)) => Err(refusal(p, &why, fix)),
    }
}

/// `lookup` of a path that names a store only as written, with no symlink at it or on its way (a
/// path `known_stores` lists, a store the run's environment names): `None` when it leads elsewhere,
/// or when its lookup fails and a symlink is at it or on its way. Found by an attacker's review
/// (cross37): a listed store whose directory was removed (a test's tool cache in a workspace's
/// `target/`, a benchmark's in `/var/tmp`) was made a symlink loop by a run there (`ln -s store
/// store`), its lookup failed with ELOOP, which no directory's mode explains, and every later run
/// of the user, in every workspace, was refused. Such a path names no store (rfix24); one that
/// fails with no link on its way (a `chmod 000` above it) still refuses.
pub fn lookup_as_named(p: &Path) -> Result<Option<PathBuf>> {
    match lookup(p) {
        Ok(found) => Ok(found.filter(|c| c == p)),
        Err(_) if crate::no_symlinks::any_link_on(p).is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The run is refused: the store cannot be covered, and a run could reach it.
fn refusal(store: &Path, why: &str, fix: String) -> SandboxError {
    SandboxError::setup_failed_for(
        format!(
            "sandspawn's state store {} cannot be looked up: {why}; an earlier sandboxed run (with the home writable) \
             may have changed it, and a store that cannot be found cannot be covered, so no run starts until it is reachable",
            store.display()
        ),
        fix,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// As root every directory is searchable: the refusal is seen by an ordinary user only (the JS
    /// test runs one as such).
    #[test]
    fn a_missing_store_is_absent_and_an_unsearchable_own_directory_refuses() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state");
        std::fs::create_dir_all(state.join("sandspawn")).unwrap();
        assert_eq!(lookup(&state.join("gone")).unwrap(), None);
        assert_eq!(lookup(&state.join("sandspawn")).unwrap(), Some(state.join("sandspawn").canonicalize().unwrap()));
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return;
        }
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o000)).unwrap();
        let got = lookup(&state.join("sandspawn"));
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
        let msg = got.unwrap_err().to_string();
        assert!(msg.contains("mode 000") && msg.contains(&format!("chmod u+rwx {}", state.display())), "{msg}");
    }
}
