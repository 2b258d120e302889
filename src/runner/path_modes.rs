//! After the run: the directories inside the writable roots, above a `readOnlyPaths` or `denyRead`
//! path (or a name held absent), that this user can no longer search. Found by a fixer's review
//! (stmode25): a run's `chmod 000 ws/cfg` hid the read-only ws/cfg/settings.json from the next
//! plan, which took it for missing and let that run overwrite it. That plan is refused now
//! (`policy::hidden`); the run that did it is reported here, in its own result, with the fix, as
//! `store_modes` does for the state stores. Nothing is restored silently: the mode may be the
//! user's choice, and the host cannot tell.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::planted::{HostRisk, RiskKind};

/// The paths to check: those the policy keeps read-only, masks or holds absent inside a root, and
/// each root's `.git`. Borrowed from the policy, which the check after the run shares with the run
/// (`SideServices::host_risks`): copied, its hundreds of paths (a `.git` per nested repository, every
/// name held absent) were a clone and a free each after every run.
pub struct Ruled<'a> {
    pub roots: Vec<&'a Path>,
    pub paths: Vec<&'a Path>,
    /// Each root's `.git`, the one path made here.
    tops: Vec<PathBuf>,
}

impl<'a> Ruled<'a> {
    pub fn of(policy: &'a crate::policy::ResolvedPolicy) -> Ruled<'a> {
        let roots = policy.writable_roots.iter().map(|r| r.root.as_path()).collect();
        let in_roots = policy.writable_roots.iter().flat_map(|r| r.read_only.iter().map(PathBuf::as_path));
        let held = policy.writable_roots.iter().flat_map(|r| r.missing_read_only.iter().map(|m| m.path.as_path()));
        // A root's own `.git`: its top made unsearchable hides it and the protected names.
        let tops = policy.writable_roots.iter().map(|r| r.root.join(".git")).collect();
        let paths = in_roots.chain(held).chain(policy.deny_read.iter().map(PathBuf::as_path)).collect();
        Ruled { roots, paths, tops }
    }
}

/// One entry per directory of this user's, inside a writable root, that denies it the search of
/// such a path. A root host searches every directory and sees none.
pub fn unsearchable_above_rules(ruled: &Ruled) -> Vec<HostRisk> {
    let in_a_root = |d: &Path| ruled.roots.iter().any(|r| d.starts_with(r));
    let paths = ruled.paths.iter().copied().chain(ruled.tops.iter().map(PathBuf::as_path));
    // Per blocker, the path of the first directory (in `Path` order) it blocks, as a map of
    // directories in that order would give: the same report whatever order the paths came in.
    let mut blockers: BTreeMap<PathBuf, (&Path, u32, &Path)> = BTreeMap::new();
    let firsts = one_per_dir(paths);
    let looked = crate::search_blocker::blockers(&firsts.iter().map(|&(_, p)| p).collect::<Vec<_>>());
    for ((dir, p), b) in firsts.into_iter().zip(looked) {
        if let Some(b) = b.filter(|b| b.owned && in_a_root(&b.dir)) {
            let first = blockers.entry(b.dir).or_insert((dir, b.mode, p));
            if dir < first.0 {
                *first = (dir, b.mode, p);
            }
        }
    }
    blockers.into_iter().map(|(dir, (_, mode, p))| risk(dir, mode, p)).collect()
}

/// What blocks a path depends on its directory alone, and the paths (every name held absent at
/// each root's top) share a few: one look per directory, not a `stat` and an `access` of every
/// ancestor per path (some 1,500 system calls after each run, about 1 ms). Each directory with the
/// first of `paths` in it. Keyed by bytes, not by `Path` (whose order and hash go component by
/// component): a workspace of 200 repositories has 200 directories here after every run.
fn one_per_dir<'p>(paths: impl Iterator<Item = &'p Path>) -> Vec<(&'p Path, &'p Path)> {
    use std::os::unix::ffi::OsStrExt;
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(paths.size_hint().0);
    let mut out = Vec::new();
    for p in paths {
        let dir = p.parent().unwrap_or(p);
        if seen.insert(dir.as_os_str().as_bytes()) {
            out.push((dir, p));
        }
    }
    out
}

fn risk(dir: PathBuf, mode: u32, ruled: &Path) -> HostRisk {
    let shown = dir.display().to_string();
    HostRisk {
        detail: format!(
            "{shown} (mode {:03o}) no longer lets this user search it, and it holds {}, which the policy keeps \
             read-only, masks or holds absent (readOnlyPaths, denyRead, protected names): a later run could not \
             look it up, so every later sandboxed run with this policy is refused (ERR_SANDBOX_SETUP_FAILED) until \
             it is reachable again. If you did not change it yourself: chmod u+rwx {shown}",
            mode & 0o7777,
            ruled.display()
        ),
        path: shown,
        kind: RiskKind::PermissionsChanged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_look_per_directory_with_its_first_path() {
        let paths: Vec<PathBuf> = ["/w/deps/r1/.git", "/w/deps/r0/.git", "/w/deps/r1/.husky", "/w/.git", "/w/deps/r0/.envrc"].iter().map(PathBuf::from).collect();
        let got: Vec<(&Path, &Path)> = one_per_dir(paths.iter().map(PathBuf::as_path));
        let want: Vec<(&Path, &Path)> = vec![(Path::new("/w/deps/r1"), Path::new("/w/deps/r1/.git")), (Path::new("/w/deps/r0"), Path::new("/w/deps/r0/.git")), (Path::new("/w"), Path::new("/w/.git"))];
        assert_eq!(got, want);
    }
}
