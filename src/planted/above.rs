//! The repositories whose top lies above a writable root: a package of a monorepo as the cwd.
//! husky's documented monorepo layout (`"prepare": "cd .. && husky frontend/.husky"`) sets the
//! repository's `core.hooksPath` to `frontend/.husky/_`, inside the package; the walk (`scan`)
//! looks only below each root, so that hooks directory was writable and unreported, and the
//! host's next `git commit` at the monorepo's top ran what a run wrote there (found by an
//! attacker's review). Their `.git` lies outside the root: read-only already, unless another
//! writable root holds it (the writable /tmp holding `/tmp/<x>/repo` above a cwd `repo/pkg`), where
//! it is carved as a nested repository's is. Above a reviewed root too: its change set never sees
//! that `.git`, and a run there appended `core.fsmonitor` to `../.git/config`, which landed on the
//! host at once, unreported, and the host's next `git status` ran it (found by an attacker's
//! review, host26). Only what they name inside a reviewed root is left to the set's judge
//! (`review::elsewhere`), as that root's own repositories are.
//!
//! Every ancestor is looked at, not only the nearest repository, and neither
//! `GIT_CEILING_DIRECTORIES` nor a filesystem boundary stops the search as they stop git's
//! discovery: the host runs git in the enclosing repository's own tree (its top), where nothing
//! between the root and that top is crossed, and a repository nested in another (a package that
//! is a repository itself) leaves the outer one's hooks in force for git run at the outer top.
//! Cheap: one `lstat` per ancestor of each root (roots are canonical: no symlink on the way).

use std::path::PathBuf;

/// No real path has more levels than this; a bound for the loop all the same.
const MAX_LEVELS: usize = 512;

/// The `.git` entries (any kind: a directory, a `gitdir:` file, a link) in the directories strictly
/// above each of `roots` (canonical), nearest first per root, each once.
pub fn repositories_above(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        for dir in root.ancestors().skip(1).take(MAX_LEVELS) {
            let dot_git = dir.join(".git");
            if out.contains(&dot_git) {
                // The ones above were seen from another root already.
                break;
            }
            if dot_git.symlink_metadata().is_ok() {
                out.push(dot_git);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_repository_above_each_root_once() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("mono/.git")).unwrap();
        std::fs::create_dir_all(r.join("mono/pkg/.git")).unwrap();
        std::fs::create_dir_all(r.join("mono/pkg/a/b")).unwrap();
        std::fs::create_dir_all(r.join("mono/other")).unwrap();
        std::fs::write(r.join("mono/other/.git"), "gitdir: ../.git\n").unwrap();
        std::fs::create_dir_all(r.join("mono/other/c")).unwrap();
        let roots = [r.join("mono/pkg/a/b"), r.join("mono/other/c"), r.join("mono/pkg")];
        let found: Vec<PathBuf> = repositories_above(&roots).into_iter().filter(|p| p.starts_with(&r)).collect();
        assert_eq!(found, vec![r.join("mono/pkg/.git"), r.join("mono/.git"), r.join("mono/other/.git")]);
        assert!(repositories_above(&[r.join("mono")]).iter().all(|p| !p.starts_with(&r)), "a root's own .git is not above it");
    }

    /// The carve-outs every planner (bwrap, Landlock, Seatbelt) makes from: the hooks directories
    /// the repository above the cwd names inside it, read-only or kept absent.
    #[test]
    fn hooks_of_the_repository_above_the_cwd_are_carved() {
        use crate::policy::{resolve_policy, PolicyContext};
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let cwd = r.join("mono/frontend");
        std::fs::create_dir_all(r.join("mono/.git")).unwrap();
        std::fs::create_dir_all(cwd.join(".husky/_")).unwrap();
        std::fs::write(r.join("mono/.git/config"), "[core]\n\thooksPath = frontend/.husky/_\n").unwrap();
        let carved = |v: serde_json::Value| {
            let ctx = PolicyContext { cwd: cwd.clone(), tmpdir: None, platform: crate::platform::Platform::Linux, env: Default::default() };
            let mut p = resolve_policy(Some(&v), &ctx).unwrap();
            p.walk_and_protect(crate::planted::Absent::Placeholders);
            let root = p.writable_roots.iter().find(|w| w.root == cwd).unwrap().clone();
            (root.read_only, root.missing_read_only.into_iter().map(|m| m.path).collect::<Vec<_>>())
        };
        let (ro, _) = carved(serde_json::json!({ "mode": "workspace-write", "tmp": "read-only" }));
        assert!(ro.contains(&cwd.join(".husky")) && ro.contains(&cwd.join(".husky/_")), "{ro:?}");
        std::fs::write(r.join("mono/.git/config"), "[core]\n\thooksPath = frontend/githooks\n").unwrap();
        let (_, missing) = carved(serde_json::json!({ "mode": "workspace-write", "tmp": "read-only" }));
        assert!(missing.contains(&cwd.join("githooks")), "{missing:?}");
        let (ro, missing) = carved(serde_json::json!({ "mode": "workspace-write", "tmp": "read-only", "protectGit": false }));
        assert!(!ro.iter().chain(&missing).any(|p| p.ends_with("githooks")), "nothing without protectGit");
    }

    /// A reviewed package of a repository whose top lies in a directly written root (the writable
    /// /tmp or $TMPDIR): its `.git` is read-only there, as above a direct root, while what it names
    /// inside the reviewed root is left to the set's judge (found by an attacker's review, host26).
    #[test]
    fn the_git_above_a_reviewed_root_is_carved_in_the_direct_root() {
        use crate::policy::{resolve_policy, PolicyContext};
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let cwd = r.join("mono/frontend");
        std::fs::create_dir_all(r.join("mono/.git/hooks")).unwrap();
        std::fs::create_dir_all(cwd.join("githooks")).unwrap();
        std::fs::write(r.join("mono/.git/config"), "[core]\n\thooksPath = frontend/githooks\n").unwrap();
        let ctx = PolicyContext { cwd: cwd.clone(), tmpdir: Some(r.to_str().unwrap().to_string()), platform: crate::platform::Platform::Linux, env: Default::default() };
        let v = serde_json::json!({ "mode": "workspace-write", "workspace": "review" });
        let mut p = resolve_policy(Some(&v), &ctx).unwrap();
        p.walk_and_protect(crate::planted::Absent::UndoneAfter);
        let holder = p.writable_roots.iter().filter(|w| r.starts_with(&w.root)).max_by_key(|w| w.root.as_os_str().len()).unwrap();
        assert!(holder.read_only.contains(&r.join("mono/.git")), "{:?}", holder.read_only);
        let reviewed = p.writable_roots.iter().find(|w| w.root == cwd).unwrap();
        let carved: Vec<&PathBuf> = reviewed.read_only.iter().chain(reviewed.missing_read_only.iter().map(|m| &m.path)).collect();
        assert!(!carved.iter().any(|p| p.starts_with(cwd.join("githooks"))), "{carved:?}");
    }
}
