//! The `readOnlyPaths` files inside a directly written root that are hard links. A read-only mount
//! covers a name, not the inode: with `readOnlyPaths: ['ws/config']` and `ws/alias` another name of
//! it (made on the host, or by an earlier run without that entry), a default workspace-write run
//! wrote the file through `ws/alias`, `notEnforced` empty (found by an attacker's review, rev42).
//! Its other names cannot be found without a walk that stats every file, so the run says so before
//! it, as for the repositories' hard-linked configuration (`config_hard`). The files inside a
//! read-only directory are not looked at. One `lstat` per entry a run; none without the option.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// What `sandboxDetails.notEnforced` says of `paths` (the user's read-only entries of the
/// directly written roots, canonical): one line each of those that are regular files with more
/// than one name, a few named and the rest counted.
pub fn not_enforced(paths: &[PathBuf]) -> Vec<String> {
    let shared: Vec<(String, u64)> = paths
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok().filter(|m| m.is_file() && m.nlink() > 1).map(|m| (p.display().to_string(), m.nlink())))
        .collect();
    let said = shared.iter().map(|(p, n)| {
        format!(
            "readOnlyPaths: {p} has {n} names (hard links): it is read-only, but its other names, which the run may write, could \
             not be made read-only (finding them needs a walk that stats every file); a write through one changes it"
        )
    });
    super::few_named::lines(&mut said.into_iter(), shared.len(), |more| {
        format!("readOnlyPaths: {more} more entries have other names (hard links) that could not be made read-only, as the ones above")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_with_another_name_is_said_one_with_one_name_or_a_directory_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (config, alias, alone, sub) = (dir.path().join("config"), dir.path().join("alias"), dir.path().join("alone"), dir.path().join("sub"));
        std::fs::write(&config, "x").unwrap();
        std::fs::hard_link(&config, &alias).unwrap();
        std::fs::write(&alone, "y").unwrap();
        std::fs::create_dir(&sub).unwrap();
        let said = not_enforced(&[config.clone(), alone, sub, dir.path().join("missing")]);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains(&config.display().to_string()) && said[0].contains("2 names"), "{said:?}");
    }
}
