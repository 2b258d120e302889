//! The caches of a home that a writable root holds (a cwd of `$HOME`, `HOME=/tmp` with a writable
//! `/tmp`) are the host's own: the host's next `npx` runs from `~/.npm/_npx`, its next `pip` and
//! `cargo` from `~/.cache/pip` and `~/.cargo/registry`. A private copy covers each where the run has
//! one (`coverable`); every one left without (`toolCaches: 'none'`, a cache holding a rule of the
//! user's, which an overlay would undo, the Landlock mode and plans for other spawners, which mount
//! no overlays, and every cache on macOS, where the tools are only pointed elsewhere and the host's
//! directory stays where the command can reach it) is kept read-only, as the home's other paths the
//! host runs from are (`planted::home`). A read-only carve-out keeps the rules inside it: a `denyRead`
//! mask stays a mask (bwrap's masks are copied along, the Seatbelt profile denies after the roots),
//! a nested writable root stays writable. A cache that does not exist yet stays creatable (the
//! command's npm, pip and go make theirs as they work), and what the run created there is moved
//! aside after it and reported, as a protected name is (`missing_locations`).
//!
//! Found by an attacker's review: under `toolCaches: 'none'`, with a `readOnlyPaths` or `denyRead`
//! entry inside `~/.npm`, and in the Landlock mode, a run with the cwd at the home wrote the host's
//! `~/.npm/_npx` and `~/.cache`, and nothing said so.
//!
//! Whose home: the command's (its `HOME`, where its tools keep their caches) and the host user's
//! (`planted::home::Bases`: `$HOME` and the user database's, with the host process's variables),
//! where the host's own tools keep theirs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::planted::HeldCache;
use crate::platform::Platform;
use crate::policy::WritableRoot;

/// What the carve-outs depend on, of a resolved policy.
pub(crate) struct Policy<'a> {
    pub writable_roots: &'a mut [WritableRoot],
    pub deny_read: &'a [PathBuf],
    /// Roots judged on their change set (review mode): their changes land with the set (the home's
    /// other paths are held back there: `review::risks`).
    pub reviewed: &'a [PathBuf],
    /// The cache locations a private copy covers in this sandbox (overlays or binds over them).
    pub covered: Vec<PathBuf>,
}

/// Keep read-only each existing cache location of a held home that nothing covers. Idempotent: a
/// location read-only already is left as it is. Returns the missing ones (`missing_locations`),
/// which the command's tools may create, a read-only placeholder being what they would fail on:
/// what a run creates there is moved aside after it and reported (`planted::walk_and_protect`,
/// `planted::detect`). Found by an attacker's review: in an empty home the run created
/// `~/.npm/_npx/<hash>/node_modules`, `~/.cache/pip` and `~/go/pkg/mod` on the host, and nothing
/// said so.
pub(crate) fn keep_read_only(policy: Policy, command_env: &BTreeMap<String, String>, platform: Platform) -> Vec<HeldCache> {
    let Policy { writable_roots: roots, deny_read, reviewed, covered } = policy;
    let held = |r: &WritableRoot, home: &Path| home.starts_with(&r.root) && !reviewed.contains(&r.root);
    let mut added = false;
    let mut missing: Vec<HeldCache> = Vec::new();
    let envs = environments(command_env);
    let own = std::cell::OnceCell::new();
    for env in &envs {
        let Some(home) = env.get("HOME").and_then(|h| std::fs::canonicalize(h).ok()) else { continue };
        // Most runs hold no home: no cache location is looked at then.
        if !roots.iter().any(|r| held(r, &home)) {
            continue;
        }
        // The deepest root holding a path decides: a root the user gave inside the home (the cache
        // itself, or a directory holding it) left it writable on purpose.
        let kept = |roots: &[WritableRoot], path: &Path| {
            let i = deepest_root(roots, path)?;
            let hidden = deny_read.iter().any(|d| path.starts_with(d));
            let read_only = roots.iter().any(|r| r.read_only.iter().chain(r.missing_read_only.iter().map(|m| &m.path)).any(|c| path.starts_with(c)));
            (path.starts_with(&home) && held(&roots[i], &home) && !hidden && !read_only).then_some(i)
        };
        for path in locations(env, platform) {
            if covered.contains(&path) {
                continue;
            }
            if let Some(i) = kept(roots, &path) {
                roots[i].read_only.push(path);
                added = true;
            }
        }
        for cache in missing_locations(env, platform, own.get_or_init(|| own_directories(&envs))) {
            if kept(roots, &cache.path).is_some() && !missing.iter().any(|m| m.path == cache.path) {
                missing.push(cache);
            }
        }
    }
    if added {
        crate::policy::sort_carve_outs(roots);
    }
    missing
}

/// The command's environment, then the host process's with each of the host user's homes.
fn environments(command_env: &BTreeMap<String, String>) -> Vec<BTreeMap<String, String>> {
    let host: BTreeMap<String, String> = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    let homes = crate::planted::home::Bases::of_host().homes;
    let hosts = homes.into_iter().filter_map(|h| {
        let mut env = host.clone();
        env.insert("HOME".into(), h.to_str()?.to_string());
        Some(env)
    });
    std::iter::once(command_env.clone()).chain(hosts).collect()
}

/// The existing cache locations of `env` on `platform`, canonical.
fn locations(env: &BTreeMap<String, String>, platform: Platform) -> Vec<PathBuf> {
    match platform {
        Platform::Darwin => super::macos::known(env).into_iter().filter_map(|t| std::fs::canonicalize(t.host).ok()).filter(|p| p.is_dir()).collect(),
        _ => super::locations::existing(env).into_iter().map(|l| l.path).collect(),
    }
}

/// For each cache location of `env` on `platform` that does not exist (none at all, not a dangling
/// symlink: that one the host left there), the path to move aside if a run creates it: its first
/// missing component (`~/go` for `~/go/pkg/mod`: a run that makes `~/go` a symlink cannot lead the
/// undo elsewhere), or the next one down where that would hold `own` directories (`~/.local/share`
/// for pnpm's store, as `~/.local` holds sandspawn's state). With what the host takes from it.
fn missing_locations(env: &BTreeMap<String, String>, platform: Platform, own: &[PathBuf]) -> Vec<HeldCache> {
    let known: Vec<(&'static str, PathBuf)> = match platform {
        Platform::Darwin => super::macos::known(env).into_iter().map(|t| (t.name, t.host)).collect(),
        _ => super::locations::known(env).into_iter().map(|l| (l.name, l.path)).collect(),
    };
    let apart = |p: &Path| !own.iter().any(|o| super::locations::overlaps(o, p));
    let to_move = |path: &Path| {
        let l = crate::policy::paths::canonical_lenient("HOME", path).ok()?;
        let first = l.first_missing.filter(|f| f.symlink_metadata().is_err())?;
        let mut missing: Vec<&Path> = l.path.ancestors().take_while(|a| a.starts_with(&first)).collect();
        missing.reverse();
        missing.into_iter().find(|p| apart(p)).map(Path::to_path_buf)
    };
    known.into_iter().filter_map(|(name, path)| Some(HeldCache { path: to_move(&path)?, what: what_it_holds(name) })).collect()
}

/// Where sandspawn keeps its own directories for each of `envs` (`state_dir`, the stores' own
/// variables), canonical as far as they exist: the host makes them during a run (a first change
/// set, the Landlock mode's run directory, the caches' store), and never moves them aside.
fn own_directories(envs: &[BTreeMap<String, String>]) -> Vec<PathBuf> {
    let of = |env: &BTreeMap<String, String>| {
        let var = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
        [crate::state_dir::base(var), var("SANDSPAWN_TOOL_CACHE_DIR"), var("SANDSPAWN_CHANGE_SET_DIR")]
    };
    let lenient = |p: PathBuf| crate::policy::paths::canonical_lenient("HOME", &p).map(|l| l.path).unwrap_or(p);
    envs.iter().flat_map(of).flatten().map(lenient).collect()
}

/// What the host's tools take from the cache `name` (`locations::known`, `macos::known`).
pub(super) fn what_it_holds(name: &str) -> &'static str {
    match name {
        "xdg-cache" => "pip and uv install the wheels they find in it, go build links the packages compiled in it, node-gyp builds against its headers",
        "npm" => "the host's next `npx <package>` runs the package it finds in its _npx directory, npm installs the tarballs of its _cacache",
        "yarn-berry" => "Yarn installs the packages of its cache, and runs their scripts",
        "pnpm-store" => "pnpm links the packages of its store into each project it installs",
        "cargo-registry" | "cargo-git" | "cargo-home" => "cargo builds the crates it finds in its registry and git checkouts, and runs their build scripts",
        "go-mod" => "go builds the modules it finds in its module cache",
        "go-build" => "go build links the packages compiled in it",
        "pip" | "uv" => "pip and uv install the wheels they find in it",
        "maven" => "Maven runs the plugins and links the jars it finds in its local repository",
        "gradle" | "gradle-home" => "Gradle runs the plugins and links the jars it finds in its caches",
        _ => "the host's package manager installs what it finds in it",
    }
}

fn deepest_root(roots: &[WritableRoot], p: &Path) -> Option<usize> {
    roots.iter().enumerate().filter(|(_, r)| p.starts_with(&r.root)).max_by_key(|(_, r)| r.root.components().count()).map(|(i, _)| i)
}
