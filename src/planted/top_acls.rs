//! A directory's POSIX ACLs (its access ACL and its default ACL), as raw bytes, for
//! `opened_tops` to compare before and after a run. The mode bits do not show every ACL: a default
//! ACL (`setfacl -d -m o::rwx .`) leaves the directory's own mode as it was and opens each name
//! made in it afterwards to other users (the umask is not applied under one: a host-made
//! `node_modules` 0757, an `.envrc` 0646), and a named user's entry on a 0775 directory keeps its
//! mode (found by an attacker's review, rfix31, of mode31's opened tops). Linux only: macOS's
//! ACLs (`chmod +a`) are not read here.

use std::path::Path;

/// The access ACL's and the default ACL's bytes (empty where there is none).
pub type Acls = [Vec<u8>; 2];

#[cfg(target_os = "linux")]
const NAMES: [&std::ffi::CStr; 2] = [c"system.posix_acl_access", c"system.posix_acl_default"];

/// `path`'s ACLs, without following a final link: two `lgetxattr` calls where there is none.
#[cfg(target_os = "linux")]
pub fn of(path: &Path) -> Acls {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return Acls::default() };
    NAMES.map(|name| one(&c_path, name))
}

/// What an ACL that exists and cannot be read is taken as (no ACL's bytes begin so): not as none,
/// which a run could then set unseen.
#[cfg(target_os = "linux")]
const UNREAD: &[u8] = b"unread";

/// One ACL's bytes: empty where there is none (or the filesystem keeps none); read again at its
/// size where it is longer than the first 4 KiB (an ACL is 4 bytes and 8 an entry: ext4 keeps one
/// within a block, but tmpfs, XFS and btrfs take up to 64 KiB, and one read as none there let a
/// run's default ACL of 4,836 bytes on a tmpfs workspace's top go unreported: found by an
/// attacker's review, fix32); `UNREAD` where it cannot be read.
#[cfg(target_os = "linux")]
fn one(path: &std::ffi::CStr, name: &std::ffi::CStr) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    // Grown at most twice: an ACL set again between the size asked and the read may have grown.
    for _ in 0..3 {
        // SAFETY: both strings are NUL-terminated and `buf` is as long as said.
        let n = unsafe { libc::lgetxattr(path.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if let Ok(n) = usize::try_from(n) {
            buf.truncate(n);
            return buf;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENODATA | libc::EOPNOTSUPP) => return Vec::new(),
            Some(libc::ERANGE) => {}
            _ => return UNREAD.to_vec(),
        }
        // SAFETY: as above; a null buffer of size 0 asks for the value's size.
        let size = unsafe { libc::lgetxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) };
        match usize::try_from(size) {
            Ok(size) if size > 0 => buf = vec![0u8; size],
            _ => return UNREAD.to_vec(),
        }
    }
    UNREAD.to_vec()
}

#[cfg(not(target_os = "linux"))]
pub fn of(_path: &Path) -> Acls {
    Acls::default()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_default_acl_is_seen_where_the_mode_says_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let before = super::of(dir.path());
        let acl: Vec<u8> = [2u32.to_le_bytes().to_vec(), [(0x01u16, 7u16), (0x04, 5), (0x20, 7)].iter().flat_map(|(t, p)| [t.to_le_bytes().to_vec(), p.to_le_bytes().to_vec(), u32::MAX.to_le_bytes().to_vec()].concat()).collect()].concat();
        let c_path = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
        // SAFETY: NUL-terminated strings, `acl` as long as said.
        let set = unsafe { libc::lsetxattr(c_path.as_ptr(), c"system.posix_acl_default".as_ptr(), acl.as_ptr().cast(), acl.len(), 0) };
        if set != 0 {
            return; // no ACLs on this filesystem
        }
        let after = super::of(dir.path());
        assert_ne!(before, after);
        assert!(after[0].is_empty() && !after[1].is_empty());
    }
}
