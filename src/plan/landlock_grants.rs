//! What the Landlock mode lets the command write, path by path. Landlock rules only add access and a
//! directory's rights cover its whole subtree, so a read-only path cannot be carved out of a granted
//! directory: every directory that holds one is instead granted entry by entry (`split`), down to
//! it, and the read-only path itself is not granted at all.
//!
//! What must stay read-only (or in place) inside the writable roots, whichever root holds it (a
//! workspace's `.git` inside the shared `/tmp` or inside a `writableRoots` entry counts for those
//! too: granting the ancestor whole would grant the `.git`):
//! - the existing read-only paths of every root (`.git`, the real git directory, `readOnlyPaths`,
//!   repositories found by the walk, hooks directories, existing protected names);
//! - sandspawn's own files (what the host runs next);
//! - the symlinks held for the run (`pins::held_links`: on the way to a home link's target, a
//!   global git file or a repository's git directory), which the bwrap mode puts back after a run that replaced one: the directories
//!   above one that the host reaches it through must stay (a directory swapped for a link kept it
//!   from being put back), and here the link cannot be replaced at all;
//! - every writable root nested in another: not read-only, but the directories above it are split so
//!   that it cannot be renamed away and replaced (a workspace with a planted `.git` in its place; the
//!   bwrap plan pins them with mount points, `pins`).
//!
//! Protected names that do not exist are not among them: the top stays creatable, and what the
//! command creates there is moved aside while it runs and after (`planted::keeper`, `detect`), as in
//! the bwrap mode's runs. A split directory takes no new entries and loses none (that would need
//! `MAKE_*`/`REMOVE_*` on it, which would cover the read-only path below it too): stricter than
//! bwrap, and said so in the README and in the denial a refused write gets.

use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};
use crate::policy::ResolvedPolicy;

/// The write grants of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Directories granted whole (their subtree), sorted, without duplicates.
    pub dirs: Vec<PathBuf>,
    /// Files granted on their own (an existing entry of a split directory).
    pub files: Vec<PathBuf>,
    /// Directories granted entry by entry: they take no new entries.
    pub split: Vec<PathBuf>,
    /// The `(device, inode)` of each entry of `dirs` and `files`, as planned: a split directory's
    /// device and the entry's number in its listing (no `stat` per entry); a root's as the policy
    /// took it (`WritableRoot::id`). The helper checks each grant against it, opening the grant
    /// without following a link anywhere on its path (`confine`).
    pub ids: std::collections::HashMap<PathBuf, (u64, u64)>,
}

impl Grants {
    /// `dir` (a writable root) takes new entries at its top: it lies in a directory granted whole
    /// (not split, and not a read-only root left ungranted).
    pub fn creatable(&self, dir: &Path) -> bool {
        self.dirs.iter().any(|d| dir.starts_with(d))
    }
}

/// What stays in place or read-only inside the roots (see the module's words).
struct Keep<'a> {
    /// Never granted.
    read_only: Vec<&'a Path>,
    /// Granted by their own rule, but not as part of an ancestor's.
    own_grant: Vec<&'a Path>,
    /// The `(device, inode)` of the read-only files known to have other names (a repository's
    /// config, a protected name, a hook, a home file: `planted::config_hard`, `hook_risks`,
    /// `home_hard`). A rule on a file is a rule on its inode: one granted for another name of it
    /// in a split directory let a run write `sub/.git/config` by its own name (an attacker's review).
    hard: std::collections::HashSet<(u64, u64)>,
}

impl Keep<'_> {
    fn inside(&self, dir: &Path) -> bool {
        self.read_only.iter().chain(&self.own_grant).any(|p| p.starts_with(dir) && *p != dir)
    }

    fn skipped(&self, p: &Path) -> bool {
        self.read_only.iter().chain(&self.own_grant).any(|k| *k == p)
    }
}

/// The grants for `policy`'s writable roots plus the run's own `extra` directories (granted whole),
/// given sandspawn's own files (canonical).
pub fn grants(policy: &ResolvedPolicy, own: &[PathBuf], extra: &[&Path]) -> Result<Grants> {
    let roots: Vec<&Path> = policy.writable_roots.iter().map(|r| r.root.as_path()).collect();
    let mut read_only: Vec<&Path> = policy.writable_roots.iter().flat_map(|r| r.read_only.iter().map(PathBuf::as_path)).collect();
    read_only.extend(own.iter().map(PathBuf::as_path).filter(|o| roots.iter().any(|r| o.starts_with(r))));
    // The symlinks held for the run (`pins::held_links`): not granted, so that neither they nor a
    // directory above them can be replaced (a run swapped the directory holding one for a link of
    // its own, and the host's next shell ran the `bashrc` it planted: fixes18/dirswap.sh).
    let held = super::pins::held_links(policy);
    read_only.extend(held.iter().map(PathBuf::as_path));
    // The run's own directories are not kept in place: the command may rename them in a root it may
    // change whole (they are the run's scratch, nothing the host reads later), and keeping them
    // would split that root for nothing.
    let own_grant = roots.clone();
    let planted = &policy.planted;
    // A virtual environment's `bin/activate`: granted, lest `bin` take no new entries (pip install
    // writes scripts there); the check after the run reports it changed (`planted::venv`).
    read_only.retain(|p| !planted.venv_bin.contains(*p));
    let hard = planted.config_hard.ids().chain(planted.hook_links.hard.iter().map(|h| h.id)).chain(planted.home_hard.shared.iter().map(|h| h.id)).collect();
    let keep = Keep { read_only, own_grant, hard };
    let mut g = Grants::default();
    // A root inside another's read-only path is granted as bwrap binds it: after that carve-out.
    // Each with the identity the policy took when it resolved the root, without following a link
    // (an `lstat` now would follow a directory above it swapped for a link since, to whatever the
    // link leads to, and the helper's grant with it); the run's own directories, taken now the
    // same way (none: one behind an administrator's link, which the helper then follows).
    let ids = policy.writable_roots.iter().map(|r| r.id.or_else(|| crate::no_symlinks::identity(&r.root).ok()));
    for (dir, id) in roots.iter().copied().zip(ids).chain(extra.iter().map(|e| (*e, crate::no_symlinks::identity(e).ok()))) {
        // A root that is itself a read-only path (`readOnlyPaths: [cwd]`, "only out/ may change"):
        // not granted at all, as bwrap's read-only copy of it; a root deeper in it is, by its own
        // rule. `inside` counts only what lies below a directory, so such a root was granted whole
        // and the entry dropped: every write landed (found by an attacker's review, mode34).
        if keep.read_only.contains(&dir) {
            continue;
        }
        grant(dir, id, &keep, &mut g)?;
    }
    for list in [&mut g.dirs, &mut g.files, &mut g.split] {
        list.sort();
        list.dedup();
    }
    Ok(g)
}

/// `dir` (entry `id`) whole when nothing kept lies inside it; else each entry on its own, skipping
/// kept entries and symlinks, descending into the directories that lead to a kept path.
fn grant(dir: &Path, id: Option<(u64, u64)>, keep: &Keep, g: &mut Grants) -> Result<()> {
    if !keep.inside(dir) {
        g.ids.extend(id.map(|id| (dir.to_path_buf(), id)));
        g.dirs.push(dir.to_path_buf());
        return Ok(());
    }
    g.split.push(dir.to_path_buf());
    let unlisted = |e: std::io::Error| SandboxError::unsupported(format!("cannot list {} to keep the read-only paths in it read-only: {e}", dir.display()));
    // The device its entries are on (a mount point's own, when it is one).
    let dev = dir.symlink_metadata().map_err(unlisted)?.dev();
    for e in std::fs::read_dir(dir).map_err(unlisted)?.flatten() {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if keep.skipped(&path) || kind.is_symlink() {
            continue;
        }
        let id = Some((dev, e.ino()));
        // Another name of a read-only file, or a file with other names at all (one may lie in a
        // read-only directory: `.vscode/tasks.json`, `.git/HEAD`, which no list here holds): not
        // granted, so read-only too. A `stat` per file of a split directory, in this mode only; one
        // that cannot be read is not granted either.
        let shared = || keep.hard.contains(&(dev, e.ino())) || e.metadata().ok().is_none_or(|m| m.nlink() > 1);
        if !kind.is_dir() && shared() {
            continue;
        }
        if kind.is_dir() {
            grant(&path, id, keep, g)?;
        } else {
            g.ids.extend(id.map(|id| (path.clone(), id)));
            g.files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::WritableRoot;

    fn policy(roots: Vec<WritableRoot>) -> ResolvedPolicy {
        let mut p = crate::plan::test_support::policy(serde_json::json!({"mode": "workspace-write"}), &roots[0].root, crate::platform::Platform::Linux);
        p.writable_roots = roots;
        p
    }

    fn root(p: &Path, read_only: &[&str]) -> WritableRoot {
        WritableRoot { root: p.to_path_buf(), read_only: read_only.iter().map(|r| p.join(r)).collect(), missing_read_only: Vec::new(), id: None }
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["ws/.git/hooks", "ws/src/deep", "other"] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        std::fs::write(top.join("ws/file"), "").unwrap();
        std::os::unix::fs::symlink("/etc", top.join("ws/link")).unwrap();
        (dir, top)
    }

    #[test]
    fn a_read_only_path_splits_every_directory_above_it() {
        let (_t, top) = tree();
        let ws = top.join("ws");
        let g = grants(&policy(vec![root(&ws, &[".git"])]), &[], &[]).unwrap();
        assert_eq!(g.dirs, [ws.join("src")], "not the root, not .git, not the symlink");
        assert_eq!(g.files, [ws.join("file")]);
        assert_eq!(g.split, [ws.clone()]);
        assert!(!g.creatable(&ws));
        let g = grants(&policy(vec![root(&ws, &["src/deep/x"])]), &[], &[]).unwrap();
        assert_eq!(g.dirs, [ws.join(".git")]);
        assert_eq!(g.split, [ws.clone(), ws.join("src"), ws.join("src/deep")]);
    }

    #[test]
    fn an_ancestor_root_is_split_around_a_nested_roots_carve_outs() {
        // Issue 30: the workspace's .git was writable through the writable root that holds it.
        let (_t, top) = tree();
        let ws = top.join("ws");
        let g = grants(&policy(vec![root(&top, &[]), root(&ws, &[".git"])]), &[], &[]).unwrap();
        assert_eq!(g.dirs, [top.join("other"), ws.join("src")]);
        assert_eq!(g.split, [top.clone(), ws.clone()]);
        assert!(!g.dirs.iter().chain(&g.files).any(|p| p.starts_with(ws.join(".git"))));
    }

    #[test]
    fn a_nested_root_cannot_be_renamed_away() {
        let (_t, top) = tree();
        let ws = top.join("ws");
        let g = grants(&policy(vec![root(&top, &[]), root(&ws, &[])]), &[], &[]).unwrap();
        assert_eq!(g.dirs, [top.join("other"), ws.clone()], "each granted whole by its own rule");
        assert_eq!(g.split, [top.clone()], "the top holding it takes no new entries");
        // The run's own directory is granted whole and splits nothing.
        let g = grants(&policy(vec![root(&top, &[])]), &[], &[&top.join("other")]).unwrap();
        assert_eq!((g.dirs, g.split), (vec![top.clone(), top.join("other")], vec![]));
        let nothing_kept = grants(&policy(vec![root(&ws, &[])]), &[], &[]).unwrap();
        assert_eq!((nothing_kept.dirs, nothing_kept.split), (vec![ws.clone()], vec![]));
    }

    /// Found by an attacker's review: `notes.txt`, another name of `sub/.git/config`, was granted
    /// at the split top, and the rule on its inode let the run write the config by its own name.
    /// A file of a split directory with other names is not granted, known to be read-only or not.
    #[test]
    fn another_name_of_a_read_only_file_is_not_granted() {
        use std::os::unix::fs::MetadataExt;
        let (_t, top) = tree();
        let ws = top.join("ws");
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::hard_link(ws.join(".git/config"), ws.join("notes.txt")).unwrap();
        let mut p = policy(vec![root(&ws, &[".git"])]);
        p.planted = Default::default();
        assert_eq!(grants(&p, &[], &[]).unwrap().files, [ws.join("file")], "unknown, but of 2 names: not granted");
        std::fs::hard_link(ws.join("file"), ws.join("src/file")).unwrap();
        let g = grants(&p, &[], &[]).unwrap();
        assert!(g.files.is_empty() && g.dirs.contains(&ws.join("src")), "a directory granted whole is as it was");
        let config = ws.join(".git/config");
        let m = config.metadata().unwrap();
        let mut baseline = crate::planted::Baseline::default();
        baseline.config_hard.add(crate::planted::hook_risks::HardLinked::of(&config, &m), crate::planted::config_hard::What::GitConfig);
        p.planted = std::sync::Arc::new(baseline);
        let g = grants(&p, &[], &[]).unwrap();
        assert!(!g.files.contains(&ws.join("notes.txt")), "not notes.txt ({})", m.ino());
    }

    #[test]
    fn a_root_that_is_a_read_only_path_is_not_granted_but_a_root_in_it_is() {
        let (_t, top) = tree();
        let ws = top.join("ws");
        let out = ws.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let mut cwd = root(&ws, &[]);
        cwd.read_only.push(ws.clone());
        let g = grants(&policy(vec![cwd, root(&out, &[])]), &[], &[]).unwrap();
        assert!(!g.dirs.contains(&ws) && !g.split.contains(&ws) && !g.files.iter().any(|f| f.starts_with(&ws) && !f.starts_with(&out)), "{g:?}");
        assert!(g.dirs.contains(&out), "{g:?}");
        assert!(!g.creatable(&ws) && g.creatable(&out));
    }

    #[test]
    fn own_files_in_a_root_stay_read_only() {
        let (_t, top) = tree();
        let ws = top.join("ws");
        let g = grants(&policy(vec![root(&ws, &[])]), &[ws.join("src/deep"), PathBuf::from("/elsewhere")], &[]).unwrap();
        assert_eq!(g.dirs, [ws.join(".git")]);
        assert_eq!(g.split, [ws.clone(), ws.join("src")]);
    }
}
