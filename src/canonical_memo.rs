//! The canonical paths of sandspawn's state directories and stores, each looked up once while one
//! list of stores is made (`Scope`), not once per question asked of it. A plan's cover list
//! (`plan::stores::to_cover`) asked `realpath` of the same five paths (`~/.local/state/sandspawn`
//! and its `runs`, `held-dirs`, `change-sets`, the caches' root) 18 times: `host_path`'s checks, the
//! own stores' look-up, the run environment's, and `known_stores`' check of its own and of every
//! listed entry, ~100 `readlink`s a plan and two plans a workspace-write run (perf43).
//!
//! Why a memo cannot go stale where it matters: it lives on one thread for one call (`Scope`, ended
//! when dropped, a panic's unwinding too), made before this run's command runs and gone before it
//! can (the helper runs nothing before its arguments, which come from the plan: `runner::overlap`),
//! and the next plan, the walked one, every later run and the after-run checks each look up anew.
//! Only paths that resolved are kept: a store found missing and made (`stores::own_store`) is looked
//! up again. What another process changes during the call was already a race the separate look-ups
//! could lose as well (they ran one after the other, microseconds apart); each answer is still one
//! the file system gave within the call.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

thread_local! {
    static MEMO: RefCell<Option<HashMap<PathBuf, PathBuf>>> = const { RefCell::new(None) };
}

/// While alive (and only on its thread), `canonicalize` answers each path as it first resolved.
/// Scopes nest: the outermost ends the memo.
pub struct Scope {
    outermost: bool,
}

impl Scope {
    pub fn begin() -> Scope {
        let outermost = MEMO.with(|m| {
            let mut m = m.borrow_mut();
            m.is_none().then(|| *m = Some(HashMap::new())).is_some()
        });
        Scope { outermost }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if self.outermost {
            MEMO.with(|m| *m.borrow_mut() = None);
        }
    }
}

/// `realpath` of `p` (`path_walk::canonicalize` past two components: one `openat2` where no link is on the way), from
/// the memo when a `Scope` holds one and `p` resolved in it before. Failures are never kept.
pub fn canonicalize(p: &Path) -> std::io::Result<PathBuf> {
    if let Some(c) = MEMO.with(|m| m.borrow().as_ref().and_then(|m| m.get(p).cloned())) {
        return Ok(c);
    }
    // `realpath` reads one link a component: for one or two, no more than `openat2` and a close.
    let c = if p.components().count() > 3 { crate::policy::path_walk::canonicalize(p)? } else { std::fs::canonicalize(p)? };
    MEMO.with(|m| {
        if let Some(m) = m.borrow_mut().as_mut() {
            m.insert(p.to_path_buf(), c.clone());
        }
    });
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inside a scope a path answers as it first resolved; outside (after it, or on another
    /// thread) it is looked up anew; a failure is looked up again even inside.
    #[test]
    fn a_scope_answers_as_first_resolved_and_no_longer() {
        let t = tempfile::tempdir().unwrap();
        let (a, b, link) = (t.path().join("a"), t.path().join("b"), t.path().join("link"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let real = |p: &Path| p.canonicalize().unwrap();
        std::os::unix::fs::symlink(&a, &link).unwrap();
        {
            let _scope = Scope::begin();
            assert_eq!(canonicalize(&link).unwrap(), real(&a));
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink(&b, &link).unwrap();
            assert_eq!(canonicalize(&link).unwrap(), real(&a), "kept within the scope");
            {
                let _inner = Scope::begin();
            }
            assert_eq!(canonicalize(&link).unwrap(), real(&a), "an inner scope's end keeps it");
            let other = link.clone();
            let there = std::thread::spawn(move || canonicalize(&other).unwrap()).join().unwrap();
            assert_eq!(there, real(&b), "another thread has no memo");
            let missing = t.path().join("missing");
            assert!(canonicalize(&missing).is_err());
            std::fs::create_dir(&missing).unwrap();
            assert_eq!(canonicalize(&missing).unwrap(), real(&missing), "a failure is not kept");
        }
        assert_eq!(canonicalize(&link).unwrap(), real(&b), "looked up anew after the scope");
    }
}
