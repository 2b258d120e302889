//! The directories between a writable root and a root nested below it: `/tmp/x` and
//! `/tmp/x/outer` for a cwd `/tmp/x/outer/proj` in the writable `/tmp` (a harness's `mktemp -d`).
//! Tools search every parent of their cwd for their configuration (cargo's `.cargo/config.toml`,
//! rustup's `rust-toolchain.toml`, direnv's `.envrc`, npm's `.npmrc`), and a shared temporary
//! directory is not walked (`planted::Request::scan_roots`): a run wrote
//! `../.cargo/config.toml` with a `rustc-wrapper` there, unreported, and the host's next
//! `cargo build` in the workspace ran it (found by an attacker's review, host25). So those
//! directories get the protected names a root's top gets (`protect`). They are few (the levels
//! between two roots), and already mount points (`plan::pins`): a run cannot rename them away.

use std::path::{Path, PathBuf};

/// The directories strictly between each of `roots` (canonical: every writable root, reviewed ones
/// too) and the nearest other root above it, for those of them that `inside` says a root holds,
/// each once, nearest first per root. A root with no other root above it has none.
pub fn directories_between(roots: &[PathBuf], inside: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        // Only a root nested in another has directories between: none up to `/` otherwise.
        if !roots.iter().any(|o| o != root && root.starts_with(o)) {
            continue;
        }
        for dir in root.ancestors().skip(1) {
            if roots.iter().any(|r| r == dir) {
                break;
            }
            if inside(dir) && !out.iter().any(|d| d == dir) {
                out.push(dir.to_path_buf());
            }
        }
    }
    out
}

/// `names` for the directories between roots, with `.git` and `HEAD` when `protect_git`: kept
/// from being created there as at a root's top (git's discovery walks up from a workspace to the
/// first `.git`, or the first directory that is a git directory itself: `with_head`), by the same
/// listing as the names (`presence`), so at no extra system call.
pub fn with_git(names: &[String], protect_git: bool) -> Vec<String> {
    with_head(names, protect_git).into_iter().chain(protect_git.then(|| ".git".to_string())).collect()
}

/// `names` with git's `HEAD` when `protect_git` (`upward::GIT_HEAD`), for the tops above a
/// workspace, whose `.git` the carver keeps already (`Carver::repository`).
pub fn with_head(names: &[String], protect_git: bool) -> Vec<String> {
    names.iter().cloned().chain(protect_git.then(|| super::upward::GIT_HEAD.0.to_string())).collect()
}

/// The roots of `roots` (canonical) holding another root strictly below them: `/tmp` for a cwd
/// below it, the home for a cwd below a writable home. Their tops are above a workspace too.
pub fn roots_above(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots.iter().filter(|r| roots.iter().any(|o| o != *r && o.starts_with(r))).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_directories_between_nested_roots() {
        let p = |s: &str| PathBuf::from(s);
        let roots = [p("/tmp"), p("/tmp/x/outer/proj"), p("/tmp/x/outer/other"), p("/tmp/t"), p("/work/ws"), p("/work/ws/a/b")];
        let got = directories_between(&roots, &|_| true);
        assert_eq!(got, vec![p("/tmp/x/outer"), p("/tmp/x"), p("/work/ws/a")]);
        assert!(directories_between(&[p("/work/ws")], &|_| true).is_empty(), "nothing above an outermost root");
        assert_eq!(roots_above(&roots), vec![p("/tmp"), p("/work/ws")]);
        assert!(roots_above(&[p("/work/ws"), p("/tmp")]).is_empty());
    }

    #[test]
    fn git_only_with_protect_git() {
        let names = vec![".envrc".to_string()];
        assert_eq!(with_git(&names, true), vec![".envrc".to_string(), "HEAD".to_string(), ".git".to_string()]);
        assert_eq!(with_git(&names, false), names);
        assert_eq!(with_head(&names, true), vec![".envrc".to_string(), "HEAD".to_string()]);
        assert_eq!(with_head(&names, false), names);
    }
}
