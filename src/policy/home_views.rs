//! A writable root that shows the host user's home through another mount of its filesystem. The
//! home's protections (shell startup files, the global git configuration, editors' settings: see
//! `planted::home`) are kept read-only where a root holds the home by its name; through another
//! name nothing kept them. Found by an attacker's review (revd40): with `/home` bound from
//! `/data/home` (or on btrfs the filesystem's top mounted beside the `home` subvolume) and the cwd
//! `/data`, a default workspace-write run appended `[core] fsmonitor = /x` to the home's
//! `.config/git/config` there, unreported: the host's next `git status` runs `/x`.
//!
//! Judged as `tree_identity` judges a system tree reached through a bind mount, with the home as
//! the tree, except that a root showing only a place below the home (a project reached by another
//! name) is fine: it holds none of the home's own files. Whose home: the host process's `HOME` and
//! the user database's (`planted::home`'s two). A home of `/` is left out (every root would show it).
//!
//! Cost per spawn: the two homes' canonical paths, one `statx` per home and per root, over the
//! mount table the other checks have read already (`MountTable`).

use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};

use super::kernel_fs::MountTable;
use super::tree_identity::Trees;
use super::WritableRoot;

/// Refuses the first of `roots` that shows a home whole through another mount.
pub(super) fn refuse_roots_showing_home(roots: &[WritableRoot], cwd: &Path, mounts: &MountTable) -> Result<()> {
    if roots.is_empty() {
        return Ok(());
    }
    let mut homes = crate::planted::home::host_homes();
    homes.retain(|h| h != Path::new("/"));
    if homes.is_empty() {
        return Ok(());
    }
    let trees: Vec<(PathBuf, Vec<PathBuf>)> = homes.iter().map(|h| (h.clone(), Vec::new())).collect();
    let found = Trees::find(&trees, mounts.bytes("to find the home reached through another mount")?);
    for r in roots {
        let Some(i) = found.shown_whole_from(&r.root) else { continue };
        let option = if r.root == cwd { "cwd" } else { "sandbox.writableRoots" };
        return Err(SandboxError::invalid(
            option,
            format!(
                "writable root {} shows the home {} through another mount of its filesystem (a bind mount, or a btrfs top beside \
                 its subvolume): the home's shell startup files and git configuration are protected by the home's own name only, \
                 so a run could plant code the host runs later; give a directory inside the home (or one that does not hold it), \
                 or use mode 'read-only'",
                r.root.display(),
                homes[i].display()
            ),
        ));
    }
    Ok(())
}
