//! Where the symlinks inside a protected directory lead. Found by the fixer (fix34): a project's
//! committed `.cargo/config.toml -> ../cfg/cargo.toml` (a configuration shared by a link, as
//! `.vscode/settings.json -> ../cfg/settings.json` is) was kept read-only as the link only: the
//! directory is mounted read-only, but the kernel follows the link into the writable root, and a
//! default run wrote a `rustc-wrapper` into `cfg/cargo.toml` (the host's next `cargo metadata` ran
//! it) with `hostRisks: []`, while a protected name at a top that is itself a link has its target
//! kept (`Carver::entry`).
//!
//! Each protected directory's own entries are looked at (one listing, a `readlink` per symlink;
//! deeper ones are not: the files tools read there are its direct entries, `.cargo/config.toml`,
//! `.vscode/tasks.json`), and each symlink's target is given as named (its text, from the
//! directory), for `Carver::host_path` to keep read-only or absent. A version-control store's
//! directory is left to its own readers. At most `MAX_ENTRIES` entries a run; past them the
//! directories left are `cut`, which the result says.

use std::path::{Component, Path, PathBuf};

/// The stores whose links are judged by their own readers (`hook_links`, `store_configs`).
const STORES: &[&str] = &[".git", ".hg", ".sl", ".jj", ".pijul", "_darcs"];

/// The most entries of protected directories looked at in a run.
pub const MAX_ENTRIES: usize = 8192;

/// What `of` found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Each symlink's directory and where it leads as named (absolute, not resolved further).
    pub targets: Vec<(PathBuf, PathBuf)>,
    /// Directories not looked at whole: the budget ran out.
    pub cut: Vec<PathBuf>,
}

/// The symlinks among the entries of each directory of `named` (the walk's protected names).
pub fn of<'a>(named: impl Iterator<Item = &'a PathBuf>) -> Found {
    let mut out = Found::default();
    let mut left = MAX_ENTRIES;
    for dir in named {
        if dir.file_name().is_some_and(|n| STORES.iter().any(|s| n == *s)) || !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if !links_in(dir, &mut left, &mut out.targets) {
            out.cut.push(dir.clone());
        }
    }
    out
}

/// The symlinks among `dir`'s entries into `targets`, counting each entry from `left`; `false`
/// when `left` ran out before the listing ended.
fn links_in(dir: &Path, left: &mut usize, targets: &mut Vec<(PathBuf, PathBuf)>) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return true };
    for e in entries.flatten() {
        if *left == 0 {
            return false;
        }
        *left -= 1;
        if !e.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        if let Ok(text) = std::fs::read_link(e.path()) {
            targets.push((dir.to_path_buf(), without_dots(dir, &text)));
        }
    }
    true
}

/// `text` (a link's) from `dir`, each `..` taken off the part before it where that is no symlink
/// (as the kernel resolves it): `canonical_lenient` refuses a `..` in a path whose end is missing,
/// and `.vscode/tasks.json -> ../cfg/tasks.json`, its target not there yet, must be kept absent.
/// A `..` after a symlink stays, for `canonical_lenient` to resolve from where the link leads.
pub fn without_dots(dir: &Path, text: &Path) -> PathBuf {
    let mut out = if text.is_absolute() { PathBuf::from("/") } else { dir.to_path_buf() };
    for c in text.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir if !out.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) => {
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
    fn finds_the_links_of_protected_directories_but_stores() {
        let t = tempfile::tempdir().unwrap();
        let (cargo, git, file) = (t.path().join(".cargo"), t.path().join(".git"), t.path().join(".envrc"));
        for d in [&cargo, &git] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(&file, "x").unwrap();
        std::os::unix::fs::symlink("../cfg/c.toml", cargo.join("config.toml")).unwrap();
        std::os::unix::fs::symlink("/abs/x", cargo.join("config")).unwrap();
        std::fs::write(cargo.join("plain"), "x").unwrap();
        std::os::unix::fs::symlink("../elsewhere", git.join("config")).unwrap();
        let mut found = of([cargo.clone(), git, file].iter());
        found.targets.sort();
        assert_eq!(found.targets, [(cargo.clone(), PathBuf::from("/abs/x")), (cargo.clone(), t.path().join("cfg/c.toml"))]);
        assert!(found.cut.is_empty());
        let mut left = 1;
        assert!(!links_in(&cargo, &mut left, &mut Vec::new()), "three entries past a budget of one");
        std::os::unix::fs::symlink(t.path(), t.path().join("l")).unwrap();
        assert_eq!(without_dots(&cargo, Path::new("./../a/../b/x")), t.path().join("b/x"));
        assert_eq!(without_dots(t.path(), Path::new("l/../y")), t.path().join("l/../y"), "after a link: stays");
    }
}
