//! How deep a path a configuration names may lie and still be followed on every run: an include
//! of a repository's git configuration, a program it, a `.cargo`, a yarn, Maven or `.envrc`
//! configuration names, a toolchain directory, a protected directory's link target. Each is
//! looked up once per run or more (a `stat` per repository per include, then a walk of the kept
//! path component by component to keep it read-only or absent), and the cost of a look-up grows
//! with its components. How many such paths there are is bounded (`repo::PATHS_IN_ALL`,
//! `config_reads`); how deep each is was the command's to choose. Found by an attacker's review
//! (cross35): one `mkdir` chain 1,500 levels deep, 20 repositories including 255 files at its
//! bottom and 4 `.cargo` naming 256 runners there cost every later `true` 6.4 s of host CPU (300
//! such repositories: 27 s, 80 s late).
//!
//! A path of more components is not followed: an include is not read (its configuration is
//! `capped`, which the result says), any other path is not kept and is said in
//! `sandboxDetails.notEnforced` (`hook_risks::Kept::too_deep`).

use std::path::Path;

/// The most components (the root's included) of a path followed. Projects name files a few levels
/// from where they are; a workspace itself rarely lies more than twenty below `/`.
pub const MAX_COMPONENTS: usize = 64;

/// Whether `p` has more than `MAX_COMPONENTS` components (counted no further than one past them).
pub fn too_deep(p: &Path) -> bool {
    p.components().nth(MAX_COMPONENTS).is_some()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn a_path_past_the_bound_is_too_deep() {
        let at = |n: usize| PathBuf::from(format!("/{}", vec!["a"; n].join("/")));
        assert!(!super::too_deep(&at(super::MAX_COMPONENTS - 1)), "the root and 63 names are 64 components");
        assert!(super::too_deep(&at(super::MAX_COMPONENTS)));
        assert!(!super::too_deep(std::path::Path::new("tools/fsmon")));
    }
}
