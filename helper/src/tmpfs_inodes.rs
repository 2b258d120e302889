//! The inode bound of the sandbox's memory-backed filesystems (its `/dev/shm`, a private `/tmp`).
//!
//! bwrap mounts them as tmpfs bounded in bytes (`--size`) and has no flag for their inodes, so the
//! kernel's default applies: half the host's pages, millions. An empty file takes no data block,
//! but its inode, dentry and name take about 1 KiB of kernel memory the byte cap does not count:
//! a million of them filled 1.2 GB of the host's slab behind a "512 MiB" `/dev/shm`. The helper
//! remounts each with `nr_inodes` (hard links count too), keeping the flags bwrap gave the mount.

use sandspawn_helper::protocol::TmpfsInodes;
use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::{c, mount, Kind, Target};

/// Remount the tmpfs at `t.path` with at most `t.inodes` inodes, and check that it took.
pub fn bound(t: &TmpfsInodes) -> Result<(), Failure> {
    let what = format!("bounding the inodes of {}", t.path);
    // The root of the mount itself, never a symlink's target (bwrap made it; nothing ran since).
    let target = Target::open(&t.path, Kind::Dir, "the memory-backed filesystem")?;
    let (fs_type, _) = stat(&target, &what)?;
    if fs_type != libc::TMPFS_MAGIC as i64 {
        return Err(setup(libc::EINVAL, format!("{what} failed: it is not the tmpfs bwrap mounted there")));
    }
    // bwrap's tmpfs is writable: nothing lost by leaving read-only out.
    let flags = target.mount_flags(&t.path)?;
    let data = c(&format!("nr_inodes={}", t.inodes))?;
    mount(None, &target.proc_path(), None, libc::MS_REMOUNT | flags, Some(&data), &what)?;
    let (_, files) = stat(&target, &what)?;
    if files != t.inodes {
        return Err(setup(0, format!("{what} failed: it holds {files} inodes after the remount, not {}", t.inodes)));
    }
    Ok(())
}

/// The filesystem's type and its inode count.
fn stat(target: &Target, what: &str) -> Result<(i64, u64), Failure> {
    let st = target.statfs(what)?;
    Ok((st.f_type as i64, st.f_files as u64))
}
