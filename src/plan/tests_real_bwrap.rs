//! Real bwrap: the built argv is run and must enforce the policy.

use super::*;
use crate::placeholders::remove_leftovers;

fn run_sh(p: &crate::policy::ResolvedPolicy, cwd: &Path, script: &str) -> std::process::Output {
    let out = run(&real_plan(p, cwd, &["/bin/sh", "-c", script]));
    eprintln!("stdout: {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    out
}

/// Wait (at most 20 s) until no plan's sandbox holds `dir`. A plan's bwrap exits as soon as its pid
/// 1 has written the command's status to an eventfd (bubblewrap.c, `monitor_child`); pid 1, which
/// holds the directory (`--lock-file`), ends after, by its parent-death signal. So it may still be
/// exiting when the plan's process has been waited for, and a cleanup then rightly keeps the
/// placeholders (this test failed so once in CI; not seen in 1,000 tries here under load).
fn until_no_sandbox_holds(dir: &Path) {
    let fd = crate::no_symlinks::open_dir(dir).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while sandspawn_helper::placeholder::held_by_a_plan(&fd) {
        assert!(std::time::Instant::now() < deadline, "a sandbox still holds {} 20 s after its plan ended", dir.display());
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn read_only_blocks_cwd_writes_and_proc_sys() {
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    let p = policy(json!("read-only"), &w, Platform::Linux);
    let out = run_sh(&p, &w, "echo hi; touch f");
    assert!(!out.status.success());
    assert_eq!(out.stdout, b"hi\n", "the command ran");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Read-only file system"));
    assert!(!w.join("f").exists());
    let out = run_sh(&p, &w, "echo 6 > /proc/sys/kernel/printk_ratelimit");
    assert!(!out.status.success(), "/proc/sys must be read-only even for root");
    let out = run_sh(&p, &w, "echo 1 > /proc/sysrq-trigger");
    assert!(!out.status.success());
}

#[test]
fn workspace_write_allows_cwd_not_git() {
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    fs::create_dir(w.join(".git")).unwrap();
    fs::write(w.join(".git/config"), "orig").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only"}), &w, Platform::Linux);
    let out = run_sh(&p, &w, "echo new > f && cat f");
    assert!(out.status.success());
    assert_eq!(fs::read_to_string(w.join("f")).unwrap(), "new\n");
    let out = run_sh(&p, &w, "echo evil >> .git/config");
    assert!(!out.status.success());
    let out = run_sh(&p, &w, "touch .git/hooks");
    assert!(!out.status.success());
    assert_eq!(fs::read_to_string(w.join(".git/config")).unwrap(), "orig");
}

#[test]
fn missing_git_cannot_be_created_and_leaves_no_litter() {
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "readOnlyPaths": [s(&w.join("gen/x"))]}), &w, Platform::Linux);
    // A plan another program runs: the helper in front of bwrap makes the placeholders.
    let out = run_sh(&p, &w, "mkdir .git/hooks || mkdir .git; touch .git/x; mkdir -p gen/x");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Read-only file system")
        || String::from_utf8_lossy(&out.stderr).contains("Permission denied")
        || String::from_utf8_lossy(&out.stderr).contains("exists"));
    assert!(w.join(".git").exists(), "the placeholder exists on the host, and stays after the plan");
    until_no_sandbox_holds(&w);
    remove_leftovers(&p.missing_read_only());
    assert!(!w.join(".git").exists(), "removed by the cleanup a runner run does");
    assert!(!w.join("gen").exists());
    assert_eq!(fs::read_dir(&w).unwrap().count(), 0);
}

/// While a plan another program runs lives, its bwrap's pid 1 holds the directory of its
/// placeholders (`--lock-file`): a runner's cleanup neither removes them nor moves them aside
/// (either would detach the cover in that sandbox); once it has ended, they are removed.
#[test]
fn a_running_plan_s_placeholders_are_neither_removed_nor_moved_aside() {
    use std::io::{BufRead, Write};
    use std::os::unix::process::CommandExt;
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only"}), &w, Platform::Linux);
    let plan = real_plan(&p, &w, &["/bin/sh", "-c", "echo READY; read go"]);
    let mut child = std::process::Command::new(&plan.program)
        .arg0(&plan.argv0)
        .args(&plan.args)
        .env_clear()
        .envs(&plan.env)
        .current_dir(&plan.cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = stdout.read_line(&mut line);
        let _ = tx.send(line);
    });
    let ready = rx.recv_timeout(std::time::Duration::from_secs(20));
    if ready.as_deref() != Ok("READY\n") {
        let _ = child.kill();
        panic!("the plan did not start: {ready:?} {:?}", child.wait());
    }
    let git = w.join(".git");
    remove_leftovers(&p.missing_read_only());
    let moved = crate::planted::undo::move_aside(&git);
    let kept = git.exists();
    stdin.write_all(b"go\n").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(kept, "the cleanup kept the placeholder while the plan ran");
    assert!(matches!(&moved, crate::planted::undo::Undone::Left(w) if w.contains("plan")), "{moved:?}");
    assert!(status.success(), "{status:?}");
    until_no_sandbox_holds(&w);
    remove_leftovers(&p.missing_read_only());
    assert!(!git.exists(), "removed once the plan has ended");
}

/// Found by an attacker's review (fix32) of kern31's process scan (`placeholder::held_by_a_plan`):
/// a plan's init was told by its program's name, and once that file was replaced while the plan
/// ran (a package upgrade of bubblewrap, or of sandspawn's bundled copy) its `/proc/PID/exe` read
/// `.../bwrap (deleted)`: the plan's held directory counted as held by nobody, and a runner's
/// cleanup removed or moved aside placeholders mounted over in that live sandbox, which detaches
/// the cover there. A copy of bwrap run here as a plan's is (`--unshare-pid`, `--lock-file`),
/// its file removed while it runs.
#[test]
fn a_plan_whose_bwrap_file_was_replaced_still_holds_its_directory() {
    use std::os::unix::fs::PermissionsExt;
    let Some(bwrap) = ladder_bwrap() else { return };
    let (_t, w) = tmp();
    let bin = tempfile::tempdir().unwrap();
    let copy = bin.path().join("bwrap");
    fs::copy(&bwrap.path, &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = std::process::Command::new(&copy)
        .args(["--unshare-user", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/", "--lock-file"])
        .arg(&w)
        .args(["--", "/bin/sleep", "30"])
        .spawn()
        .unwrap();
    let fd = crate::no_symlinks::open_dir(&w).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !sandspawn_helper::placeholder::held_by_a_plan(&fd) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let held_before = sandspawn_helper::placeholder::held_by_a_plan(&fd);
    fs::remove_file(&copy).unwrap();
    let held_after = sandspawn_helper::placeholder::held_by_a_plan(&fd);
    let _ = child.kill();
    let _ = child.wait();
    assert!(held_before, "the plan's init holds the directory");
    assert!(held_after, "and still does once its program's file is gone");
}

#[test]
fn deny_read_file_and_dir() {
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    fs::write(w.join("id_rsa"), "KEY").unwrap();
    fs::create_dir_all(w.join("secrets/ws")).unwrap();
    fs::write(w.join("secrets/token"), "TOKEN").unwrap();
    let ws = w.join("secrets/ws");
    fs::write(ws.join("nested.pem"), "PEM").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false,
        "denyRead": [s(&w.join("id_rsa")), s(&w.join("secrets")), s(&ws.join("nested.pem"))]}), &ws, Platform::Linux);
    let id = s(&w.join("id_rsa"));
    let out = run_sh(&p, &ws, &format!("cat '{id}'"));
    assert!(!out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("KEY"));
    let out = run_sh(&p, &ws, &format!("ls -A '{}'", s(&w.join("secrets"))));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ws\n", "only the writable root's mount point shows");
    let out = run_sh(&p, &ws, "cat nested.pem");
    assert!(!out.status.success(), "nested deny not undone by the root's bind");
    let out = run_sh(&p, &ws, "echo ok > new && cat new");
    assert_eq!(out.stdout, b"ok\n", "the root under the denied dir stays writable");
    assert_eq!(fs::read_to_string(ws.join("new")).unwrap(), "ok\n");
}

#[test]
fn tmp_private_hides_host_tmp_but_keeps_cwd() {
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    let host = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "private", "protectGit": false}), &w, Platform::Linux);
    let out = run_sh(&p, &w, &format!("test -e '{}' && echo visible; echo x > here && cat here && echo y > /tmp/scratch && cat /tmp/scratch", host.path().display()));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "x\ny\n");
    assert!(w.join("here").exists());
    assert!(!Path::new("/tmp/scratch").exists() || fs::read_to_string("/tmp/scratch").unwrap() != "y\n");
}

#[test]
fn unix_sockets_blocked_by_seccomp() {
    if !bwrap_works() { return; }
    let (_t, w) = tmp();
    let sock = w.join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let py = |p: &crate::policy::ResolvedPolicy, code: &str| run(&real_plan(p, &w, &["/usr/bin/python3", "-c", code]));
    let blocked = policy(json!("read-only"), &w, Platform::Linux);
    let out = py(&blocked, "import socket; socket.socket(socket.AF_UNIX)");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Operation not permitted"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = py(&blocked, "import socket; a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'");
    assert!(out.status.success(), "socketpair works: {}", String::from_utf8_lossy(&out.stderr));
    let connect = format!("import socket; s = socket.socket(socket.AF_UNIX); s.connect({:?})", s(&sock));
    assert!(!py(&blocked, &connect).status.success(), "connect to a host socket fails");
    let allowed = policy(json!({"allowUnixSockets": true}), &w, Platform::Linux);
    let out = py(&allowed, &connect);
    assert!(out.status.success(), "without the filter it connects: {}", String::from_utf8_lossy(&out.stderr));
}
