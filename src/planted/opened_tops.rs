//! A writable root's top, or its `.git`, that the run opened to other users: group or other write
//! it did not have before (`chmod 777 .`, `chmod -R g+w .`), the same directory as before. Review
//! mode holds such a change back (`review::dir_modes`); a direct run made it with `hostRisks: []`
//! (found by an attacker's review, mode31): after it any local user could create names there, an
//! `.envrc`, a `.vscode/tasks.json`, a `.mcp.json`, which the host's tools then run as you, and
//! without the sticky bit replace what is there. Reported in the run's own result with the fix
//! (`detect` makes each a `permissions-changed` host risk);
//! nothing is restored silently (the mode may be the user's choice). Only the tops (where the
//! protected names are kept) are looked at: a deeper directory's mode is not (the walk after the
//! run reads listings, not every entry's mode). Their ACLs too (`top_acls`): a default ACL
//! (`setfacl -d -m o::rwx .`) left the top's mode as it was and opened every name the host's tools
//! made there afterwards (found by an attacker's review, rfix31); one that changed is reported.
//! And their inode flags (`top_flags`): ext4 passes nodump and sync on to every name made there
//! later (found by an attacker's review, kern44); one turned on is reported.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::top_acls::{self, Acls};
use super::top_flags;

/// Group and other write.
const OTHERS_WRITE: u32 = 0o022;

/// Each top and its `.git` as they were before the run: `(device, inode)`, permission bits, ACLs and
/// inode flags.
pub type TopModes = Vec<(PathBuf, (u64, u64), u32, Acls, Option<u32>)>;

/// The entries of `paths` that exist, as `TopModes` records them.
pub fn taken(paths: impl Iterator<Item = PathBuf>) -> TopModes {
    paths
        .filter_map(|p| {
            let m = p.symlink_metadata().ok()?;
            let acls = top_acls::of(&p);
            let flags = top_flags::of(&p);
            Some((p, (m.dev(), m.ino()), m.mode() & 0o7777, acls, flags))
        })
        .collect()
}

/// A top the run opened: its permission bits before and after.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened {
    pub path: PathBuf,
    pub was: u32,
    pub now: u32,
    /// An ACL of it set or changed during the run (the mode bits need not say so).
    pub acl_changed: bool,
    /// The inode flags turned on during the run, as `chattr` letters (`""`: none).
    pub flags_on: String,
}

impl Opened {
    /// What `detect` says of it (a `permissions-changed` host risk), with the fix.
    pub fn detail(&self) -> String {
        if !self.flags_on.is_empty() && !self.acl_changed && self.now & OTHERS_WRITE & !self.was == 0 {
            return format!(
                "had inode flags turned on during the run (lsattr -d {} shows them): the filesystem passes them on to \
                 every file and directory made there later, which backups honouring nodump skip and whose writes \
                 wait for the disk (sync). If you did not set them yourself: chattr -{} {}",
                self.path.display(),
                self.flags_on,
                self.path.display()
            );
        }
        if self.acl_changed {
            return format!(
                "had its ACL set or changed during the run (mode {:04o} before, {:04o} now): an ACL can give other users \
                 write there, and a default ACL gives it on every name made there later, which the mode does not show \
                 (getfacl {} shows it). Any local user could then create or change names (an .envrc, a \
                 .vscode/tasks.json, node_modules) that your tools run as you. If you did not set it yourself: \
                 setfacl -b -k {}",
                self.was,
                self.now,
                self.path.display(),
                self.path.display()
            );
        }
        format!(
            "was made writable by others during the run (mode {:04o} before, {:04o} now): any local user can now \
             create names there (an .envrc, a .vscode/tasks.json, a .mcp.json) that your tools run as you. If you did \
             not change it yourself: chmod go-w {}",
            self.was,
            self.now,
            self.path.display()
        )
    }
}

/// Each top still the same directory whose group or other write bits the run turned on (a
/// replaced one is `workspace-replaced`, said elsewhere).
pub fn opened(before: &TopModes) -> Vec<Opened> {
    before
        .iter()
        .filter_map(|(p, id, was, acls, flags)| {
            let now = p.symlink_metadata().ok().filter(|m| m.is_dir() && (m.dev(), m.ino()) == *id)?;
            let mode = now.mode() & 0o7777;
            let now_acls = top_acls::of(p);
            let acl_changed = now_acls != *acls && now_acls.iter().any(|a| !a.is_empty());
            let flags_on = top_flags::turned_on(*flags, top_flags::of(p));
            (mode & OTHERS_WRITE & !was != 0 || acl_changed || !flags_on.is_empty()).then(|| Opened { path: p.clone(), was: *was, now: mode, acl_changed, flags_on })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_top_opened_to_others_is_reported_once_not_one_already_open_or_closed() {
        let dir = tempfile::tempdir().unwrap();
        let (top, open, closed) = (dir.path().join("ws"), dir.path().join("shared"), dir.path().join("closed"));
        for (p, m) in [(&top, 0o755), (&open, 0o1777), (&closed, 0o775)] {
            std::fs::create_dir(p).unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        }
        let before = taken([top.clone(), open.clone(), closed.clone(), dir.path().join("missing")].into_iter());
        assert_eq!(before.len(), 3);
        std::fs::set_permissions(&top, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(opened(&before), [Opened { path: top.clone(), was: 0o755, now: 0o777, acl_changed: false, flags_on: String::new() }]);
        let detail = opened(&before)[0].detail();
        assert!(detail.contains("0755 before, 0777 now") && detail.contains("chmod go-w"), "{detail}");
        // Replaced by another directory: not this check's (workspace-replaced says it). The old one
        // is kept (renamed aside), so that its inode number cannot be given to the new one.
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(&top, dir.path().join("aside")).unwrap();
        std::fs::rename(&other, &top).unwrap();
        assert!(opened(&before).is_empty());
    }
}
