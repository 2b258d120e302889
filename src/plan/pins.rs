//! Mount points that keep paths where they are. The kernel refuses to rename or remove a mount
//! point (EBUSY), but a plain directory moves with everything mounted below it. So a command could
//! rename `/tmp/a` away when the cwd `/tmp/a/b/ws` is bound inside the writable `/tmp`, recreate
//! `/tmp/a/b/ws` with a repository of its own, and the host's next `git status` there would run its
//! configuration; or rename the directory that holds sandspawn's own files and put a wrapper helper
//! in its place, which the host runs in front of bwrap.
//!
//! For every writable root nested in another writable root, and for every own file (see
//! `own_files`) inside a writable root, each directory between the outer root and it is bound onto
//! itself (still writable: it lies in that root) right after the outer root's bind, before anything
//! is mounted inside it; the own file itself is bound read-only there. Nothing below is hidden by
//! those binds, because nothing below is mounted yet when they are made. A directory inside a
//! read-only carve-out or a denied path needs nothing: its parent cannot be written.
//!
//! The same for sandspawn's stores inside a writable root (a cwd of $HOME holds
//! `~/.local/state/sandspawn`): each is covered with an empty directory (a mount point itself), but
//! one run renamed `~/.local/state/sandspawn` away and left a decoy at its path, and the next run
//! was planned with the decoy covered while the real change sets, moved, were writable (found by an
//! attacker's review). Pinned like a nested root: the directories between the root and the store.
//! The same for the tool caches' locations a private copy is mounted over (`stores` holds them
//! too): with the cwd at $HOME, a run renamed `~/go` and `~/.m2` above the overlaid `~/go/pkg/mod`
//! and `~/.m2/repository` and made new ones, where the host's next build looked (an attacker's
//! review, cache_rename.js).
//!
//! The same for the read-only and denied paths inside a writable root that the rules name by path
//! (`kept`): one run renamed `cfg` above `cfg/sub/settings.json` (a read-only mount; `cfg` is not
//! one), and the next run's rules named a path where nothing was while the file, at `cfg2/...`,
//! was writable (or readable, denied). A `.git` entry or a protected name needs no pin: the walk
//! finds it again wherever a rename puts it (and Seatbelt's rules match it by name). Unless a
//! fixed path of the host's leads to it (`Baseline::named_from_outside`: a home link's target, a
//! global git file): GNU stow's `~/.bashrc -> dotfiles/bash/.bashrc` was kept read-only, but a run
//! renamed `bash` away and made a new `bash/.bashrc`, which the host's next shell ran (an
//! attacker's review, renamename.sh); reported, not undone. Pinned now, whatever its name.
//!
//! The same for the symlinks held for the run (`held_links`: on the way to a home link's target or
//! a global git file, or a `denyRead` path): a mount cannot cover a symlink, so one the run
//! replaces is put back after it (`planted::detect`), through its directory opened without
//! following a symlink. A run renamed the directory holding `~/dotfiles/active/bashrc` away and
//! made `active` a link to a directory of its own: the held link could not be put back, and the
//! host's next shell ran the planted `bashrc` (an attacker's review, fixes18/dirswap.sh). The
//! directories between the root and each held link are pinned; the link itself is not.

use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};
use crate::policy::{ResolvedPolicy, WritableRoot};

/// What to mount right after each writable root's bind (indexed like the roots).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    /// Directories bound onto themselves, shallowest first.
    pub dirs: Vec<Vec<PathBuf>>,
    /// Own files bound read-only, shallowest first.
    pub own: Vec<Vec<PathBuf>>,
}

/// The read-only and denied paths strictly inside a writable root that must stay where they are:
/// those named by path only (not a `.git` entry or a protected name the walk found, which it finds
/// again, unless a fixed path of the host's leads to it), not inside another such path, and there now.
/// And the symlinks held for the run that lie in no such path (`held_links`).
pub fn kept(policy: &ResolvedPolicy) -> Vec<PathBuf> {
    let roots = &policy.writable_roots;
    let protected: Vec<&Path> = roots.iter().flat_map(|r| r.read_only.iter()).chain(&policy.deny_read).map(PathBuf::as_path).collect();
    let inside_a_root = |p: &Path| roots.iter().any(|r| p != r.root && p.starts_with(&r.root));
    let mut kept: Vec<PathBuf> = protected
        .iter()
        .copied()
        .filter(|p| (policy.planted.entry_id(p).is_none() || policy.planted.named_from_outside.contains(*p)) && inside_a_root(p))
        .filter(|p| !protected.iter().any(|c| c != p && p.starts_with(c)))
        .filter(|p| p.symlink_metadata().is_ok())
        .map(Path::to_path_buf)
        .collect();
    kept.extend(held_links(policy).into_iter().filter(|l| !protected.iter().any(|c| l.starts_with(c))));
    kept
}

/// In a plan another program runs, what the walk found below a root's top as well: each carve-out
/// (a nested repository's `.git`, its hooks, its existing protected names) and each placeholder
/// (its missing ones), not inside another protected path. `kept` leaves them out because a
/// spawnSandboxed run's walk after it finds them again wherever a rename put them and reports the
/// path made anew (`repository-created`); a plan has no walk after it, and nothing looked again
/// (found by an attacker's review, kern37: a plan's command renamed `lib` above the nested
/// repository `lib/sub`, made `lib/sub` again with a `.git/config` of its own naming a
/// `core.fsmonitor` and an `.envrc`, and nothing said so). Pinned, the directories above them
/// cannot be renamed (`EBUSY`). One bind per directory between a root's top and such a path.
pub fn walked_in_plan(policy: &ResolvedPolicy) -> Vec<PathBuf> {
    let roots = &policy.writable_roots;
    let protected: Vec<&Path> = roots.iter().flat_map(|r| r.read_only.iter()).chain(&policy.deny_read).map(PathBuf::as_path).collect();
    let below_a_top = |p: &Path| roots.iter().any(|r| p.parent().is_some_and(|d| d != r.root && d.starts_with(&r.root)));
    let found = roots.iter().flat_map(|r| r.read_only.iter().chain(r.missing_read_only.iter().map(|m| &m.path)));
    let mut paths: Vec<PathBuf> = found.filter(|p| below_a_top(p) && !protected.iter().any(|c| c != p && p.starts_with(c))).cloned().collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The symlinks held for the run (`planted::Baseline::links_on_the_way`, `deny_links`) strictly
/// inside a writable root: put back after the run, through their directories, which must stay
/// where they are for that (see the module's words). The Landlock mode keeps them unwritten.
pub fn held_links(policy: &ResolvedPolicy) -> Vec<PathBuf> {
    let planted = &policy.planted;
    let inside_a_root = |p: &Path| policy.writable_roots.iter().any(|r| p != r.root && p.starts_with(&r.root));
    let mut links: Vec<PathBuf> = planted.links_on_the_way.iter().chain(&planted.deny_links).map(|l| l.path.clone()).filter(|p| inside_a_root(p)).collect();
    links.sort();
    links.dedup();
    links
}

/// The held links (`held_links`) a plan another program runs binds over themselves, read-only (the
/// helper's `--pin-link`): those in no read-only or denied path (one there cannot be changed
/// anyway). A run puts a changed one back after it (`planted::detect`); a plan has nobody after it
/// (found by an attacker's review, revc37: a plan's command repointed a nested repository's `.git
/// -> ../../gitdirs/sub` at a bare repository of its own, whose `core.fsmonitor` the host's next
/// `git status` there runs, and nothing said so).
pub fn held_links_in_plan(policy: &ResolvedPolicy) -> Vec<PathBuf> {
    let protected: Vec<&Path> = policy.writable_roots.iter().flat_map(|r| r.read_only.iter()).chain(&policy.deny_read).map(PathBuf::as_path).collect();
    held_links(policy).into_iter().filter(|l| !protected.iter().any(|c| l.starts_with(c))).collect()
}

/// Seatbelt's form of the same (it matches paths when they are used, so a rename above a kept path
/// moves the path out of its rules within the run): every directory from each kept path's parent up
/// to the deepest writable root holding it, whose renaming and removal the profile denies.
pub fn above_kept(policy: &ResolvedPolicy) -> Vec<PathBuf> {
    above(policy, &kept(policy))
}

/// Every directory from each of `paths`' parents up to the deepest writable root holding it (none
/// for a path in no writable root).
pub fn above(policy: &ResolvedPolicy, paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for p in paths {
        let Some(root) = policy.writable_roots.iter().filter(|r| p.starts_with(&r.root)).max_by_key(|r| r.root.as_os_str().len()) else { continue };
        dirs.extend(p.ancestors().skip(1).take_while(|a| a.starts_with(&root.root)).map(Path::to_path_buf));
    }
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Seatbelt's form of the nested roots' pins: each writable root nested in another and every
/// directory between it and the deepest root holding it, whose renaming and removal the profile
/// denies. Renamed, the inner root would carry its carve-outs out of the rules that name them by
/// path, into the outer root's clause (found by an attacker's review, which bwrap's pins covered).
pub fn nested_roots(policy: &ResolvedPolicy) -> Vec<PathBuf> {
    let roots = &policy.writable_roots;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for r in roots {
        let Some(i) = holder(roots, &r.root) else { continue };
        dirs.extend(r.root.ancestors().take_while(|a| *a != roots[i].root).map(Path::to_path_buf));
    }
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The pins for `roots`, given sandspawn's own files (canonical), the denied paths, the paths
/// kept in place (`kept`) and sandspawn's stores and overlaid caches (canonical mount points, see
/// `stores`, `tool_caches::Mounts::covered`). A writable root inside
/// an own file is refused (`roots_outside_own`).
pub fn plan(roots: &[WritableRoot], own: &[PathBuf], deny: &[PathBuf], kept: &[PathBuf], stores: &[PathBuf]) -> Result<Pins> {
    roots_outside_own(roots, own)?;
    Ok(pins_of(roots, own, deny, kept, stores))
}

/// Refuses a writable root inside one of sandspawn's own files (canonical): the run could change
/// what the host executes (every plan that writes: bwrap's through `plan`, Seatbelt's).
pub fn roots_outside_own(roots: &[WritableRoot], own: &[PathBuf]) -> Result<()> {
    for r in roots {
        if let Some(o) = own.iter().find(|o| r.root.starts_with(o)) {
            return Err(SandboxError::invalid(
                "sandbox",
                format!(
                    "the writable root {} lies in sandspawn's own files ({}), which the host runs: a command could change \
                     them. Use a workspace outside sandspawn's installation, or install sandspawn elsewhere",
                    r.root.display(),
                    o.display()
                ),
            ));
        }
    }
    Ok(())
}

fn pins_of(roots: &[WritableRoot], own: &[PathBuf], deny: &[PathBuf], kept: &[PathBuf], stores: &[PathBuf]) -> Pins {
    let mut pins = Pins { dirs: vec![Vec::new(); roots.len()], own: vec![Vec::new(); roots.len()] };
    let protected_below = |i: usize, p: &Path| roots[i].read_only.iter().chain(deny).any(|c| p.starts_with(c));
    #[derive(PartialEq)]
    enum Kind {
        Root,
        Own,
        Kept,
    }
    // A store is pinned as a nested root is: the directories above it (it is a mount point itself).
    let nested = roots.iter().map(|r| r.root.as_path()).chain(stores.iter().map(PathBuf::as_path));
    let targets = nested.map(|r| (r, Kind::Root)).chain(own.iter().map(|o| (o.as_path(), Kind::Own))).chain(kept.iter().map(|k| (k.as_path(), Kind::Kept)));
    for (target, kind) in targets {
        let Some(i) = holder(roots, target) else { continue };
        // A kept path is itself read-only or denied (`kept` left out those inside another).
        if kind != Kind::Kept && protected_below(i, target) {
            continue;
        }
        let mut dir = roots[i].root.clone();
        let between = target.strip_prefix(&roots[i].root).expect("held").parent().unwrap_or(Path::new(""));
        for part in between.components() {
            dir.push(part);
            if !pins.dirs[i].contains(&dir) {
                pins.dirs[i].push(dir.clone());
            }
        }
        if kind == Kind::Own && !pins.own[i].iter().any(|o| o == target) {
            pins.own[i].push(target.to_path_buf());
        }
    }
    // A directory at or under one of the root's own paths needs no pin: the own path's read-only
    // bind, a mount point itself, pins it and everything below. A writable pin there would end up
    // under that read-only bind, read-only, and the helper's check of the writable binds would
    // find every run in a workspace with sandspawn in its node_modules changed (stop 53's CI).
    for (dirs, own) in pins.dirs.iter_mut().zip(&pins.own) {
        dirs.retain(|d| !own.iter().any(|o| d.starts_with(o)));
    }
    for list in pins.dirs.iter_mut().chain(pins.own.iter_mut()) {
        list.sort_by(|a, b| a.components().count().cmp(&b.components().count()).then_with(|| a.cmp(b)));
    }
    pins
}

/// The deepest writable root that holds `p` strictly below its top.
fn holder(roots: &[WritableRoot], p: &Path) -> Option<usize> {
    roots.iter().enumerate().filter(|(_, r)| p != r.root && p.starts_with(&r.root)).max_by_key(|(_, r)| r.root.components().count()).map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(p: &str, ro: &[&str]) -> WritableRoot {
        WritableRoot { root: p.into(), read_only: ro.iter().map(PathBuf::from).collect(), missing_read_only: Vec::new(), id: None }
    }

    fn paths(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn a_nested_root_pins_the_directories_between() {
        let roots = [root("/tmp", &[]), root("/tmp/a/b/ws", &["/tmp/a/b/ws/.git"])];
        let p = plan(&roots, &[], &[], &[], &[]).unwrap();
        assert_eq!(p.dirs[0], paths(&["/tmp/a", "/tmp/a/b"]));
        assert!(p.dirs[1].is_empty());
        assert!(p.own.iter().all(Vec::is_empty));
        let direct = [root("/tmp", &[]), root("/tmp/ws", &[])];
        assert!(plan(&direct, &[], &[], &[], &[]).unwrap().dirs.iter().all(Vec::is_empty), "a root's own bind is a mount point already");
    }

    #[test]
    fn own_files_are_pinned_in_the_deepest_root_and_bound_read_only() {
        let roots = [root("/ws", &[]), root("/ws/node_modules", &[])];
        let own = paths(&["/ws/node_modules/sandspawn/index.js", "/ws/node_modules/sandspawn/lib", "/ws/node_modules/sandspawn-linux-x64-gnu/sandspawn-helper", "/usr/lib/other"]);
        let p = plan(&roots, &own, &[], &[], &[]).unwrap();
        assert!(p.dirs[0].is_empty());
        assert_eq!(p.dirs[1], paths(&["/ws/node_modules/sandspawn", "/ws/node_modules/sandspawn-linux-x64-gnu"]));
        assert_eq!(p.own[1], paths(&["/ws/node_modules/sandspawn/index.js", "/ws/node_modules/sandspawn/lib", "/ws/node_modules/sandspawn-linux-x64-gnu/sandspawn-helper"]));
        // The package at a root's top (a source checkout as the workspace): its files alone.
        let top = plan(&[root("/src/sandspawn", &[])], &paths(&["/src/sandspawn/index.js"]), &[], &[], &[]).unwrap();
        assert!(top.dirs[0].is_empty());
        assert_eq!(top.own, vec![paths(&["/src/sandspawn/index.js"])]);
    }

    #[test]
    fn nothing_is_pinned_writable_at_or_under_an_own_directory() {
        // An installed package is kept whole; the helper and bwrap the plan adds lie inside it.
        let roots = [root("/ws", &[])];
        let own = paths(&["/ws/node_modules/sandspawn", "/ws/node_modules/sandspawn/bin/x64/sandspawn-helper"]);
        let p = plan(&roots, &own, &[], &[], &[]).unwrap();
        assert_eq!(p.dirs[0], paths(&["/ws/node_modules"]));
        assert_eq!(p.own[0], own);
    }

    #[test]
    fn a_kept_path_pins_the_directories_above_it_not_itself() {
        let roots = [root("/ws", &["/ws/cfg/sub/settings.json"])];
        let p = plan(&roots, &[], &paths(&["/ws/keys/deep/secret"]), &paths(&["/ws/cfg/sub/settings.json", "/ws/keys/deep/secret"]), &[]).unwrap();
        assert_eq!(p.dirs[0], paths(&["/ws/cfg", "/ws/keys", "/ws/cfg/sub", "/ws/keys/deep"]));
        assert!(p.own[0].is_empty());
    }

    #[test]
    fn a_store_in_a_root_pins_the_directories_above_it_unless_protected() {
        let roots = [root("/home/u", &["/home/u/ro"])];
        let stores = paths(&["/home/u/.local/state/sandspawn/change-sets", "/home/u/.local/state/sandspawn/tool-caches", "/home/u/ro/s/store", "/var/x/store"]);
        let p = plan(&roots, &[], &[], &[], &stores).unwrap();
        assert_eq!(p.dirs[0], paths(&["/home/u/.local", "/home/u/.local/state", "/home/u/.local/state/sandspawn"]));
        assert!(p.own[0].is_empty());
    }

    #[test]
    fn nothing_to_pin_under_a_read_only_or_denied_path() {
        let roots = [root("/ws", &["/ws/vendor"])];
        let own = paths(&["/ws/vendor/sandspawn/index.js", "/ws/secret/sandspawn/index.js"]);
        let p = plan(&roots, &own, &paths(&["/ws/secret"]), &[], &[]).unwrap();
        assert!(p.dirs[0].is_empty() && p.own[0].is_empty());
    }

    #[test]
    fn a_writable_root_inside_own_files_is_refused() {
        let e = plan(&[root("/ws/node_modules/sandspawn/lib", &[])], &paths(&["/ws/node_modules/sandspawn/lib"]), &[], &[], &[]).unwrap_err();
        assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        assert!(e.message.contains("/ws/node_modules/sandspawn/lib") && e.message.contains("own files"), "{}", e.message);
    }
}
