//! `SANDSPAWN_BWRAP`'s path: every entry met resolving it is checked (found by an attacker's
//! review: a link or a directory on the way that a run could write was not).

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use super::override_path::{entries_met, loose_entry, reached_through_writable};

fn names(met: &[(PathBuf, fs::Metadata)]) -> Vec<PathBuf> {
    met.iter().map(|(p, _)| p.clone()).collect()
}

#[test]
fn every_link_and_every_directory_on_the_way_is_met() {
    let t = tempfile::tempdir().unwrap();
    let top = t.path().canonicalize().unwrap();
    fs::create_dir_all(top.join("v1/bin")).unwrap();
    fs::write(top.join("v1/bin/bwrap"), "").unwrap();
    symlink("v1", top.join("current")).unwrap();
    symlink(top.join("current/bin/../bin/bwrap"), top.join("abs")).unwrap();
    let met = names(&entries_met(&top.join("abs")).unwrap());
    let expect = [top.join("abs"), top.join("current"), top.join("v1"), top.join("v1/bin"), top.join("v1/bin/bwrap")];
    for e in &expect {
        assert!(met.contains(e), "{e:?} not in {met:?}");
    }
    assert_eq!(met.last(), Some(&top.join("v1/bin/bwrap")), "{met:?}");
    assert!(met.contains(&PathBuf::from("/")) && met.iter().all(|p| p.is_absolute()));
    // A link loop is an error, not a hang.
    symlink("loop", top.join("loop")).unwrap();
    assert!(entries_met(&top.join("loop")).is_err());
    assert!(entries_met(&top.join("missing/bwrap")).is_err());
}

#[test]
fn a_loose_entry_is_named_and_a_sticky_directory_is_not_one() {
    let t = tempfile::tempdir().unwrap();
    let top = t.path().canonicalize().unwrap();
    fs::set_permissions(&top, fs::Permissions::from_mode(0o755)).unwrap();
    let file = top.join("bwrap");
    fs::write(&file, "").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
    let loose = |p: &Path| loose_entry(p, &entries_met(p).unwrap());
    // Under the system's temporary directory (sticky, everyone's): not loose for that.
    assert_eq!(loose(&file), None);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o777)).unwrap();
    assert!(loose(&file).is_some_and(|w| w.contains("writable by everyone") && w.contains("SANDSPAWN_BWRAP")));
    fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&top, fs::Permissions::from_mode(0o775)).unwrap();
    // As root, a group that has other members (or no entry) can be given; as another user the
    // tempdir's group is the user's own, which may be private (below).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&top, None, Some(64127)).unwrap();
        assert!(loose(&file).is_some_and(|w| w.contains("writable by its group")));
        std::os::unix::fs::chown(&top, None, Some(0)).unwrap();
    }
    fs::set_permissions(&top, fs::Permissions::from_mode(0o755)).unwrap();
    // A link's own mode (always 0777) is no reason.
    symlink("bwrap", top.join("link")).unwrap();
    assert_eq!(loose(&top.join("link")), None);
}

#[test]
fn an_entry_a_run_may_write_is_found_by_the_run_s_roots() {
    let t = tempfile::tempdir().unwrap();
    let top = t.path().canonicalize().unwrap();
    fs::create_dir_all(top.join("real")).unwrap();
    fs::create_dir_all(top.join("tools")).unwrap();
    fs::write(top.join("real/bwrap"), "").unwrap();
    symlink(top.join("real/bwrap"), top.join("tools/bwrap")).unwrap();
    let met = entries_met(&top.join("tools/bwrap")).unwrap();
    let tools = top.join("tools");
    assert_eq!(reached_through_writable(&met, &|p| p.starts_with(&tools)), Some(tools.as_path()), "the link's directory");
    let real = top.join("real");
    assert_eq!(reached_through_writable(&met, &|p| p.starts_with(&real)), Some(real.as_path()), "the target's");
    let other = top.join("other");
    assert_eq!(reached_through_writable(&met, &|p| p.starts_with(&other)), None);
}

#[test]
fn an_entry_in_a_shared_temporary_directory_or_a_file_with_another_name_is_refused() {
    use super::override_path::shared_or_linked;
    let why = |p: &Path| shared_or_linked(p, &entries_met(p).unwrap());
    // Under /tmp: another process's runs may write there, whatever this one's policy.
    let t = tempfile::tempdir_in("/tmp").unwrap();
    let file = t.path().canonicalize().unwrap().join("bwrap");
    fs::write(&file, "").unwrap();
    assert!(why(&file).is_some_and(|w| w.contains("shared temporary directory /tmp") && w.contains("SANDSPAWN_BWRAP")));
    // Outside the temporary directories: one name is fine, a second (a hard link) is not.
    let t = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let file = t.path().canonicalize().unwrap().join("bwrap");
    fs::write(&file, "").unwrap();
    assert_eq!(why(&file), None);
    fs::hard_link(&file, t.path().join("other-name")).unwrap();
    assert!(why(&file).is_some_and(|w| w.contains("2 hard links")), "{:?}", why(&file));
}

/// Found by a review of self39's fix: a directory on the way writable by its group was refused
/// whatever the group, and with a user private group (RHEL, Fedora and Debian give each user one,
/// with umask 002: every directory the user makes is 0775) that group is the owner alone: a
/// checkout in ~/proj made the helper and the bundled bwrap unusable, every run refused. A group
/// whose only member is the entry's owner (its primary group, named by no one else) is no other
/// user; one with another member, or no entry in the group database, still is.
#[test]
fn a_directory_writable_by_its_owner_s_private_group_is_not_loose() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return; // only root can give a directory a group whose membership the test knows
    }
    let t = tempfile::tempdir().unwrap();
    let top = t.path().canonicalize().unwrap();
    let file = top.join("bwrap");
    fs::write(&file, "").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&top, fs::Permissions::from_mode(0o775)).unwrap();
    let loose = |p: &Path| loose_entry(p, &entries_met(p).unwrap());
    let root_alone = super::private_group::only_member(0, 0);
    std::os::unix::fs::chown(&top, Some(0), Some(0)).unwrap();
    if root_alone {
        assert_eq!(loose(&file), None, "root's group holds root alone here");
    }
    std::os::unix::fs::chown(&top, Some(0), Some(64127)).unwrap();
    assert!(loose(&file).is_some_and(|w| w.contains("writable by its group")), "a group with no entry");
    std::os::unix::fs::chown(&top, Some(0), Some(0)).unwrap();
    // Everyone's write stays loose whatever the group.
    fs::set_permissions(&top, fs::Permissions::from_mode(0o777)).unwrap();
    assert!(loose(&file).is_some_and(|w| w.contains("writable by everyone")));
    fs::set_permissions(&top, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Found by an attacker's review of that rule (rev40): with a POSIX ACL the group bits are its
/// mask, so a 0755 directory given user:64127:rwx reads as 0775 of the owner's private group, and
/// uid 64127 could rename entries in it. Such a directory is loose, named with the ACL's user; the
/// same directory without the named entry is not.
#[cfg(target_os = "linux")]
#[test]
fn an_acl_naming_another_writer_is_loose_behind_the_private_group() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !super::private_group::only_member(0, 0) {
        return; // the private group the mask hides behind must be one here
    }
    let t = tempfile::tempdir().unwrap();
    let top = t.path().canonicalize().unwrap();
    let file = top.join("bwrap");
    fs::write(&file, "").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&top, Some(0), Some(0)).unwrap();
    let set_acl = |named: Option<u32>| {
        let mut acl = 2u32.to_le_bytes().to_vec();
        let mut entries = vec![(1u16, 7u16, u32::MAX), (4, 5, u32::MAX), (0x10, 7, u32::MAX), (0x20, 5, u32::MAX)];
        if let Some(uid) = named {
            entries.insert(1, (2, 7, uid));
        }
        for (tag, perm, id) in entries {
            acl.extend(tag.to_le_bytes().iter().chain(&perm.to_le_bytes()).chain(&id.to_le_bytes()));
        }
        let p = std::ffi::CString::new(top.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: NUL-terminated path and name, a buffer of the given length.
        unsafe { libc::setxattr(p.as_ptr(), c"system.posix_acl_access".as_ptr(), acl.as_ptr().cast(), acl.len(), 0) }
    };
    if set_acl(Some(64127)) != 0 {
        return; // no ACLs on this filesystem
    }
    assert_eq!(fs::metadata(&top).unwrap().permissions().mode() & 0o777, 0o775, "the mask shows as the group bits");
    let loose = |p: &Path| loose_entry(p, &entries_met(p).unwrap());
    assert!(loose(&file).is_some_and(|w| w.contains("writable by uid 64127 through its ACL")), "{:?}", loose(&file));
    assert_eq!(set_acl(None), 0);
    assert_eq!(loose(&file), None, "the owner's group alone, through the ACL's group entry");
}
