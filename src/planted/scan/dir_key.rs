//! A directory's key in a walk's index: its parent's key and its own name, the whole path built
//! only where one is needed (to open or `lstat` it, to report something in it). A full path per
//! directory cost the host 4.3 KB a directory for 60,000 a run made at the bottom of a chain of
//! long names, kept for later runs, in each kept area (an attacker's review: ~1.25 GB an area at
//! `MAX_DIRS`); a name each costs what the names cost.

use std::collections::hash_map::RandomState;
use std::ffi::OsStr;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Shared (`Arc`) by the listing that names it, the index that keeps it and its subdirectories' keys.
#[derive(Clone)]
pub(super) struct DirKey(pub(super) Arc<Node>);

pub(super) struct Node {
    /// `None` for a root.
    parent: Option<DirKey>,
    /// Its name; a root's whole path.
    name: Box<OsStr>,
    /// The hash of the chain (its parent's hash and its name), made once: a lookup hashes a word,
    /// not a path. Keyed per process, as std's maps are, against names chosen to collide.
    hash: u64,
}

fn seed() -> &'static RandomState {
    static SEED: OnceLock<RandomState> = OnceLock::new();
    SEED.get_or_init(RandomState::new)
}

impl DirKey {
    /// A root, by its whole path.
    pub(super) fn new(path: &Path) -> Self {
        Self::make(None, path.as_os_str())
    }

    /// `name` in `parent`.
    pub(super) fn child(parent: &DirKey, name: &OsStr) -> Self {
        Self::make(Some(parent.clone()), name)
    }

    fn make(parent: Option<DirKey>, name: &OsStr) -> Self {
        let hash = seed().hash_one((parent.as_ref().map_or(0, |p| p.0.hash), name.as_encoded_bytes()));
        DirKey(Arc::new(Node { parent, name: name.into(), hash }))
    }

    /// Its whole path (the root's path and each name below it).
    pub(super) fn to_path_buf(&self) -> PathBuf {
        let mut path = PathBuf::new();
        self.path_into(&mut path);
        path
    }

    /// Its whole path, into `path` (cleared first): a walk that `lstat`s many keeps one buffer.
    pub(super) fn path_into(&self, path: &mut PathBuf) {
        // Depth is bounded (`MAX_DEPTH`): the chain is short.
        let mut chain = Vec::with_capacity(16);
        let mut at = Some(self);
        while let Some(k) = at {
            chain.push(&*k.0.name);
            at = k.0.parent.as_ref();
        }
        path.clear();
        path.reserve(chain.iter().map(|n| n.len() + 1).sum());
        for name in chain.iter().rev() {
            path.push(name);
        }
    }

    /// Its own name (a root's whole path).
    #[cfg(test)]
    pub(super) fn name(&self) -> &OsStr {
        &self.0.name
    }

    #[cfg(test)]
    pub(super) fn parent(&self) -> Option<&DirKey> {
        self.0.parent.as_ref()
    }
}

/// The same root's path and the same names below it (the walk builds every key of a directory the
/// same way: from the root it was reached from).
impl PartialEq for DirKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || (self.0.hash == other.0.hash && self.0.name == other.0.name && self.0.parent == other.0.parent)
    }
}

impl Eq for DirKey {}

impl std::hash::Hash for DirKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.0.hash);
    }
}

impl std::fmt::Debug for DirKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.to_path_buf().fmt(f)
    }
}
