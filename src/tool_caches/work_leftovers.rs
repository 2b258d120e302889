//! What overlayfs leaves in a cache slot's work directory after a run, removed by name. A volatile
//! overlay's unmount leaves `work/work/incompat/volatile/dirty` (each directory mode 000, `dirty` an
//! empty file), and removing it with the general walk (`remove_tree::remove_dir_at`: each directory
//! checked for its mount, given owner access, listed and climbed back from) took ~90 system calls a
//! cache, ~180 a workspace-write run with the two default caches (perf42, perf43). Here it is 13:
//! each directory opened beneath the one before (`openat2`: no symlink, no other mount), given
//! owner access through that descriptor, and the four names removed from the inside out.
//!
//! Anything else found (another entry, a link, a mount point, a kernel without `openat2` or
//! `fchmodat2`) stops this, and the caller removes what is left with the general walk, as before.
//! Never weaker than that walk: a mode is changed only through a descriptor of a directory opened
//! beneath the work directory (a directory has no other names, so no host file is reached through a
//! hard link), every removal is relative to a directory held open, a directory is removed only
//! when empty, and `dirty` is removed only as a non-directory (a link itself, never its target).

use std::os::fd::OwnedFd;

/// Remove overlayfs's leftovers from the work directory `work`; false when they were not exactly
/// those (or could not be removed this way): the caller then removes `work/work` by the walk.
pub fn remove(work: &OwnedFd) -> bool {
    #[cfg(target_os = "linux")]
    return linux::remove(work).is_some();
    #[cfg(not(target_os = "linux"))]
    {
        let _ = work;
        false
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CStr;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// `fchmodat2` (Linux 6.6): the same number on every architecture (the unified table).
    const SYS_FCHMODAT2: libc::c_long = 452;
    /// The directories, outermost first, and the marker file in the last.
    const CHAIN: [&CStr; 3] = [c"work", c"incompat", c"volatile"];
    const MARKER: &CStr = c"dirty";

    pub(super) fn remove(work: &OwnedFd) -> Option<()> {
        let mut held: Vec<OwnedFd> = Vec::with_capacity(CHAIN.len());
        for name in CHAIN {
            let parent = held.last().map_or(work.as_raw_fd(), |d| d.as_raw_fd());
            let dir = open_beneath(parent, name)?;
            owner_access(&dir)?;
            held.push(dir);
        }
        unlink(held.last()?, MARKER, 0)?;
        for i in (0..CHAIN.len()).rev() {
            let parent = if i == 0 { work } else { &held[i - 1] };
            unlink(parent, CHAIN[i], libc::AT_REMOVEDIR)?;
        }
        Some(())
    }

    /// The directory `name` in `dir`, as an `O_PATH` descriptor: no symlink at it or on its way,
    /// not another mount (`RESOLVE_NO_XDEV`: `remove_tree::same_mount`'s refusal, which the walk
    /// then meets and reports as before).
    fn open_beneath(dir: i32, name: &CStr) -> Option<OwnedFd> {
        #[repr(C)]
        struct OpenHow {
            flags: u64,
            mode: u64,
            resolve: u64,
        }
        let how = OpenHow {
            flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
            mode: 0,
            resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS | libc::RESOLVE_NO_XDEV,
        };
        // SAFETY: openat2 with a valid descriptor, C string and an `open_how` of the size passed.
        let fd = unsafe { libc::syscall(libc::SYS_openat2, dir, name.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>()) };
        // SAFETY: a descriptor just opened, owned by nobody else.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }

    /// Mode 0700 for the directory `dir` holds (overlayfs made it 000), through that descriptor.
    fn owner_access(dir: &OwnedFd) -> Option<()> {
        // SAFETY: a valid descriptor and an empty C string (AT_EMPTY_PATH: the descriptor's own file).
        let rc = unsafe { libc::syscall(SYS_FCHMODAT2, dir.as_raw_fd(), c"".as_ptr(), 0o700 as libc::c_uint, libc::AT_EMPTY_PATH) };
        (rc == 0).then_some(())
    }

    fn unlink(dir: &OwnedFd, name: &CStr, flags: libc::c_int) -> Option<()> {
        // SAFETY: a valid descriptor and C string.
        (unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } == 0).then_some(())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    fn work_dir() -> (tempfile::TempDir, OwnedFdDir) {
        let t = tempfile::tempdir().unwrap();
        let work = t.path().join("w");
        std::fs::create_dir(&work).unwrap();
        let fd = std::fs::File::open(&work).unwrap().into();
        (t, OwnedFdDir { path: work, fd })
    }

    struct OwnedFdDir {
        path: std::path::PathBuf,
        fd: std::os::fd::OwnedFd,
    }

    /// What overlayfs leaves, every mode 000 as it makes them.
    fn leftovers(work: &std::path::Path) {
        let v = work.join("work/incompat/volatile");
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(v.join("dirty"), "").unwrap();
        for d in [v.join("dirty"), v.clone(), work.join("work/incompat"), work.join("work")] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0)).unwrap();
        }
    }

    /// The usual leftovers go by name; the work directory is left empty.
    #[test]
    fn overlayfs_leftovers_are_removed_by_name() {
        let (_t, w) = work_dir();
        leftovers(&w.path);
        assert!(super::remove(&w.fd));
        assert_eq!(std::fs::read_dir(&w.path).unwrap().count(), 0);
    }

    /// Anything else there stops it with nothing outside the work directory touched: a link in the
    /// chain, another entry, a directory where the marker is, nothing at all. What stays is for the walk.
    #[test]
    fn anything_else_is_left_for_the_walk() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o750)).unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;

        let (_t, w) = work_dir();
        std::fs::create_dir(w.path.join("work")).unwrap();
        std::os::unix::fs::symlink(outside.path(), w.path.join("work/incompat")).unwrap();
        assert!(!super::remove(&w.fd), "a link in the chain");
        assert_eq!(mode(outside.path()), 0o750, "its target's mode untouched");

        let (_t, w) = work_dir();
        leftovers(&w.path);
        std::fs::set_permissions(w.path.join("work"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(w.path.join("work/other"), "x").unwrap();
        assert!(!super::remove(&w.fd), "another entry");
        assert!(w.path.join("work/other").exists());

        let (_t, w) = work_dir();
        std::fs::create_dir_all(w.path.join("work/incompat/volatile/dirty/x")).unwrap();
        assert!(!super::remove(&w.fd), "a directory at the marker");
        assert!(w.path.join("work/incompat/volatile/dirty/x").exists());

        let (_t, w) = work_dir();
        assert!(!super::remove(&w.fd), "nothing there");
    }
}
