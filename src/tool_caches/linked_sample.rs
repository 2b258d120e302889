//! Whether a package directory's files are hard links, judged from the files themselves, for
//! `linked`: wherever the store is.
//!
//! A store found by its name (the environment's, a configuration file's, a default place) misses
//! one named anywhere else (a `store-dir` on the command line of the install, a file pnpm read
//! from a parent directory, a store since moved). A file of `node_modules/.pnpm` or of a `.venv`'s
//! `site-packages` with more than one name is a hard link, whatever the other name is: a demanding
//! user wants to hear of it, not of the places sandspawn thought of. A copy (`package-import-method
//! =copy`, `UV_LINK_MODE=copy`) or a reflink clone (btrfs, XFS) has one name and is rightly not
//! said. Bounded: at most `BUDGET` entries looked at, `PER_DIR` of each directory (the first
//! `getdents` of a large `.pnpm` only), `DEPTH` levels down, no symlink followed: a few dozen
//! `lstat`s, and only where such a directory exists (the caller's gate). The sample can miss
//! links among copies; the store found by name is said all the same.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const BUDGET: usize = 64;
const PER_DIR: usize = 8;
/// `.pnpm/<pkg@ver>/node_modules/@scope/<name>/<file>`: the deepest package file is 5 levels down.
const DEPTH: usize = 5;

/// A file of the package directory with other names.
#[derive(Debug, PartialEq, Eq)]
pub struct Linked {
    pub file: PathBuf,
    pub names: u64,
}

/// The first regular file with more than one name among those sampled under `top`.
pub fn linked_file(top: &Path) -> Option<Linked> {
    let mut budget = BUDGET;
    search(top, DEPTH, &mut budget)
}

/// The `site-packages` directories of a virtual environment (`lib/python3.X/site-packages`).
pub fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else { return Vec::new() };
    let pythons = entries.flatten().take(PER_DIR).filter(|e| e.file_name().to_string_lossy().starts_with("python"));
    pythons.map(|e| e.path().join("site-packages")).collect()
}

fn search(dir: &Path, depth: usize, budget: &mut usize) -> Option<Linked> {
    let entries = std::fs::read_dir(dir).ok()?;
    for entry in entries.flatten().take(PER_DIR) {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        // The entry's type from the listing: no `stat` for a symlink (pnpm's dependency links) or a directory.
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_file() {
            let names = entry.metadata().map_or(1, |m| m.nlink());
            if names > 1 {
                return Some(Linked { file: entry.path(), names });
            }
        } else if kind.is_dir() && depth > 1 && entry.file_name() != "__pycache__" {
            if let Some(found) = search(&entry.path(), depth - 1, budget) {
                return Some(found);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_file_is_found_through_symlinks_unfollowed_and_copies() {
        let t = tempfile::tempdir().unwrap();
        let pnpm = t.path().join(".pnpm");
        let pkg = pnpm.join("@s+a@1/node_modules/@s/a");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("package.json"), "{}").unwrap();
        std::os::unix::fs::symlink(t.path(), pnpm.join("@s+a@1/node_modules/loop")).unwrap();
        assert_eq!(linked_file(&pnpm), None, "a copy, and a link not followed");
        std::fs::write(t.path().join("store"), "x").unwrap();
        std::fs::hard_link(t.path().join("store"), pkg.join("index.js")).unwrap();
        assert_eq!(linked_file(&pnpm), Some(Linked { file: pkg.join("index.js"), names: 2 }));
        std::fs::create_dir_all(t.path().join(".venv/lib/python3.12/site-packages")).unwrap();
        assert_eq!(site_packages(&t.path().join(".venv")), [t.path().join(".venv/lib/python3.12/site-packages")]);
    }

    #[test]
    fn the_sample_stops_at_its_depth() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("store"), "x").unwrap();
        let deep = t.path().join("d0/e/1/2/3/4/5");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::hard_link(t.path().join("store"), deep.join("f")).unwrap();
        assert_eq!(linked_file(&t.path().join("d0")), None, "deeper than DEPTH");
    }
}
