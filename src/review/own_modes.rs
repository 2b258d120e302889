//! The owner's bits of a change set store's own directories and files, given back before the store
//! is used. Found by an attacker's review (fix29, store29): they are the user's own and the
//! Landlock mode does not govern modes, so its command (which reads the whole state directory)
//! could `chmod 0` a pending set's directory, and the set was "no change set" (its continuation and
//! apply refused, as if discarded), or `chmod 0` its `meta.json`, or `chmod 0` `change-sets` itself,
//! and no set could be made. Each entry is given its bits back through a handle opened with no
//! symlink on the way, only if it is this user's entry of the kind the store keeps there
//! (`sandspawn_helper::own_mode`); a set's `roots/N/upper` is the set's own content (its mode is the
//! workspace root's, which a run may change) and is left as it is. A directory others may write is
//! still refused where it is opened (`store::check_private`).

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::Path;

use sandspawn_helper::own_mode::{give_back_all, give_back_at, Kind};

/// The store's root `root` given the owner's bits back (from its parent's descriptor), and, with
/// `id`, that set's directory and what the store keeps in it. Best effort: what cannot be given
/// back fails where it is opened, as it did.
pub fn give_back(root: &Path, id: Option<&str>) {
    let Some(root_fd) = open_given_back(root) else { return };
    let Some(id) = id else { return };
    let Some(set) = open_child(&root_fd, id) else { return };
    give_back_all(&set, &[(c"meta.json", Kind::File, 0o600), (c"last-used", Kind::File, 0o600), (c"roots", Kind::Dir, 0o700)]);
    let Some(roots) = open_child(&set, "roots") else { return };
    for name in crate::dir_names::names(&roots).unwrap_or_default() {
        if name.to_bytes().iter().all(u8::is_ascii_digit) {
            let _ = give_back_at(&roots, &name, Kind::Dir, 0o700);
            if let Ok(root) = crate::no_symlinks::open_at(std::os::fd::AsRawFd::as_raw_fd(&roots), &name) {
                let _ = give_back_at(&root, c"work", Kind::Dir, 0o700);
            }
        }
    }
}

/// The directory `dir` opened with no symlink on its path, given the owner's bits back first.
fn open_given_back(dir: &Path) -> Option<OwnedFd> {
    crate::state_dir::give_back_if_taken(dir, &std::fs::symlink_metadata(dir).ok()?);
    crate::no_symlinks::open_dir(dir).ok()
}

/// The subdirectory `name` of `dir`, given the owner's bits back first, never through a symlink.
fn open_child(dir: &OwnedFd, name: &str) -> Option<OwnedFd> {
    let name = CString::new(name).ok()?;
    let _ = give_back_at(dir, &name, Kind::Dir, 0o700);
    crate::no_symlinks::open_at(std::os::fd::AsRawFd::as_raw_fd(dir), &name).ok()
}
