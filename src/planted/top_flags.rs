//! A directory's inode flags (`lsattr -d`), for `opened_tops` to compare before and after a run.
//! `FS_IOC_SETFLAGS` asks only the owner and a writable mount, and ext4 passes some flags on to
//! every file and directory made in the directory afterwards: a run that set nodump and sync on
//! the workspace's top (`chattr +dS .`) left them for every name the host's tools made there, which
//! backups honouring nodump (`dump`, `borg --exclude-nodump`) skip and whose writes wait for the
//! disk, with hostRisks [] (found by an attacker's review, kern44). Linux only.

use std::path::Path;

/// The flags reported when a run turns them on, each with `chattr`'s letter: the ones ext4 passes
/// on to new names that a user may set (`FS_SYNC_FL`, `FS_NODUMP_FL`, `FS_NOATIME_FL`,
/// `FS_DIRSYNC_FL`), and btrfs's no-copy-on-write and compression, passed on there too. The
/// append-only and immutable flags need a capability the command never has.
pub const REPORTED: [(u32, char); 6] = [(0x8, 'S'), (0x40, 'd'), (0x80, 'A'), (0x1_0000, 'D'), (0x80_0000, 'C'), (0x4, 'c')];

/// `path`'s inode flags, `None` where they cannot be read (not a directory any more, a filesystem
/// without them): an open without following a final link and one `ioctl`.
#[cfg(target_os = "linux")]
pub fn of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let dir = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok()?;
    // FS_IOC_GETFLAGS (`_IOR('f', 1, long)` on both 64-bit targets); the kernel writes an int.
    const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
    let mut flags: libc::c_int = 0;
    // SAFETY: an open descriptor and a pointer to an int the kernel writes.
    let done = unsafe { libc::ioctl(dir.as_raw_fd(), FS_IOC_GETFLAGS as _, &mut flags) };
    (done == 0).then_some(flags as u32)
}

#[cfg(not(target_os = "linux"))]
pub fn of(_path: &Path) -> Option<u32> {
    None
}

/// The reported flags set in `now` that were not in `was`, as `chattr` letters (`""`: none).
pub fn turned_on(was: Option<u32>, now: Option<u32>) -> String {
    let (Some(was), Some(now)) = (was, now) else { return String::new() };
    REPORTED.iter().filter(|(bit, _)| now & bit != 0 && was & bit == 0).map(|(_, letter)| *letter).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reported_flags_turned_on_are_named() {
        assert_eq!(turned_on(Some(0x80000), Some(0x80000 | 0x8 | 0x40)), "Sd");
        assert_eq!(turned_on(Some(0x48), Some(0x48)), "", "already there before the run");
        assert_eq!(turned_on(Some(0x48), Some(0)), "", "turned off");
        assert_eq!(turned_on(None, Some(0x48)), "", "not read before");
        assert_eq!(turned_on(Some(0), Some(0x10)), "", "immutable is not the command's to set, and not listed");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_or_a_missing_name_has_no_flags_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert_eq!(of(&file), None);
        assert_eq!(of(&dir.path().join("missing")), None);
    }
}
