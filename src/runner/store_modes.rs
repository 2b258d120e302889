//! After the run: the directories above sandspawn's stores that this user can no longer search.
//! Found by an attacker's review (rfix25): the directories between a writable root and a store are
//! pinned against a rename, not a mode change, and a run's `chmod 000 ~/.local/state` hid the
//! stores from the next plan, which covered none of them. That plan is refused now
//! (`plan::store_lookup`); the run that did it is reported here, in its own result, with the fix.
//! Nothing is restored silently: the mode may be the user's choice, and the host cannot tell.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::planted::{HostRisk, RiskKind};

/// The stores both checks look at: the host process's own, and those `known_stores` lists. Listed
/// once after a run for both (each listed them: two reads of the list and of the environment's
/// state directories a run, ro35).
pub fn stores(env: &BTreeMap<String, String>) -> Vec<PathBuf> {
    // The list names the host's own stores too (this process recorded them): each is checked once.
    let mut stores: Vec<PathBuf> = crate::plan::stores::host_stores(env).into_iter().chain(crate::plan::known_stores::listed()).collect();
    stores.sort();
    stores.dedup();
    stores
}

/// One entry per directory that denies this user the search of a store it holds (`stores`), when
/// the user owns it (a run may have changed it). A root host searches every directory and sees none.
pub fn unsearchable_above_stores(stores: &[PathBuf]) -> Vec<HostRisk> {
    let mut blockers: BTreeMap<PathBuf, u32> = BTreeMap::new();
    for store in stores {
        // After every run, for every store: one `access` each while nothing blocks (`blocker`).
        if let Some(b) = crate::search_blocker::blocker(store).filter(|b| b.owned) {
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

/// One entry per store of this user's (`stores`: the host process's own, the state directories
/// that hold them, and those `known_stores` lists), and per directory in them used only while private
/// (`kept_inside`), that a group or others may write. Found by an attacker's
/// review (store29): the Landlock mode does not govern modes, and its command's `chmod 0777
/// ~/.local/state/sandspawn` went unsaid while every later run went on: another user's process
/// could then rename or replace what sandspawn keeps there (a store's root of its own is refused as
/// not private, but `held-links` and `known-stores` are looked up by name). Reported, not
/// restored: the mode may be the user's choice, and what was put there meanwhile cannot be told.
pub fn open_to_others(stores: &[PathBuf]) -> Vec<HostRisk> {
    use std::os::unix::fs::MetadataExt;
    let inside = kept_inside(stores);
    let mut open: BTreeMap<PathBuf, u32> = BTreeMap::new();
    for store in stores.iter().cloned().chain(inside) {
        // One `lstat` per store after every run.
        let Ok(meta) = std::fs::symlink_metadata(&store) else { continue };
        // SAFETY: geteuid has no preconditions.
        if meta.is_dir() && meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o022 != 0 {
            open.insert(store, meta.mode());
        }
    }
    open.into_iter().map(|(dir, mode)| open_risk(dir, mode)).collect()
}

/// The directories in the stores that are refused, or passed over, where they are used when others
/// may write them: `held-links` (its records are then not used, and every run holds its links per
/// process, as before rfix27: a run in another process repointed a `writableRoots` link and a run
/// here wrote where it led) and each change set's directory (the set is refused, its continuation
/// and apply with it). Found by an attacker's review (fix30): a Landlock command's `chmod 0777` of
/// either went unsaid, for good. One listing per store that may hold sets (`may_hold_sets`), one
/// `lstat` per set, after each run.
fn kept_inside(stores: &[PathBuf]) -> Vec<PathBuf> {
    let held = crate::state_dir::path(|k| std::env::var_os(k).map(PathBuf::from), "held-links");
    let stores: std::collections::BTreeSet<&PathBuf> = stores.iter().filter(|s| may_hold_sets(s)).collect();
    let sets = stores.into_iter().flat_map(|store| {
        let names = std::fs::read_dir(store).into_iter().flatten().flatten().filter_map(|e| e.file_name().into_string().ok());
        names.filter(|n| crate::review::id::check(n).is_ok()).map(|n| store.join(n)).collect::<Vec<_>>()
    });
    held.into_iter().chain(sets).collect()
}

/// Whether `store` may be a change set store: not one of the state directory's other stores by
/// their names (tool caches, run directories, held directories, the state directory itself), which
/// the host's stores and most of those `known_stores` lists are; a store of another name
/// (`SANDSPAWN_CHANGE_SET_DIR`, `SANDSPAWN_TOOL_CACHE_DIR`) is listed.
fn may_hold_sets(store: &std::path::Path) -> bool {
    !store.file_name().is_some_and(|n| ["tool-caches", "runs", "held-dirs", "held-links", "sandspawn"].iter().any(|o| n == *o))
}

fn open_risk(dir: PathBuf, mode: u32) -> HostRisk {
    let shown = dir.display().to_string();
    HostRisk {
        detail: format!(
            "{shown} (mode {:03o}) lets other users write it, and it holds sandspawn's state (change sets, tool caches, \
             its records): another user's process could rename or replace what sandspawn keeps there, and a store \
             others may write is refused (ERR_SANDBOX_SETUP_FAILED). If you did not change it yourself: chmod go-w {shown}, \
             and look at what it holds",
            mode & 0o7777
        ),
        path: shown,
        kind: RiskKind::PermissionsChanged,
    }
}
