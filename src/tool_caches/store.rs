//! The per-user store that receives what sandboxed commands write into their caches.
//!
//! Location: `$SANDSPAWN_TOOL_CACHE_DIR`, else `$XDG_STATE_HOME/sandspawn/tool-caches`, else
//! `$HOME/.local/state/sandspawn/tool-caches` (the command's environment decides, like the cache
//! locations themselves). Not under `$XDG_CACHE_HOME`: `~/.cache` is itself overlaid, and an
//! overlay's upper directory cannot lie inside its lower one. Layout, per cache location `NAME`:
//! `NAME/upper` holds the writes and persists; `NAME/work/RUN` is the kernel's scratch directory of
//! one run (overlayfs needs one per mount, so concurrent runs share `upper` but never a work
//! directory), removed after the run. Directories are created with mode 0700.

use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};

/// The store's root for this environment, or `None` when neither the override nor `HOME` is an
/// absolute path.
pub fn root(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let var = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(dir) = var("SANDSPAWN_TOOL_CACHE_DIR") {
        return Some(dir);
    }
    let state = var("XDG_STATE_HOME").or_else(|| var("HOME").map(|h| h.join(".local/state")))?;
    Some(state.join("sandspawn/tool-caches"))
}

/// A name for one run's work directories, unique among concurrent runs on this host.
pub fn run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{}-{}", std::process::id(), nanos, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Create the store's directories for these cache names (idempotent, safe for concurrent runs).
/// The store must be a real directory owned by this user: a store another user could write to
/// would let them plant what the next build installs.
pub fn create(root: &Path, names: &[&str]) -> Result<()> {
    let fail = |p: &Path, e: std::io::Error| {
        SandboxError::setup_failed(format!("cannot create the private tool cache store at {}: {e}", p.display()), "")
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder.create(root).map_err(|e| fail(root, e))?;
    check_owned(root)?;
    for name in names {
        for sub in ["upper", "work"] {
            let p = root.join(name).join(sub);
            builder.create(&p).map_err(|e| fail(&p, e))?;
        }
    }
    Ok(())
}

fn check_owned(root: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| SandboxError::setup_failed(format!("cannot inspect the tool cache store {}: {e}", root.display()), ""))?;
    let uid = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(SandboxError::setup_failed(
            format!(
                "the tool cache store {} must be a directory owned by uid {uid} and writable by nobody else; \
                 fix or remove it, or set SANDSPAWN_TOOL_CACHE_DIR",
                root.display()
            ),
            "",
        ));
    }
    Ok(())
}

/// Remove a tree the kernel or a tool made hard to remove: overlayfs leaves `work/work` with mode
/// 000, Go's module cache is read-only. Missing is fine.
pub fn remove_tree(p: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(m) if !m.is_dir() => return std::fs::remove_file(p),
        Ok(_) => {}
    }
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(p)? {
        remove_tree(&entry?.path())?;
    }
    std::fs::remove_dir(p)
}

/// Everything in the store, for `sandspawn cache clean`. Refuses a path that is not a store
/// (no `upper` directories inside), so a wrong variable cannot make it delete something else.
pub fn clean(root: &Path) -> Result<bool> {
    let entries = match std::fs::read_dir(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(SandboxError::setup_failed(format!("cannot read the tool cache store {}: {e}", root.display()), "")),
        Ok(d) => d,
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if !p.join("upper").is_dir() {
            return Err(SandboxError::invalid(
                "store",
                format!("{} does not look like a sandspawn tool cache store ({} is not a cache); nothing was removed", root.display(), p.display()),
            ));
        }
    }
    remove_tree(root).map_err(|e| SandboxError::setup_failed(format!("removing {} failed: {e}", root.display()), ""))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn root_follows_xdg() {
        assert_eq!(root(&env(&[("HOME", "/h")])), Some(PathBuf::from("/h/.local/state/sandspawn/tool-caches")));
        assert_eq!(root(&env(&[("HOME", "/h"), ("XDG_STATE_HOME", "/s")])), Some(PathBuf::from("/s/sandspawn/tool-caches")));
        assert_eq!(root(&env(&[("HOME", "/h"), ("SANDSPAWN_TOOL_CACHE_DIR", "/x")])), Some(PathBuf::from("/x")));
        assert_eq!(root(&env(&[("HOME", "rel")])), None);
        assert_eq!(root(&env(&[])), None);
    }

    #[test]
    fn create_is_private_and_idempotent_and_clean_removes_it() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("store");
        create(&r, &["npm", "xdg-cache"]).unwrap();
        create(&r, &["npm"]).unwrap();
        assert_eq!(std::fs::metadata(&r).unwrap().permissions().mode() & 0o777, 0o700);
        assert!(r.join("npm/upper").is_dir() && r.join("xdg-cache/work").is_dir());
        // What overlayfs leaves behind: a mode-000 directory.
        let w = r.join("npm/work/run1/work");
        std::fs::create_dir_all(&w).unwrap();
        std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o000)).unwrap();
        assert!(clean(&r).unwrap());
        assert!(!r.exists());
        assert!(!clean(&r).unwrap(), "nothing to clean");
    }

    #[test]
    fn refuses_a_loose_store_and_a_non_store() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("store");
        std::fs::create_dir(&r).unwrap();
        std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(create(&r, &["npm"]).unwrap_err().message.contains("writable by nobody else"));
        std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir(r.join("not-a-cache")).unwrap();
        assert_eq!(clean(&r).unwrap_err().code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        assert!(r.join("not-a-cache").exists());
    }
}
