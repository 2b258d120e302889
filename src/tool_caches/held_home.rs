//! The caches of a home that a writable root holds (a cwd of `$HOME`, `HOME=/tmp` with a writable
//! `/tmp`) are the host's own: the host's next `npx` runs from `~/.npm/_npx`, its next `pip` and
//! `cargo` from `~/.cache/pip` and `~/.cargo/registry`. A private copy covers each where the run has
//! one (`coverable`); every one left without (`toolCaches: 'none'`, a cache holding a rule of the
//! user's, which an overlay would undo, the Landlock mode and plans for other spawners, which mount
//! no overlays, and every cache on macOS, where the tools are only pointed elsewhere and the host's
//! directory stays where the command can reach it) is kept read-only, as the home's other paths the
//! host runs from are (`planted::home`). A read-only carve-out keeps the rules inside it: a `denyRead`
//! mask stays a mask (bwrap's masks are copied along, the Seatbelt profile denies after the roots),
//! a nested writable root stays writable.
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

use crate::platform::Platform;
use crate::policy::WritableRoot;

/// What the carve-outs depend on, of a resolved policy.
pub(crate) struct Policy<'a> {
    pub writable_roots: &'a mut [WritableRoot],
    pub deny_read: &'a [PathBuf],
    /// Roots judged on their change set (review mode): their changes land with the set, as the
    /// home's other paths' do (`planted::home`).
    pub reviewed: &'a [PathBuf],
    /// The cache locations a private copy covers in this sandbox (overlays or binds over them).
    pub covered: Vec<PathBuf>,
}

/// Keep read-only each existing cache location of a held home that nothing covers. Idempotent: a
/// location read-only already is left as it is.
pub(crate) fn keep_read_only(policy: Policy, command_env: &BTreeMap<String, String>, platform: Platform) {
    let Policy { writable_roots: roots, deny_read, reviewed, covered } = policy;
    let held = |r: &WritableRoot, home: &Path| home.starts_with(&r.root) && !reviewed.contains(&r.root);
    let mut added = false;
    for env in environments(command_env) {
        let Some(home) = env.get("HOME").and_then(|h| std::fs::canonicalize(h).ok()) else { continue };
        // Most runs hold no home: no cache location is looked at then.
        if !roots.iter().any(|r| held(r, &home)) {
            continue;
        }
        for path in locations(&env, platform) {
            if !path.starts_with(&home) || covered.contains(&path) {
                continue;
            }
            // The deepest root holding it decides: a root the user gave inside the home (the cache
            // itself, or a directory holding it) left it writable on purpose.
            let Some(i) = deepest_root(roots, &path) else { continue };
            let hidden = deny_read.iter().any(|d| path.starts_with(d));
            let read_only = roots.iter().any(|r| r.read_only.iter().any(|c| path.starts_with(c)));
            if held(&roots[i], &home) && !hidden && !read_only {
                roots[i].read_only.push(path);
                added = true;
            }
        }
    }
    if added {
        crate::policy::sort_carve_outs(roots);
    }
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

fn deepest_root(roots: &[WritableRoot], p: &Path) -> Option<usize> {
    roots.iter().enumerate().filter(|(_, r)| p.starts_with(&r.root)).max_by_key(|(_, r)| r.root.components().count()).map(|(i, _)| i)
}
