//! Placeholders on the host, owned here: the mount points a plan another program runs
//! (`buildSandboxCommand`) needs for missing read-only paths, which the helper in front of bwrap creates and holds (see
//! `sandspawn_helper::placeholder`), and their cleanup, which the runner does after its own runs.
//!
//! The runner's own runs make none: a placeholder is visible as the user's data while it exists
//! (`git status`, `git add -A`, `npm pack`, `tar`, `ls -A`), so what a run creates at such a path
//! is moved aside after it instead (`planted::undo`).

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sandspawn_helper::placeholder;

use crate::policy::MissingReadOnly;

/// The placeholders by the directory they are made in, each as its name there and its kind (the
/// runner locks and fills each directory once; so does the helper for a plan another program runs).
pub fn by_directory<'a>(targets: impl IntoIterator<Item = &'a MissingReadOnly>) -> BTreeMap<&'a Path, Vec<(&'a OsStr, placeholder::Kind)>> {
    let mut by_dir: BTreeMap<&Path, Vec<(&OsStr, placeholder::Kind)>> = BTreeMap::new();
    for t in targets {
        let (Some(dir), Some(name)) = (t.path.parent(), t.path.file_name()) else { continue };
        by_dir.entry(dir).or_default().push((name, t.kind.into()));
    }
    by_dir
}

/// Remove the placeholders at these paths that no sandbox uses any more: left by a plan another
/// program ran (`buildSandboxCommand`), or by a run of an earlier version that was killed. Only
/// under the directory's exclusive lock, taken without waiting, and only when no sandbox of such a
/// plan holds the directory (its bwrap's `--lock-file`): removing a placeholder a sandbox has
/// mounted over would detach the cover there.
pub fn remove_leftovers(targets: &[MissingReadOnly]) {
    for (dir, names) in by_directory(targets) {
        let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else { continue };
        let Ok(fd) = placeholder::lock(&c, libc::LOCK_EX | libc::LOCK_NB, false) else { continue };
        if placeholder::locked_by_a_sandbox(&fd) {
            continue;
        }
        for (name, kind) in names {
            if let Ok(name) = CString::new(name.as_bytes()) {
                placeholder::remove_if_placeholder(&fd, &name, kind);
            }
        }
    }
}

/// Whether the entry at `path` (`meta` its `lstat`) is a placeholder of a plan another program
/// runs, or one left by a killed run: the placeholder's mode and nothing in it. Any user's: a shared
/// `/tmp` holds other users' plans. The mode alone proves nothing, since a command can give its own
/// `.git` mode 1500 after filling it; empty, a placeholder holds nothing a host tool would read.
pub fn is_placeholder(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    if meta.is_file() {
        return meta.len() == 0 && mode == placeholder::FILE_MODE;
    }
    meta.is_dir() && mode == placeholder::DIR_MODE && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PlaceholderKind;
    use std::os::unix::io::OwnedFd;
    use std::os::unix::fs::PermissionsExt;

    fn target(p: &Path, kind: PlaceholderKind) -> Vec<MissingReadOnly> {
        vec![MissingReadOnly { path: p.to_path_buf(), kind }]
    }

    fn c(p: &Path) -> CString {
        CString::new(p.as_os_str().as_bytes()).unwrap()
    }

    /// What the helper in front of bwrap does for a plan another program runs: lock the directory
    /// shared and create the placeholder.
    fn plan_holds(dir: &Path, name: &str, kind: placeholder::Kind) -> OwnedFd {
        let fd = placeholder::lock(&c(dir), libc::LOCK_SH, false).unwrap();
        placeholder::create(&fd, &CString::new(name).unwrap(), kind);
        fd
    }

    #[test]
    fn leftovers_are_removed_once_nobody_holds_them() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        let held = plan_holds(t.path(), ".git", placeholder::Kind::Dir);
        assert!(is_placeholder(&git, &git.symlink_metadata().unwrap()));
        remove_leftovers(&target(&git, PlaceholderKind::Dir));
        assert!(git.exists(), "kept while the plan's helper holds the directory");
        drop(held);
        remove_leftovers(&target(&git, PlaceholderKind::Dir));
        assert!(!git.exists(), "removed once nobody holds it");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "and nothing else is left");
    }

    #[test]
    fn a_placeholder_is_its_mode_and_nothing_in_it() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        std::fs::create_dir(&git).unwrap();
        std::fs::write(git.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        assert!(!is_placeholder(&git, &git.symlink_metadata().unwrap()), "a filled .git with the mode is no placeholder");
        let empty = t.path().join(".vscode");
        std::fs::create_dir(&empty).unwrap();
        std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        assert!(is_placeholder(&empty, &empty.symlink_metadata().unwrap()));
        let f = t.path().join(".envrc");
        std::fs::write(&f, "echo hi").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(placeholder::FILE_MODE)).unwrap();
        assert!(!is_placeholder(&f, &f.symlink_metadata().unwrap()), "a file with content");
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    #[test]
    fn changed_placeholders_and_the_users_own_entries_and_symlinks_are_untouched() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("ro");
        drop(plan_holds(t.path(), "ro", placeholder::Kind::File));
        std::fs::write(&f, "data").unwrap();
        let d = t.path().join(".vscode");
        std::fs::create_dir(&d).unwrap(); // the user's own empty directory, mode 755
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        let l = t.path().join("link");
        std::os::unix::fs::symlink(&elsewhere, &l).unwrap();
        let all: Vec<MissingReadOnly> = [(&f, PlaceholderKind::File), (&d, PlaceholderKind::Dir), (&l, PlaceholderKind::Dir)]
            .iter()
            .flat_map(|(p, k)| target(p, *k))
            .collect();
        remove_leftovers(&all);
        assert!(f.exists(), "a file with content is never removed");
        assert!(d.exists(), "the user's own empty dir stays");
        assert!(l.symlink_metadata().is_ok() && elsewhere.exists(), "symlinks are never removed or followed");
    }

    #[test]
    fn a_sandbox_holding_the_directory_s_read_lock_keeps_them() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".envrc");
        drop(plan_holds(t.path(), ".envrc", placeholder::Kind::Dir));
        // What bwrap's pid 1 holds for a plan another program runs (`--lock-file`): a POSIX read
        // lock (an OFD one here, which conflicts the same way) on the directory.
        let dir = std::fs::File::open(t.path()).unwrap();
        // SAFETY: a zeroed flock is valid; a descriptor we own.
        let mut l: libc::flock = unsafe { std::mem::zeroed() };
        l.l_type = libc::F_RDLCK as libc::c_short;
        assert_eq!(unsafe { libc::fcntl(std::os::unix::io::AsRawFd::as_raw_fd(&dir), libc::F_OFD_SETLK, &l) }, 0);
        remove_leftovers(&target(&d, PlaceholderKind::Dir));
        assert!(d.exists(), "kept while the sandbox holds the lock");
        drop(dir);
        remove_leftovers(&target(&d, PlaceholderKind::Dir));
        assert!(!d.exists(), "removed after it");
    }
}
