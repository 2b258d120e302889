//! The host user's configuration files that are hard links: a home path of `home`'s lists, a
//! protected name at a home's top, a regular file directly in a listed directory that is a real
//! one (`~/.ssh/config`), and the files and programs of the global git configuration. Found by an
//! attacker's review: `ln dotfiles/bashrc ~/.bashrc` and `ln dotfiles/ssh_config ~/.ssh/config`,
//! the home outside every root and the run in `~/dotfiles`; the run appended to both, and the
//! host's next `bash -i` and `ssh` ran what it planted. Nothing was said: a hard link is no symlink
//! that `home_links` follows.
//!
//! A hard link's other names cannot be found without a walk that stats every file, so the inode
//! cannot be kept read-only (a mount covers one name): as for hooks (`hook_risks`), the run says so
//! before it (`notEnforced`) and reports a write after it (its ctime moved, which no command can
//! set back). Only files on the device of a directly written root count: a hard link never crosses
//! devices. A `stat` per listed file a run; the listings are `home_links`' (cached).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::global_git::Global;
use super::home::Bases;
use super::hook_risks::HardLinked;
use super::{home_links, names};
use crate::policy::PlaceholderKind;

/// What a run's plan found, for its result (`not_enforced`) and the check after it (`after_run`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Configuration files of the host's with more than one name, as they were when the run was
    /// planned (kept as hard-linked hooks are).
    pub shared: Vec<HardLinked>,
    /// The home's listed directories too large to be read whole (`home_links::Found::cut_short`): the
    /// links and files past `home_links::MAX_ENTRIES` were not looked for, here nor as links.
    pub cut: Vec<PathBuf>,
}

/// The files to look at: the home's listed files, the protected names at its top that are files,
/// the files directly in its listed directories (`inside`: `home_links::Found::files_in_dirs`), and the global git configuration's files and
/// programs. A symlink among them is followed (`stat`): where it leads may be a hard link too.
pub fn candidates(bases: &Bases, names: &[String], inside: &[PathBuf], global: &Global) -> Vec<PathBuf> {
    let listed = bases.paths().filter(|(_, dir, _)| !dir).map(|(p, _, _)| p);
    let file_names: Vec<&String> = names.iter().filter(|n| names::placeholder_kind(n) == PlaceholderKind::File).collect();
    let named = bases.homes.iter().flat_map(|h| file_names.iter().map(move |n| h.join(n)));
    let git = global.files.iter().chain(&global.programs).cloned();
    let mut seen = HashSet::new();
    listed.chain(named).chain(inside.iter().cloned()).chain(git).filter(|p| seen.insert(p.clone())).collect()
}

impl Kept {
    /// Of `paths`, the regular files with more than one name on one of `devices` (those of the
    /// directly written roots).
    pub fn of(paths: &[PathBuf], devices: &[u64]) -> Kept {
        if devices.is_empty() {
            return Kept::default();
        }
        // Most are missing (a hundred names at the home's top): one listing of each directory.
        let presence = crate::presence::Presence::of(paths.iter().map(|p| p.as_path()));
        let shared = paths.iter().filter_map(|p| {
            let m = presence.may_exist(p).then(|| std::fs::metadata(p).ok()).flatten()?;
            let shared = m.is_file() && m.nlink() > 1 && devices.contains(&m.dev());
            shared.then(|| HardLinked::of(p, &m))
        });
        Kept { shared: shared.collect(), cut: Vec::new() }
    }

    /// What the run's result says in `sandboxDetails.notEnforced`.
    pub fn not_enforced(&self) -> Vec<String> {
        let said = |s: &HardLinked| {
            format!(
                "planted configuration: {} is a hard link ({} names) on the device of a writable root, which may hold another of \
                 its names: a write through that name could not be prevented (finding it needs a walk that stats every file); \
                 a write during the run is reported in hostRisks as protected-name-created",
                s.path.display(),
                s.names
            )
        };
        let cut = |d: &PathBuf| {
            format!(
                "planted configuration: {} holds more than {} entries; only those were read: a symlink past them that leads into a \
                 writable root is not kept read-only, a file past them with another name on such a root's device is not reported",
                d.display(),
                home_links::MAX_ENTRIES
            )
        };
        self.shared.iter().map(said).chain(self.cut.iter().map(cut)).collect()
    }

    /// The files written or changed during the run (their ctime moved), with what to say of each.
    pub fn after_run(&self) -> Vec<(PathBuf, String)> {
        let detail = |s: &HardLinked| {
            format!(
                "this file of the host's configuration is a hard link ({} names), and it was written or changed during the run \
                 through another of its names: what reads it on the host (a shell, ssh, git, an editor) runs what is there now",
                s.names
            )
        };
        self.shared.iter().filter(|s| s.written(true)).map(|s| (s.path.clone(), detail(s))).collect()
    }
}

/// The devices of the roots in `direct` (the directly written ones), from `identities` (the
/// baseline's `(path, (device, inode))` of each root's top and `.git`).
pub fn devices<'a>(identities: impl Iterator<Item = (&'a Path, (u64, u64))>, direct: &[PathBuf]) -> Vec<u64> {
    let mut devices: Vec<u64> = identities.filter(|(r, _)| direct.iter().any(|d| d == *r)).map(|(_, (dev, _))| dev).collect();
    devices.sort_unstable();
    devices.dedup();
    devices
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout of the review: `~/.bashrc` and `~/.ssh/config` hard links into `~/dotfiles`. Both
    /// are found, written through the other name they are reported; a file of one name is not.
    #[test]
    fn hard_linked_dotfiles_are_found_and_a_write_through_another_name_reported() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let dots = home.join("dotfiles");
        std::fs::create_dir_all(&dots).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(dots.join("bashrc"), "# bashrc\n").unwrap();
        std::fs::hard_link(dots.join("bashrc"), home.join(".bashrc")).unwrap();
        std::fs::write(dots.join("ssh_config"), "Host x\n").unwrap();
        std::fs::hard_link(dots.join("ssh_config"), home.join(".ssh/config")).unwrap();
        std::fs::write(home.join(".profile"), "").unwrap();
        let bases = Bases::of([home.clone()].into_iter(), None);
        let names = vec![".bashrc".to_string(), ".profile".to_string()];
        let paths = candidates(&bases, &names, &home_links::all(&bases, &names).files_in_dirs, &Global::default());
        let dev = dots.metadata().unwrap().dev();
        assert!(Kept::of(&paths, &[dev + 1]).shared.is_empty(), "another device: none");
        let kept = Kept::of(&paths, &[dev]);
        let mut found: Vec<PathBuf> = kept.shared.iter().map(|s| s.path.clone()).collect();
        found.sort();
        assert_eq!(found, [home.join(".bashrc"), home.join(".ssh/config")]);
        assert_eq!(kept.not_enforced().len(), 2);
        assert!(kept.after_run().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::OpenOptions::new().append(true).open(dots.join("bashrc")).unwrap();
        use std::io::Write;
        writeln!(std::fs::OpenOptions::new().append(true).open(dots.join("ssh_config")).unwrap(), "  ProxyCommand x").unwrap();
        let risks: Vec<PathBuf> = kept.after_run().into_iter().map(|(p, _)| p).collect();
        assert_eq!(risks, [home.join(".ssh/config")]);
    }
}
