//! The owner access a fold needs, given to the directories that lack it. Runs leave modes of their
//! choosing in their layers: Go's module cache makes every module directory 0555 and its files
//! 0444, and a command can `chmod 000` or `chmod -x` any directory it made, its cache's mount point
//! (the layer's root) included. As root none of that matters. For any other user a fold needs:
//! read and search access to list a layer's directory and read its opaque marker (a `user.`
//! attribute, which needs read access); write and search access to move an entry out of one
//! directory or into another; and write access to a directory itself to move it to another
//! parent (the kernel rewrites its `..`). Without it the fold of a second `go mod download` got
//! EACCES moving the new 0555 module into the base, and the fold dropped the whole base (found by
//! a review, /work/atk/fixes17b/gomod.js).
//!
//! So the fold gives itself what it lacks for as long as it needs it (`Access`) and puts the mode
//! back, on a moved directory at its new place: whenever the fold stops, the layers and the base
//! show what they showed. What is set aside for removal keeps the access it was given (`open_up`).
//!
//! Modes are changed by path, after `symlink_metadata` found a directory there: folds run under
//! the cache's exclusive lock, and no sandbox reaches the store (bwrap covers it, the Landlock mode
//! keeps it read-only), so nothing swaps a directory of it for a link meanwhile.

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Read, write and search: a layer's directory, listed and emptied, or moved to another parent.
pub const ALL: u32 = 0o700;
/// Write and search: a base directory entries move into.
pub const WRITE_IN: u32 = 0o300;

fn mode(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

fn set(dir: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
}

/// A directory given the owner bits it lacked; when dropped it has its mode again (or the one
/// `put_back_as` named), where it is then (`moved_to`).
pub struct Access {
    path: PathBuf,
    /// The mode it gets back.
    mode: u32,
    /// The mode it has now.
    now: u32,
}

impl Access {
    /// `dir` (`meta` its `symlink_metadata`, a directory) with the owner bits `need` at least.
    pub fn grant(dir: &Path, meta: &Metadata, need: u32) -> io::Result<Access> {
        let was = mode(meta);
        if was & need != need {
            set(dir, was | need)?;
        }
        Ok(Access { path: dir.to_path_buf(), mode: was, now: was | need })
    }

    /// The directory was renamed to `to`: its mode is put back there.
    pub fn moved_to(&mut self, to: &Path) {
        self.path = to.to_path_buf();
    }

    /// Leave `mode` (its permission bits) rather than the mode it had.
    pub fn put_back_as(&mut self, mode: u32) {
        self.mode = mode & 0o7777;
    }
}

impl Drop for Access {
    fn drop(&mut self) {
        // Failing, the directory keeps more owner access than the run left it: nothing it shows changes.
        if self.now != self.mode {
            let _ = set(&self.path, self.mode);
        }
    }
}

/// Give `dir`, if it is a directory, full owner access for good: it is about to be moved to another
/// parent and then removed whole (a layer's root, set aside), or folded as a whole (a run's upper
/// directory, whose mode no overlay shows: a mount's root shows its own upper directory's).
pub fn open_up(dir: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.is_dir() && mode(&meta) & ALL != ALL {
        set(dir, mode(&meta) | ALL)?;
    }
    Ok(())
}
