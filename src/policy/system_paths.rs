//! The system paths `host_code` looks at, each resolved once for one policy.
//!
//! `keep_host_code`, `refuse_roots_inside` and `refuse_system_roots` each resolved the same ~35
//! system directories and files (the program, library and loader directories, `/usr`, `/etc`, ...)
//! again, on the JavaScript thread of every workspace-write run: measured by pfix41, 2 `openat2` +
//! 2 `close` of each a run, about 130 system calls. They are resolved one after the other within
//! one `resolve`, so one answer each is what the three asked for in turn (a path changed between
//! them was already a race any of them could lose); nothing is kept past the policy.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::paths::{canonical_lenient, Lenient};

/// `canonical_lenient` of each path asked for, memoized for the life of this value.
#[derive(Default)]
pub(super) struct SystemPaths {
    seen: RefCell<HashMap<String, Option<Lenient>>>,
}

impl SystemPaths {
    /// `canonical_lenient(p)`, `None` where it is an error (`keep`'s "cannot resolve: skip").
    pub(super) fn lenient(&self, p: &str) -> Option<Lenient> {
        if let Some(known) = self.seen.borrow().get(p) {
            return known.clone();
        }
        let found = canonical_lenient("host code path", Path::new(p)).ok();
        self.seen.borrow_mut().insert(p.to_string(), found.clone());
        found
    }

    /// `p` canonical where it exists (`path_walk::canonicalize`): from the lenient answer when that
    /// found it whole or found it missing (a missing path has no canonical form either way); where
    /// the lenient walk refused it (past its bounds, a /proc link), `canonicalize` as before.
    pub(super) fn canonical(&self, p: &str) -> Option<PathBuf> {
        match self.lenient(p) {
            Some(Lenient { path, first_missing: None }) => Some(path),
            Some(_) => None,
            None => super::path_walk::canonicalize(Path::new(p)).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_is_resolved_once_and_answers_as_the_walks_do() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("link")).unwrap();
        let s = SystemPaths::default();
        let (link, missing) = (real.join("link"), real.join("missing/deeper"));
        let (link, missing) = (link.to_str().unwrap(), missing.to_str().unwrap());
        assert_eq!(s.canonical(link), Some(real.join("d")));
        assert_eq!(s.lenient(missing).unwrap().first_missing, Some(real.join("missing")));
        assert_eq!(s.canonical(missing), None, "a missing path has no canonical form, as canonicalize says");
        assert!(super::super::path_walk::canonicalize(Path::new(missing)).is_err());
        // Kept: the link changed after the first look is not looked at again within one policy.
        std::fs::remove_file(real.join("link")).unwrap();
        assert_eq!(s.canonical(link), Some(real.join("d")));
        assert_eq!(SystemPaths::default().canonical(link), None);
    }
}
