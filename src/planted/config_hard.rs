//! The files of a workspace the plan keeps read-only because the host runs what they say, that are
//! hard links: each repository's `config`, `config.worktree` and `commondir`, its `.git` file and
//! the files its configuration includes (`repo::Facts::hard`), a bare repository's own files
//! (`Carver::own_files`), and the protected names at a root's or repository's top that are
//! regular files (`.envrc`). Found by an attacker's review: run 1 made a repository `sub` and
//! `ln sub/.git/config notes.txt`; run 2, in which `sub/.git/config` was read-only, appended
//! `core.fsmonitor` to `notes.txt`, said nothing, and the host's next `git status` in `sub` ran it.
//!
//! As for hooks (`hook_risks`) and the home's files (`home_hard`): the other names cannot be found
//! without a walk that stats every file, so a mount cannot cover the inode. The run says so before
//! it (`notEnforced`) and reports a write after it (the ctime moved, which no command can set
//! back). The Landlock mode grants no rule of its own to a name of these inodes (`ids`): a rule on
//! a file is a rule on its inode, whatever name it came by. No system call of its own: the numbers
//! are those `repo::facts` and `Carver::names` read already.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::hook_risks::HardLinked;

/// What kind of file one is: what the host does with it, and which risk a write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// A repository's configuration file, one it includes, or a file that says where it is (a
    /// `.git` file, `commondir`): git on the host runs what it names.
    GitConfig,
    /// A protected name at a top (`names::what_it_does` says what).
    Named,
}

/// What a run's plan found, for its result (`not_enforced`), the Landlock grants (`ids`) and the
/// check after it (`after_run`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Kept {
    pub shared: Vec<(HardLinked, What)>,
    /// The paths of `shared`, to keep each once without comparing it with every one before: a run
    /// made 6,000 repositories whose configs were one file's names, and every later run's plan
    /// spent 2.4 s of host CPU here (found by an attacker's review, cross32).
    met: HashSet<PathBuf>,
}

impl Kept {
    /// `h` (more than one name), once.
    pub fn add(&mut self, h: HardLinked, what: What) {
        if self.met.insert(h.path.clone()) {
            self.shared.push((h, what));
        }
    }

    /// Those in `reviewed` roots left out: apply writes a new file and renames it into place,
    /// which leaves the inode as it was.
    pub fn outside(mut self, reviewed: &[PathBuf]) -> Kept {
        let outside = |p: &Path| !reviewed.iter().any(|r| p.starts_with(r));
        self.shared.retain(|(h, _)| outside(&h.path));
        self.met.retain(|p| outside(p));
        self
    }

    /// The `(device, inode)` of each: no write rule of the Landlock mode's may name one.
    pub fn ids(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.shared.iter().map(|(h, _)| h.id)
    }

    /// What the run's result says in `sandboxDetails.notEnforced`.
    pub fn not_enforced(&self) -> Vec<String> {
        let said = |(h, _): &(HardLinked, What)| {
            format!(
                "planted configuration: {} has {} names (hard links): it is read-only, but its other names, which the run may \
                 write, could not be made read-only (finding them needs a walk that stats every file; the Landlock mode grants \
                 none at a directory it grants entry by entry); a write during the run is reported in hostRisks",
                h.path.display(),
                h.names
            )
        };
        // A few named, the rest counted (`few_named::lines`): the run chooses how many there are.
        super::few_named::lines(&mut self.shared.iter().map(said), self.shared.len(), |more| {
            format!(
                "planted configuration: {more} more files kept read-only (git configuration, protected names) have other names \
                 (hard links) that could not be made read-only, as the ones above; a write during the run is reported in hostRisks"
            )
        })
    }

    /// The files written or changed during the run (same inode, its ctime moved), with what to say.
    pub fn after_run(&self) -> Vec<(PathBuf, What, String)> {
        // A configuration's path may be a symlink (`repo::facts` stats it followed): the inode is the target's.
        let written = self.shared.iter().filter(|(h, what)| h.written(*what == What::GitConfig));
        written.map(|(h, what)| (h.path.clone(), *what, detail(&h.path, *what))).collect()
    }
}

fn detail(path: &Path, what: What) -> String {
    let does = match what {
        What::GitConfig => {
            let keys = match super::small_file::read(path) {
                super::small_file::Read::Text(text) => super::gitconfig::risky_keys(&text),
                _ => Vec::new(),
            };
            let named = if keys.is_empty() { String::new() } else { format!(" (it names {})", super::few_named::listed(&keys)) };
            // A `.git` file or a `commondir` names where git takes the configuration from.
            match path.file_name().and_then(|n| n.to_str()) {
                Some(".git" | "commondir") => "git on the host takes the repository's configuration (and the programs it names) from where this file points".to_string(),
                _ => format!("git on the host runs the programs this configuration names{named}"),
            }
        }
        What::Named => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            super::names::what_it_does(&name).to_string()
        }
    };
    format!("this file has other names (hard links), and it was written or changed during the run through one of them: {does}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_write_through_another_name_is_reported_with_what_it_does() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("sub/.git")).unwrap();
        std::fs::write(r.join("sub/.git/config"), "[core]\n").unwrap();
        std::fs::write(r.join("sub/.envrc"), "export A=1\n").unwrap();
        std::fs::hard_link(r.join("sub/.git/config"), r.join("notes.txt")).unwrap();
        std::fs::hard_link(r.join("sub/.envrc"), r.join("envrc.txt")).unwrap();
        let mut kept = Kept::default();
        for (p, what) in [("sub/.git/config", What::GitConfig), ("sub/.envrc", What::Named), ("sub/.git/config", What::GitConfig)] {
            let m = r.join(p).symlink_metadata().unwrap();
            kept.add(HardLinked::of(&r.join(p), &m), what);
        }
        assert_eq!(kept.not_enforced().len(), 2);
        assert!(kept.not_enforced()[0].contains(&format!("{} has 2 names", r.join("sub/.git/config").display())));
        assert_eq!(kept.ids().next(), Some({ let m = r.join("notes.txt").metadata().unwrap(); (m.dev(), m.ino()) }));
        assert!(kept.after_run().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        use std::io::Write;
        writeln!(std::fs::OpenOptions::new().append(true).open(r.join("notes.txt")).unwrap(), "\tfsmonitor = x").unwrap();
        let risks = kept.after_run();
        assert_eq!(risks.len(), 1);
        assert_eq!((risks[0].0.clone(), risks[0].1), (r.join("sub/.git/config"), What::GitConfig));
        assert!(risks[0].2.contains("core.fsmonitor"), "{}", risks[0].2);
        assert!(kept.clone().outside(&[r.join("sub")]).shared.is_empty());
    }

    /// A configuration reached by a symlink (`sub/.git/config -> ../../d/cfg`: `repo::facts` took
    /// its target's stat), written through another name of the target: reported.
    #[test]
    fn a_symlinked_configuration_written_through_another_name_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("sub/.git")).unwrap();
        std::fs::create_dir_all(r.join("d")).unwrap();
        std::fs::write(r.join("d/cfg"), "[core]\n").unwrap();
        std::fs::hard_link(r.join("d/cfg"), r.join("d/other")).unwrap();
        std::os::unix::fs::symlink("../../d/cfg", r.join("sub/.git/config")).unwrap();
        let config = r.join("sub/.git/config");
        let mut kept = Kept::default();
        kept.add(HardLinked::of(&config, &config.metadata().unwrap()), What::GitConfig);
        assert!(kept.after_run().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        use std::io::Write;
        writeln!(std::fs::OpenOptions::new().append(true).open(r.join("d/other")).unwrap(), "\tfsmonitor = x").unwrap();
        assert_eq!(kept.after_run().len(), 1);
    }
}
