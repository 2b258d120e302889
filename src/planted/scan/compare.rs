//! What one directory looked like in a walk compared with an earlier one of the same area, for a
//! caller that looks closer at a few directories only when the walk says they changed
//! (`home_config`): the walk's word costs nothing, a listing kept is the same `Arc`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::dir_key::DirKey;
use super::index::Index;

/// A directory in a walk, against the walk before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// The walk did not list it (not walked: outside the roots, skipped, past the bound, unreadable).
    NotWalked,
    /// Its listing was kept: no entry was added, removed or renamed in it since `prior` was read.
    Kept,
    /// Read again (or not in `prior`): `before` holds the subdirectories it had in `prior`, each
    /// with its inode number (empty when `prior` had none of it).
    ReadAgain { before: Vec<(PathBuf, u64)> },
}

impl Index {
    /// How `dir` fared in this walk against `prior`.
    pub fn seen(&self, prior: &Index, dir: &Path) -> Seen {
        let Some(key) = self.key_of(dir) else { return Seen::NotWalked };
        let Some(now) = self.dirs.get(&key) else { return Seen::NotWalked };
        match prior.dirs.get(&key) {
            Some(old) if Arc::ptr_eq(&old.listing, &now.listing) => Seen::Kept,
            old => Seen::ReadAgain { before: old.map(|o| o.listing.subdirs.iter().map(|(k, ino)| (k.to_path_buf(), *ino)).collect()).unwrap_or_default() },
        }
    }

    /// The subdirectories this walk entered below `dir`, if it listed `dir`.
    pub fn subdirs(&self, dir: &Path) -> Option<Vec<PathBuf>> {
        self.dirs.get(&self.key_of(dir)?).map(|d| d.listing.subdirs.iter().map(|(k, _)| k.to_path_buf()).collect())
    }

    /// `dir`'s key in this index: the key of the root it lies in (a root's key is its whole path),
    /// then a child's key per name below it (`dir_key`: a key is its parent's and its name).
    fn key_of(&self, dir: &Path) -> Option<DirKey> {
        let root = dir.ancestors().find(|a| self.dirs.contains_key(&DirKey::new(a)))?;
        let rest = dir.strip_prefix(root).ok()?;
        Some(rest.components().fold(DirKey::new(root), |parent, c| DirKey::child(&parent, c.as_os_str())))
    }
}
