//! After the run: the directories above sandspawn's stores that this user can no longer search.
//! Found by an attacker's review (rfix25): the directories between a writable root and a store are
//! pinned against a rename, not a mode change, and a run's `chmod 000 ~/.local/state` hid the
//! stores from the next plan, which covered none of them. That plan is refused now
//! (`plan::store_lookup`); the run that did it is reported here, in its own result, with the fix.
//! Nothing is restored silently: the mode may be the user's choice, and the host cannot tell.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::planted::{HostRisk, RiskKind};

/// One entry per directory that denies this user the search of a store it holds (the host
/// process's own, and those `known_stores` lists), when the user owns it (a run may have changed
/// it). A root host searches every directory and sees none.
pub fn unsearchable_above_stores(env: &BTreeMap<String, String>) -> Vec<HostRisk> {
    let stores = crate::plan::stores::host_stores(env).into_iter().chain(crate::plan::known_stores::listed());
    let mut blockers: BTreeMap<PathBuf, u32> = BTreeMap::new();
    for store in stores {
        // After every run, for every store: one `access` each while nothing blocks (`blocker`).
        if let Some(b) = crate::search_blocker::blocker(&store).filter(|b| b.owned) {
            blockers.insert(b.dir, b.mode);
        }
    }
    blockers.into_iter().map(|(dir, mode)| risk(dir, mode)).collect()
}

fn risk(dir: PathBuf, mode: u32) -> HostRisk {
    let shown = dir.display().to_string();
    HostRisk {
        detail: format!(
            "{shown} (mode {:03o}) no longer lets this user search it, and it holds sandspawn's state stores \
             (change sets, tool caches): a later run could not cover them, so every later sandboxed run is \
             refused (ERR_SANDBOX_SETUP_FAILED) until it is reachable again. If you did not change it yourself: \
             chmod u+rwx {shown}",
            mode & 0o7777
        ),
        path: shown,
        kind: RiskKind::PermissionsChanged,
    }
}
