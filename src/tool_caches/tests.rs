use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::*;
use crate::policy::{resolve_policy, PolicyContext, ResolvedPolicy};

pub(super) struct Home {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub work: PathBuf,
}

/// A temporary directory outside /tmp: a store under /tmp is never used (`state_dir::under_shared_tmp`).
pub(super) fn outside_tmp() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("sandspawn-tc-").tempdir_in("/var/tmp").unwrap()
}

pub(super) fn home() -> Home {
    let dir = outside_tmp();
    let home = dir.path().canonicalize().unwrap().join("home");
    for d in [".npm", ".cache", ".cargo/registry", "work"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    let work = home.join("work");
    Home { _dir: dir, home, work }
}

/// `h`'s home stands for the host process's (its store is the host's own) until the guard drops:
/// a cwd of `$HOME`, as the tests of a held home's caches take it.
pub(super) fn host_home(h: &Home) -> impl Drop {
    store::test_host::set(h.home.join(".local/state/sandspawn/tool-caches"))
}

pub(super) fn env(h: &Home) -> BTreeMap<String, String> {
    [("HOME".to_string(), h.home.to_str().unwrap().to_string())].into_iter().collect()
}

/// `tmp: 'read-only'` unless given, as the runs whose store lay under /tmp had it (before
/// `state_dir::under_shared_tmp`, the homes were there).
pub(super) fn resolve(h: &Home, mut sandbox: Value, platform: Platform) -> Result<ResolvedPolicy> {
    if sandbox == json!("workspace-write") {
        sandbox = json!({"mode": "workspace-write"});
    }
    if let Some(o) = sandbox.as_object_mut().filter(|o| o.get("mode") == Some(&json!("workspace-write"))) {
        o.entry("tmp").or_insert(json!("read-only"));
    }
    let ctx = PolicyContext { cwd: h.work.clone(), tmpdir: None, platform, env: env(h) };
    resolve_policy(Some(&sandbox), &ctx)
}

pub(super) fn names(p: &ResolvedPolicy) -> Vec<&str> {
    p.tool_caches.caches.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn defaults_by_mode() {
    let h = home();
    let p = resolve(&h, json!("workspace-write"), Platform::Linux).unwrap();
    assert_eq!(p.tool_caches.mode, Mode::Private);
    assert_eq!(names(&p), ["xdg-cache", "npm", "cargo-registry"]);
    let root = h.home.join(".local/state/sandspawn/tool-caches");
    assert_eq!(p.tool_caches.root.as_deref(), Some(root.as_path()));
    let scope = p.tool_caches.store.clone().unwrap();
    assert!(scope.starts_with(root.join("workspaces")) && scope.file_name().unwrap().to_str().unwrap().starts_with("work-"), "a store of the roots' own: {}", scope.display());
    let record = p.tool_caches.record.as_ref().unwrap();
    assert_eq!(record.repository, h.work);
    let text = String::from_utf8_lossy(&record.roots);
    assert!(text.starts_with("write ") && text.contains(&format!(" {}\0\nconfined {{", h.work.display())) && text.contains("\"denyRead\""), "{text:?}");
    let shared = resolve(&h, json!({"mode": "workspace-write", "toolCaches": "shared"}), Platform::Linux).unwrap();
    assert_eq!((shared.tool_caches.mode, shared.tool_caches.store), (Mode::Shared, Some(root.join("shared"))));
    for sandbox in [json!("read-only"), json!("danger-full-access"), json!({"mode": "workspace-write", "toolCaches": "none"})] {
        assert_eq!(resolve(&h, sandbox, Platform::Linux).unwrap().tool_caches, ToolCaches::none());
    }
    // macOS too (see tests_macos.rs).
    assert_eq!(resolve(&h, json!("workspace-write"), Platform::Darwin).unwrap().tool_caches.mode, Mode::Private);
}

#[test]
fn invalid_values() {
    let h = home();
    for (sandbox, words) in [
        (json!({"toolCaches": "private"}), "need mode 'workspace-write'"),
        (json!({"mode": "danger-full-access", "toolCaches": "private"}), "need mode 'workspace-write'"),
        (json!({"toolCaches": "shared"}), "need mode 'workspace-write'"),
        (json!({"mode": "workspace-write", "toolCaches": "all"}), "must be 'private', 'shared' or 'none'"),
        (json!({"mode": "workspace-write", "toolCaches": true}), "must be 'private', 'shared' or 'none'"),
    ] {
        let e = resolve(&h, sandbox, Platform::Linux).unwrap_err();
        assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        assert!(e.message.starts_with("options.sandbox.toolCaches:") && e.message.contains(words), "{}", e.message);
    }
}

#[test]
fn never_covers_what_other_rules_hold() {
    let h = home();
    let s = |extra: serde_json::Value| {
        let mut o = json!({"mode": "workspace-write"});
        o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        o
    };
    std::fs::create_dir_all(h.home.join(".cache/secret")).unwrap();
    // A deny mask inside ~/.cache would be undone by an overlay over it.
    let p = resolve(&h, s(json!({"denyRead": [h.home.join(".cache/secret")]})), Platform::Linux).unwrap();
    assert_eq!(names(&p), ["npm", "cargo-registry"]);
    // A writable root there stays the user's.
    let p = resolve(&h, s(json!({"writableRoots": [h.home.join(".npm")]})), Platform::Linux).unwrap();
    assert_eq!(names(&p), ["xdg-cache", "cargo-registry"]);
    // The store itself hidden: nothing can be private.
    std::fs::create_dir_all(h.home.join(".local")).unwrap();
    let p = resolve(&h, s(json!({"denyRead": [h.home.join(".local")]})), Platform::Linux).unwrap();
    assert!(names(&p).is_empty());
    // A workspace that is the home directory, or holds it: its caches are the host's own, covered
    // as when the home is not writable (an attacker's review: the run wrote the host's ~/.npm/_npx).
    // The host's own home (its store in a writable root is used: `a_store_a_run_could_write_is_not_used`).
    let _host = host_home(&h);
    for cwd in [h.home.clone(), h.home.parent().unwrap().to_path_buf()] {
        let ctx = PolicyContext { cwd, tmpdir: None, platform: Platform::Linux, env: env(&h) };
        let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx).unwrap();
        assert_eq!(names(&p), ["xdg-cache", "npm", "cargo-registry"]);
    }
    // A cache the user put in the workspace, below the home, stays as asked.
    std::fs::create_dir_all(h.work.join(".cache-here")).unwrap();
    let mut e = env(&h);
    e.insert("XDG_CACHE_HOME".into(), h.work.join(".cache-here").to_str().unwrap().into());
    let ctx = PolicyContext { cwd: h.work.clone(), tmpdir: None, platform: Platform::Linux, env: e };
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx).unwrap();
    assert_eq!(names(&p), ["npm", "cargo-registry"]);
}

/// Found by an attacker's review (own18, storechain2.js): with the command's HOME in the workspace
/// (or HOME=/tmp/x with a writable /tmp), its store lay where the run could write; a run planted
/// it (`workspaces` a link into the workspace) and the host's fold after the next run moved and
/// removed host files through what that run put there. Such a store is not used: the run keeps
/// no caches (they stay read-only) and says so, and an explicit `'private'` is refused. The host's
/// own store is used wherever it is (made, covered and pinned in every sandbox: `plan::stores`).
#[test]
fn a_store_a_run_could_write_is_not_used() {
    let h = home();
    let inner = h.work.join(".home");
    std::fs::create_dir_all(inner.join(".npm")).unwrap();
    let mut e = env(&h);
    e.insert("HOME".into(), inner.to_str().unwrap().into());
    let ctx = PolicyContext { cwd: h.work.clone(), tmpdir: None, platform: Platform::Linux, env: e.clone() };
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx).unwrap();
    assert!(names(&p).is_empty(), "{:?}", names(&p));
    assert_eq!((p.tool_caches.store.as_ref(), p.tool_caches.mode), (None, Mode::Private));
    let store = inner.join(".local/state/sandspawn/tool-caches");
    let said = p.tool_caches.not_enforced.clone().unwrap_or_default();
    assert!(said.contains(&store.display().to_string()) && said.contains(&h.work.display().to_string()), "{said}");
    assert!(p.writable_roots.iter().any(|r| r.read_only.contains(&inner.join(".npm"))), "the home's cache stays read-only instead");
    let e2 = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only", "toolCaches": "private"})), &ctx).unwrap_err();
    assert!(e2.message.starts_with("options.sandbox.toolCaches:") && e2.message.contains(&store.display().to_string()), "{}", e2.message);
    // The same with the variables that move the store, and a store that does not exist yet above
    // a link (its real path decides).
    for (k, v) in [("XDG_STATE_HOME", h.work.join("state")), ("SANDSPAWN_TOOL_CACHE_DIR", h.work.join("s"))] {
        let mut e = env(&h);
        e.insert(k.into(), v.to_str().unwrap().into());
        let ctx = PolicyContext { env: e, ..ctx.clone() };
        assert!(resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx).unwrap().tool_caches.store.is_none(), "{k}");
    }
    std::os::unix::fs::symlink(&h.work, h.home.join("to-work")).unwrap();
    let roots = [crate::policy::WritableRoot { root: h.work.clone(), id: None, read_only: Vec::new(), missing_read_only: Vec::new() }];
    assert_eq!(store::writable_by_the_run(&h.home.join("to-work/new/store"), &roots, None), Some(h.work.clone()));
    assert_eq!(store::writable_by_the_run(&h.home.join("store"), &roots, None), None);
    assert_eq!(store::writable_by_the_run(&h.work, &roots, None), Some(h.work.clone()));
    assert_eq!(store::writable_by_the_run(&h.work.join("s"), &roots, Some(&h.work.join("s"))), None, "the host's own");
}

#[test]
fn bwrap_mounts() {
    let h = home();
    let p = resolve(&h, json!("workspace-write"), Platform::Linux).unwrap();
    let mut tc = p.tool_caches.clone();
    assert_eq!(plan(&tc).unwrap(), Mounts::default(), "nothing to mount before the run holds its layers");
    let guard = RunGuard::prepare(&mut tc, &|| false).unwrap();
    let store = tc.store.clone().unwrap();
    let m = plan(&ToolCaches { host_content: Some(HostContent::Visible), ..tc.clone() }).unwrap();
    assert_eq!(m.binds, [(store.clone(), store.clone())]);
    assert_eq!(m.unmount, [store.to_str().unwrap()]);
    assert_eq!(m.overlays.len(), 3);
    let npm = &m.overlays[1];
    assert_eq!(Path::new(&npm.target), h.home.join(".npm"));
    assert!(Path::new(&npm.upper).starts_with(store.join("npm/slots")) && npm.upper.ends_with("/upper"));
    assert!(Path::new(&npm.work).starts_with(store.join("npm/slots")));
    assert_eq!(npm.layers, [store.join("npm/base").to_str().unwrap()]);
    let m = plan(&ToolCaches { host_content: Some(HostContent::Hidden), ..tc.clone() }).unwrap();
    assert!(m.overlays.is_empty());
    assert_eq!(m.binds[1], (store.join("npm/base"), h.home.join(".npm")));
    assert_eq!(plan(&ToolCaches::none()).unwrap(), Mounts::default());
    drop(guard);
    assert!(!store.join("npm/runs").exists());
    assert_eq!(std::fs::read_dir(&npm.upper).unwrap().count(), 0, "the run's directories are left empty for the next run");
}

#[test]
fn kernel_release_parsing() {
    assert!(release_at_least("6.18.44-fc-v857", (5, 11)));
    assert!(release_at_least("5.11.0", (5, 11)));
    assert!(!release_at_least("5.10.200-generic", (5, 11)));
    assert!(!release_at_least("4.19", (5, 11)));
    assert!(!release_at_least("", (5, 11)));
}

/// Everything in one bwrap plan for the runner: private caches, the network allow-list, a pty and
/// limits. The descriptors stay apart (3 status, 4 report, 5 the bridge, then the offline
/// nsswitch.conf at 6, opened by the helper in front of bwrap) and the helper inside mounts the
/// overlays and drops every capability before the steps that need none.
#[test]
fn bwrap_plan_with_every_other_feature() {
    use crate::plan::{build, test_support::helper_path, PlanRequest};
    use sandspawn_helper::rlimit::{Resource, Rlimit};
    let h = home();
    let sandbox = json!({"mode": "workspace-write", "network": {"allowedDomains": ["registry.npmjs.org"]}});
    let p = resolve(&h, sandbox, Platform::Linux).unwrap();
    assert_eq!(names(&p), ["xdg-cache", "npm", "cargo-registry"]);
    let mut tc = ToolCaches { host_content: Some(HostContent::Visible), ..p.tool_caches.clone() };
    let _guard = RunGuard::prepare(&mut tc, &|| false).unwrap();
    let p = ResolvedPolicy { tool_caches: tc, ..p };
    let command = vec!["npm".to_string(), "ci".to_string()];
    let rlimits = [Rlimit { resource: Resource::Cpu, soft: 2, hard: 3 }];
    let plan = build(&PlanRequest {
        command: &command,
        cwd: &h.work,
        env: &env(&h),
        policy: &p,
        platform: Platform::Linux,
        bwrap: None,
        resolved_program: None,
        helper: Some(helper_path()),
        runner_fds: true,
        terminal: true,
        rlimits: &rlimits, own_files: &[], stores: &[], proxy: None,
    })
    .unwrap();
    let helper = helper_path().to_str().unwrap();
    assert_eq!((plan.status_fd, plan.report_fd, plan.net_ctl_fd, plan.control_fd), (Some(3), Some(4), Some(5), None));
    assert_eq!(plan.program, helper_path(), "in front of bwrap, for the offline nsswitch.conf");
    assert_eq!(&plan.args[..4], ["v1", "--offline-nsswitch-fd=8", "--", "/usr/bin/bwrap"], "above the runner's descriptors");
    let bwrap_args = &plan.args[4..];
    let data = bwrap_args.windows(3).find(|w| w[0] == "--ro-bind-data").expect("the offline nsswitch.conf");
    assert_eq!(data, ["--ro-bind-data", "8", "/etc/nsswitch.conf"]);
    let at = bwrap_args.iter().position(|a| a == helper).unwrap();
    assert!(!bwrap_args[..at].contains(&"--disable-userns".to_string()), "the helper limits user namespaces, after the overlays");
    assert!(bwrap_args[..at].windows(2).any(|w| w == ["--cap-add", "CAP_SYS_ADMIN"]), "kept for the helper's mounts alone");
    let inner = &bwrap_args[at + 1..];
    let store = p.tool_caches.store.clone().unwrap();
    let store = store.to_str().unwrap();
    let covers = |flag: &str| -> Vec<String> { inner.iter().filter_map(|a| a.strip_prefix(flag)).map(String::from).collect() };
    assert!(covers("--cover-dir=").is_empty() && covers("--cover-file=").is_empty(), "a runner's plan has no placeholders (what a run creates is moved aside after it)");
    let steps: Vec<&str> = inner.iter().map(String::as_str).filter(|a| (a.starts_with("--") && !a.starts_with("--cover-")) || *a == "v1").collect();
    // First, the helper checks the workspace bwrap bound writable, and the cwd, against the directory.
    let work = std::fs::metadata(&h.work).unwrap();
    let work = format!("{}:{}:{}", std::os::unix::fs::MetadataExt::dev(&work), std::os::unix::fs::MetadataExt::ino(&work), h.work.display());
    let (writable_at, cwd_at) = (format!("--writable-at={work}"), format!("--cwd-at={work}"));
    assert_eq!(
        steps,
        [
            "v1", &writable_at, &cwd_at, "--tmpfs-inodes=131072:/dev/shm", "--devpts-max=256", "--stdio-devices=/dev/sandspawn-host-dev", "--overlay", "--overlay", "--overlay", &format!("--unmount={store}"), "--own-userns", "--limit-userns", "--controlling-tty",
            "--rlimit=cpu:2:3", "--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1", "--filter=inet", "--report-fd=4", "--bwrap-alive=7", "--net-listen=5", "--"
        ]
    );
    assert_eq!(&inner[inner.len() - 2..], ["npm", "ci"]);
}

/// The Landlock mode has no mount namespace: an explicit 'private' is refused by name; the default
/// is not a rule the caller set, and the runner treats it as unavailable (see `runner::prepare`).
#[test]
fn landlock_refuses_explicit_private_caches() {
    let h = home();
    let explicit = resolve(&h, json!({"mode": "workspace-write", "toolCaches": "private"}), Platform::Linux).unwrap();
    assert!(explicit.tool_caches.explicit);
    let rules = crate::plan::landlock::unsupported_rules(&explicit).join("\n");
    assert!(rules.contains("sandbox.toolCaches: 'private'"), "{rules}");
    let default = resolve(&h, json!("workspace-write"), Platform::Linux).unwrap();
    assert_eq!((default.tool_caches.mode, default.tool_caches.explicit), (Mode::Private, false));
    assert!(crate::plan::landlock::unsupported_rules(&default).is_empty());
}

/// The read-only carve-outs of the home's caches in the policy of a run in `cwd`.
fn home_carve_outs(h: &Home, cwd: &Path, sandbox: Value) -> Vec<PathBuf> {
    let ctx = PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform: Platform::Linux, env: env(h) };
    let p = resolve_policy(Some(&sandbox), &ctx).unwrap();
    let caches = [".npm", ".cache", ".cargo/registry"].map(|c| h.home.join(c));
    p.writable_roots.iter().flat_map(|r| r.read_only.iter()).filter(|c| caches.iter().any(|k| c.starts_with(k))).cloned().collect()
}

/// Found by an attacker's review: a held home's cache that got no private copy was left writable
/// (`toolCaches: 'none'`, a rule of the user's inside `~/.npm`): the run wrote the host's
/// `~/.npm/_npx`. Each such cache is kept read-only now, with the user's rules inside it.
#[test]
fn a_held_homes_caches_without_a_private_copy_stay_read_only() {
    let h = home();
    let _host = host_home(&h);
    std::fs::create_dir_all(h.home.join(".npm/_cacache")).unwrap();
    let s = |extra: Value| {
        // Not `.cargo` among the protected names: it would be read-only whole.
        let mut o = json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": []});
        o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        o
    };
    let (npm, cache, cargo) = (h.home.join(".npm"), h.home.join(".cache"), h.home.join(".cargo/registry"));
    // Covered by the private copies: nothing to carve.
    assert!(home_carve_outs(&h, &h.home, s(json!({}))).is_empty());
    let none = home_carve_outs(&h, &h.home, s(json!({"toolCaches": "none"})));
    assert_eq!(none, [cache.clone(), npm.clone(), cargo.clone()]);
    // A rule inside ~/.npm: that cache alone is uncovered, read-only with the rule kept inside.
    let cacache = npm.join("_cacache");
    assert_eq!(home_carve_outs(&h, &h.home, s(json!({"readOnlyPaths": [cacache]}))), [npm.clone(), cacache.clone()]);
    let ctx = PolicyContext { cwd: h.home.clone(), tmpdir: None, platform: Platform::Linux, env: env(&h) };
    let denied = resolve_policy(Some(&s(json!({"denyRead": [cacache]}))), &ctx).unwrap();
    assert_eq!(names(&denied), ["xdg-cache", "cargo-registry"]);
    assert_eq!(denied.writable_roots[0].read_only.iter().filter(|c| c.starts_with(&npm)).collect::<Vec<_>>(), [&npm]);
    assert_eq!(denied.deny_read, [cacache.clone()], "the mask stays a mask");
    // The user's own choices: a root at the cache, a root below the home holding it, a reviewed home,
    // a home no root holds.
    assert!(home_carve_outs(&h, &h.home, s(json!({"toolCaches": "none", "writableRoots": [npm]}))).iter().all(|c| c != &npm));
    assert!(home_carve_outs(&h, &h.work, s(json!({"toolCaches": "none"}))).is_empty());
    assert!(home_carve_outs(&h, &h.home, s(json!({"toolCaches": "none", "workspace": "review"}))).is_empty());
    let mut e = env(&h);
    e.insert("XDG_CACHE_HOME".into(), h.work.to_str().unwrap().into());
    let ctx = PolicyContext { cwd: h.work.clone(), tmpdir: None, platform: Platform::Linux, env: e };
    let p = resolve_policy(Some(&s(json!({"toolCaches": "none", "writableRoots": [h.home]}))), &ctx).unwrap();
    assert!(!p.writable_roots.iter().any(|r| r.read_only.contains(&h.work)), "a cache the user put in the workspace stays as asked");
}

/// The Landlock mode and plans for other spawners mount no private copies: each cache they covered
/// is kept read-only instead, once (the policy may be dropped to 'none' again).
#[test]
fn dropping_the_private_caches_keeps_a_held_homes_caches_read_only() {
    let h = home();
    let _host = host_home(&h);
    let ctx = PolicyContext { cwd: h.home.clone(), tmpdir: None, platform: Platform::Linux, env: env(&h) };
    let mut p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": []})), &ctx).unwrap();
    assert_eq!(names(&p), ["xdg-cache", "npm", "cargo-registry"]);
    let before = p.writable_roots[0].read_only.clone();
    for _ in 0..2 {
        p.drop_tool_caches(&env(&h), Platform::Linux);
        let added: Vec<&PathBuf> = p.writable_roots[0].read_only.iter().filter(|c| !before.contains(c)).collect();
        assert_eq!(added, [&h.home.join(".cache"), &h.home.join(".npm"), &h.home.join(".cargo/registry")]);
    }
    // The Landlock grants leave them out: the home is split around them.
    let g = crate::plan::landlock_grants::grants(&p, &[], &[]).unwrap();
    assert!(!g.dirs.iter().chain(&g.files).any(|d| d.starts_with(h.home.join(".npm")) || d.starts_with(h.home.join(".cache"))), "{:?}", g.dirs);
    assert!(g.dirs.contains(&h.work));
}

/// The host user's home (not the command's `HOME`) held by a writable root: the host's own tools
/// keep their caches there.
#[test]
fn the_host_users_held_home_keeps_its_caches_too() {
    let h = home();
    let _host = crate::planted::home::test_home::set(h.home.clone());
    let elsewhere = tempfile::tempdir().unwrap();
    let e: BTreeMap<String, String> = [("HOME".to_string(), elsewhere.path().to_str().unwrap().to_string())].into_iter().collect();
    let ctx = PolicyContext { cwd: h.home.clone(), tmpdir: None, platform: Platform::Linux, env: e };
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx).unwrap();
    assert!(p.tool_caches.caches.is_empty());
    // (Not the others: the host process's `XDG_CACHE_HOME` or `CARGO_HOME` may move them.)
    for c in [".npm"] {
        assert!(p.writable_roots[0].read_only.contains(&h.home.join(c)), "{c}");
    }
}

/// Found by an attacker's review: in an empty held home, the caches a run created (`~/.npm/_npx`,
/// `~/.cache/pip`, `~/go/pkg/mod`) landed on the host, unreported. The missing ones are left to the
/// walk after the run (their first missing component, none holding sandspawn's own state), which
/// moves aside and reports what the run made there; nothing in a run that holds no home or reviews
/// it; a plan another program runs gets read-only placeholders instead.
#[test]
fn a_held_homes_missing_caches_are_moved_aside_after_the_run() {
    let dir = outside_tmp();
    let home = dir.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(home.join("work")).unwrap();
    let h = Home { _dir: dir, work: home.join("work"), home };
    let _host = host_home(&h);
    let policy = |cwd: &Path, extra: Value| {
        let mut o = json!({"mode": "workspace-write", "tmp": "read-only"});
        o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let ctx = PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform: Platform::Linux, env: env(&h) };
        resolve_policy(Some(&o), &ctx).unwrap()
    };
    let held = |p: &ResolvedPolicy| p.planted.held_caches.iter().map(|c| c.path.strip_prefix(&h.home).unwrap().to_path_buf()).collect::<Vec<_>>();
    // `.cargo` is a protected name (kept absent at once); `.local` holds sandspawn's state.
    let expected = [".cache", ".npm", ".yarn", ".local/share", "go", ".m2", ".gradle"].map(PathBuf::from);
    for caches in ["none", "private"] {
        assert_eq!(held(&policy(&h.home, json!({"toolCaches": caches}))), expected, "{caches}");
    }
    assert!(held(&policy(&h.work, json!({}))).is_empty(), "no home held");
    assert!(held(&policy(&h.home, json!({"workspace": "review"}))).is_empty(), "its writes land with the change set");

    let mut p = policy(&h.home, json!({}));
    p.walk_and_protect(crate::planted::Absent::UndoneAfter);
    assert_eq!(held(&p), expected, "the walk keeps them for the check after the run");
    assert!(!p.writable_roots[0].missing_read_only.iter().any(|m| m.path == h.home.join(".npm")), "creatable during the run");
    std::fs::create_dir_all(h.home.join(".npm/_npx/abc/node_modules")).unwrap();
    std::fs::write(h.home.join(".npm/_npx/abc/node_modules/p"), "x").unwrap();
    std::fs::create_dir_all(h.home.join(".local/share/pnpm")).unwrap();
    std::fs::create_dir(h.home.join(".cache")).unwrap();
    let risks = crate::planted::detect(&p.planted);
    for c in [".npm", ".local/share"] {
        let r = risks.iter().find(|r| r.path == h.home.join(c).to_string_lossy()).unwrap_or_else(|| panic!("{c}: {risks:#?}"));
        assert!(r.detail.contains("tool cache") && r.detail.contains("moved aside"), "{r:?}");
        assert!(!h.home.join(c).exists());
    }
    assert!(h.home.join(".local").exists(), "sandspawn's state is left where it is");
    assert!(h.home.join(".cache").exists() && !risks.iter().any(|r| r.path.ends_with(".cache")), "empty, it runs nothing");

    let mut plan = policy(&h.home, json!({}));
    plan.walk_and_protect(crate::planted::Absent::Placeholders);
    assert!(plan.planted.held_caches.is_empty());
    let placeholders: Vec<&PathBuf> = plan.writable_roots[0].missing_read_only.iter().map(|m| &m.path).collect();
    for c in [".yarn", "go", ".m2"] {
        assert!(placeholders.contains(&&h.home.join(c)), "{c}: {placeholders:?}");
    }
}

/// Found by an attacker's review (cross39): a store under /tmp, even the host process's own (which
/// its runs cover), was used; another process's run, with the default writable /tmp, planted in it
/// what this workspace's next build ran. It keeps nothing now, said; an explicit mode is refused.
#[test]
fn a_store_under_tmp_keeps_nothing() {
    let h = home();
    let store = tempfile::Builder::new().prefix("sandspawn-tc-").tempdir_in("/tmp").unwrap();
    let _host = store::test_host::set(store.path().to_path_buf());
    let sandbox = |caches: Option<&str>| {
        let mut o = json!({"mode": "workspace-write", "tmp": "read-only"});
        if let Some(c) = caches {
            o["toolCaches"] = json!(c);
        }
        let mut env = env(&h);
        env.insert("SANDSPAWN_TOOL_CACHE_DIR".into(), store.path().to_str().unwrap().into());
        resolve_policy(Some(&o), &PolicyContext { cwd: h.work.clone(), tmpdir: None, platform: Platform::Linux, env })
    };
    let p = sandbox(None).unwrap();
    assert_eq!((p.tool_caches.store.as_ref(), p.tool_caches.caches.len()), (None, 0));
    let note = p.tool_caches.not_enforced.unwrap();
    assert!(note.contains(store.path().to_str().unwrap()) && note.contains("under /tmp"), "{note}");
    for explicit in ["private", "shared"] {
        let e = sandbox(Some(explicit)).unwrap_err();
        assert!(e.message.contains("under /tmp"), "{explicit}: {}", e.message);
    }
    // A link to it is the same place.
    let link = outside_tmp();
    std::os::unix::fs::symlink(store.path(), link.path().join("store")).unwrap();
    assert!(crate::state_dir::under_shared_tmp(&link.path().join("store/tool-caches")));
    assert!(!crate::state_dir::under_shared_tmp(&link.path().join("elsewhere/tool-caches")));
}
