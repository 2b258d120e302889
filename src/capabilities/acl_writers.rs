//! Who besides an entry's owner and owning group may write it through its POSIX access ACL.
//!
//! With an ACL that names users or groups, the mode's group bits show the ACL's mask, not the
//! owning group's permissions: `setfacl -m u:bob:rwx dir` on a 0755 directory makes it read as
//! 0775, and bob may create, rename and replace its entries. The private-group rule (a directory
//! writable by its owner's private group is no other user's, revd39) took that for the owner's
//! group alone, so a helper in such a directory ran, and bob could swap it between its check and
//! its exec (found by an attacker's review, rev40). Only a group-writable mode can hide such a
//! writer: without the mask's write bit no named entry may write.

#[cfg(target_os = "linux")]
use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

#[cfg(target_os = "linux")]
const NAME: &[u8] = b"system.posix_acl_access\0";
const HEADER_VERSION: u32 = 2;
/// `ACL_USER` and `ACL_GROUP` (`linux/posix_acl.h`): entries naming a user or a group.
const NAMED_USER: u16 = 0x02;
const NAMED_GROUP: u16 = 0x08;
const WRITE: u16 = 0x02;

/// The first user or group `p`'s access ACL lets write (besides its owner and owning group), as
/// `uid N` or `gid N`; `None` when it has no ACL or none such. An ACL that cannot be read (an
/// error other than "none", a layout not known) is named as such: the safe side, refused.
#[cfg(target_os = "linux")]
pub fn other_writer(p: &Path) -> Option<String> {
    let Ok(path) = CString::new(p.as_os_str().as_bytes()) else { return Some("an ACL that cannot be read".into()) };
    let mut buf = vec![0u8; 4096];
    // SAFETY: a NUL-terminated path and name; `buf` is valid for its length. lgetxattr does not
    // follow a final symlink (a link has no ACL; its directory is checked on its own).
    let n = unsafe { libc::lgetxattr(path.as_ptr(), NAME.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error();
        // No ACL, or a filesystem that has none: the mode says it all.
        return (!matches!(errno, Some(libc::ENODATA) | Some(libc::EOPNOTSUPP))).then(|| "an ACL that cannot be read".into());
    }
    named_writer(&buf[..n as usize])
}

/// Elsewhere (macOS) sandspawn runs none of its own programs by path: nothing is read.
#[cfg(not(target_os = "linux"))]
pub fn other_writer(_: &Path) -> Option<String> {
    None
}

/// `other_writer` on the xattr's bytes: a little-endian version word, then entries of tag (u16),
/// permissions (u16) and id (u32).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn named_writer(acl: &[u8]) -> Option<String> {
    let unreadable = || Some("an ACL that cannot be read".to_string());
    if acl.len() < 4 || (acl.len() - 4) % 8 != 0 || u32::from_le_bytes([acl[0], acl[1], acl[2], acl[3]]) != HEADER_VERSION {
        return unreadable();
    }
    acl[4..].chunks_exact(8).find_map(|e| {
        let tag = u16::from_le_bytes([e[0], e[1]]);
        let perm = u16::from_le_bytes([e[2], e[3]]);
        let id = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
        match tag {
            NAMED_USER if perm & WRITE != 0 => Some(format!("uid {id}")),
            NAMED_GROUP if perm & WRITE != 0 => Some(format!("gid {id}")),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::named_writer;

    fn acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
        let mut b = 2u32.to_le_bytes().to_vec();
        for (tag, perm, id) in entries {
            b.extend(tag.to_le_bytes());
            b.extend(perm.to_le_bytes());
            b.extend(id.to_le_bytes());
        }
        b
    }

    #[test]
    fn a_named_user_or_group_with_write_is_named_and_the_base_entries_are_not() {
        let base = [(0x01, 7, u32::MAX), (0x04, 7, u32::MAX), (0x10, 7, u32::MAX), (0x20, 5, u32::MAX)];
        assert_eq!(named_writer(&acl(&base)), None, "owner, owning group, mask, other");
        let mut user = base.to_vec();
        user.insert(1, (0x02, 7, 64127));
        assert_eq!(named_writer(&acl(&user)).as_deref(), Some("uid 64127"));
        let mut group = base.to_vec();
        group.insert(2, (0x08, 2, 64128));
        assert_eq!(named_writer(&acl(&group)).as_deref(), Some("gid 64128"));
        let mut reader = base.to_vec();
        reader.insert(1, (0x02, 5, 64127));
        assert_eq!(named_writer(&acl(&reader)), None, "a named reader writes nothing");
        assert!(named_writer(&[1, 0, 0, 0]).is_some(), "another version is not read as none");
        assert!(named_writer(&acl(&base)[..7]).is_some(), "a cut entry is not read as none");
    }
}
