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

    /// The directories this walk read whose listing is not `prior`'s (`Seen::ReadAgain`), and those
    /// it could not list: what a caller that follows only changes must look at. None when this is
    /// `prior` itself (the watcher heard nothing: no walk).
    pub fn read_again(&self, prior: &Index) -> Vec<PathBuf> {
        if Arc::ptr_eq(&self.dirs, &prior.dirs) && Arc::ptr_eq(&self.unlisted, &prior.unlisted) {
            return Vec::new();
        }
        let same = |k: &DirKey, now: &Arc<_>| prior.dirs.get(k).is_some_and(|old| Arc::ptr_eq(&old.listing, now));
        let read = self.dirs.iter().filter(|(k, d)| !same(k, &d.listing)).map(|(k, _)| k.to_path_buf());
        read.chain(self.unlisted.iter().map(|u| u.path.to_path_buf())).collect()
    }

    /// Whether the walk stopped at its bound (directories past it are in no listing).
    pub fn truncated(&self) -> bool {
        self.totals.truncated
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
