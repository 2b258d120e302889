//! Filesystems mounted below a directory the sandbox overlays. The kernel refuses an overlay
//! mounted in a user namespace whose lower directory has mounts below it that came from a more
//! privileged mount namespace: they are locked there, and the overlay, which shows a layer without
//! its submounts, would uncover what they hide (`clone_private_mount`'s `has_locked_children`,
//! Linux's fix for CVE-2021-3732, backported to every kernel that mounts overlayfs in a user
//! namespace). Both of sandspawn's overlays met it (found by an attacker's review, mode39): with a
//! tmpfs or a bind mount at `ws/mnt` every review-mode run failed setup with "mounting the reviewed
//! workspace's overlay over WS failed: Invalid argument", and with one below `~/.cache` (a
//! container's volume at `~/.cache/pip`) every default workspace-write run failed the same way on
//! the private tool cache's overlay. Callers ask before they plan such an overlay.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The host process's mount points and their filesystem types (`/proc/self/mountinfo`, whose
/// mount points are the paths bwrap binds); empty when it cannot be read (the overlay's own mount
/// then fails as before, with its own error).
pub fn table() -> Vec<(PathBuf, String)> {
    match crate::whole_file::read("/proc/self/mountinfo", crate::whole_file::MOUNT_TABLE) {
        Ok(t) => parse(&t),
        Err(_) => Vec::new(),
    }
}

/// `mountinfo` text as `table` gives it.
pub fn parse(mountinfo: &[u8]) -> Vec<(PathBuf, String)> {
    let all = sandspawn_helper::mountinfo::points_and_types(mountinfo).into_iter();
    all.map(|(at, t)| (Path::new(OsStr::from_bytes(&at)).to_path_buf(), t)).collect()
}

/// The first mount of `table` strictly below `dir` (one at `dir` itself does not count), and its type.
pub fn first_below<'a>(dir: &Path, table: &'a [(PathBuf, String)]) -> Option<(&'a Path, &'a str)> {
    table.iter().find(|(at, _)| at != dir && at.starts_with(dir)).map(|(at, t)| (at.as_path(), t.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[u8] = b"22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
        90 22 0:50 / /work/ws/mnt rw,relatime shared:40 - tmpfs none rw\n\
        91 22 252:0 /data /work/wsx rw,relatime shared:1 - ext4 /dev/vda rw\n\
        92 22 0:51 / /work/other\\040dir/sub rw - tmpfs none rw\n";

    #[test]
    fn only_mounts_strictly_below_count() {
        let t = parse(TABLE);
        assert_eq!(first_below(Path::new("/work/ws"), &t), Some((Path::new("/work/ws/mnt"), "tmpfs")));
        assert_eq!(first_below(Path::new("/work/other dir"), &t), Some((Path::new("/work/other dir/sub"), "tmpfs")), "an escaped name");
        assert_eq!(first_below(Path::new("/work/wsx"), &t), None, "its own mount, and /work/ws beside it by name");
        assert_eq!(first_below(Path::new("/work/ws/mnt"), &t), None, "the mount itself");
        assert_eq!(first_below(Path::new("/elsewhere"), &t), None);
        assert!(first_below(Path::new("/"), &t).is_some());
    }
}
