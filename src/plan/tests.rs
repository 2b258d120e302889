//! Pinned argv for the plan builders, and real-bwrap runs proving the argv enforces the policy.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::test_support::*;
use super::*;
use crate::platform::Platform;

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().canonicalize().unwrap();
    (t, p)
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

fn v(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|x| x.to_string()).collect()
}

/// Everything up to and including the sandbox's /dev/shm. bwrap keeps the capabilities of the
/// helper's mounts in every plan whose /dev/shm shows (the helper bounds its inodes).
fn head(network: bool) -> Vec<String> {
    let mut a = v(&["--new-session", "--die-with-parent", "--unshare-user", "--cap-drop", "ALL"]);
    a.extend(kept_for_helper(true));
    a.extend(v(&["--unshare-pid", "--unshare-ipc", "--unshare-uts"]));
    if !network {
        a.push("--unshare-net".into());
    }
    a.extend(v(&[
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--ro-bind-try", "/proc/irq", "/proc/irq",
        "--ro-bind-try", "/proc/bus", "/proc/bus",
        "--ro-bind-try", "/proc/fs", "/proc/fs",
    ]));
    a.extend(shm());
    a
}

/// The sandbox's own bounded /dev/shm (without limits.memory).
fn shm() -> Vec<String> {
    v(&["--perms", "1777", "--size", &crate::plan::bwrap::DEFAULT_SHM_BYTES.to_string(), "--tmpfs", "/dev/shm"])
}

/// A private /tmp of the default size.
fn private_tmp() -> Vec<String> {
    v(&["--size", &crate::plan::bwrap::DEFAULT_PRIVATE_TMP_BYTES.to_string(), "--tmpfs", "/tmp"])
}

/// The helper's first mount step: the inode bound of /dev/shm (512 MiB / 4 KiB).
const SHM_INODES: &str = "--tmpfs-inodes=131072:/dev/shm";
/// ... and of a private /tmp (2 GiB / 4 KiB).
const TMP_INODES: &str = "--tmpfs-inodes=524288:/tmp";
/// ... then the pty bound of the sandbox's devpts (`bwrap::PTYS_PER_RUN`).
const PTS_MAX: &str = "--devpts-max=256";
/// ... then the reopening of the command's inherited host devices, through the host's /dev bound
/// read-only there (every plan).
const STDIO_DEVICES: &str = "--stdio-devices=/dev/sandspawn-host-dev";
const HOST_DEV_IN_DEV: &str = crate::plan::bwrap::HOST_DEV_IN_DEV;

/// With the network off: the helper in front of bwrap opens the offline `nsswitch.conf` at `fd`.
fn front(fd: i32, bwrap: &str) -> Vec<String> {
    v(&["v1", &format!("--offline-nsswitch-fd={fd}"), "--", bwrap])
}

/// A plan for another spawner's status pair (`Steps::status_pair`) at `status` and the next
/// number, put into the `expected` argv of such a plan: made by the helper in front of bwrap (which
/// every such plan has, `bwrap` its program), bwrap's `--json-status-fd` right before `--chdir`,
/// the helper inside's `--bwrap-alive` last before its `--`.
fn paired(mut expected: Vec<String>, status: i32, bwrap: &str) -> Vec<String> {
    let pair = format!("--status-pair={status},{}", status + 1);
    if expected[0] == "v1" {
        let end = expected.iter().position(|a| a == "--" || a.starts_with("--held-locks=")).unwrap();
        expected.insert(end, pair);
    } else {
        expected.splice(0..0, v(&["v1", &pair, "--", bwrap]));
    }
    let chdir = expected.iter().position(|a| a == "--chdir").unwrap();
    expected.splice(chdir..chdir, v(&["--json-status-fd", &status.to_string()]));
    let inside_end = chdir + 2 + 3 + expected[chdir + 2 + 3..].iter().position(|a| a == "--").unwrap();
    expected.insert(inside_end, format!("--bwrap-alive={}", status + 1));
    expected
}

/// ... and bwrap shows it to the command, after every other mount but the tool caches.
fn offline(fd: i32) -> Vec<String> {
    v(&["--ro-bind-data", &fd.to_string(), "/etc/nsswitch.conf"])
}

/// `--chdir`, then the helper (its checks of the writable `roots` bwrap bound and of the cwd, the
/// inode bound of /dev/shm, its own user namespace, the filter refusing Unix sockets when
/// `block_unix`), then the command.
fn tail(roots: &[&Path], block_unix: bool, cwd: &Path, cmd: &[&str]) -> Vec<String> {
    tail_bounding(&[SHM_INODES], checked(roots, roots.contains(&cwd).then_some(cwd)), block_unix, cwd, cmd)
}

/// `tail`, with the helper bounding the inodes of each tmpfs in `inodes`, and the ptys, after the
/// `checks` of what bwrap bound.
fn tail_bounding(inodes: &[&str], checks: Vec<String>, block_unix: bool, cwd: &Path, cmd: &[&str]) -> Vec<String> {
    let mut a = v(&["--ro-bind", "/dev", HOST_DEV_IN_DEV, "--remount-ro", "/dev", "--chdir", &s(cwd), "--", &s(helper_path())]);
    a.push("v1".into());
    a.extend(checks);
    a.extend(v(inodes));
    a.push(PTS_MAX.into());
    a.push(STDIO_DEVICES.into());
    a.extend(userns_steps(true));
    a.extend(v(&["--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1"]));
    a.push(format!("--filter={}", if block_unix { "inet" } else { "inet-unix" }));
    a.push("--".into());
    a.extend(v(cmd));
    a
}

fn cat(parts: Vec<Vec<String>>) -> Vec<String> {
    parts.concat()
}

#[test]
fn read_only_argv() {
    let (_t, w) = tmp();
    let p = policy(json!("read-only"), &w, Platform::Linux);
    let plan = plan(&p, &w, &["ls", "-l"]);
    assert_eq!(plan.program, helper_path());
    assert_eq!(plan.argv0, "sandspawn-helper");
    assert_eq!(plan.args, paired(cat(vec![front(3, "/usr/bin/bwrap"), head(false), offline(3), tail(&[], true, &w, &["ls", "-l"])]), 4, "/usr/bin/bwrap"));
    assert_eq!(plan.helper.as_deref(), Some(helper_path()));
    assert_eq!(plan.env.get("SANDSPAWN_SANDBOX").map(String::as_str), Some("bwrap"));
    assert_eq!(plan.env.get("SANDSPAWN_NETWORK_DISABLED").map(String::as_str), Some("1"));
    assert_eq!(plan.sandbox_type, SandboxType::Bwrap);
    assert_eq!((plan.status_fd, plan.report_fd), (None, None), "self-contained: no descriptors");
}

#[test]
fn network_on_and_unix_sockets_allowed() {
    let (_t, w) = tmp();
    let p = policy(json!({"network": true}), &w, Platform::Linux);
    let plan = plan(&p, &w, &["true"]);
    assert_eq!(plan.args, paired(cat(vec![head(true), tail(&[], false, &w, &["true"])]), 3, "/usr/bin/bwrap"));
    assert!(!plan.env.contains_key("SANDSPAWN_NETWORK_DISABLED"));
    let p = policy(json!({"allowUnixSockets": true}), &w, Platform::Linux);
    let offline_args = paired(cat(vec![front(3, "/usr/bin/bwrap"), head(false), offline(3), tail(&[], false, &w, &["true"])]), 4, "/usr/bin/bwrap");
    assert_eq!(super::test_support::plan(&p, &w, &["true"]).args, offline_args);
}

#[test]
fn runner_fds_and_bwrap_info_are_used() {
    let (_t, w) = tmp();
    let p = policy(json!({"denyRead": [s(&w)]}), &w, Platform::Linux);
    let cmd = vec!["true".to_string()];
    let env = BTreeMap::new();
    let info = BwrapInfo { path: "/opt/bw".into(), version: Some("0.6.0".into()), disable_userns: false, proc_unmountable: false };
    let mut req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: Some(&info), resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let plan = build(&req).unwrap();
    assert_eq!(plan.program, helper_path(), "in front of bwrap, for the offline nsswitch.conf");
    assert_eq!(&plan.args[..4], &front(8, "/opt/bw")[..], "after the runner's descriptors (child_fds)");
    let bwrap_args = &plan.args[4..];
    assert_eq!(&bwrap_args[..5], &v(&["--new-session", "--die-with-parent", "--json-status-fd", "3", "--unshare-user"])[..]);
    assert!(!bwrap_args.contains(&"--disable-userns".to_string()), "bwrap never nests pid 1 with the command");
    assert_eq!((plan.status_fd, plan.report_fd), (Some(3), Some(4)));
    let helper_args = &bwrap_args[bwrap_args.iter().position(|a| a == "v1").unwrap()..];
    let expect = cat(vec![v(&["v1", SHM_INODES, PTS_MAX, STDIO_DEVICES]), userns_steps(true), v(&["--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1", "--filter=inet", "--report-fd=4", "--bwrap-alive=7", "--"])]);
    assert_eq!(&helper_args[..expect.len()], &expect[..]);
    req.helper = None;
    assert_eq!(build(&req).unwrap_err().code.as_str(), "ERR_SANDBOX_UNAVAILABLE", "no bwrap plan without the helper");
    req.helper = Some(helper_path());
    let masked = BwrapInfo { proc_unmountable: true, ..info.clone() };
    req.bwrap = Some(&masked);
    let e = build(&req).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_UNAVAILABLE");
    assert!(e.message.contains("systempaths=unconfined"));
}

#[test]
fn workspace_write_nested_roots_and_git() {
    let (_t, w) = tmp();
    fs::create_dir_all(w.join(".git")).unwrap();
    fs::write(w.join(".git/config"), "x").unwrap();
    fs::create_dir_all(w.join("sub/inner")).unwrap();
    fs::write(w.join("sub/.git"), "gitdir: ../.git\n").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [s(&w.join("sub/inner")), s(&w.join("sub"))]}), &w, Platform::Linux);
    let plan = plan(&p, &w, &["make"]);
    let (root, sub, inner) = (s(&w), s(&w.join("sub")), s(&w.join("sub/inner")));
    let git = s(&w.join(".git"));
    let sub_git = s(&w.join("sub/.git"));
    let inner_git = s(&w.join("sub/inner/.git"));
    let expect = cat(vec![
        // a plan for another spawner: the helper in front locks the directory and creates the placeholder
        v(&["v1", "--offline-nsswitch-fd=3", &held_locks(), &format!("--hold-dir=4:{inner}"), "--placeholder-dir=4:.git", "--placeholder-dir=4:HEAD", "--", "/usr/bin/bwrap"]),
        head(false),
        v(&["--bind", &root, &root, "--bind", &sub, &sub, "--bind", &inner, &inner]),
        offline(3),
        v(&["--lock-file", &inner, "--ro-bind", "/dev", HOST_DEV_IN_DEV, "--remount-ro", "/dev", "--chdir", &w.display().to_string(), "--", &s(helper_path())]),
        // the carve-outs are made read-only by the helper, root by root (sub's .git file, and its
        // gitdir, w/.git, again: harmless, and keeps the rule simple); the placeholder is covered
        v(&["v1", "--await-init-locks=1", "--close-fds=4"]),
        checked(&[&w, &w.join("sub"), &w.join("sub/inner")], Some(&w)),
        v(&[SHM_INODES, PTS_MAX, STDIO_DEVICES, &ro_at(&git), &ro_at(&sub_git), &format!("--cover-dir={inner_git}"), &format!("--cover-dir={}", s(&w.join("sub/inner/HEAD")))]),
        userns_steps(true),
        v(&["--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1", "--filter=inet", "--", "make"]),
    ]);
    assert_eq!(plan.args, paired(expect, 5, "/usr/bin/bwrap"));
}

#[test]
fn gitdir_file_in_a_workspace() {
    let (_t, w) = tmp();
    let wt = w.join("wt");
    fs::create_dir_all(&wt).unwrap();
    fs::create_dir_all(w.join("main/.git/worktrees/wt")).unwrap();
    fs::write(wt.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [s(&w.join("main"))], "network": true}), &wt, Platform::Linux);
    let plan = plan(&p, &wt, &["git", "status"]);
    let (main, mg, mgw, wts, wtg) = (s(&w.join("main")), s(&w.join("main/.git")), s(&w.join("main/.git/worktrees/wt")), s(&wt), s(&wt.join(".git")));
    let expect = cat(vec![
        head(true),
        v(&["--bind", &main, &main, "--bind", &wts, &wts]),
        v(&["--ro-bind", "/dev", HOST_DEV_IN_DEV, "--remount-ro", "/dev", "--chdir", &wts, "--", &s(helper_path())]),
        v(&["v1"]),
        checked(&[&w.join("main"), &wt], Some(&wt)),
        v(&[SHM_INODES, PTS_MAX, STDIO_DEVICES, &ro_at(&mg), &ro_at(&mgw), &ro_at(&wtg)]),
        userns_steps(true),
        v(&["--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1", "--filter=inet-unix", "--", "git", "status"]),
    ]);
    assert_eq!(plan.args, paired(expect, 3, "/usr/bin/bwrap"));
}

#[test]
fn read_only_paths_and_deny_read() {
    let (_t, w) = tmp();
    let ws = w.join("secret/ws");
    fs::create_dir_all(ws.join(".git/x")).unwrap();
    fs::write(ws.join(".env"), "TOKEN").unwrap();
    fs::write(ws.join("key.pem"), "KEY").unwrap();
    fs::write(w.join("id_rsa"), "K").unwrap();
    let p = policy(
        json!({"mode": "workspace-write", "tmp": "read-only", "network": true,
               "readOnlyPaths": [s(&ws.join(".env")), s(&ws.join("dist/out"))],
               "denyRead": [s(&w.join("secret")), s(&w.join("id_rsa")), s(&ws.join("key.pem"))]}),
        &ws,
        Platform::Linux,
    );
    let plan = plan(&p, &ws, &["cat"]);
    let (sec, id, wss, env_, dist, git, pem) =
        (s(&w.join("secret")), s(&w.join("id_rsa")), s(&ws), s(&ws.join(".env")), s(&ws.join("dist")), s(&ws.join(".git")), s(&ws.join("key.pem")));
    let expect = cat(vec![
        // the helper in front of bwrap opens the masks' descriptors on /dev/null
        v(&["v1", "--null-fds=3,4", &held_locks(), &format!("--hold-dir=5:{wss}"), "--placeholder-file=5:dist", "--", "/usr/bin/bwrap"]),
        // the missing read-only dist is covered by the helper, which keeps capabilities for it
        head(true),
        // deny above the writable root: empty read-only tmpfs, the root's mount point made first
        v(&["--perms", "000", "--ro-bind-data", "3", &id]),
        v(&["--tmpfs", &sec, "--dir", &wss, "--remount-ro", &sec]),
        v(&["--bind", &wss, &wss]),
        // nested deny after its root's bind
        v(&["--perms", "000", "--ro-bind-data", "4", &pem]),
        v(&["--lock-file", &wss, "--ro-bind", "/dev", HOST_DEV_IN_DEV, "--remount-ro", "/dev", "--chdir", &wss, "--", &s(helper_path())]),
        // the carve-outs inside the root (re-exposed inside the denied directory) by the helper
        v(&["v1", "--await-init-locks=1", "--close-fds=5"]),
        checked(&[&ws], Some(&ws)),
        v(&[SHM_INODES, PTS_MAX, STDIO_DEVICES, &ro_at(&env_), &ro_at(&git), &format!("--cover-file={dist}")]),
        userns_steps(true),
        v(&["--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1", "--filter=inet-unix", "--", "cat"]),
    ]);
    assert_eq!(plan.args, paired(expect, 6, "/usr/bin/bwrap"));
    assert_eq!((plan.program.as_path(), plan.argv0.as_str()), (helper_path(), "sandspawn-helper"));
    // The runner's own descriptors come first; the masks' follow them.
    let cmd = vec!["cat".to_string()];
    let env = BTreeMap::new();
    let req = PlanRequest { command: &cmd, cwd: &ws, env: &env, policy: &p, platform: Platform::Linux, bwrap: None, resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let runner = build(&req).unwrap();
    assert_eq!(&runner.args[..2], &v(&["v1", "--null-fds=8,9"])[..], "after child_fds::FIRST_FREE");
}

#[test]
fn tmp_values() {
    // Under /tmp whatever TMPDIR says (the cases below are about a cwd under /tmp; a TMPDIR on
    // another filesystem failed them).
    let t = tempfile::tempdir_in("/tmp").unwrap();
    let w = t.path().canonicalize().unwrap();
    // writable: /tmp is a root (w is under /tmp, so two roots, /tmp first)
    let p = policy(json!({"mode": "workspace-write", "network": true, "protectGit": false}), &w, Platform::Linux);
    let a = plan(&p, &w, &["x"]).args;
    assert_eq!(a, paired(cat(vec![head(true), v(&["--bind", "/tmp", "/tmp", "--bind", &s(&w), &s(&w)]), tail(&[Path::new("/tmp"), &w], false, &w, &["x"])]), 3, "/usr/bin/bwrap"));
    // private: the tmpfs comes before the cwd's bind
    let p = policy(json!({"mode": "workspace-write", "network": true, "protectGit": false, "tmp": "private"}), &w, Platform::Linux);
    let a = plan(&p, &w, &["x"]).args;
    assert_eq!(a, paired(cat(vec![head(true), private_tmp(), v(&["--bind", &s(&w), &s(&w)]), tail_bounding(&[SHM_INODES, TMP_INODES], checked(&[&w], Some(&w)), false, &w, &["x"])]), 3, "/usr/bin/bwrap"));
    // private in read-only mode: a cwd under /tmp is bound back read-only
    let p = policy(json!({"network": true, "tmp": "private"}), &w, Platform::Linux);
    let a = plan(&p, &w, &["x"]).args;
    assert_eq!(a, paired(cat(vec![head(true), private_tmp(), v(&["--ro-bind", &s(&w), &s(&w)]), tail_bounding(&[SHM_INODES, TMP_INODES], checked(&[], Some(&w)), false, &w, &["x"])]), 3, "/usr/bin/bwrap"));
    // read-only: nothing
    let p = policy(json!({"mode": "workspace-write", "network": true, "protectGit": false, "tmp": "read-only"}), &w, Platform::Linux);
    assert_eq!(plan(&p, &w, &["x"]).args, paired(cat(vec![head(true), v(&["--bind", &s(&w), &s(&w)]), tail(&[&w], false, &w, &["x"])]), 3, "/usr/bin/bwrap"));
}

#[test]
fn odd_path_characters_pass_through_verbatim() {
    let (_t, w) = tmp();
    let odd = w.join("a b\"c'd é\\$(x)");
    fs::create_dir(&odd).unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "protectGit": false}), &odd, Platform::Linux);
    let a = plan(&p, &odd, &["echo", "it's \"quoted\""]).args;
    assert_eq!(a, paired(cat(vec![head(true), v(&["--bind", &s(&odd), &s(&odd)]), tail(&[&odd], false, &odd, &["echo", "it's \"quoted\""])]), 3, "/usr/bin/bwrap"));
}

#[test]
fn ld_variables_move_to_setenv() {
    let (_t, w) = tmp();
    let p = policy(json!({"network": true}), &w, Platform::Linux);
    let env: BTreeMap<String, String> =
        [("LD_PRELOAD", "/x/evil.so"), ("LD_LIBRARY_PATH", "/opt/lib"), ("PATH", "/usr/bin"), ("OLD_LD", "k")]
            .iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let plan = plan_with_env(&p, &w, Platform::Linux, &["x"], &env);
    assert_eq!(plan.args, paired(cat(vec![head(true), v(&["--setenv", "LD_LIBRARY_PATH", "/opt/lib", "--setenv", "LD_PRELOAD", "/x/evil.so"]), tail(&[], false, &w, &["x"])]), 3, "/usr/bin/bwrap"));
    assert!(!plan.env.keys().any(|k| k.starts_with("LD_")));
    assert_eq!(plan.env.get("OLD_LD").map(String::as_str), Some("k"));
    assert_eq!(plan.env.get("PATH").map(String::as_str), Some("/usr/bin"));
}

#[test]
fn danger_full_access_is_direct() {
    let (_t, w) = tmp();
    let p = policy(json!("danger-full-access"), &w, Platform::Linux);
    let env = BTreeMap::from([("A".to_string(), "1".to_string())]);
    let plan = plan_with_env(&p, &w, Platform::Linux, &["ls", "-a"], &env);
    assert_eq!((plan.program.clone(), plan.argv0.as_str(), plan.args.clone()), (PathBuf::from("ls"), "ls", v(&["-a"])));
    assert_eq!(plan.env, env, "no markers without a sandbox and with the network on");
    assert_eq!(plan.sandbox_type, SandboxType::None);
    let cmd = v(&["ls"]);
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Other, bwrap: None, resolved_program: Some(Path::new("/bin/ls")), helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let plan = build(&req).unwrap();
    assert_eq!((plan.program, plan.status_fd), (PathBuf::from("/bin/ls"), None));
    let ro = policy(json!("read-only"), &w, Platform::Linux);
    let e = build(&PlanRequest { policy: &ro, ..req.clone() }).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_UNSUPPORTED");
    let empty: Vec<String> = Vec::new();
    assert_eq!(build(&PlanRequest { command: &empty, ..req }).unwrap_err().code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
}

#[path = "tests_seatbelt.rs"]
mod seatbelt_tests;
#[path = "tests_seatbelt_eval.rs"]
mod seatbelt_eval_tests;
#[path = "tests_seatbelt_planted.rs"]
mod seatbelt_planted_tests;
#[path = "tests_real_bwrap.rs"]
mod real_bwrap;

#[test]
fn sandspawns_own_files_in_a_writable_root_are_bound_read_only_and_never_hidden() {
    let (_t, w) = tmp();
    let pkg = w.join("node_modules/sandspawn");
    fs::create_dir_all(&pkg).unwrap();
    let (helper, bundled) = (pkg.join("sandspawn-helper"), pkg.join("sandspawn-bwrap"));
    fs::write(&helper, "").unwrap();
    fs::write(&bundled, "").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "protectGit": false}), &w, Platform::Linux);
    let (cmd, env) = (vec!["true".to_string()], BTreeMap::new());
    let info = BwrapInfo { path: bundled.clone(), version: None, disable_userns: true, proc_unmountable: false };
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: Some(&info), resolved_program: None, helper: Some(&helper), runner_fds: false, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let args = build(&req).unwrap().args;
    let bind = args.windows(3).position(|x| x == v(&["--bind", &s(&w), &s(&w)]).as_slice()).unwrap();
    let (nm, pkg_s) = (s(&w.join("node_modules")), s(&pkg));
    let expect = v(&["--bind", &nm, &nm, "--bind", &pkg_s, &pkg_s, "--ro-bind", &s(&bundled), &s(&bundled), "--ro-bind", &s(&helper), &s(&helper)]);
    assert_eq!(&args[bind + 3..bind + 3 + expect.len()], &expect[..], "right after the root's bind: the directories between pinned, the files read-only");
    // The helper checks each writable bind, the root's and the pins', against its directory.
    let checks: Vec<&String> = args.iter().filter(|a| a.starts_with("--writable-at=")).collect();
    assert_eq!(checks, [&at("--writable-at", &w), &at("--writable-at", &w.join("node_modules")), &at("--writable-at", &pkg)]);
    // The JavaScript facade's files too, when given.
    std::fs::write(pkg.join("index.js"), "").unwrap();
    let own = vec![pkg.join("index.js")];
    let args = build(&PlanRequest { own_files: &own, ..req.clone() }).unwrap().args;
    assert!(args.windows(3).any(|x| x == v(&["--ro-bind", &s(&pkg.join("index.js")), &s(&pkg.join("index.js"))]).as_slice()));
    // A writable root inside them is refused.
    let inside = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "protectGit": false}), &pkg, Platform::Linux);
    let e = build(&PlanRequest { policy: &inside, cwd: &pkg, own_files: &[pkg.clone()], ..req.clone() }).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");

    // Read-only already: nothing added.
    let ro = policy(json!({"network": true}), &w, Platform::Linux);
    let args = build(&PlanRequest { policy: &ro, ..req.clone() }).unwrap().args;
    assert!(!args.windows(2).any(|x| x[0] == "--ro-bind" && x[1] == s(&bundled)), "{args:?}");

    // A mask that would hide the helper is refused, naming the entry; a deeper root re-exposes it.
    let hidden = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "protectGit": false, "denyRead": [s(&w.join("node_modules"))]}), &w, Platform::Linux);
    let e = build(&PlanRequest { policy: &hidden, ..req.clone() }).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
    assert!(e.message.contains(&format!("sandbox.denyRead entry {}", s(&w.join("node_modules")))) && e.message.contains(&s(&helper)), "{}", e.message);
    let exposed = policy(
        json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "protectGit": false,
               "denyRead": [s(&w.join("node_modules"))], "writableRoots": [s(&pkg)]}),
        &w,
        Platform::Linux,
    );
    assert!(build(&PlanRequest { policy: &exposed, ..req.clone() }).is_ok());
}

/// A root its own `denyRead` entry masks whole is not bound: the helper could not tell where a bind
/// under the mask went (a directory on its path swapped for a link would have it land elsewhere,
/// writable). The mask alone is there, and a root nested in it is bound and checked as any.
#[test]
fn a_writable_root_masked_whole_is_not_bound() {
    let (_t, w) = tmp();
    let (masked, inner) = (w.join("masked"), w.join("masked/inner"));
    fs::create_dir_all(&inner).unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "writableRoots": [s(&masked), s(&inner)], "denyRead": [s(&masked)]}), &w, Platform::Linux);
    let a = plan(&p, &w, &["true"]).args;
    assert!(!a.windows(3).any(|x| x == v(&["--bind", &s(&masked), &s(&masked)]).as_slice()), "{a:?}");
    let mask = v(&["--tmpfs", &s(&masked), "--dir", &s(&inner), "--remount-ro", &s(&masked), "--bind", &s(&inner), &s(&inner)]);
    assert!(a.windows(mask.len()).any(|x| x == mask.as_slice()), "{a:?}");
    let checks: Vec<&String> = a.iter().filter(|x| x.starts_with("--writable-at=")).collect();
    assert_eq!(checks, [&at("--writable-at", &w), &at("--writable-at", &inner)]);
}

#[path = "tests_pty.rs"]
mod pty_tests;

#[test]
fn a_helper_under_a_private_tmp_is_bound_into_dev() {
    let (_t, w) = tmp();
    let helper = Path::new("/tmp/ss-install/node_modules/sandspawn/sandspawn-helper");
    let p = policy(json!({"mode": "workspace-write", "tmp": "private", "network": true, "protectGit": false}), &w, Platform::Linux);
    let (cmd, env) = (vec!["true".to_string()], BTreeMap::new());
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: None, resolved_program: None, helper: Some(helper), runner_fds: false, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let plan = build(&req).unwrap();
    let args = plan.args;
    let tmpfs = args.iter().position(|a| a == "/tmp").unwrap();
    let bind = args.windows(3).position(|x| x == v(&["--ro-bind", &s(helper), "/dev/sandspawn-helper"]).as_slice()).expect("the helper is bound into /dev");
    assert!(bind > tmpfs, "after /dev and /tmp are made");
    let run = args.iter().position(|a| a == "/dev/sandspawn-helper" ).map(|_| args.iter().rposition(|a| a == "/dev/sandspawn-helper").unwrap()).unwrap();
    assert_eq!((args[run - 1].as_str(), args[run + 1].as_str()), ("--", "v1"), "bwrap runs it from there");
    assert_eq!(plan.helper.as_deref(), Some(Path::new("/dev/sandspawn-helper")), "the runner tells it from the command by that path");
    // Without a private /tmp it is visible (read-only) already: no bind.
    let plain = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": true, "protectGit": false}), &w, Platform::Linux);
    let args = build(&PlanRequest { policy: &plain, ..req.clone() }).unwrap().args;
    assert_eq!(args.iter().filter(|a| **a == s(helper)).count(), 1, "named once, as the program bwrap runs");
}

/// The helper's argument naming the held directories' lock files' directory (this user's).
fn held_locks() -> String {
    format!("--held-locks={}", s(&crate::placeholders::locks_root().unwrap()))
}

/// The helper's argument for a carve-out that exists: the path with the entry it must be.
fn ro_at(p: &str) -> String {
    at("--read-only-at", Path::new(p))
}

/// `FLAG=DEV:INO:PATH` for what `p` is now.
fn at(flag: &str, p: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let m = p.symlink_metadata().unwrap();
    format!("{flag}={}:{}:{}", m.dev(), m.ino(), s(p))
}

/// The helper's first checks: each of the writable `roots` (and pins) bwrap bound, then the cwd
/// when bwrap bound it, with the directory each must be.
fn checked(roots: &[&Path], cwd: Option<&Path>) -> Vec<String> {
    roots.iter().map(|r| at("--writable-at", r)).chain(cwd.map(|c| at("--cwd-at", c))).collect()
}

#[test]
fn sandspawn_s_stores_are_covered_unless_hidden_already() {
    let (_t, w) = tmp();
    let (stores, denied) = (w.join("state/tool-caches"), w.join("denied"));
    let hidden = denied.join("change-sets");
    for d in [&stores, &hidden] {
        std::fs::create_dir_all(d).unwrap();
    }
    let p = policy(json!({"denyRead": [s(&denied)]}), &w, Platform::Linux);
    let cmd = vec!["true".to_string()];
    let env = BTreeMap::new();
    let info = BwrapInfo { path: "/opt/bw".into(), version: Some("0.6.0".into()), disable_userns: false, proc_unmountable: false };
    let list = [stores.clone(), hidden.clone()];
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: Some(&info), resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &list, proxy: None };
    let args = build(&req).unwrap().args;
    // Covered where they still are as the sandbox starts: another process's store may go.
    let covers: Vec<&String> = args.iter().filter(|a| a.starts_with("--cover-dir")).collect();
    assert_eq!(covers, [&format!("--cover-dir-if-there={}", s(&stores))], "the denied one is not there to cover");
    assert!(args.iter().any(|a| a == "--own-userns"), "the helper keeps what it needs to mount the cover");
}

/// Found by an attacker's review (race18, cache_rename.js): with the cwd at $HOME, a run renamed
/// `~/go` and `~/.m2` above the overlaid caches and made new ones, and the host's `~/go/pkg/mod`
/// led to the run's directory. Every directory between the root and an overlaid cache is pinned
/// (bound onto itself before anything is mounted in the root), as for the stores.
#[test]
fn the_directories_above_an_overlaid_cache_are_pinned() {
    let (_t, w) = tmp();
    let mut p = policy(json!("workspace-write"), &w, Platform::Linux);
    for (name, rel) in [("go-mod", "go/pkg/mod"), ("npm", ".npm")] {
        std::fs::create_dir_all(w.join(rel)).unwrap();
        let (upper, work) = (Some(w.join("store").join(name).join("upper")), Some(w.join("store").join(name).join("work")));
        p.tool_caches.caches.push(crate::tool_caches::PrivateCache { name: name.into(), path: w.join(rel), layers: Vec::new(), upper, work, dir: None, variables: Default::default(), before: None });
    }
    (p.tool_caches.mode, p.tool_caches.store, p.tool_caches.host_content) = (crate::tool_caches::Mode::Private, Some(w.join("store")), Some(crate::tool_caches::HostContent::Visible));
    let plan = plan(&p, &w, &["true"]);
    let binds: Vec<String> = plan.args.windows(3).filter(|a| a[0] == "--bind" && a[1] == a[2]).map(|a| a[1].clone()).collect();
    for rel in ["go", "go/pkg"] {
        assert!(binds.contains(&s(&w.join(rel))), "{rel} is not pinned: {binds:?}");
    }
    assert!(!binds.contains(&s(&w.join(".npm"))), "a cache at the root's top level needs no pin (its overlay is a mount point): {binds:?}");
}

/// The host's proxy URL with its password, as a caller passes it on (the default `extendEnv`).
fn env_with_proxy_password() -> BTreeMap<String, String> {
    [("HTTPS_PROXY", "http://me:s3cr%2Fet@127.0.0.1:9"), ("https_proxy", "http://me:s3cr%2Fet@127.0.0.1:9"),
        ("JAVA_TOOL_OPTIONS", "-Xss4m -Dhttps.proxyPassword=s3cr/et"), ("PASS", "s3cr/et"), ("HOME", "/root")]
        .iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn network_off_keeps_the_proxy_password_out_and_full_network_passes_it_on() {
    let (_t, w) = tmp();
    let env = env_with_proxy_password();
    let p = policy(json!("read-only"), &w, Platform::Linux);
    let plan = plan_with_env(&p, &w, Platform::Linux, &["true"], &env);
    assert!(plan.env.values().all(|v| !v.contains("s3cr")), "{:?}", plan.env);
    assert_eq!(plan.env.get("JAVA_TOOL_OPTIONS").map(String::as_str), Some("-Xss4m"));
    assert_eq!(plan.env.get("HOME").map(String::as_str), Some("/root"));
    // Full network: the command uses the user's proxy itself, so it gets the credential.
    let p = policy(json!({"network": true}), &w, Platform::Linux);
    let plan = plan_with_env(&p, &w, Platform::Linux, &["true"], &env);
    assert_eq!(plan.env.get("HTTPS_PROXY"), env.get("HTTPS_PROXY"));
    assert_eq!(plan.env.get("JAVA_TOOL_OPTIONS"), env.get("JAVA_TOOL_OPTIONS"));
}

/// A repository a run made under a directory whose name is not UTF-8 (`mkdir x$'\377'; git init`):
/// the walk finds it on every later run, and the plan refused to name it ("is not valid UTF-8"),
/// so every later run in the workspace failed. Its carve-out reaches the helper as its bytes.
#[test]
fn a_carve_out_whose_name_is_not_utf8_reaches_the_helper_as_its_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let (_t, w) = tmp();
    let dot_git = w.join(std::ffi::OsStr::from_bytes(b"x\xff")).join(".git");
    fs::create_dir_all(dot_git.join("hooks")).unwrap();
    fs::write(dot_git.join("config"), "[core]\n").unwrap();
    fs::write(dot_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let p = policy(json!("workspace-write"), &w, Platform::Linux);
    assert!(p.writable_roots.iter().any(|r| r.read_only.contains(&dot_git)), "the walk found it: {:?}", p.writable_roots);
    let cmd = vec!["true".to_string()];
    let env = BTreeMap::new();
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: None, resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let args = build(&req).unwrap().args;
    // The helper inside (the one in front of bwrap opens the offline nsswitch.conf).
    let helper_args = &args[args.iter().rposition(|a| a == "v1").unwrap()..];
    let (steps, _) = sandspawn_helper::protocol::Steps::parse(&helper_args.iter().map(std::ffi::OsString::from).collect::<Vec<_>>()).unwrap();
    assert!(steps.read_only.iter().any(|r| r.path == dot_git && r.id.is_some()), "{helper_args:?}");
}

/// A plan for another spawner has no walk after it: each directory between the workspace's top and
/// a nested repository is bound onto itself (a mount point cannot be renamed), so its command cannot
/// move `lib` above `lib/sub` and make a repository of its own at that path (kern37). The runner's
/// plan pins none there: its walk after the run reports the path made anew.
#[test]
fn a_plan_for_another_spawner_pins_the_directories_above_a_nested_repository() {
    let (_t, w) = tmp();
    let repo = w.join("lib/sub");
    fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let p = policy_as_given(json!("workspace-write"), &w, Platform::Linux);
    let binds = |args: &[String]| -> Vec<String> { args.windows(3).filter(|x| x[0] == "--bind" && x[1] == x[2]).map(|x| x[1].clone()).collect() };
    let pinned = binds(&plan(&p, &w, &["true"]).args);
    for d in [w.join("lib"), repo.clone()] {
        assert!(pinned.contains(&d.to_str().unwrap().to_string()), "{} pinned: {pinned:?}", d.display());
    }
    let cmd = vec!["true".to_string()];
    let env = BTreeMap::new();
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: None, resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    let runner = binds(&build(&req).unwrap().args);
    assert!(!runner.iter().any(|b| b.starts_with(w.join("lib").to_str().unwrap())), "{runner:?}");
}

/// A plan for another spawner has nobody after it to put back a held symlink (revc37): the helper
/// binds each over itself read-only (`--pin-link`). The runner's plan puts them back after the run.
#[test]
fn a_plan_for_another_spawner_pins_the_held_symlinks() {
    let (_t, w) = tmp();
    let git_dir = w.join("gitdirs/sub");
    fs::create_dir_all(git_dir.join("hooks")).unwrap();
    fs::write(git_dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::create_dir_all(w.join("lib/sub")).unwrap();
    std::os::unix::fs::symlink("../../gitdirs/sub", w.join("lib/sub/.git")).unwrap();
    let p = policy_as_given(json!("workspace-write"), &w, Platform::Linux);
    let pin = format!("--pin-link={}", w.join("lib/sub/.git").display());
    let args = plan(&p, &w, &["true"]).args;
    assert!(args.contains(&pin), "{args:?}");
    let cmd = vec!["true".to_string()];
    let env = BTreeMap::new();
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: None, resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    assert!(!build(&req).unwrap().args.iter().any(|a| a.starts_with("--pin-link")));
}

/// A plan for another spawner holds the directories of its placeholders with bwrap's `--lock-file`,
/// whose argument is a string there: one whose name is not UTF-8 refuses the plan (typed), never
/// a plan without the placeholders; the runner's plan holds none and builds.
#[test]
fn a_held_directory_whose_name_is_not_utf8_refuses_only_a_plan_for_another_spawner() {
    use std::os::unix::ffi::OsStrExt;
    let (_t, w) = tmp();
    let repo = w.join(std::ffi::OsStr::from_bytes(b"x\xff"));
    fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let p = policy_as_given(json!("workspace-write"), &w, Platform::Linux);
    assert!(p.missing_read_only().iter().any(|m| m.path.parent() == Some(repo.as_path())), "placeholders in it: {:?}", p.missing_read_only());
    let err = try_plan_with_env(&p, &w, Platform::Linux, &["true"], &BTreeMap::new()).unwrap_err();
    assert_eq!(err.code, crate::error::ErrorCode::Unsupported, "{}", err.message);
    assert!(err.message.contains("spawnSandboxed"), "{}", err.message);
    let cmd = vec!["true".to_string()];
    let env = BTreeMap::new();
    let req = PlanRequest { command: &cmd, cwd: &w, env: &env, policy: &p, platform: Platform::Linux, bwrap: None, resolved_program: None, helper: Some(helper_path()), runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
    assert!(build(&req).is_ok());
}
