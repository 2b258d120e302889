//! Whether an open descriptor is the root of its mount (a mount point, seen from above): the
//! helper's check that bwrap bound a writable root at its planned path (`planned_mounts`), and the
//! Landlock mode's grant of a mount point (`confine`). Here, not in the binary, so that a unit test
//! can reach it.

/// As `statx` says where the kernel tells it (5.8+), else by the mount `..` is on, from
/// `/proc/self/fdinfo` (a mount's root and its parent directory are on different mounts). The
/// errno on failure.
pub fn is_mount_root(fd: i32) -> Result<bool, i32> {
    mount_of(fd).map(|(_, root)| root)
}

/// The mount `fd` is on (its id, the first field of its line in `/proc/self/mountinfo`), and
/// whether `fd` is that mount's root; as `is_mount_root`.
pub fn mount_of(fd: i32) -> Result<(u64, bool), i32> {
    // SAFETY: a zeroed statx is valid to fill.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open; an empty path with AT_EMPTY_PATH names it; `stx` is writable.
    let rc = unsafe { libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_MNT_ID, &mut stx) };
    let attr = libc::STATX_ATTR_MOUNT_ROOT as u64;
    if rc == 0 && stx.stx_attributes_mask & attr != 0 && stx.stx_mask & libc::STATX_MNT_ID != 0 {
        return Ok((stx.stx_mnt_id, stx.stx_attributes & attr != 0));
    }
    let own = mount_id(fd).ok_or(libc::ENOSYS)?;
    Ok((own, by_parent(fd)?))
}

/// `is_mount_root` for a kernel whose `statx` does not tell (before 5.8).
fn by_parent(fd: i32) -> Result<bool, i32> {
    // SAFETY: `..` of a directory descriptor of the caller's.
    let up = unsafe { libc::openat(fd, c"..".as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if up < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    let ids = (mount_id(fd), mount_id(up));
    // SAFETY: our own descriptor.
    unsafe { libc::close(up) };
    match ids {
        (Some(own), Some(above)) => Ok(own != above),
        _ => Err(libc::ENOSYS),
    }
}

/// The `mnt_id` `/proc/self/fdinfo` gives for `fd`.
fn mount_id(fd: i32) -> Option<u64> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?;
    info.lines().find_map(|l| l.strip_prefix("mnt_id:")).and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_mount_s_root_is_told_from_a_directory_inside_it() {
        let inside = format!("/proc/{}/fd", std::process::id());
        for (path, root) in [("/proc", true), (inside.as_str(), false)] {
            let fd = crate::no_symlinks::open(std::path::Path::new(path), libc::O_PATH | libc::O_DIRECTORY).unwrap();
            assert_eq!(is_mount_root(fd.as_raw_fd()), Ok(root), "{path}");
            assert_eq!(by_parent(fd.as_raw_fd()), Ok(root), "{path}, by its parent's mount");
            assert_eq!(mount_of(fd.as_raw_fd()).map(|(id, _)| id).ok(), mount_id(fd.as_raw_fd()), "{path}: statx and fdinfo name one mount");
        }
    }
}
