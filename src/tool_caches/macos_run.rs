//! A macOS run's private caches, before its plan is built (the table of tools is `macos`, the
//! seeding `seed`): the store's directories made and each cache's directory and variables set.

use std::collections::BTreeMap;

use super::{macos, store, HostContent, ToolCaches};
use crate::error::{Result, SandboxError};

/// A run's caches on macOS, before its plan is built: the store's directories made (seeded the
/// first time a workspace uses them), each cache's `dir` and `variables` set, and `host_content`
/// said (`hidden` when a host cache could not be cloned). A cache whose tool cannot be pointed
/// there (no variable can hold the path) is dropped: it stays read-only, as without the store.
pub fn prepare(tc: &mut ToolCaches, env: &BTreeMap<String, String>) -> Result<()> {
    prepare_with(tc, env, &super::seed::clone_tree)
}

pub(super) fn prepare_with(tc: &mut ToolCaches, env: &BTreeMap<String, String>, clone: &super::seed::CloneFn<'_>) -> Result<()> {
    let (Some(root), Some(scope)) = (tc.root.clone(), tc.store.clone()) else { return Ok(()) };
    if tc.caches.is_empty() {
        return Ok(());
    }
    let failed = |what: &str, e: std::io::Error| SandboxError::setup_failed(format!("{what} in the tool cache store failed: {e}"), "");
    let (opened, _) = super::scope::create(&root, &scope, tc.record.as_ref())?;
    store::evict_unused(&opened, super::UNUSED_FOR);
    // The store's own path, symlinks resolved (Seatbelt compares real paths); the cache
    // directories in it are never resolved (see `seed`).
    let scope = scope.canonicalize().map_err(|e| failed("resolving the workspace's directory", e))?;
    let mut visible = true;
    let mut kept = Vec::new();
    for mut c in std::mem::take(&mut tc.caches) {
        let Some(seed) = macos::seed_of(&c.name, env) else { continue };
        let dir = scope.join(&c.name);
        let variables = macos::variables(&c.name, &dir, &c.path, env);
        if variables.is_empty() {
            continue;
        }
        visible &= super::seed::ensure(&dir, &c.path, seed, &super::seed::marker(&dir), &tc.run_id, clone).map_err(|e| failed(&format!("making {}", dir.display()), e))?;
        (c.dir, c.variables) = (Some(dir), variables);
        kept.push(c);
    }
    tc.caches = kept;
    tc.host_content = Some(if visible { HostContent::Visible } else { HostContent::Hidden });
    Ok(())
}
