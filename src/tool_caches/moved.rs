//! After a run: a cache location that a private copy covered inside a writable root (a cwd of
//! `$HOME`, `HOME=/tmp` with a writable `/tmp`) must still be the directory it was. Found by an
//! attacker's review (cache_rename.js): the run renamed `~/go` above the overlaid `~/go/pkg/mod`
//! and made a new one, and the host's next `go build` used the run's module cache. bwrap's plan
//! pins every directory above such a location now (`plan::pins`); this check says so when one
//! moved all the same (a plan without the pins, another process that shares the root), as
//! `workspace-replaced` says it of a root.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::PrivateCache;
use crate::planted::{HostRisk, RiskKind};
use crate::policy::WritableRoot;

/// `(device, inode)` of the directory at `path`, not following a link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    path.symlink_metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// Record, for each cache a writable root holds (something could move it), the directory it is
/// now (`PrivateCache::before`).
pub(super) fn watch(caches: &mut [PrivateCache], roots: &[WritableRoot]) {
    for c in caches.iter_mut().filter(|c| roots.iter().any(|r| c.path.starts_with(&r.root))) {
        c.before = identity(&c.path);
    }
}

/// The caches `watch` recorded that are not the same directory now: a host risk each.
pub fn moved(caches: &[PrivateCache]) -> Vec<HostRisk> {
    let changed = |c: &&PrivateCache| c.before.is_some_and(|id| identity(&c.path) != Some(id));
    caches
        .iter()
        .filter(changed)
        .map(|c| HostRisk {
            path: c.path.to_string_lossy().into_owned(),
            kind: RiskKind::WorkspaceReplaced,
            detail: format!(
                "is a tool cache of the host's that the run had a private copy over, but not the directory it was before the \
                 run (a directory above it was moved or replaced): what the host's tools find there now may be the run's ({})",
                super::held_home::what_it_holds(&c.name)
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_that_leads_elsewhere_after_the_run_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let (go, outside) = (home.join("go/pkg/mod"), t.path().join("outside"));
        std::fs::create_dir_all(&go).unwrap();
        let roots = [WritableRoot { root: home.join("go"), id: None, read_only: Vec::new(), missing_read_only: Vec::new() }];
        let mut caches = vec![PrivateCache::new("go-mod", go.clone()), PrivateCache::new("npm", outside.clone())];
        watch(&mut caches, &roots);
        assert!(caches[0].before.is_some() && caches[1].before.is_none(), "only what a writable root holds");
        assert!(moved(&caches).is_empty());
        std::fs::rename(home.join("go/pkg"), home.join("go/pkg.moved")).unwrap();
        std::fs::create_dir_all(&go).unwrap();
        let risks = moved(&caches);
        assert_eq!(risks.len(), 1, "{risks:?}");
        assert_eq!((risks[0].path.as_str(), risks[0].kind), (go.to_str().unwrap(), RiskKind::WorkspaceReplaced));
        assert!(risks[0].detail.contains("go builds the modules"), "{}", risks[0].detail);
    }
}
