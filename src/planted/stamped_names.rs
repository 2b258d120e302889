//! Which named entries the walk found are stamped before the run, for the check after it
//! (`detect::changed_in_place`): the report-only names, and the protected names that are not
//! read-only in the sandbox. A protected name is read-only (or kept absent) only at the top of a
//! writable root and of a repository the walk found; one below those tops (a package of a monorepo
//! with its own `.cargo/config.toml`, `.vscode`, `.claude` or `.mcp.json`) is as writable as the
//! rest of the workspace. Found by an attacker's review (host31): such a one rewritten in place, or
//! given a new file inside, was not reported (only one created or replaced was), and the host's next
//! `cargo build` in that package ran the `rustc-wrapper` the run wrote there.
//!
//! Version-control directories (`.hg`, `.sl`, `.jj`, `.pijul`) below the tops are not stamped: each
//! holds its whole store, past the stamp's bound, and every run would say so (`scan-incomplete`);
//! their configuration files are looked at instead (`store_configs`, `store_below_tops`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The directories where protected names are read-only or kept absent: the writable roots' tops
/// and the tops of the repositories the walk found (the parents of their `.git` entries).
pub fn kept_tops<'a>(roots: &'a [PathBuf], git_entries: &'a [PathBuf]) -> HashSet<&'a OsStr> {
    let repos = git_entries.iter().filter_map(|g| g.parent());
    roots.iter().map(PathBuf::as_path).chain(repos).map(Path::as_os_str).collect()
}

/// Whether the named entry `p` is stamped: a report-only name anywhere, a protected one (of
/// `protected`) below the tops that keep it.
pub fn stamped(p: &Path, protected: &[String], kept_tops: &HashSet<&OsStr>) -> bool {
    let Some(name) = p.file_name() else { return false };
    if !protected.iter().any(|x| x.as_bytes() == name.as_encoded_bytes()) {
        return true;
    }
    let below_tops = p.parent().is_some_and(|dir| !kept_tops.contains(dir.as_os_str()));
    below_tops && !super::store_configs::is_store(name.as_encoded_bytes())
}

/// Whether the named entry `p` is a store (a protected name of `protected`) below the tops: its
/// configuration files are looked at instead (`store_configs`).
pub fn store_below_tops(p: &Path, protected: &[String], kept_tops: &HashSet<&OsStr>) -> bool {
    let Some(name) = p.file_name() else { return false };
    let listed = protected.iter().any(|x| x.as_bytes() == name.as_encoded_bytes());
    let below_tops = p.parent().is_some_and(|dir| !kept_tops.contains(dir.as_os_str()));
    listed && below_tops && super::store_configs::is_store(name.as_encoded_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_only_names_and_protected_ones_below_the_tops() {
        let p = PathBuf::from;
        let roots = [p("/w")];
        let git = [p("/w/.git"), p("/w/repo/.git")];
        let tops = kept_tops(&roots, &git);
        let protected: Vec<String> = [".cargo", ".vscode", ".hg"].iter().map(|s| s.to_string()).collect();
        assert!(stamped(&p("/w/.tool-versions"), &protected, &tops), "a report-only name, at a top");
        assert!(stamped(&p("/w/sub/.tool-versions"), &protected, &tops), "and below");
        assert!(!stamped(&p("/w/.cargo"), &protected, &tops), "read-only at a root's top");
        assert!(!stamped(&p("/w/repo/.vscode"), &protected, &tops), "and at a repository's");
        assert!(stamped(&p("/w/sub/.cargo"), &protected, &tops), "writable below them");
        assert!(stamped(&p("/w/repo/pkg/.vscode"), &protected, &tops));
        assert!(!stamped(&p("/w/sub/.hg"), &protected, &tops), "a store is not stamped");
        assert!(store_below_tops(&p("/w/sub/.hg"), &protected, &tops), "its configuration is looked at");
        assert!(!store_below_tops(&p("/w/repo/.hg"), &protected, &tops), "read-only at a repository's top");
        assert!(!store_below_tops(&p("/w/sub/.cargo"), &protected, &tops));
        assert!(!store_below_tops(&p("/w/sub/.sl"), &protected, &tops), "not a protected name here");
    }
}
