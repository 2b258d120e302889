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
    // `host_path`'s checks of the state directory, once each for this list (`canonical_memo`).
    let _lookups = crate::canonical_memo::Scope::begin();
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
    let (inside, unread) = kept_inside(stores);
    let mut open: BTreeMap<PathBuf, u32> = BTreeMap::new();
    let mut sets_open: BTreeMap<PathBuf, u32> = BTreeMap::new();
    for (store, is_set) in stores.iter().cloned().map(|s| (s, false)).chain(inside) {
        // One `lstat` per store after every run.
        let Ok(meta) = std::fs::symlink_metadata(&store) else { continue };
        // SAFETY: geteuid has no preconditions.
        if meta.is_dir() && meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o022 != 0 {
            if is_set { &mut sets_open } else { &mut open }.insert(store, meta.mode());
        }
    }
    // One entry per set at most `SETS_SHOWN` times, then one for the rest (a run made 100,000 in a
    // listed path, cross36: as many entries in every later run's result).
    let left: Vec<PathBuf> = sets_open.keys().skip(SETS_SHOWN).cloned().collect();
    open.extend(sets_open.into_iter().take(SETS_SHOWN));
    let mut risks: Vec<HostRisk> = open.into_iter().map(|(dir, mode)| open_risk(dir, mode)).collect();
    if let Some(first) = left.first() {
        risks.push(more_open_risk(first, left.len()));
    }
    if let Some(first) = unread.first() {
        risks.push(unread_risk(first, unread.len()));
    }
    risks
}

/// The directories in the stores that are refused, or passed over, where they are used when others
/// may write them: `held-links` (its records are then not used, and every run holds its links per
/// process, as before rfix27: a run in another process repointed a `writableRoots` link and a run
/// here wrote where it led) and each change set's directory (the set is refused, its continuation
/// and apply with it). Found by an attacker's review (fix30): a Landlock command's `chmod 0777` of
/// either went unsaid, for good. One listing per store that may hold sets (`may_hold_sets`), one
/// `lstat` per set, after each run.
fn kept_inside(stores: &[PathBuf]) -> (Vec<(PathBuf, bool)>, Vec<PathBuf>) {
    let held = crate::state_dir::host_path("held-links");
    let stores: std::collections::BTreeSet<&PathBuf> = stores.iter().filter(|s| may_hold_sets(s) && is_own_dir(s)).collect();
    let mut unread = Vec::new();
    let mut sets = Vec::new();
    for store in stores {
        // At most `NAMES_READ` names of each: a listed path is a path, and one whose store went (a
        // test's tool cache in a workspace) a run can make again and fill (cross36).
        let mut names = std::fs::read_dir(store).into_iter().flatten().flatten();
        for e in names.by_ref().take(NAMES_READ) {
            if let Some(n) = e.file_name().to_str().filter(|n| crate::review::id::check(n).is_ok()) {
                sets.push((store.join(n), true));
            }
        }
        if names.next().is_some() {
            unread.push(store.clone());
        }
    }
    (held.into_iter().map(|h| (h, false)).chain(sets).collect(), unread)
}

/// Whether `store` may be a change set store: not one of the state directory's other stores by
/// their names (tool caches, run directories, held directories, the state directory itself), which
/// the host's stores and most of those `known_stores` lists are; a store of another name
/// (`SANDSPAWN_CHANGE_SET_DIR`, `SANDSPAWN_TOOL_CACHE_DIR`) is listed.
fn may_hold_sets(store: &std::path::Path) -> bool {
    !store.file_name().is_some_and(|n| ["tool-caches", "runs", "held-dirs", "held-links", "sandspawn"].iter().any(|o| n == *o))
}

/// Whether `store` is a directory of this user's (one `lstat`, no link followed): only such a
/// directory is ever a store of this user's (used, covered or recorded), so only such a one is
/// looked in. Found by an attacker's review (cross37): another local user made a listed path in
/// `/var/tmp` again as a directory of theirs with 4,100 names, and every later run of this user
/// carried a `scan-incomplete` entry for it.
fn is_own_dir(store: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    std::fs::symlink_metadata(store).is_ok_and(|m| m.is_dir() && m.uid() == unsafe { libc::geteuid() })
}

/// The change set directories reported one by one; the rest in one entry.
const SETS_SHOWN: usize = 16;
/// The names of a store read after each run to find its sets: far more than the sets a user keeps
/// pending.
const NAMES_READ: usize = 4_096;

fn more_open_risk(first: &std::path::Path, count: usize) -> HostRisk {
    let shown = first.display().to_string();
    HostRisk {
        detail: format!(
            "{count} more change set directories in sandspawn's stores let other users write them (not listed one by one), \
             the first {shown}: if you did not change them yourself, chmod go-w each, and look at what they hold"
        ),
        path: shown,
        kind: RiskKind::PermissionsChanged,
    }
}

fn unread_risk(store: &std::path::Path, count: usize) -> HostRisk {
    let shown = store.display().to_string();
    let others = if count > 1 { format!(" (and {} more stores)", count - 1) } else { String::new() };
    HostRisk {
        detail: format!(
            "{shown}{others} holds more than {NAMES_READ} entries: only the first {NAMES_READ} were looked at for change set \
             directories others may write. A store named in known-stores whose directory was removed can be made again \
             by a run that may write there; if it is not a store you use, remove it"
        ),
        path: shown,
        kind: RiskKind::ScanIncomplete,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// `n` change set directories others may write, in a store at `t/name`.
    fn store_with_open_sets(t: &std::path::Path, name: &str, n: usize) -> PathBuf {
        let store = t.join(name);
        std::fs::create_dir(&store).unwrap();
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o700)).unwrap();
        for i in 0..n {
            let set = store.join(format!("cs-{i:016x}"));
            std::fs::create_dir(&set).unwrap();
            std::fs::set_permissions(&set, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        store
    }

    fn in_dir<'a>(risks: &'a [HostRisk], t: &std::path::Path) -> Vec<&'a HostRisk> {
        risks.iter().filter(|r| r.path.starts_with(&*t.to_string_lossy())).collect()
    }

    /// Found by an attacker's review (cross36): known-stores names paths, and one whose store was
    /// removed (a test's tool cache in `target/ttc-XXXX` of a workspace) a run in that workspace made
    /// again, with 100,000 change set directories of mode 0777 in it: every later run of the user, in
    /// any workspace, reported each (2,000 of them: 1.17 MB of every result). The first
    /// `SETS_SHOWN` are listed, one entry counts the rest.
    #[test]
    fn the_open_sets_of_a_store_are_listed_up_to_a_bound_then_counted() {
        let t = tempfile::tempdir().unwrap();
        let store = store_with_open_sets(t.path(), "ttc-Ab12", 40);
        let risks = open_to_others(&[store.clone()]);
        let ours = in_dir(&risks, t.path());
        assert_eq!(ours.len(), SETS_SHOWN + 1, "{ours:#?}");
        let last = ours.last().unwrap();
        assert!(last.detail.starts_with("24 more change set directories"), "{}", last.detail);
        assert_eq!(last.path, store.join(format!("cs-{SETS_SHOWN:016x}")).to_string_lossy());
        let few = store_with_open_sets(t.path(), "sets", 3);
        assert_eq!(in_dir(&open_to_others(&[few]), t.path()).len(), 3, "each of a few is listed");
    }

    /// A store's names are read up to `NAMES_READ` after each run, and one holding more is said.
    #[test]
    fn a_store_of_more_names_than_are_read_is_said_once() {
        let t = tempfile::tempdir().unwrap();
        let store = store_with_open_sets(t.path(), "ttc-Cd34", 0);
        for i in 0..NAMES_READ + 10 {
            std::fs::create_dir(store.join(format!("d{i}"))).unwrap();
        }
        let risks = open_to_others(&[store.clone()]);
        let ours = in_dir(&risks, t.path());
        assert_eq!(ours.len(), 1, "{ours:#?}");
        assert_eq!(ours[0].kind, RiskKind::ScanIncomplete);
        assert_eq!(ours[0].path, store.to_string_lossy());
    }

    /// Found by an attacker's review (cross37): a listed path another user made again (anyone may
    /// under `/var/tmp`) as a directory of theirs is no store of this user's, and is not looked in.
    #[test]
    fn a_directory_of_another_user_at_a_listed_path_is_not_looked_in() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return; // only root can give a directory to another user (the JS test does it as root)
        }
        let t = tempfile::tempdir().unwrap();
        let store = store_with_open_sets(t.path(), "ttc-Ef56", 0);
        for i in 0..NAMES_READ + 10 {
            std::fs::create_dir(store.join(format!("d{i}"))).unwrap();
        }
        let theirs = store_with_open_sets(t.path(), "sets", 3);
        for d in [&store, &theirs] {
            let st = std::process::Command::new("chown").args(["-R", "64127:64127"]).arg(d).status().unwrap();
            assert!(st.success());
        }
        let risks = open_to_others(&[store, theirs]);
        assert_eq!(in_dir(&risks, t.path()), Vec::<&HostRisk>::new());
    }
}
