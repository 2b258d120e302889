//! Whether a group is a user private group of its owner: the group's only member is that user.
//! RHEL, Fedora and Debian make one per user (gid named as the user, no one else in it) and give
//! those users umask 002, so every directory they make is writable by that group. Writable by such
//! a group is writable by the owner alone, which the owner rule already allows (found by a review
//! of self39's fix: a checkout in ~/proj, 0775, refused the helper and the bundled bwrap in it).
//! The rule is Debian's OpenSSH's (`secure_permissions`, user-group-modes): the group's entry must
//! exist, list no one but the owner, the owner's primary group must be it, and no other user of
//! the user database may have it as primary group.

use std::ffi::CStr;
use std::sync::Mutex;

/// `getpwent`'s iteration is one per process: two threads enumerating at once would skip entries.
static ENUMERATION: Mutex<()> = Mutex::new(());

/// Whether `gid` is `uid`'s private group (see the module's words). False whenever the database
/// cannot say (no entry, a lookup that fails): the safe side, the directory is refused as before.
pub fn only_member(gid: u32, uid: u32) -> bool {
    let Some((name, primary)) = user(uid) else { return false };
    if primary != gid {
        return false;
    }
    let Some(listed) = listed_members(gid) else { return false };
    listed.iter().all(|m| *m == name) && no_other_primary(gid, uid)
}

/// `uid`'s name and primary group.
fn user(uid: u32) -> Option<(Vec<u8>, u32)> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: a plain C struct; zeroes are a valid (empty) value that getpwuid_r fills.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: valid buffers of the given length; `out` is set to `&pwd` or null.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string inside `buf`, alive here.
    Some((unsafe { CStr::from_ptr(pwd.pw_name) }.to_bytes().to_vec(), pwd.pw_gid))
}

/// The supplementary members `gid`'s group entry lists.
fn listed_members(gid: u32) -> Option<Vec<Vec<u8>>> {
    let mut buf = vec![0 as libc::c_char; 65536];
    // SAFETY: a plain C struct; zeroes are a valid (empty) value that getgrgid_r fills.
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: valid buffers of the given length; `out` is set to `&grp` or null.
    let rc = unsafe { libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || grp.gr_mem.is_null() {
        return None;
    }
    let mut members = Vec::new();
    // SAFETY: gr_mem is a null-terminated array of NUL-terminated strings inside `buf`.
    unsafe {
        let mut at = grp.gr_mem;
        while !(*at).is_null() {
            members.push(CStr::from_ptr(*at).to_bytes().to_vec());
            at = at.add(1);
        }
    }
    Some(members)
}

/// Whether no user but `uid` has `gid` as primary group, in the user database as it enumerates.
fn no_other_primary(gid: u32, uid: u32) -> bool {
    let _one = ENUMERATION.lock().unwrap_or_else(|p| p.into_inner());
    let mut alone = true;
    // SAFETY: the enumeration is serialised by ENUMERATION; each entry is read before the next call.
    unsafe {
        libc::setpwent();
        loop {
            let pw = libc::getpwent();
            if pw.is_null() {
                break;
            }
            if (*pw).pw_gid == gid && (*pw).pw_uid != uid {
                alone = false;
                break;
            }
        }
        libc::endpwent();
    }
    alone
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_entry_is_no_private_group() {
        assert!(!only_member(64127, 0), "a group with no entry");
        assert!(!only_member(0, 64127), "a user with no entry");
        // The test's own user: whatever its group is, a user whose primary group is not that
        // group is never its only member.
        // SAFETY: getegid/geteuid have no preconditions.
        let (gid, uid) = unsafe { (libc::getegid(), libc::geteuid()) };
        if user(uid).is_some_and(|(_, g)| g != gid) {
            assert!(!only_member(gid, uid));
        }
    }
}
