use super::*;
use serde_json::json;
use std::fs;

struct Ws {
    _t: tempfile::TempDir,
    root: PathBuf,
}

fn ws() -> Ws {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    Ws { _t: t, root }
}

fn ctx(cwd: &Path, platform: Platform) -> PolicyContext {
    PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform, env: Default::default() }
}

/// Resolve `v` without `protectedNames` unless it names them: these tests are about the other
/// fields (the names have their own tests at the end and in `planted`).
fn resolve(v: Value, cwd: &Path) -> Result<ResolvedPolicy> {
    resolve_policy(Some(&crate::plan::test_support::without_protected_names(v)), &ctx(cwd, Platform::Linux))
}

fn missing(path: PathBuf, kind: PlaceholderKind) -> MissingReadOnly {
    MissingReadOnly { path, kind }
}

#[test]
fn defaults_read_only() {
    let w = ws();
    let p = resolve_policy(None, &ctx(&w.root, Platform::Linux)).unwrap();
    assert_eq!(p.mode, SandboxMode::ReadOnly);
    assert!(p.writable_roots.is_empty());
    assert_eq!(p.tmp, TmpMode::ReadOnly);
    assert!(!p.network);
    assert_eq!(p.unix_sockets, UnixSockets::Blocked);
    assert!(p.protect_git);
}

#[test]
fn workspace_write_defaults_and_git_missing() {
    let w = ws();
    let p = resolve(json!("workspace-write"), &w.root).unwrap();
    assert_eq!(p.tmp, TmpMode::Writable);
    let roots: Vec<_> = p.writable_roots.iter().map(|r| r.root.clone()).collect();
    assert!(roots.contains(&PathBuf::from("/tmp")));
    let cwd_root = p.writable_roots.iter().find(|r| r.root == w.root).unwrap();
    // git's HEAD too, with no .git there (`repo::head_would_count`)
    assert_eq!(cwd_root.missing_read_only, vec![missing(w.root.join(".git"), PlaceholderKind::Dir), missing(w.root.join("HEAD"), PlaceholderKind::Dir)]);
    assert!(cwd_root.read_only.is_empty());
}

#[test]
fn nested_roots_shallowest_first_and_deduped() {
    let w = ws();
    fs::create_dir_all(w.root.join("a/b")).unwrap();
    std::os::unix::fs::symlink(w.root.join("a/b"), w.root.join("link")).unwrap();
    let wr = [w.root.join("a/b"), w.root.join("link"), w.root.join("a")];
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": wr}), &w.root).unwrap();
    let roots: Vec<_> = p.writable_roots.iter().map(|r| r.root.clone()).collect();
    assert_eq!(roots, vec![w.root.clone(), w.root.join("a"), w.root.join("a/b")]);
    // each root gets its own .git carve-out (and HEAD's, with no .git)
    for r in &p.writable_roots {
        assert_eq!(r.missing_read_only, vec![missing(r.root.join(".git"), PlaceholderKind::Dir), missing(r.root.join("HEAD"), PlaceholderKind::Dir)]);
    }
}

#[test]
fn tmpdir_is_a_root_when_tmp_writable() {
    let w = ws();
    fs::create_dir(w.root.join("tmpd")).unwrap();
    let mut c = ctx(&w.root, Platform::Linux);
    c.tmpdir = Some(w.root.join("tmpd").to_string_lossy().into_owned());
    let p = resolve_policy(Some(&json!("workspace-write")), &c).unwrap();
    assert!(p.writable_roots.iter().any(|r| r.root == w.root.join("tmpd")));
    c.tmpdir = Some("/definitely/missing/tmpdir".into());
    let p = resolve_policy(Some(&json!("workspace-write")), &c).unwrap();
    assert_eq!(p.writable_roots.len(), 2); // /tmp and cwd
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "private"})), &c).unwrap();
    assert_eq!(p.writable_roots.len(), 1);
}

#[test]
fn git_dir_present_is_read_only() {
    let w = ws();
    fs::create_dir_all(w.root.join(".git/hooks")).unwrap();
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &w.root).unwrap();
    assert_eq!(p.writable_roots[0].read_only, vec![w.root.join(".git")]);
    assert!(p.writable_roots[0].missing_read_only.is_empty());
}

#[test]
fn placeholders_count_as_missing_and_the_users_empty_entries_stay_read_only() {
    use std::os::unix::fs::PermissionsExt;
    let w = ws();
    fs::create_dir(w.root.join(".git")).unwrap();
    let ro = |p: &crate::policy::ResolvedPolicy| p.writable_roots[0].read_only.clone();
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &w.root).unwrap();
    assert_eq!(ro(&p), vec![w.root.join(".git")], "the user's own empty .git");
    fs::set_permissions(w.root.join(".git"), fs::Permissions::from_mode(0o1500)).unwrap();
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &w.root).unwrap();
    assert_eq!(p.writable_roots[0].missing_read_only, vec![missing(w.root.join(".git"), PlaceholderKind::Dir), missing(w.root.join("HEAD"), PlaceholderKind::Dir)], "a placeholder");
    fs::remove_dir(w.root.join(".git")).unwrap();
    fs::write(w.root.join(".git"), "").unwrap();
    fs::set_permissions(w.root.join(".git"), fs::Permissions::from_mode(0o1400)).unwrap();
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &w.root).unwrap();
    assert_eq!(p.writable_roots[0].missing_read_only, vec![missing(w.root.join(".git"), PlaceholderKind::File), missing(w.root.join("HEAD"), PlaceholderKind::Dir)]);
}

#[test]
fn gitdir_file_protects_the_real_git_dir() {
    let w = ws();
    let ws_dir = w.root.join("wt");
    fs::create_dir_all(&ws_dir).unwrap();
    fs::create_dir_all(w.root.join("main/.git/worktrees/wt")).unwrap();
    // relative gitdir: relative to the root holding `.git`
    fs::write(ws_dir.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
    let wr = [w.root.join("main")];
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": wr}), &ws_dir).unwrap();
    let main = p.writable_roots.iter().find(|r| r.root == w.root.join("main")).unwrap();
    assert_eq!(main.read_only, vec![w.root.join("main/.git"), w.root.join("main/.git/worktrees/wt")]);
    let wt = p.writable_roots.iter().find(|r| r.root == ws_dir).unwrap();
    assert_eq!(wt.read_only, vec![ws_dir.join(".git")]);
    // gitdir outside every writable root: only the `.git` file is carved out
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &ws_dir).unwrap();
    assert_eq!(p.writable_roots[0].read_only, vec![ws_dir.join(".git")]);
    // absolute gitdir
    fs::write(ws_dir.join(".git"), format!("gitdir: {}\n", w.root.join("main/.git/worktrees/wt").display())).unwrap();
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": wr}), &ws_dir).unwrap();
    let main = p.writable_roots.iter().find(|r| r.root == w.root.join("main")).unwrap();
    assert!(main.read_only.contains(&w.root.join("main/.git/worktrees/wt")));
}

#[test]
fn protect_git_false() {
    let w = ws();
    let p = resolve(json!({"mode": "workspace-write", "protectGit": false}), &w.root).unwrap();
    assert!(p.writable_roots.iter().all(|r| r.read_only.is_empty() && r.missing_read_only.is_empty()));
}

#[test]
fn read_only_paths() {
    let w = ws();
    fs::create_dir(w.root.join(".git")).unwrap();
    fs::write(w.root.join(".git/HEAD"), "x").unwrap();
    fs::write(w.root.join(".env"), "x").unwrap();
    let ro = [w.root.join(".env"), w.root.join("gen/out/x"), PathBuf::from("/usr")];
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "readOnlyPaths": ro}), &w.root).unwrap();
    let r = &p.writable_roots[0];
    assert_eq!(r.read_only, vec![w.root.join(".env"), w.root.join(".git")]);
    // the placeholder sits at the first missing component
    assert_eq!(r.missing_read_only, vec![missing(w.root.join("gen"), PlaceholderKind::File)]);
    assert_eq!(p.read_only_paths, vec![PathBuf::from("/usr")]);
    // allowed (and harmless) in read-only mode
    let p = resolve(json!({"readOnlyPaths": ["/usr"]}), &w.root).unwrap();
    assert_eq!(p.read_only_paths, vec![PathBuf::from("/usr")]);
}

#[test]
fn deny_read_canonical_and_missing_skipped() {
    let w = ws();
    fs::write(w.root.join("secret"), "x").unwrap();
    std::os::unix::fs::symlink(w.root.join("secret"), w.root.join("s-link")).unwrap();
    let dr = [w.root.join("s-link"), w.root.join("missing"), w.root.join("secret")];
    let p = resolve(json!({"denyRead": dr}), &w.root).unwrap();
    assert_eq!(p.deny_read, vec![w.root.join("secret")]);
}

/// A missing denyRead path in a writable root is held like a missing readOnlyPaths entry (its first
/// missing component kept absent), so that no run can put a link there for the next run to resolve
/// through; one below a denied directory needs nothing, nor one outside every writable root.
#[test]
fn deny_read_missing_in_a_writable_root_is_kept_absent() {
    let w = ws();
    fs::create_dir(w.root.join("hidden")).unwrap();
    let dr = [w.root.join("cfg"), w.root.join("later/deep/key"), w.root.join("hidden"), w.root.join("hidden/none"), PathBuf::from("/nonexistent-sandspawn/x")];
    let p = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false, "denyRead": dr}), &w.root).unwrap();
    assert_eq!(p.deny_read, vec![w.root.join("hidden")]);
    let kept: Vec<&PathBuf> = p.writable_roots[0].missing_read_only.iter().map(|m| &m.path).collect();
    assert_eq!(kept, vec![&w.root.join("cfg"), &w.root.join("later")]);
    let p = resolve(json!({"denyRead": dr}), &w.root).unwrap();
    assert!(p.writable_roots.is_empty(), "read-only mode: nothing can create it");
}

/// While a run that resolved a `denyRead` path through a link in its root lives, a policy resolved
/// after that link was swapped masks the path both where the recorded link led and where the link
/// leads now, and holds it as recorded; once no run holds it, the link is taken as it is.
#[test]
fn deny_read_through_a_link_a_live_run_holds_is_masked_both_ways() {
    let w = ws();
    for d in ["real", "other", "mine"] {
        fs::create_dir(w.root.join(d)).unwrap();
        fs::write(w.root.join(d).join("key"), "").unwrap();
    }
    std::os::unix::fs::symlink("real", w.root.join("cfg")).unwrap();
    let policy = json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false, "denyRead": [w.root.join("cfg/key")]});
    let a = resolve(policy.clone(), &w.root).unwrap();
    assert_eq!(a.deny_read, vec![w.root.join("real/key")]);
    assert_eq!(a.planted.deny_links.iter().map(|l| l.path.clone()).collect::<Vec<_>>(), vec![w.root.join("cfg")]);
    let relink = |to: &str| {
        fs::remove_file(w.root.join("cfg")).unwrap();
        std::os::unix::fs::symlink(to, w.root.join("cfg")).unwrap();
    };
    relink("other");
    let c = resolve(policy.clone(), &w.root).unwrap();
    assert_eq!(c.deny_read, vec![w.root.join("other/key"), w.root.join("real/key")]);
    drop((a, c));
    relink("mine");
    assert_eq!(resolve(policy, &w.root).unwrap().deny_read, vec![w.root.join("mine/key")], "nobody holds it: taken as it is");
}

/// The same for `readOnlyPaths` (kept read-only both ways) and `writableRoots` (refused while the
/// link a live run holds leads elsewhere). Found by an attacker's review: a run repointed the link
/// a `readOnlyPaths` entry went through, and the next run wrote the file the caller meant.
#[test]
fn read_only_and_writable_paths_through_a_link_a_live_run_holds() {
    let w = ws();
    for d in ["real/x", "other/x", "mine/x"] {
        fs::create_dir_all(w.root.join(d)).unwrap();
        fs::write(w.root.join(d).join("f"), "").unwrap();
    }
    std::os::unix::fs::symlink("real", w.root.join("cfg")).unwrap();
    let ro = json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false, "readOnlyPaths": [w.root.join("cfg/x/f")]});
    let a = resolve(ro.clone(), &w.root).unwrap();
    assert_eq!(a.writable_roots[0].read_only, vec![w.root.join("real/x/f")]);
    assert_eq!(a.planted.deny_links.iter().map(|l| l.path.clone()).collect::<Vec<_>>(), vec![w.root.join("cfg")]);
    let relink = |to: &str| {
        fs::remove_file(w.root.join("cfg")).unwrap();
        std::os::unix::fs::symlink(to, w.root.join("cfg")).unwrap();
    };
    relink("other");
    let mut kept = resolve(ro.clone(), &w.root).unwrap().writable_roots[0].read_only.clone();
    kept.sort();
    assert_eq!(kept, vec![w.root.join("other/x/f"), w.root.join("real/x/f")]);
    let wr = json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false, "writableRoots": [w.root.join("cfg/x")]});
    let e = resolve(wr.clone(), &w.root).unwrap_err();
    assert!(e.message.contains("changed since it started"), "{}", e.message);
    drop(a);
    relink("mine");
    assert_eq!(resolve(ro, &w.root).unwrap().writable_roots[0].read_only, vec![w.root.join("mine/x/f")], "nobody holds it: taken as it is");
    let b = resolve(wr, &w.root).unwrap();
    assert!(b.writable_roots.iter().any(|r| r.root == w.root.join("mine/x")));
    assert_eq!(b.planted.deny_links.iter().map(|l| l.path.clone()).collect::<Vec<_>>(), vec![w.root.join("cfg")]);
}

#[test]
fn path_errors() {
    let w = ws();
    let e = resolve(json!({"mode": "workspace-write", "writableRoots": ["rel"]}), &w.root).unwrap_err();
    assert!(e.message.starts_with("options.sandbox.writableRoots[0]: path must be absolute"), "{}", e.message);
    let e = resolve(json!({"denyRead": ["/a\u{0}b"]}), &w.root).unwrap_err();
    assert!(e.message.starts_with("options.sandbox.denyRead[0]:"));
    let e = resolve(json!({"mode": "workspace-write", "writableRoots": [w.root.join("nope")]}), &w.root).unwrap_err();
    assert!(e.message.contains("does not exist"), "{}", e.message);
    fs::write(w.root.join("file"), "").unwrap();
    let e = resolve(json!({"mode": "workspace-write", "writableRoots": [w.root.join("file")]}), &w.root).unwrap_err();
    assert!(e.message.contains("not a directory"));
    let e = resolve(json!({"readOnlyPaths": ["x/y"]}), &w.root).unwrap_err();
    assert!(e.message.starts_with("options.sandbox.readOnlyPaths[0]:"));
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
}

/// Found by an attacker's review: a writable root under /sys let a root command change the host's
/// kernel settings. Refused for every plan (bwrap, Landlock, a Seatbelt plan built here), whatever
/// names the root; read-only and hidden paths there stay allowed.
#[test]
fn roots_on_kernel_filesystems_are_refused() {
    let w = ws();
    let invalid = |v: Value, c: &PolicyContext| resolve_policy(Some(&v), c).unwrap_err();
    for platform in [Platform::Linux, Platform::Darwin] {
        for root in ["/sys/kernel/mm", "/proc/irq", "/proc/sys/kernel", "/sys/kernel/sandspawn-missing"] {
            for extra in [json!({}), json!({"workspace": "review"})] {
                if platform == Platform::Darwin && !extra.as_object().unwrap().is_empty() {
                    continue;
                }
                let mut v = json!({"mode": "workspace-write", "writableRoots": [w.root, root]});
                v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
                let e = invalid(v, &ctx(&w.root, platform));
                assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
                assert!(e.message.starts_with(&format!("options.sandbox.writableRoots[1]: writable root {root} lies on ")), "{}", e.message);
            }
        }
    }
    // Named through a link of /proc (where it leads differs for each process): refused by its
    // name, though what it leads to here (this process's cwd) is an ordinary directory. A file
    // there is named for where it lies, not as no directory.
    for root in ["/proc/self/cwd", "/proc/self/root/tmp", "/proc/version"] {
        let e = invalid(json!({"mode": "workspace-write", "writableRoots": [root]}), &ctx(&w.root, Platform::Linux));
        assert!(e.message.starts_with(&format!("options.sandbox.writableRoots[0]: writable root {root} lies on proc")), "{}", e.message);
    }
    let e = invalid(json!("workspace-write"), &ctx(Path::new("/sys/kernel/mm"), Platform::Linux));
    assert!(e.message.starts_with("options.cwd: writable root /sys/kernel/mm lies on sysfs"), "{}", e.message);
    let in_sys = PolicyContext { tmpdir: Some("/sys/kernel/mm".into()), ..ctx(&w.root, Platform::Linux) };
    assert!(invalid(json!("workspace-write"), &in_sys).message.starts_with("options.env.TMPDIR: "));
    assert!(resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &in_sys).is_ok(), "TMPDIR not a root: not looked at");
    assert!(resolve_policy(Some(&json!("read-only")), &ctx(Path::new("/sys/kernel/mm"), Platform::Linux)).is_ok(), "a read-only cwd");
    let p = resolve(json!({"mode": "workspace-write", "readOnlyPaths": ["/sys/kernel/mm"], "denyRead": ["/proc/irq"]}), &w.root).unwrap();
    assert_eq!(p.deny_read, vec![PathBuf::from("/proc/irq")]);
}

#[test]
fn mode_combination_errors() {
    let w = ws();
    let e = resolve(json!({"writableRoots": ["/tmp"]}), &w.root).unwrap_err();
    assert!(e.message.contains("sandbox.writableRoots") && e.message.contains("workspace-write"));
    let e = resolve(json!({"tmp": "writable"}), &w.root).unwrap_err();
    assert!(e.message.starts_with("options.sandbox.tmp:"));
    for bad in [json!({"mode": "danger-full-access", "network": false}), json!({"mode": "danger-full-access", "denyRead": ["/x"]}),
        json!({"mode": "danger-full-access", "tmp": "private"})] {
        assert_eq!(resolve(bad, &w.root).unwrap_err().code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
    }
}

#[test]
fn unsupported_combinations() {
    let w = ws();
    let on = |v: Value, p: Platform| resolve_policy(Some(&v), &ctx(&w.root, p));
    let e = on(json!({"tmp": "private"}), Platform::Darwin).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_UNSUPPORTED");
    assert_eq!(on(json!({"tmp": "private"}), Platform::Linux).unwrap().tmp, TmpMode::Private);
    assert_eq!(on(json!("read-only"), Platform::Other).unwrap_err().code.as_str(), "ERR_SANDBOX_UNSUPPORTED");
    assert_eq!(on(json!("danger-full-access"), Platform::Other).unwrap().mode, SandboxMode::DangerFullAccess);
    let e = on(json!({"allowUnixSockets": ["/run/docker.sock"]}), Platform::Linux).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_UNSUPPORTED");
    assert_eq!(on(json!({"allowUnixSockets": []}), Platform::Linux).unwrap().unix_sockets, UnixSockets::Blocked);
    assert_eq!(on(json!({"allowUnixSockets": true}), Platform::Linux).unwrap().unix_sockets, UnixSockets::All);
    assert_eq!(on(json!({"network": true}), Platform::Linux).unwrap().unix_sockets, UnixSockets::All);
    let p = on(json!({"allowUnixSockets": [w.root.join("s.sock")]}), Platform::Darwin).unwrap();
    assert_eq!(p.unix_sockets, UnixSockets::Only(vec![w.root.join("s.sock")]));
    // With the network on, what is given by name is kept or refused, never dropped (mode31).
    for given in [json!(false), json!([])] {
        let v = json!({"network": true, "allowUnixSockets": given});
        assert_eq!(on(v.clone(), Platform::Linux).unwrap().unix_sockets, UnixSockets::Blocked, "{v}");
        assert_eq!(on(v.clone(), Platform::Darwin).unwrap_err().code.as_str(), "ERR_SANDBOX_UNSUPPORTED", "{v}");
    }
    let e = on(json!({"network": true, "allowUnixSockets": [w.root.join("s.sock")]}), Platform::Darwin).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_UNSUPPORTED", "a list with the network on allowed every socket");
    assert_eq!(on(json!({"network": true}), Platform::Darwin).unwrap().unix_sockets, UnixSockets::All);
}

#[test]
fn danger_full_access_policy() {
    let w = ws();
    let p = resolve(json!("danger-full-access"), &w.root).unwrap();
    assert!(p.network && p.writable_roots.is_empty() && p.deny_read.is_empty());
    assert_eq!(p.unix_sockets, UnixSockets::All);
}

#[test]
fn protected_names_default_and_disabled() {
    let w = ws();
    fs::write(w.root.join(".envrc"), "use nix").unwrap();
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &ctx(&w.root, Platform::Linux)).unwrap();
    assert_eq!(p.protected_names, crate::planted::names::defaults());
    let r = &p.writable_roots[0];
    assert_eq!(r.read_only, vec![w.root.join(".envrc")]);
    // every other default name (and .git, and git's HEAD with it) is kept absent at the top
    assert_eq!(r.missing_read_only.len(), crate::planted::names::defaults().len() + 1);
    assert!(r.missing_read_only.contains(&missing(w.root.join(".vscode"), PlaceholderKind::Dir)));
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": []})), &ctx(&w.root, Platform::Linux)).unwrap();
    assert!(p.writable_roots[0].read_only.is_empty());
    assert_eq!(p.writable_roots[0].missing_read_only, vec![missing(w.root.join(".git"), PlaceholderKind::Dir), missing(w.root.join("HEAD"), PlaceholderKind::Dir)]);
    // read-only mode: nothing is writable, nothing to carve; the names are kept as given
    let p = resolve_policy(Some(&json!({"protectedNames": [".x"]})), &ctx(&w.root, Platform::Linux)).unwrap();
    assert_eq!(p.protected_names, vec![".x"]);
}

#[test]
fn protected_names_are_rejected_without_a_sandbox() {
    let w = ws();
    let e = resolve_policy(Some(&json!({"mode": "danger-full-access", "protectedNames": [".envrc"]})), &ctx(&w.root, Platform::Linux)).unwrap_err();
    assert!(e.message.starts_with("options.sandbox.protectedNames:"), "{}", e.message);
    assert!(resolve_policy(Some(&json!({"mode": "danger-full-access", "protectedNames": []})), &ctx(&w.root, Platform::Linux)).is_ok());
}

/// An attacker's review (mode30): with no sandbox, a restriction asked for by name was taken and
/// dropped: `protectGit: true` (the git directory read-only) and `allowUnixSockets: false` or `[]`
/// (no Unix socket of the host reachable) ran with `.git` writable and every socket reachable,
/// nothing in the result saying so, while `network: false` and a `denyRead` entry were refused.
/// Leaving them out, or asking for no restriction (`protectGit: false`, `allowUnixSockets: true`),
/// is still fine.
#[test]
fn restrictions_asked_for_by_name_are_rejected_without_a_sandbox() {
    let w = ws();
    let run = |extra: serde_json::Value| {
        let mut policy = json!({"mode": "danger-full-access"});
        policy.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        resolve_policy(Some(&policy), &ctx(&w.root, Platform::Linux))
    };
    for (extra, field) in [
        (json!({"protectGit": true}), "protectGit"),
        (json!({"allowUnixSockets": false}), "allowUnixSockets"),
        (json!({"allowUnixSockets": []}), "allowUnixSockets"),
    ] {
        let e = run(extra.clone()).expect_err(&format!("{extra} was taken with no sandbox"));
        assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        assert!(e.message.starts_with(&format!("options.sandbox.{field}:")), "{}", e.message);
    }
    for extra in [json!({}), json!({"protectGit": false}), json!({"allowUnixSockets": true})] {
        assert!(run(extra.clone()).is_ok(), "{extra}");
    }
}

/// An attacker's review: as root, a writable root of `/usr/local` (or `/usr`, `/`) let a run write
/// `/usr/local/bin/bwrap`, which bwrap discovery trusts. The system program directories a writable
/// root holds are read-only in it, a missing one uncreatable.
#[test]
fn system_program_directories_in_a_writable_root_stay_read_only() {
    let w = ws();
    fs::create_dir_all(w.root.join("usr/local/bin")).unwrap();
    let mut roots = vec![WritableRoot { root: w.root.clone(), read_only: Vec::new(), missing_read_only: Vec::new(), id: None }];
    let bin = w.root.join("usr/local/bin");
    let sbin = w.root.join("usr/local/sbin");
    super::super::host_code::keep(&mut roots, &[bin.to_str().unwrap(), sbin.to_str().unwrap(), "/usr/bin"], PlaceholderKind::Dir);
    assert_eq!(roots[0].read_only, vec![bin]);
    assert_eq!(roots[0].missing_read_only, vec![missing(sbin, PlaceholderKind::Dir)]);
    // A root of `/usr/local` itself is refused now (`a_writable_root_in_the_systems_code_or_configuration_is_refused`).
}

/// An attacker's review: as root with the cwd `/usr`, a run wrote `/usr/lib/x86_64-linux-gnu/libcap.so.2`,
/// which the next run's system bwrap loaded. The loader's directories (one carve-out through a link
/// such as merged-usr's `/lib -> usr/lib`) and configuration are read-only in a writable root; a
/// missing `ld.so.preload` is kept absent by a file placeholder, a missing directory by a directory.
#[test]
fn library_directories_and_the_loaders_configuration_in_a_writable_root_stay_read_only() {
    let w = ws();
    fs::create_dir_all(w.root.join("usr/lib")).unwrap();
    fs::create_dir_all(w.root.join("etc/ld.so.conf.d")).unwrap();
    std::os::unix::fs::symlink("usr/lib", w.root.join("lib")).unwrap();
    let mut roots = vec![WritableRoot { root: w.root.clone(), read_only: Vec::new(), missing_read_only: Vec::new(), id: None }];
    let at = |p: &str| w.root.join(p).to_str().unwrap().to_string();
    let (usr_lib, lib, lib32, conf_d, preload) = (at("usr/lib"), at("lib"), at("usr/lib32"), at("etc/ld.so.conf.d"), at("etc/ld.so.preload"));
    super::super::host_code::keep(&mut roots, &[&usr_lib, &lib, &lib32, &conf_d], PlaceholderKind::Dir);
    super::super::host_code::keep(&mut roots, &[&preload], PlaceholderKind::File);
    assert_eq!(roots[0].read_only, vec![w.root.join("usr/lib"), w.root.join("etc/ld.so.conf.d")]);
    assert_eq!(roots[0].missing_read_only, vec![missing(w.root.join("usr/lib32"), PlaceholderKind::Dir), missing(w.root.join("etc/ld.so.preload"), PlaceholderKind::File)]);
    // A root of `/usr` itself is refused now (`a_writable_root_in_the_systems_code_or_configuration_is_refused`).
}

/// A fixer's finding: a root inside one of those directories (cwd `/usr/lib/x86_64-linux-gnu`)
/// was a writable part of where the host loads code from. Refused, naming where it lies.
#[test]
fn a_writable_root_inside_a_library_or_program_directory_is_refused() {
    let w = ws();
    let c = fs::canonicalize("/usr/lib").unwrap();
    let sub = fs::read_dir(&c).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).find(|p| p.is_dir() && !p.is_symlink()).expect("a directory in /usr/lib");
    let e = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [sub]}), &w.root).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::InvalidOptions, "{sub:?}: {e:?}");
    assert!(e.message.contains("load code from") && e.message.contains(&*c.to_string_lossy()), "{}", e.message);
    // One of them itself: kept read-only whole in a root that is it (`/lib` where it is not a link),
    // refused where it lies in `/usr` (`refuse_system_roots`).
    let mut roots = vec![WritableRoot { root: c.clone(), read_only: Vec::new(), missing_read_only: Vec::new(), id: None }];
    super::super::host_code::keep_host_code(&mut roots, &Default::default());
    assert!(roots[0].read_only.contains(&c), "one of them itself is kept read-only whole: {:?}", roots[0].read_only);
    assert!(resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": ["/usr/lib"]}), &w.root).is_err());
}

/// An attacker's review (/work/atk/fixes17/usrsub.sh): as root with the cwd `/usr/share/perl5`,
/// a run wrote `strict.pm`, which the host's `perl -e 'use strict'` ran; with `/usr/local/share`,
/// `perl/5.36.0/strict.pm` and git's template hooks; with `/etc`, `perl/strict.pm`. Every root in
/// `/usr` or `/usr/local` (themselves included: a root holding them could make a new entry there,
/// `/usr/local/go/bin/go`) but under `src`, and `/etc`, `/boot`, `/var/spool/cron`, `/var/lib/dpkg`
/// or one inside them, is refused, however named (a link to one is its target).
#[test]
fn a_writable_root_in_the_systems_code_or_configuration_is_refused() {
    let w = ws();
    let link = w.root.join("share-link");
    std::os::unix::fs::symlink("/usr/share", &link).unwrap();
    let refused = ["/usr/share/perl5", "/usr/share", "/usr/local/share", "/usr/share/git-core/templates", "/usr/local/etc", "/usr", "/usr/local", "/usr/lib", "/usr/include", "/etc", "/etc/profile.d", "/boot", "/var/lib/dpkg", "/var/lib/dpkg/info", "/var/spool/cron"];
    for p in refused.iter().map(PathBuf::from).chain([link]).filter(|p| p.is_dir()) {
        let e = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [p]}), &w.root).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::InvalidOptions, "{p:?}: {e:?}");
        assert!(e.message.contains("sandbox.writableRoots") && e.message.contains("plant code"), "{p:?}: {}", e.message);
        // The same as the cwd, and in review mode.
        let c = fs::canonicalize(&p).unwrap();
        let e = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &c).unwrap_err();
        assert!(e.message.starts_with("options.cwd:"), "{p:?}: {}", e.message);
        let e = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "workspace": "review"}), &c).unwrap_err();
        assert!(e.message.starts_with("options.cwd:"), "{p:?}: {}", e.message);
    }
    // `src` stays writable (Docker's `WORKDIR /usr/src/app`), and so does `/opt`.
    for p in ["/usr/src", "/usr/local/src", "/opt"].map(PathBuf::from).into_iter().filter(|p| p.is_dir()) {
        let r = resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [p]}), &w.root);
        assert!(r.is_ok(), "{p:?}: {:?}", r.err());
    }
}

/// A read-only bind mount made for a test, undone when dropped (before the temporary directory
/// holding it is removed: read-only, so that removal could not reach the host's files anyway).
struct Bound(PathBuf);

impl Bound {
    fn new(source: &Path, target: &Path) -> Bound {
        fs::create_dir_all(target).unwrap();
        let ok = std::process::Command::new("mount").args(["-o", "bind,ro"]).arg(source).arg(target).status().is_ok_and(|s| s.success());
        assert!(ok, "mount -o bind,ro {source:?} {target:?} failed");
        assert!(fs::write(target.join("x"), "").is_err(), "{target:?} is writable");
        Bound(target.to_path_buf())
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        let undone = std::process::Command::new("umount").arg("-l").arg(&self.0).status().is_ok_and(|s| s.success());
        if !undone {
            eprintln!("could not unmount {:?}: stopping before its directory is removed", self.0);
            std::process::abort();
        }
    }
}

/// An attacker's review (/work/atk/fixes18/bindroot.sh): with `/etc` bound elsewhere and the cwd
/// there, the root was accepted (its canonical path is not `/etc`) and a run as root appended to
/// `/etc/profile.d`. A root is judged through its mounts too: a bind of a tree, of a directory
/// above it (`/var`: keep_host_code keeps `/var/lib/dpkg` by its name only) or of one inside it
/// (`/etc/profile.d`: its mount's root), or one below the root (a chroot's `etc`), as the cwd or a
/// writable root; what a tree allows (`/usr/src`) stays allowed however reached, and so does a bind
/// of elsewhere.
#[test]
fn a_system_tree_reached_through_a_bind_mount_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a mount on the host needs root (.ci/run runs cargo test as root)");
        return;
    }
    if !crate::test_mount_table::in_own_mount_namespace("policy::resolve::tests::a_system_tree_reached_through_a_bind_mount_is_refused") {
        return;
    }
    let _table = crate::test_mount_table::changing();
    // Not under /tmp: a root holding the binds is refused, and this process's other tests (and other
    // programs' runs) have /tmp for a root.
    let t = tempfile::tempdir_in("/var/tmp").unwrap();
    let w = Ws { root: t.path().canonicalize().unwrap(), _t: t };
    let inside_etc = fs::read_dir("/etc").unwrap().filter_map(|e| e.ok()).map(|e| e.path()).find(|p| p.is_dir() && !p.is_symlink()).expect("a directory in /etc");
    fs::create_dir_all(w.root.join("mine")).unwrap();
    let bind = |source: &str, target: &str| Bound::new(Path::new(source), &w.root.join(target));
    let _binds = [
        bind("/etc", "etc"),
        bind(inside_etc.to_str().unwrap(), "inside-etc"),
        bind("/var", "var"),
        bind("/usr", "usr"),
        bind("/usr/share", "share"),
        bind(w.root.join("mine").to_str().unwrap(), "elsewhere"),
        bind("/etc", "outer/chroot/etc"),
    ];
    // The cwd elsewhere: the binds' own directory holds every one of them.
    let cwd = ws();
    let refused = |p: &Path| resolve(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [p]}), &cwd.root).err();
    for p in ["etc", "etc/ld.so.conf.d", "inside-etc", "var", "var/lib", "var/lib/dpkg", "var/spool/cron", "usr", "usr/lib", "usr/local/share", "share", "outer"].map(|p| w.root.join(p)) {
        if !p.is_dir() {
            continue;
        }
        let e = refused(&p).unwrap_or_else(|| panic!("{p:?} accepted"));
        assert_eq!(e.code, crate::error::ErrorCode::InvalidOptions, "{p:?}: {e:?}");
        assert!(e.message.contains("a bind mount") && e.message.contains("plant code"), "{p:?}: {}", e.message);
        let e = resolve(json!({"mode": "workspace-write", "tmp": "read-only"}), &p).unwrap_err();
        assert!(e.message.starts_with("options.cwd:"), "{p:?}: {}", e.message);
    }
    for p in ["usr/src", "usr/local/src", "var/tmp", "var/cache", "elsewhere", "mine"].map(|p| w.root.join(p)).into_iter().filter(|p| p.is_dir()) {
        assert!(refused(&p).is_none(), "{p:?}: {:?}", refused(&p));
    }
    assert!(refused(&w.root).is_some_and(|e| e.message.contains("a bind mount")), "the directory holding them");
}
