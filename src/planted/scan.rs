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
//!
//! The walk after the run reuses the first one's listing of every directory whose inode and ctime
//! are unchanged and whose ctime was already older than the walk (`Index`): adding, removing or
//! renaming an entry sets the directory's ctime to now, and ctime cannot be set from user space
//! (unlike mtime), so such a directory has exactly the entries it had. Only its `lstat` is paid.
//! The walk before the next run of the same area reuses it the same way (`walk_reusing`), with
//! what each reused directory held reported again: an agent running command after command in one
//! workspace pays for the directories that changed, not for the whole tree every time.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Directories below a root that are still read.
pub const MAX_DEPTH: usize = 16;
/// Directories read per walk, over all roots together.
pub const MAX_DIRS: usize = 20_000;

/// What to walk and what to look for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
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

/// What one directory looked like when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirState {
    ino: u64,
    ctime: (i64, i64),
    /// Its subdirectories that the walk entered.
    subdirs: Vec<PathBuf>,
    /// Its `.git` entry and protected names, as the walk reported them.
    git: Vec<PathBuf>,
    named: Vec<PathBuf>,
}

/// Every directory a walk read, for the next walk of the same area.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Index {
    dirs: HashMap<PathBuf, DirState>,
    /// Unix seconds when the walk started: a directory changed in that second or later is read again
    /// (a timestamp is coarser than the time between two changes).
    started: i64,
}

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Walk the area. With `prior` (the index of an earlier walk of the same spec) unchanged
/// directories are not read again, and their entries are not reported again (they are the same):
/// what changed since `prior` (the walk after a run).
pub fn walk_indexed(spec: &WalkSpec, prior: Option<&Index>) -> (Found, Index) {
    walk_with(spec, prior, false)
}

/// Walk the area, reading only the directories that changed since `prior`, and report everything
/// there is, unchanged directories' entries included (the walk before a run).
pub fn walk_reusing(spec: &WalkSpec, prior: Option<&Index>) -> (Found, Index) {
    walk_with(spec, prior, true)
}

fn walk_with(spec: &WalkSpec, prior: Option<&Index>, report_reused: bool) -> (Found, Index) {
    let mut found = Found::default();
    if spec.roots.is_empty() || (spec.names.is_empty() && !spec.repositories) {
        return (found, Index::default());
    }
    let mut index = Index { dirs: HashMap::new(), started: now_secs() };
    let names: HashSet<OsString> = spec.names.iter().map(OsString::from).collect();
    let skip: HashSet<&Path> = spec.skip.iter().chain(spec.roots.iter()).map(PathBuf::as_path).collect();
    let mut queue: VecDeque<(PathBuf, usize)> = spec.roots.iter().map(|r| (r.clone(), 0)).collect();
    // Read and reused directories both count: the bound covers the same area with or without `prior`.
    let mut visited = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        if visited >= MAX_DIRS {
            found.truncated = true;
            break;
        }
        let Ok(meta) = dir.symlink_metadata() else { continue };
        visited += 1;
        let ctime = (meta.ctime(), meta.ctime_nsec());
        if let Some(old) = prior.and_then(|p| p.dirs.get(&dir).filter(|d| d.ino == meta.ino() && d.ctime == ctime && ctime.0 < p.started)) {
            queue.extend(old.subdirs.iter().map(|s| (s.clone(), depth + 1)));
            if report_reused {
                found.git_entries.extend(old.git.iter().cloned());
                found.named.extend(old.named.iter().cloned());
            }
            index.dirs.insert(dir, old.clone());
            continue;
        }
        found.dirs_read += 1;
        // An unreadable directory holds nothing the command could plant either (it runs as the
        // same user, with fewer rights).
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let (mut subdirs, mut git, mut named) = (Vec::new(), Vec::new(), Vec::new());
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(ft) = entry.file_type() else { continue };
            if name == ".git" {
                if spec.repositories {
                    git.push(entry.path());
                }
                continue;
            }
            if names.contains(&name) {
                named.push(entry.path());
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
                subdirs.push(path.clone());
                queue.push_back((path, depth + 1));
            }
        }
        found.git_entries.extend(git.iter().cloned());
        found.named.extend(named.iter().cloned());
        index.dirs.insert(dir, DirState { ino: meta.ino(), ctime, subdirs, git, named });
    }
    (found, index)
}

pub fn walk(spec: &WalkSpec) -> Found {
    walk_indexed(spec, None).0
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
    fn a_second_walk_reads_only_changed_directories() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("a/b/c")).unwrap();
        std::fs::create_dir_all(r.join("x/y")).unwrap();
        let s = spec(&r, &[".envrc"]);
        let (first, mut index) = walk_indexed(&s, None);
        assert_eq!(first.dirs_read, 6);
        // As if the first walk had run two seconds after every directory last changed (within the
        // same second everything is read again). The ctimes recorded are the real ones.
        let ctime_of = |p: &Path| std::fs::symlink_metadata(p).map(|m| (m.ctime(), m.ctime_nsec())).unwrap();
        for (p, d) in index.dirs.iter_mut() {
            d.ctime = ctime_of(p);
        }
        index.started = now_secs() + 2;
        let (again, _) = walk_indexed(&s, Some(&index));
        assert_eq!(again.dirs_read, 0, "nothing changed");
        std::fs::create_dir_all(r.join("a/b/c/new/.git")).unwrap();
        std::fs::write(r.join("x/.envrc"), "x").unwrap();
        let (changed, _) = walk_indexed(&s, Some(&index));
        assert_eq!(changed.git_entries, vec![r.join("a/b/c/new/.git")]);
        assert_eq!(changed.named, vec![r.join("x/.envrc")]);
        assert_eq!(changed.dirs_read, 3, "c, its new directory, and x");
    }

    #[test]
    fn a_reusing_walk_reports_everything_but_reads_only_what_changed() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("a/b/.git")).unwrap();
        std::fs::create_dir_all(r.join("x/y")).unwrap();
        std::fs::write(r.join("x/.envrc"), "x").unwrap();
        let s = spec(&r, &[".envrc"]);
        let (first, mut index) = walk_reusing(&s, None);
        assert_eq!((first.dirs_read, first.git_entries.clone(), first.named.clone()), (5, vec![r.join("a/b/.git")], vec![r.join("x/.envrc")]));
        index.started = now_secs() + 2; // as if the directories had last changed well before the walk
        let (again, index2) = walk_reusing(&s, Some(&index));
        assert_eq!(again.dirs_read, 0, "nothing changed: nothing read");
        assert_eq!((again.git_entries, again.named), (first.git_entries.clone(), first.named.clone()), "but everything reported");
        assert_eq!(index2.dirs.len(), index.dirs.len(), "the index carries the reused directories on");
        std::fs::remove_file(r.join("x/.envrc")).unwrap();
        std::fs::create_dir_all(r.join("x/y/.git")).unwrap();
        let (changed, _) = walk_reusing(&s, Some(&index));
        assert_eq!(changed.dirs_read, 2, "x and y changed");
        let mut git = changed.git_entries.clone();
        git.sort();
        assert_eq!(git, vec![r.join("a/b/.git"), r.join("x/y/.git")]);
        assert!(changed.named.is_empty(), "a removed name is gone");
    }

    #[test]
    fn nothing_to_look_for_reads_nothing() {
        let t = tempfile::tempdir().unwrap();
        let mut s = spec(t.path(), &[]);
        s.repositories = false;
        assert_eq!(walk(&s).dirs_read, 0);
    }
}
