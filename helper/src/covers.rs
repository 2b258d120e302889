//! The covers over the placeholders of missing protected names, mounted inside the sandbox: an
//! empty read-only directory over each directory placeholder, an empty read-only file over each
//! file placeholder (see the addon's `plan::mount_targets` for the placeholders themselves).
//!
//! Why here and not in bwrap: every bwrap bind or remount rereads the whole mount table (about
//! 0.17 ms each here), and a repository-rich workspace has dozens of placeholders. The helper mounts
//! one read-only source per kind and binds it over the rest: a bind clones the source mount's flags,
//! read-only included, so each further placeholder costs one `mount`. Runs while the helper still
//! holds the capabilities bwrap kept for it (`--cap-add`), before `disable_userns_and_drop_caps`.
//!
//! Each target is opened with `O_PATH | O_NOFOLLOW` and checked to be what its placeholder is, and
//! the mount goes onto that descriptor (`/proc/self/fd/N`): a placeholder replaced by a symlink is
//! refused, never followed.


use std::path::{Path, PathBuf};

use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::{c, mount, Kind, Target};
use crate::{describe, last_errno};

/// The flags every cover ends up with.
const COVER_FLAGS: libc::c_ulong = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;

/// Where the empty file all file covers show is made: the sandbox's own `/dev/shm` tmpfs (`/dev`
/// itself is read-only by then). It is unlinked once every cover is bound, so the command finds no
/// trace of it.
const SCRATCH_FILE: &str = "/dev/shm/.sandspawn-cover";

/// Cover every directory placeholder in `dirs` and every file placeholder in `files`.
pub fn cover(dirs: &[PathBuf], files: &[PathBuf]) -> Result<(), Failure> {
    if let Some((first, rest)) = dirs.split_first() {
        // An empty tmpfs, read-only from the start: `mkdir` inside reports a read-only file system.
        let t = Target::open(first, Kind::Dir, "the placeholder")?;
        let (tmpfs, mode) = (c("tmpfs")?, c("mode=0555")?);
        mount(Some(&tmpfs), &t.proc_path(), Some(&tmpfs), COVER_FLAGS, Some(&mode), &format!("covering the placeholder {}", first.display()))?;
        bind_rest(first, true, rest)?;
    }
    if let Some((first, rest)) = files.split_first() {
        let scratch = c(SCRATCH_FILE)?;
        // SAFETY: a valid C string; the descriptor is closed at once.
        let fd = unsafe { libc::open(scratch.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC, 0o444) };
        if fd < 0 {
            let e = last_errno();
            return Err(setup(e, format!("creating the empty file for the placeholders ({SCRATCH_FILE}) failed: {}", describe(e))));
        }
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
        let bound = Target::open(first, Kind::File, "the placeholder").and_then(|t| {
            mount(Some(&scratch), &t.proc_path(), None, libc::MS_BIND, None, &format!("covering the placeholder {}", first.display()))?;
            // The mount now at `first`, made read-only.
            let root = Target::open(first, Kind::File, "the placeholder")?;
            mount(None, &root.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | COVER_FLAGS, None, &format!("making the cover of {} read-only", first.display()))?;
            // Before the name goes: a file with no name left cannot be the source of a bind.
            bind_rest(first, false, rest)
        });
        // SAFETY: a valid C string. The mounts keep the file; its name goes either way.
        unsafe { libc::unlink(scratch.as_ptr()) };
        bound?;
    }
    Ok(())
}

/// `dirs` and those of `if_there` that are still directories: one gone (`ENOENT`), or no longer a
/// directory (`ENOTDIR`: it, or a directory on its way, replaced by a file or a symlink, which no
/// cover follows), holds no store to protect and is passed over; any other error fails as a
/// placeholder's would.
pub fn with_those_there(dirs: &[PathBuf], if_there: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = dirs.to_vec();
    for p in if_there {
        match Target::open(p, Kind::Dir, "the store") {
            Ok(_) => out.push(p.clone()),
            Err(f) if f.errno == libc::ENOENT || f.errno == libc::ENOTDIR => {}
            Err(f) => return Err(f),
        }
    }
    Ok(out)
}

/// Bind the read-only cover now at `first` over each of `rest` (the clone keeps its flags).
fn bind_rest(first: &Path, dirs: bool, rest: &[PathBuf]) -> Result<(), Failure> {
    // Open (and kept open) while its `/proc/self/fd` path is the source of the binds.
    let kind = if dirs { Kind::Dir } else { Kind::File };
    let source = Target::open(first, kind, "the placeholder")?;
    let from = source.proc_path();
    for p in rest {
        let t = Target::open(p, kind, "the placeholder")?;
        mount(Some(&from), &t.proc_path(), None, libc::MS_BIND, None, &format!("covering the placeholder {}", p.display()))?;
    }
    Ok(())
}

