//! The bounded walk of the writable roots that finds repositories (`.git` entries) and protected
//! names at any depth. The same walk runs before the run (what to protect) and after it (what was
//! planted), so both see the same area.
//!
//! The bound (documented in the README): at most `MAX_DEPTH` directories below a root and at most
//! `MAX_DIRS` directories read per run over all roots, breadth first (shallow directories first).
//! It never follows symlinks, never descends into a `.git` directory (protected whole), into
//! `node_modules` (package managers own it; git tools and editors do not look for repositories
//! there), into a denied path, or into another writable root (walked on its own). Only directory
//! entries are read (`getdents`: the entry type comes with the name), no file is opened or stat'ed.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Directories below a root that are still read.
pub const MAX_DEPTH: usize = 16;
/// Directories read per walk, over all roots together.
pub const MAX_DIRS: usize = 20_000;

/// What to walk and what to look for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WalkSpec {
    /// The roots to walk, canonical.
    pub roots: Vec<PathBuf>,
    /// Directories not to enter (denied paths, other writable roots are added automatically).
    pub skip: Vec<PathBuf>,
    /// Protected names to report wherever they are.
    pub names: Vec<String>,
    /// Whether to report `.git` entries.
    pub repositories: bool,
}

/// What one walk found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Found {
    /// Every `.git` entry (directory, file or symlink), breadth first.
    pub git_entries: Vec<PathBuf>,
    /// Every entry named like a protected name.
    pub named: Vec<PathBuf>,
    /// The bound was reached: some directories were not read.
    pub truncated: bool,
    /// Directories read.
    pub dirs_read: usize,
}

pub fn walk(spec: &WalkSpec) -> Found {
    let mut found = Found::default();
    if spec.roots.is_empty() || (spec.names.is_empty() && !spec.repositories) {
        return found;
    }
    let names: HashSet<OsString> = spec.names.iter().map(OsString::from).collect();
    let skip: HashSet<&Path> = spec.skip.iter().chain(spec.roots.iter()).map(PathBuf::as_path).collect();
    let mut queue: VecDeque<(PathBuf, usize)> = spec.roots.iter().map(|r| (r.clone(), 0)).collect();
    while let Some((dir, depth)) = queue.pop_front() {
        if found.dirs_read >= MAX_DIRS {
            found.truncated = true;
            break;
        }
        found.dirs_read += 1;
        // An unreadable directory holds nothing the command could plant either (it runs as the
        // same user, with fewer rights).
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(ft) = entry.file_type() else { continue };
            if name == ".git" {
                if spec.repositories {
                    found.git_entries.push(entry.path());
                }
                continue;
            }
            if names.contains(&name) {
                found.named.push(entry.path());
            }
            if ft.is_dir() && name != "node_modules" {
                let path = entry.path();
                if skip.contains(path.as_path()) {
                    continue;
                }
                if depth + 1 > MAX_DEPTH {
                    found.truncated = true;
                    continue;
                }
                queue.push_back((path, depth + 1));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(root: &Path, names: &[&str]) -> WalkSpec {
        WalkSpec { roots: vec![root.to_path_buf()], skip: vec![], names: names.iter().map(|s| s.to_string()).collect(), repositories: true }
    }

    #[test]
    fn finds_repositories_and_names_at_depth_but_not_inside_git_or_node_modules() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("a/b/c/d/e/.git/hooks")).unwrap();
        std::fs::create_dir_all(r.join(".git/x/.git")).unwrap();
        std::fs::create_dir_all(r.join("node_modules/p/.git")).unwrap();
        std::fs::create_dir_all(r.join("denied/.git")).unwrap();
        std::fs::write(r.join("a/.envrc"), "x").unwrap();
        std::fs::write(r.join("sub.git"), "").unwrap();
        std::fs::write(r.join("a/b/.git"), "gitdir: ../x").unwrap();
        std::os::unix::fs::symlink("/", r.join("a/link")).unwrap();
        let mut s = spec(&r, &[".envrc"]);
        s.skip.push(r.join("denied"));
        let f = walk(&s);
        assert_eq!(f.git_entries, vec![r.join(".git"), r.join("a/b/.git"), r.join("a/b/c/d/e/.git")]);
        assert_eq!(f.named, vec![r.join("a/.envrc")]);
        assert!(!f.truncated);
    }

    #[test]
    fn depth_bound_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let mut deep = r.clone();
        for i in 0..=MAX_DEPTH + 1 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        let f = walk(&spec(&r, &[]));
        assert!(f.truncated);
        assert_eq!(f.dirs_read, MAX_DEPTH + 1);
    }

    #[test]
    fn nothing_to_look_for_reads_nothing() {
        let t = tempfile::tempdir().unwrap();
        let mut s = spec(t.path(), &[]);
        s.repositories = false;
        assert_eq!(walk(&s).dirs_read, 0);
    }
}
