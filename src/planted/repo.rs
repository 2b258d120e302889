//! One repository found by the walk: which directories hold its metadata (the `.git` directory, the
//! target of a `gitdir:` file, a worktree's common directory) and which hooks directory its
//! configuration names.

use std::path::{Path, PathBuf};

use super::gitconfig;

/// The git directories of the repository whose `.git` entry is `dot_git` (canonical, existing;
/// the `.git` entry itself is protected by the caller).
pub fn git_dirs(dot_git: &Path) -> Vec<PathBuf> {
    let top = dot_git.parent().unwrap_or(Path::new("/"));
    let Ok(meta) = dot_git.symlink_metadata() else { return Vec::new() };
    // A `.git` directory is its own git directory, and its path is canonical already (the walk
    // joins names of real directories to canonical roots): no `realpath` per repository per run.
    let first = if meta.is_dir() {
        Some(dot_git.to_path_buf())
    } else if meta.is_file() {
        read_gitdir(dot_git).map(|g| if g.is_absolute() { g } else { top.join(g) }).and_then(|p| std::fs::canonicalize(p).ok())
    } else {
        std::fs::canonicalize(dot_git).ok()
    };
    let Some(first) = first else { return Vec::new() };
    let mut dirs = vec![first.clone()];
    // A linked worktree (or a submodule's) git dir names the shared one in `commondir`.
    if let Ok(text) = std::fs::read_to_string(first.join("commondir")) {
        let common = PathBuf::from(text.trim());
        let common = if common.is_absolute() { common } else { first.join(common) };
        if let Ok(c) = std::fs::canonicalize(common) {
            if !dirs.contains(&c) {
                dirs.push(c);
            }
        }
    }
    dirs
}

/// The path of a `gitdir: <path>` file (worktrees, submodules, `--separate-git-dir`), as written.
pub fn read_gitdir(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().next()?;
    let path = line.strip_prefix("gitdir:")?.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// The hooks directories outside the git directories that git on the host would run hooks from:
/// `core.hooksPath` (relative to the working tree, `~/` to `$HOME`), its parent when it is husky's
/// `.husky/_` (whose stubs run the scripts in `.husky`), and `.husky` at the top when present
/// (husky sets `core.hooksPath` to it on the next `npm install`). Absolute, possibly missing.
pub fn hooks_dirs(top: &Path, git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let configured = git_dirs
        .iter()
        .flat_map(|d| [d.join("config"), d.join("config.worktree")])
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|text| gitconfig::hooks_path(&text))
        .last();
    if let Some(hp) = configured {
        let p = match hp.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest)),
            None => Some(top.join(&hp)),
        };
        if let Some(p) = p.map(|p| normalize(&p)) {
            if p.file_name().is_some_and(|n| n == "_") {
                if let Some(parent) = p.parent() {
                    out.push(parent.to_path_buf());
                }
            }
            out.push(p);
        }
    }
    let husky = top.join(".husky");
    if husky.is_dir() && !out.contains(&husky) {
        out.push(husky);
    }
    out
}

/// `a/./b/../c` → `a/c`, lexically (a hooks path may not exist yet, so it cannot be canonicalized).
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_gitdir_and_commondir() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("main/.git/worktrees/wt")).unwrap();
        std::fs::write(r.join("main/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir(r.join("wt")).unwrap();
        std::fs::write(r.join("wt/.git"), format!("gitdir: {}\n", r.join("main/.git/worktrees/wt").display())).unwrap();
        assert_eq!(git_dirs(&r.join("wt/.git")), vec![r.join("main/.git/worktrees/wt"), r.join("main/.git")]);
        std::fs::create_dir(r.join("sub")).unwrap();
        std::fs::write(r.join("sub/.git"), "gitdir: ../main/.git\n").unwrap();
        assert_eq!(git_dirs(&r.join("sub/.git")), vec![r.join("main/.git")]);
        std::fs::write(r.join("sub/.git"), "garbage").unwrap();
        assert!(git_dirs(&r.join("sub/.git")).is_empty());
    }

    #[test]
    fn husky_hooks_dirs() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join(".husky")).unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")]), vec![r.join(".husky")]);
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = .husky/_\n").unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")]), vec![r.join(".husky"), r.join(".husky/_")]);
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = ./tools/../hooks\n").unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")]), vec![r.join("hooks"), r.join(".husky")]);
    }
}
