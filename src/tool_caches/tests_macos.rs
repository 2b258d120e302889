//! `toolCaches` on macOS, planned and prepared on Linux (with a recursive copy standing in for
//! APFS `clonefile`), and the profile's decisions evaluated (`plan::seatbelt_eval`): the command
//! writes its workspace's store directories, never the host's caches, another workspace's store,
//! or the store's own records.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::tests::{env, home, names, resolve, Home};
use super::*;
use crate::plan::seatbelt_eval::Profile;
use crate::policy::ResolvedPolicy;
use crate::plan::{build, LaunchPlan, PlanRequest};

const ALL: [&str; 10] = ["npm", "pnpm-store", "yarn-berry", "pip", "uv", "cargo-home", "go-mod", "go-build", "maven", "gradle-home"];

/// A Mac-like home: npm, pip and cargo caches with content, cargo's settings, Go's downloads.
fn mac_home() -> Home {
    let h = home();
    for d in [".npm/_cacache", "Library/Caches/pip/http", ".cargo/registry/cache", ".cargo/git/checkouts/dep/.git", "go/pkg/mod/cache/download", "work2"] {
        std::fs::create_dir_all(h.home.join(d)).unwrap();
    }
    std::fs::write(h.home.join(".npm/_cacache/index"), "host").unwrap();
    std::fs::write(h.home.join(".cargo/config.toml"), "[net]").unwrap();
    h
}

/// The policy of a run in `cwd`, its caches prepared as the runner does on macOS.
fn prepared(h: &Home, cwd: &Path, sandbox: serde_json::Value) -> ResolvedPolicy {
    let ctx = crate::policy::PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform: Platform::Darwin, env: env(h) };
    let mut p = crate::policy::resolve_policy(Some(&sandbox), &ctx).unwrap();
    macos_run::prepare_with(&mut p.tool_caches, &env(h), &seed::copy_tree).unwrap();
    p
}

fn darwin_plan(h: &Home, p: &ResolvedPolicy, cwd: &Path) -> LaunchPlan {
    let cmd = vec!["npm".to_string(), "ci".to_string()];
    let e = env(h);
    build(&PlanRequest {
        command: &cmd, cwd, env: &e, policy: p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None,
    })
    .unwrap()
}

#[test]
fn macos_private_by_default_for_every_tool() {
    let h = mac_home();
    let p = resolve(&h, json!("workspace-write"), Platform::Darwin).unwrap();
    assert_eq!((p.tool_caches.mode, p.tool_caches.explicit), (Mode::Private, false));
    assert_eq!(names(&p), ALL, "whether the host has the cache yet or not");
    assert!(resolve(&h, json!({"mode": "workspace-write", "toolCaches": "private"}), Platform::Darwin).unwrap().tool_caches.explicit);
    assert_eq!(resolve(&h, json!("read-only"), Platform::Darwin).unwrap().tool_caches, ToolCaches::none());
    // A cache the user made writable stays theirs; a carve-out in the store covers nothing.
    let p = resolve(&h, json!({"mode": "workspace-write", "writableRoots": [h.home.join(".npm")]}), Platform::Darwin).unwrap();
    assert!(!names(&p).contains(&"npm"));
    let store = h.home.join(".local/state/sandspawn/tool-caches");
    std::fs::create_dir_all(&store).unwrap();
    let p = resolve(&h, json!({"mode": "workspace-write", "writableRoots": [h.home.join(".local")], "readOnlyPaths": [store]}), Platform::Darwin).unwrap();
    assert!(names(&p).is_empty(), "{:?}", names(&p));
}

#[test]
fn macos_each_tool_is_pointed_at_its_workspaces_directory_seeded_from_the_host() {
    let h = mac_home();
    let p = prepared(&h, &h.work, json!({"mode": "workspace-write", "tmp": "read-only"}));
    let tc = &p.tool_caches;
    let scope = tc.store.clone().unwrap();
    assert_eq!(tc.host_content, Some(HostContent::Visible));
    let npm = tc.caches.iter().find(|c| c.name == "npm").unwrap();
    assert_eq!(npm.path, h.home.join(".npm"));
    assert_eq!(npm.dir.as_deref(), Some(scope.join("npm").as_path()));
    assert_eq!(npm.variables, BTreeMap::from([("npm_config_cache".to_string(), scope.join("npm").to_str().unwrap().to_string())]));
    assert_eq!(std::fs::read_to_string(scope.join("npm/_cacache/index")).unwrap(), "host", "seeded from the host's cache");
    assert!(scope.join("cargo-home/registry/cache").is_dir() && scope.join("cargo-home/config.toml").is_symlink());
    let go = tc.caches.iter().find(|c| c.name == "go-mod").unwrap();
    assert!(go.variables["GOPROXY"].starts_with(&format!("file://{}/go/pkg/mod/cache/download,", h.home.display())));
    // The plan: every variable, and the result says where each points.
    let plan = darwin_plan(&h, &p, &h.work);
    for c in &tc.caches {
        for (k, v) in &c.variables {
            assert_eq!(plan.env.get(k), Some(v), "{k}");
        }
    }
    let shown = serde_json::to_value(tc).unwrap();
    assert_eq!(shown["caches"][0], json!({"name": "npm", "path": h.home.join(".npm"), "variables": {"npm_config_cache": scope.join("npm")}}));
    assert_eq!(shown["hostContent"], "visible");
}

#[test]
fn macos_profile_lets_the_command_write_its_workspaces_caches_and_nothing_else_of_the_store() {
    let h = mac_home();
    let mine = prepared(&h, &h.work, json!({"mode": "workspace-write", "tmp": "read-only"}));
    let theirs = prepared(&h, &h.home.join("work2"), json!({"mode": "workspace-write", "tmp": "read-only"}));
    let (my_scope, their_scope) = (mine.tool_caches.store.clone().unwrap(), theirs.tool_caches.store.clone().unwrap());
    assert_ne!(my_scope, their_scope);
    let prof = Profile::of_plan(&darwin_plan(&h, &mine, &h.work));
    let w = |p: &Path| prof.may_write(p.to_str().unwrap());
    for name in ALL {
        assert!(w(&my_scope.join(name).join("any/file")), "{name}");
        assert!(!w(&their_scope.join(name).join("any/file")), "another workspace's {name}");
    }
    assert!(w(&my_scope.join("cargo-home/git/checkouts/dep/.git/HEAD")), "a cache is the tool's to write whole");
    assert!(w(&h.work.join("src.rs")) && !w(&h.work.join(".git/config")));
    for host_cache in [".npm/_cacache/index", "Library/Caches/pip/x", ".cargo/registry/cache/c.crate", ".cargo/config.toml", "go/pkg/mod/x", ".m2/repository/x"] {
        assert!(!w(&h.home.join(host_cache)), "the host's {host_cache}");
    }
    for record in ["workspace", "last-used", "npm.seeded", ".npm.seed-x", "other"] {
        assert!(!w(&my_scope.join(record)), "the store's {record}");
    }
    assert!(!w(&my_scope) && !w(my_scope.parent().unwrap()));
}

#[test]
fn macos_a_cache_that_could_not_be_cloned_is_reported_hidden() {
    let h = mac_home();
    let ctx = crate::policy::PolicyContext { cwd: h.work.clone(), tmpdir: None, platform: Platform::Darwin, env: env(&h) };
    let mut p = crate::policy::resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx).unwrap();
    let cross_volume = |_: &Path, _: &Path| Err(std::io::Error::from_raw_os_error(libc::EXDEV));
    macos_run::prepare_with(&mut p.tool_caches, &env(&h), &cross_volume).unwrap();
    assert_eq!(p.tool_caches.host_content, Some(HostContent::Hidden));
    assert_eq!(names(&p), ALL, "still private, only empty");
    let scope = p.tool_caches.store.clone().unwrap();
    assert_eq!(std::fs::read_dir(scope.join("npm")).unwrap().count(), 0);
}

/// Found by an attacker's review of the Linux side: a home a writable root holds (a cwd of `$HOME`)
/// kept the host's caches writable where no private copy covered them. On macOS the tools are only
/// pointed at the store, so the host's caches of such a home stay read-only in every mode; the
/// store's directories stay the tools' to write.
#[test]
fn macos_a_held_homes_caches_stay_read_only() {
    let h = mac_home();
    for sandbox in [json!({"mode": "workspace-write", "tmp": "read-only"}), json!({"mode": "workspace-write", "tmp": "read-only", "toolCaches": "none"}), json!({"mode": "workspace-write", "tmp": "read-only", "readOnlyPaths": [h.home.join(".npm/_cacache")]})] {
        let p = prepared(&h, &h.home, sandbox.clone());
        let prof = Profile::of_plan(&darwin_plan(&h, &p, &h.home));
        let w = |p: &Path| prof.may_write(p.to_str().unwrap());
        for host_cache in [".npm/_npx/x", ".npm/_cacache/index", "Library/Caches/pip/x", ".cargo/registry/cache/c.crate", "go/pkg/mod/x"] {
            assert!(!w(&h.home.join(host_cache)), "{sandbox}: the host's {host_cache}");
        }
        assert!(w(&h.home.join("notes.txt")) && w(&h.home.join("work/src.rs")), "{sandbox}: the rest of the home stays writable");
        for c in p.tool_caches.caches.iter().filter_map(|c| c.dir.as_ref()) {
            assert!(w(&c.join("any/file")), "{sandbox}: {}", c.display());
        }
    }
}
