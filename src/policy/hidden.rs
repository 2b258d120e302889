//! A `readOnlyPaths` or `denyRead` path that did not resolve: missing, or hidden. Found by a
//! fixer's review (stmode25): a run did `chmod 000 ws/cfg`, and the next plan's lookup of the
//! read-only ws/cfg/settings.json failed with EACCES and took it for missing; that run got no
//! read-only bind over it, only the missing path's treatment, did `chmod 700 ws/cfg` and overwrote
//! the file, which was then moved aside and reported as created (the user's content gone). A
//! `denyRead` path so hidden lost its mask. So a lookup that fails for anything but absence refuses
//! the run, naming the directory and the fix; unless the directory that denies the search is
//! another user's: the run can neither change its mode nor pass it, as before.

use std::path::Path;

use crate::error::{Result, SandboxError};
use crate::search_blocker::{blocker, hidden};

/// Ok when `p` (of `option`, not resolving) is missing, or out of this user's reach behind another
/// user's directory; a refusal when something this user (a run) could make reachable hides it.
pub(crate) fn refuse_if_hidden(option: &str, p: &Path) -> Result<()> {
    let err = match std::fs::canonicalize(p) {
        Ok(_) => return Ok(()),
        Err(e) => e,
    };
    // A symlink loop is a dangling link: there is nothing behind it to keep.
    if err.raw_os_error() == Some(libc::ELOOP) {
        return Ok(());
    }
    let Some((why, fix)) = hidden(p, &err) else { return Ok(()) };
    Err(SandboxError::setup_failed_for(
        format!(
            "{option} {} cannot be looked up: {why}; an earlier sandboxed run may have changed it, and a path that \
             cannot be looked up can be neither kept read-only nor masked, so no run starts until it is reachable",
            p.display()
        ),
        fix,
    ))
}

/// A writable root's top this user cannot search (a run's `chmod 000` of its root): its `.git` and
/// protected names cannot be looked up, and were taken for missing where nothing could be created
/// (no placeholder, nothing moved aside), so the next run, which made it searchable again, wrote
/// the repository's hooks unguarded. Refused as a hidden path is; another user's top as before.
pub(crate) fn refuse_unsearchable_top(root: &Path) -> Result<()> {
    match blocker(&root.join(".git")) {
        Some(b) if b.owned => Err(SandboxError::setup_failed_for(
            format!(
                "the writable root {} cannot be looked into: {}; an earlier sandboxed run may have changed it, and \
                 its .git and protected names cannot be kept read-only unseen, so no run starts until it is searchable",
                root.display(),
                b.describe()
            ),
            format!("chmod u+rwx {}", b.dir.display()),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// As root every directory is searchable: the refusal is seen by an ordinary user only (the JS
    /// test, path-modes.test.js, runs one as such).
    #[test]
    fn a_missing_path_passes_and_one_under_an_unsearchable_own_directory_refuses() {
        let t = tempfile::tempdir().unwrap();
        let cfg = t.path().join("cfg");
        std::fs::create_dir(&cfg).unwrap();
        std::fs::write(cfg.join("settings.json"), "x").unwrap();
        assert!(refuse_if_hidden("sandbox.readOnlyPaths[0]", &cfg.join("gone")).is_ok());
        assert!(refuse_if_hidden("sandbox.readOnlyPaths[0]", &cfg.join("settings.json/x")).is_ok());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return;
        }
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o000)).unwrap();
        let got = refuse_if_hidden("sandbox.readOnlyPaths[0]", &cfg.join("settings.json"));
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o700)).unwrap();
        let msg = got.unwrap_err().to_string();
        assert!(msg.contains("mode 000") && msg.contains(&format!("chmod u+rwx {}", cfg.display())), "{msg}");
    }
}
