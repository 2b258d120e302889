//! `fstatat` of a name in an open directory, never following a symlink: the one unsafe call behind
//! the addon's descriptor-relative walks (the planted-configuration listing, tree removal, the
//! review's host tree, the run-directory sweep) and the placeholders both sides remove.

use std::ffi::CStr;
use std::os::fd::RawFd;

/// The entry `name` in the open directory `dir`, not following a symlink.
pub fn stat_at(dir: RawFd, name: &CStr) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value for fstatat to overwrite; the caller's
    // descriptor, a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_symlink_is_the_link_and_a_missing_name_an_error() {
        let d = std::fs::File::open("/proc/self").unwrap();
        let st = stat_at(d.as_raw_fd(), c"exe").unwrap();
        assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFLNK);
        assert_eq!(stat_at(d.as_raw_fd(), c"none").unwrap_err().kind(), std::io::ErrorKind::NotFound);
    }
}
