//! Seatbelt profiles checked by what they decide: every policy below is resolved as a run resolves
//! it, its darwin plan built, and its profile evaluated (`seatbelt_eval`) for writes, reads and
//! connections that are then compared with what the resolved policy says (`expected_*`, written
//! from the policy's own fields and the README's rules, not from the profile).

use std::net::IpAddr;

use super::*;
use crate::network::loopback::{self, Endpoint};
use crate::plan::seatbelt_eval::{Profile, Target};
use crate::policy::{ResolvedPolicy, UnixSockets};

/// A workspace with a repository, a nested one, an existing and a missing protected name, a secret,
/// a read-only directory; and beside it another repository and a plain directory.
struct Tree {
    _t: tempfile::TempDir,
    top: PathBuf,
    ws: PathBuf,
}

fn tree() -> Tree {
    let (t, top) = tmp();
    let ws = top.join("ws");
    for d in ["ws/.git/hooks", "ws/libs/sub/.git", "ws/libs/sub/src", "ws/ro/w", "ws/node_modules/p", "ws/hooks", "ws/scripts", "other/.git", "plain", "wsx"] {
        fs::create_dir_all(top.join(d)).unwrap();
    }
    for f in ["ws/.git/HEAD", "ws/libs/sub/.git/HEAD", "other/.git/HEAD", "ws/.envrc", "ws/secret", "ws/file", "ws/scripts/pre-commit"] {
        fs::write(top.join(f), "x").unwrap();
    }
    // Carve-outs the walk finds by path, not by name: the hooks directory the repository's config
    // names, and the target of a hook that is a symlink.
    fs::write(top.join("ws/.git/config"), "[core]\n\thooksPath = hooks\n").unwrap();
    std::os::unix::fs::symlink("../../scripts/pre-commit", top.join("ws/.git/hooks/pre-push")).unwrap();
    Tree { _t: t, top, ws }
}

impl Tree {
    /// Paths every case asks about (existing or not: Seatbelt judges creating them too).
    fn probes(&self) -> Vec<PathBuf> {
        let (ws, top) = (&self.ws, &self.top);
        let mut p: Vec<PathBuf> = [
            "", "file", "new/dir/file", ".git", ".git/config", ".git/hooks/pre-commit", ".gitignore", ".github/workflows/ci.yml",
            ".envrc", ".envrc/x", ".mcp.json", "a/b/.envrc", "a/.mcp.json/x", "node_modules/p/.vscode/settings.json", "node_modules/p/index.js",
            ".vscode/settings.json", "libs/sub/.git/HEAD", "libs/sub/.git", "libs/sub/.envrc", "libs/sub/src/x.rs", "libs/.git",
            "secret", "secret/x", "secrets", "ro", "ro/x", "rox", "ro/w/x", "hooks/pre-commit", "hooksx", "scripts/pre-commit", "scripts/x",
            "missing", "MISSING/x",
            // Case variants: the same entries on a case-insensitive volume.
            ".GIT/config", "a/.ENVRC", "libs/sub/.Git/HEAD", ".VSCode/settings.json", "node_modules/p/.VSCODE/x", ".GITignore",
        ]
        .iter()
        .map(|r| if r.is_empty() { ws.clone() } else { ws.join(r) })
        .collect();
        p.extend(["other/x", "other/.git/config", "other/.git", "plain/x", "wsx/y", ""].iter().map(|r| if r.is_empty() { top.clone() } else { top.join(r) }));
        p.extend(["/etc/passwd", "/", "/tmp", "/tmp/sandspawn-eval-probe"].map(PathBuf::from));
        p
    }
}

/// Is `path` (canonical) writable under `policy`? Inside a writable root and inside no carve-out
/// of any root (existing read-only paths, missing ones in any ASCII case) unless inside a root that
/// lies in that carve-out (a root nested in another root's read-only path stays writable); not
/// `denyRead`; and, with `protectGit`, no `.git` and no protected name as a component below a root
/// holding it, in any ASCII case (protected names are not enforced inside `node_modules`); or in
/// the private caches' directories (macOS; `tool_caches/tests_macos.rs` evaluates those). Which
/// root a carve-out was attached to does not matter here: the profile's clauses are a union, and
/// a nested root's carve-outs hold in every root around it (found by an attacker's review: this
/// check once took each root's own carve-outs only, as the profile did, and missed it).
fn expected_write(policy: &ResolvedPolicy, path: &Path) -> bool {
    let folded = |p: &Path| PathBuf::from(p.as_os_str().to_ascii_lowercase());
    let roots = &policy.writable_roots;
    let existing = roots.iter().flat_map(|r| r.read_only.iter()).map(|c| (c.clone(), path.starts_with(c)));
    let missing = roots.iter().flat_map(|r| r.missing_read_only.iter()).map(|m| (m.path.clone(), folded(path).starts_with(folded(&m.path))));
    let reopened = |c: &Path| roots.iter().any(|r| r.root.starts_with(c) && path.starts_with(&r.root));
    let carved = existing.chain(missing).any(|(c, holds)| holds && !reopened(&c));
    let granted = roots.iter().any(|r| path.starts_with(&r.root)) && !carved;
    let hidden = policy.deny_read.iter().any(|d| path.starts_with(d));
    let in_node_modules = path.components().any(|c| c.as_os_str() == "node_modules");
    let planted = policy.writable_roots.iter().filter(|r| path.starts_with(&r.root)).any(|r| {
        let below: Vec<&std::ffi::OsStr> = path.strip_prefix(&r.root).unwrap().components().map(|c| c.as_os_str()).collect();
        (policy.protect_git && below.iter().any(|c| c.eq_ignore_ascii_case(".git")))
            || (!in_node_modules && below.iter().any(|c| policy.protected_names.iter().any(|n| c.eq_ignore_ascii_case(n))))
    });
    // The private caches' store directories (macOS) are the tools' to write whole.
    let cache = policy.tool_caches.caches.iter().filter_map(|c| c.dir.as_ref()).any(|d| path.starts_with(d));
    (granted && !hidden && !planted) || cache
}

fn expected_read(policy: &ResolvedPolicy, path: &Path) -> bool {
    !policy.deny_read.iter().any(|d| path.starts_with(d))
}

fn expected_connect(policy: &ResolvedPolicy, proxy: Option<u16>, ip: IpAddr, port: u16) -> bool {
    policy.network || (policy.network_proxy.is_some() && ip.is_loopback() && Some(port) == proxy)
}

fn expected_unix(policy: &ResolvedPolicy, path: &Path) -> bool {
    policy.network
        || match &policy.unix_sockets {
            UnixSockets::Blocked => false,
            UnixSockets::All => true,
            UnixSockets::Only(list) => list.iter().any(|p| p == path),
        }
}

/// The darwin plan a run would get (with the allow-list, for a proxy bound on `endpoint`).
fn darwin_plan(p: &ResolvedPolicy, cwd: &Path, endpoint: Option<&Endpoint>) -> LaunchPlan {
    let cmd = v(&["true"]);
    let env = BTreeMap::new();
    build(&PlanRequest {
        command: &cmd, cwd, env: &env, policy: p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: endpoint,
    })
    .unwrap()
}

/// How many probes a profile let the command write and connect to (so no case passes vacuously).
#[derive(Debug, Default)]
struct Seen {
    writes: usize,
    refused_writes: usize,
    connects: usize,
}

/// Evaluate one policy's profile at every probe; the decisions that differ from the policy.
fn mismatches(name: &str, p: &ResolvedPolicy, t: &Tree, seen: &mut Seen) -> Vec<String> {
    let endpoint = p.network_proxy.as_ref().map(|_| loopback::bind().unwrap().endpoint);
    let plan = darwin_plan(p, &t.ws, endpoint.as_ref());
    let prof = Profile::of_plan(&plan);
    let mut wrong = Vec::new();
    for path in t.probes() {
        let shown = s(&path);
        let (w, r) = (prof.may_write(&shown), prof.may_read(&shown));
        if w {
            seen.writes += 1;
        } else {
            seen.refused_writes += 1;
        }
        if w != expected_write(p, &path) {
            wrong.push(format!("{name}: write {shown}: profile {w}"));
        }
        if r != expected_read(p, &path) {
            wrong.push(format!("{name}: read {shown}: profile {r}"));
        }
    }
    let port = endpoint.as_ref().map(|e| e.port);
    let ports = [port.unwrap_or(8080), port.unwrap_or(8080) + 1, 22, 443, 53];
    for ip in ["127.0.0.1", "::1", "10.0.0.1", "93.184.216.34", "2001:db8::1"] {
        for port_asked in ports {
            let got = prof.may_connect(ip, port_asked);
            seen.connects += usize::from(got);
            if got != expected_connect(p, port, ip.parse().unwrap(), port_asked) {
                wrong.push(format!("{name}: connect {ip}:{port_asked}: profile {got}"));
            }
        }
    }
    for sock in [t.top.join("agent.sock"), t.top.join("docker.sock")] {
        let got = prof.allows("network-outbound", Target::UnixSocket(&s(&sock)));
        if got != expected_unix(p, &sock) {
            wrong.push(format!("{name}: unix socket {}: profile {got}", sock.display()));
        }
    }
    wrong
}

#[test]
fn every_policy_decides_what_it_says() {
    let t = tree();
    let (ws, top) = (&t.ws, &t.top);
    let names = json!([".envrc", ".mcp.json", ".vscode", ".github"]);
    let cases: Vec<(&str, serde_json::Value)> = vec![
        ("read-only", json!({"mode": "read-only"})),
        ("workspace-write", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": names})),
        ("workspace-write, /tmp writable", json!({"mode": "workspace-write", "protectedNames": names})),
        ("carve-outs", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": names,
            "readOnlyPaths": [s(&ws.join("ro")), s(&ws.join("missing"))]})),
        ("denyRead inside and outside", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": names,
            "denyRead": [s(&ws.join("secret")), s(&top.join("plain"))]})),
        ("denyRead in read-only", json!({"mode": "read-only", "denyRead": [s(&ws.join("secret")), s(&ws.join("libs"))]})),
        ("another writable root with its own repository", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": names,
            "writableRoots": [s(&top.join("other"))]})),
        ("a writable root nested in the workspace", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": names,
            "writableRoots": [s(&ws.join("libs/sub/src"))]})),
        // Found by an attacker's review: the workspace's carve-outs were writable through the clause
        // of a writable root holding it (the tree lies in the writable /tmp).
        ("carve-outs, /tmp writable", json!({"mode": "workspace-write", "protectedNames": names,
            "readOnlyPaths": [s(&ws.join("ro")), s(&ws.join("missing"))]})),
        ("carve-outs, a writable root above the workspace", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": names,
            "readOnlyPaths": [s(&ws.join("ro")), s(&ws.join("missing"))], "writableRoots": [s(top)]})),
        ("a writable root in a read-only path, one above the workspace", json!({"mode": "workspace-write", "tmp": "read-only",
            "readOnlyPaths": [s(&ws.join("ro"))], "writableRoots": [s(top), s(&ws.join("ro/w"))]})),
        ("protectGit off", json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false, "protectedNames": names})),
        ("no protected names", json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": []})),
        ("default protected names", json!({"mode": "workspace-write", "tmp": "read-only"})),
        ("network on", json!({"mode": "workspace-write", "tmp": "read-only", "network": true})),
        ("all Unix sockets", json!({"mode": "read-only", "allowUnixSockets": true})),
        ("one Unix socket", json!({"mode": "read-only", "allowUnixSockets": [s(&top.join("agent.sock"))]})),
        ("allow-list", json!({"mode": "workspace-write", "tmp": "read-only", "network": {"allowedDomains": ["registry.npmjs.org"]}})),
        ("allow-list in read-only with a socket", json!({"mode": "read-only", "network": {"allowedDomains": []}, "allowUnixSockets": [s(&top.join("agent.sock"))]})),
    ];
    fs::write(top.join("agent.sock"), "").unwrap();
    let mut wrong = Vec::new();
    for (name, v) in &cases {
        let p = policy_as_given(v.clone(), ws, Platform::Darwin);
        let mut seen = Seen::default();
        wrong.extend(mismatches(name, &p, &t, &mut seen));
        let workspace = p.mode == crate::policy::SandboxMode::WorkspaceWrite;
        assert!(!workspace || (seen.writes >= 5 && seen.refused_writes >= 5), "{name}: {seen:?}");
        assert!(workspace || seen.writes == 0, "{name}: {seen:?}");
        let connects = if p.network { 25 } else if p.network_proxy.is_some() { 2 } else { 0 };
        assert_eq!(seen.connects, connects, "{name}: {seen:?}");
    }
    assert!(wrong.is_empty(), "{} decisions differ from the policy:\n{}", wrong.len(), wrong.join("\n"));
}

/// The oracle itself is not vacuous: each case above has writes it allows and writes it refuses
/// where the policy says so, and the checker reports a profile that decides otherwise.
#[test]
fn the_check_catches_a_profile_that_decides_otherwise() {
    let t = tree();
    let p = policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": [".envrc"]}), &t.ws, Platform::Darwin);
    assert!(expected_write(&p, &t.ws.join("file")) && !expected_write(&p, &t.ws.join(".git/config")) && !expected_write(&p, &t.top.join("plain/x")));
    // The same policy's profile with its last rule (the protected names' deny) dropped.
    let mut plan = darwin_plan(&p, &t.ws, None);
    let prof = plan.profile.take().unwrap();
    let cut = prof.rfind("(deny file-write* (require-all (subpath (param \"WRITABLE_ROOT_0\")) (require-any (regex #\"/(").expect("the names rule");
    let end = cut + prof[cut..].find('\n').unwrap() + 1;
    plan.profile = Some(format!("{}{}", &prof[..cut], &prof[end..]));
    let weakened = Profile::of_plan(&plan);
    assert!(weakened.may_write(&s(&t.ws.join("a/b/.envrc"))), "without the rule a nested .envrc is writable");
    assert!(!expected_write(&p, &t.ws.join("a/b/.envrc")), "which the policy refuses");
}

/// Seatbelt matches paths when they are used: a command that renames a directory above a nested
/// read-only or denied path carries the file out of the rules that name it, within the run. The
/// profile denies renaming or removing every directory between such a path and its root
/// (`pins::above_kept`), and nothing else: a nested repository's directory (its `.git` is matched
/// by name wherever it goes) and any other directory stay movable.
#[test]
fn directories_above_a_nested_read_only_or_denied_path_cannot_be_renamed() {
    let t = tree();
    let ws = &t.ws;
    for d in ["cfg/sub", "keys/deep"] {
        fs::create_dir_all(ws.join(d)).unwrap();
    }
    fs::write(ws.join("cfg/sub/settings.json"), "x").unwrap();
    fs::write(ws.join("keys/deep/secret"), "x").unwrap();
    let v = json!({"mode": "workspace-write", "tmp": "read-only",
        "readOnlyPaths": [s(&ws.join("cfg/sub/settings.json"))], "denyRead": [s(&ws.join("keys/deep/secret"))]});
    let p = policy_as_given(v, ws, Platform::Darwin);
    let prof = Profile::of_plan(&darwin_plan(&p, ws, None));
    let unlink = |rel: &str| prof.allows("file-write-unlink", Target::Path(&s(&ws.join(rel))));
    for held in ["cfg", "cfg/sub", "keys", "keys/deep", "cfg/sub/settings.json", "keys/deep/secret"] {
        assert!(!unlink(held), "{held} can be renamed away");
    }
    for free in ["file", "libs", "libs/sub", "ro", "cfg/other"] {
        assert!(unlink(free), "{free} is held for nothing");
    }
}

/// Found by an attacker's review: the Seatbelt profile did not keep sandspawn's own files, so a run
/// in a project with sandspawn in its `node_modules` rewrote the package the host loads next. Now
/// they are read-only, and so is every name inside an installed package (kept whole), and the
/// directories above them cannot be renamed; the rest of the workspace stays writable.
#[test]
fn sandspawn_s_own_files_in_a_writable_root_stay_read_only_and_in_place() {
    let t = tree();
    let ws = &t.ws;
    let pkg = ws.join("node_modules/sandspawn");
    fs::create_dir_all(pkg.join("lib")).unwrap();
    let p = policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only"}), ws, Platform::Darwin);
    let cmd = v(&["true"]);
    let env = BTreeMap::new();
    let own = [pkg.clone()];
    let req = PlanRequest {
        command: &cmd, cwd: ws, env: &env, policy: &p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &own, stores: &[], proxy: None,
    };
    let prof = Profile::of_plan(&build(&req).unwrap());
    let write = |rel: &str| prof.allows("file-write-data", Target::Path(&s(&ws.join(rel))));
    let unlink = |rel: &str| prof.allows("file-write-unlink", Target::Path(&s(&ws.join(rel))));
    for own in ["node_modules/sandspawn/index.js", "node_modules/sandspawn/sandspawn.darwin-arm64.node", "node_modules/sandspawn/node_modules/x/package.json"] {
        assert!(!write(own), "{own} is writable");
    }
    for held in ["node_modules", "node_modules/sandspawn", "node_modules/sandspawn/lib"] {
        assert!(!unlink(held), "{held} can be renamed away");
    }
    assert!(write("node_modules/other/index.js") && unlink("node_modules/other") && write("src.js"), "the rest stays writable");
    // A writable root inside the package is refused.
    let inside = policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [s(&pkg.join("lib"))]}), ws, Platform::Darwin);
    let e = build(&PlanRequest { policy: &inside, ..req }).unwrap_err();
    assert!(e.message.contains("own files"), "{}", e.message);
}

/// Found by an attacker's review: `(allow file-read*)` also opened the user's other terminals
/// (`/dev/ttysNNN`, its owner's to read: what is typed there, passwords included). Only a pty the
/// command opened itself (which carries Seatbelt's pty extension) stays readable and writable.
#[test]
fn the_user_s_other_terminals_cannot_be_read() {
    let t = tree();
    for mode in ["read-only", "workspace-write"] {
        let p = policy_as_given(json!({"mode": mode, "tmp": "read-only"}), &t.ws, Platform::Darwin);
        let prof = Profile::of_plan(&darwin_plan(&p, &t.ws, None));
        for op in ["file-read-data", "file-write-data"] {
            assert!(!prof.allows(op, Target::Path("/dev/ttys003")), "{mode}: {op} of another terminal");
        }
        assert!(prof.allows("file-read-metadata", Target::Path("/dev/ttys003")), "{mode}: its metadata (ps, tty)");
        assert!(prof.may_read("/dev/ttyx") && prof.may_read("/etc/hosts"), "{mode}: the rest stays readable");
    }
}

/// Found by an attacker's review (on Linux; the profile had the same gap): every run read what
/// runs in other workspaces wrote into sandspawn's stores. The run's own cache directories, inside
/// the store, stay readable and writable.
#[test]
fn sandspawn_s_stores_cannot_be_read_but_the_run_s_own_caches_can() {
    let t = tree();
    // In the workspace, as in a run whose cwd is $HOME: the writable root's rule must not win.
    let store = t.ws.join(".local/state/sandspawn/tool-caches");
    let own = store.join("workspaces/ws-1/npm");
    fs::create_dir_all(&own).unwrap();
    let mut p = policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only"}), &t.ws, Platform::Darwin);
    p.tool_caches.caches = vec![crate::tool_caches::PrivateCache {
        name: "npm".into(), path: t.ws.join("npm-home"), layers: Vec::new(), upper: None, work: None, dir: Some(own.clone()), variables: BTreeMap::new(), before: None,
    }];
    let cmd = v(&["true"]);
    let env = BTreeMap::new();
    let stores = [store.clone()];
    let req = PlanRequest {
        command: &cmd, cwd: &t.ws, env: &env, policy: &p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &stores, proxy: None,
    };
    let prof = Profile::of_plan(&build(&req).unwrap());
    let other = s(&store.join("workspaces/other-2/npm/token"));
    assert!(!prof.may_read(&other) && !prof.may_write(&other), "another workspace's cache");
    let mine = s(&own.join("_cacache/x"));
    assert!(prof.may_read(&mine) && prof.may_write(&mine), "the run's own cache");
    assert!(prof.allows("file-read-metadata", Target::Path(&s(&store))), "the directories above it, for mkdir -p");
    // Found by an attacker's review of the bwrap plan: a run renamed the store's parent away, out of
    // the rules that name it by path, and rewrote pending change sets there.
    let unlink = |p: &Path| prof.allows("file-write-unlink", Target::Path(&s(p)));
    for held in [store.clone(), t.ws.join(".local/state/sandspawn"), t.ws.join(".local/state"), t.ws.join(".local")] {
        assert!(!unlink(&held), "{} can be renamed away", held.display());
    }
    assert!(unlink(&t.ws.join(".local/share")), "the rest stays free");
}

/// Found by an attacker's review: the profile named `file-write-setugid` nowhere, and on macOS
/// before 12.3 `file-write*` covers it, so a command could leave a set-ID program in a writable
/// root. Now it is denied by name, in the last rule (after the terminal's `file-write*`), in every
/// mode; other mode changes in the writable roots stay allowed.
#[test]
fn set_id_bits_are_refused_everywhere() {
    let t = tree();
    for mode in ["read-only", "workspace-write"] {
        let p = policy_as_given(json!({"mode": mode}), &t.ws, Platform::Darwin);
        for terminal in [false, true] {
            let cmd = v(&["true"]);
            let env = BTreeMap::new();
            let plan = build(&PlanRequest {
                command: &cmd, cwd: &t.ws, env: &env, policy: &p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
                helper: Some(helper_path()), runner_fds: true, terminal, rlimits: &[], own_files: &[], stores: &[], proxy: None,
            })
            .unwrap();
            let text = plan.profile.as_deref().unwrap();
            assert_eq!(text.lines().last(), Some("(deny file-write-setugid)"), "{mode}, terminal {terminal}: the last rule");
            if terminal {
                continue; // the same profile with the terminal's rule; its argv leads with the helper's
            }
            let prof = Profile::of_plan(&plan);
            for f in [t.ws.join("file"), t.ws.join("new"), PathBuf::from("/tmp/f"), PathBuf::from("/dev/tty")] {
                assert!(!prof.allows("file-write-setugid", Target::Path(&s(&f))), "{mode}: set-ID on {}", f.display());
            }
            let chmod = prof.allows("file-write-mode", Target::Path(&s(&t.ws.join("file"))));
            assert_eq!(chmod, mode == "workspace-write", "{mode}: chmod in the workspace");
        }
    }
}
