//! The owner access a fold needs, given to the directories that lack it. Runs leave modes of their
//! choosing in their layers: Go's module cache makes every module directory 0555 and its files
//! 0444, and a command can `chmod 000` or `chmod -x` any directory it made, its cache's mount point
//! (the layer's root) included. As root none of that matters. For any other user a fold needs:
//! read and search access to open and list a layer's directory and read its opaque marker (a
//! `user.` attribute, which needs read access); write and search access to move an entry out of
//! one directory or into another; and write access to a directory itself to move it to another
//! parent (the kernel rewrites its `..`). Without it the fold of a second `go mod download` got
//! EACCES moving the new 0555 module into the base, and the fold dropped the whole base (found by
//! a review, /work/atk/fixes17b/gomod.js).
//!
//! So the fold gives itself what it lacks for as long as it needs it (`Access`) and puts the mode
//! back, on a moved directory at its new place: whenever the fold stops, the layers and the base
//! show what they showed. What is set aside for removal keeps the access it was given (`open_up`).
//!
//! Like everything below a store's root (`dir`), modes are changed through descriptors, never by
//! a path: a directory held open gets its mode back by `fchmod` wherever it was moved, and one
//! that must be given access before it can be opened is changed by its name in its parent's
//! descriptor, never through a link (`Dir::chmod_dir`), then opened and checked to be the same.

use std::ffi::OsStr;
use std::io;
use std::os::fd::AsRawFd;

use super::dir::Dir;

/// Read, write and search: a layer's directory, listed and emptied, or moved to another parent.
pub const ALL: u32 = 0o700;
/// Write and search: a base directory entries move into.
pub const WRITE_IN: u32 = 0o300;
/// Read: what opening a directory (to hold its descriptor) takes.
const OPEN: u32 = 0o400;

fn set(dir: &Dir, mode: u32) -> io::Result<()> {
    // SAFETY: the directory's own descriptor.
    if unsafe { libc::fchmod(dir.fd().as_raw_fd(), mode as libc::mode_t) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn mode_of(st: &libc::stat) -> u32 {
    st.st_mode as u32 & 0o7777
}

/// A directory, held open, given the owner bits it lacked; when dropped it has its mode again (or
/// the one `put_back_as` named), wherever it was moved meanwhile (its descriptor goes with it).
pub struct Access {
    dir: Dir,
    /// The mode it gets back.
    mode: u32,
    /// The mode it has now.
    now: u32,
}

impl Access {
    /// `dir`, already open, with the owner bits `need` at least.
    pub fn grant(dir: &Dir, need: u32) -> io::Result<Access> {
        let was = mode_of(&dir.own_stat()?);
        let dir = dir.try_clone()?;
        if was & need != need {
            set(&dir, was | need)?;
        }
        Ok(Access { dir, mode: was, now: was | need })
    }

    /// The subdirectory `name` of `parent`, opened with the owner bits `need` at least (and read
    /// access, which opening it takes: given before it is opened).
    pub fn open(parent: &Dir, name: &OsStr, need: u32) -> io::Result<Access> {
        let need = need | OPEN;
        let (dir, was) = parent.open_granting(name, need)?;
        Ok(Access { dir, mode: was, now: was | need })
    }

    /// Leave `mode` (its permission bits) rather than the mode it had.
    pub fn put_back_as(&mut self, mode: u32) {
        self.mode = mode & 0o7777;
    }
}

impl std::ops::Deref for Access {
    type Target = Dir;

    fn deref(&self) -> &Dir {
        &self.dir
    }
}

impl Drop for Access {
    fn drop(&mut self) {
        // Failing, the directory keeps more owner access than the run left it: nothing it shows changes.
        if self.now != self.mode {
            let _ = set(&self.dir, self.mode);
        }
    }
}

/// Give the entry `name` of `parent`, if it is a directory, full owner access for good: it is about
/// to be moved to another parent and then removed whole (a layer's root, set aside), or folded as
/// a whole (a run's upper directory, whose mode no overlay shows: a mount's root shows its own
/// upper directory's).
pub fn open_up(parent: &Dir, name: impl AsRef<OsStr>) -> io::Result<()> {
    match parent.stat(name.as_ref())? {
        Some(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR && mode_of(&st) & ALL != ALL => parent.chmod_dir(name, mode_of(&st) | ALL),
        _ => Ok(()),
    }
}
