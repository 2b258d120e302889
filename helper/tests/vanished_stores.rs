//! The helper's covers over sandspawn's stores (`--cover-dir-if-there`) inside a real bwrap
//! sandbox, as the addon plans it, when a store another process owns is removed while the sandbox
//! starts: a listed store (another agent's temporary tool cache, a reviewer's temporary home) went
//! between the helper's look and its mount, and an unrelated run failed setup with "covering the
//! placeholder ...: No such file or directory" (the kernel refuses a mount onto a removed
//! directory with ENOENT).
//!
//! The race is made deterministic with the helper's own working directory: bwrap enters the store,
//! the test removes it from the host, and the helper is told to cover `/proc/self/cwd/.`, which
//! opens as the removed directory, exactly what the helper holds when the store goes between its
//! open and its mount.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HELPER: &str = env!("CARGO_BIN_EXE_sandspawn-helper");
const BWRAP: &str = "/usr/bin/bwrap";
const HOST_DEV: &str = "/dev/sandspawn-host-dev";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("helper-vanished-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir.canonicalize().unwrap())
    }

    fn dir(&self, name: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::create_dir_all(&p).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether bwrap can make the sandbox here (a user namespace with the helper's capabilities).
fn bwrap_works() -> bool {
    Path::new(BWRAP).exists() && Command::new(BWRAP).args(["--unshare-user", "--ro-bind", "/", "/", "--", "true"]).status().is_ok_and(|s| s.success())
}

/// The bwrap argv the addon plans for a read-only run (`sandspawn explain`), entering `cwd`, whose
/// shell prints `in`, waits for a line on stdin, then execs the helper with `helper_args` and a
/// command that lists `shown` (or says it cannot).
fn sandbox(cwd: &Path, helper_args: &[String], shown: &Path) -> Command {
    // SAFETY: getuid and getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut c = Command::new(BWRAP);
    c.args(["--new-session", "--die-with-parent", "--unshare-user", "--cap-drop", "ALL"]);
    for cap in ["CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE", "CAP_SYS_RESOURCE", "CAP_SETFCAP"] {
        c.args(["--cap-add", cap]);
    }
    if (uid, gid) != (0, 0) {
        c.args(["--uid", "0", "--gid", "0"]);
    }
    c.args(["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    c.args(["--ro-bind", "/proc/sys", "/proc/sys", "--perms", "1777", "--tmpfs", "/dev/shm", "--ro-bind", "/dev", HOST_DEV, "--remount-ro", "/dev"]);
    c.arg("--chdir").arg(cwd);
    // `--tmpfs-inodes` at /dev/shm as every plan of the sandbox's own /dev/shm has it: the helper
    // makes its scratch entries only in a /dev/shm it knows to be the sandbox's (kern36).
    let mut helper: Vec<String> = vec![HELPER.into(), "v1".into(), "--tmpfs-inodes=131072:/dev/shm".into(), format!("--stdio-devices={HOST_DEV}")];
    helper.extend(helper_args.iter().cloned());
    helper.push("--own-userns".into());
    if (uid, gid) != (0, 0) {
        helper.push(format!("--map-ids={uid}:{gid}"));
    }
    let quoted: Vec<String> = helper.iter().map(|a| format!("'{a}'")).collect();
    let shown = shown.display();
    let script = format!("echo in; read go; exec {} -- sh -c 'ls -A {shown} && echo listed || echo unlisted'", quoted.join(" "));
    c.args(["--", "sh", "-c", &script]);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Start the sandbox, call `meanwhile` once its shell is in `cwd`, then let the helper run;
/// (exit code, stdout after `in`, stderr).
fn run(cwd: &Path, helper_args: &[String], shown: &Path, meanwhile: impl FnOnce()) -> (Option<i32>, String, String) {
    let mut child = sandbox(cwd, helper_args, shown).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "in\n", "the sandbox's shell did not start");
    meanwhile();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (child.wait().unwrap().code(), rest, err)
}

/// A store removed after the helper could open it: with a placeholder to cover too (the store is
/// bound from the placeholder's cover), and alone (before, the cover's tmpfs was mounted onto the
/// first directory, the store itself). The run goes on; there is nothing left to cover.
#[test]
fn a_store_removed_while_the_sandbox_starts_fails_no_run() {
    if !bwrap_works() {
        eprintln!("skipped: bwrap cannot make a sandbox here");
        return;
    }
    for with_placeholder in [true, false] {
        let s = Scratch::new(if with_placeholder { "ph" } else { "alone" });
        let (store, placeholder) = (s.dir("store"), s.dir("placeholder"));
        let mut args = Vec::new();
        if with_placeholder {
            args.push(format!("--cover-dir={}", placeholder.display()));
        }
        args.push("--cover-dir-if-there=/proc/self/cwd/.".to_string());
        // The sandbox's /dev/shm, where a cover with no placeholder is mounted first, is left empty.
        let (code, out, err) = run(&store, &args, Path::new("/dev/shm"), || std::fs::remove_dir(&store).unwrap());
        assert_eq!(code, Some(0), "with a placeholder: {with_placeholder}: {err}");
        assert_eq!(out, "listed\n", "{err}");
    }
}

/// A store replaced by a symlink to another directory: the link is not followed (its target is not
/// covered, nor exposed by a cover moved elsewhere); a store removed and made again as a directory
/// is covered; one gone before the helper looks is passed over. Beside a store that stays, which is
/// covered in every case.
#[test]
fn a_store_replaced_is_covered_only_where_it_is_a_directory() {
    if !bwrap_works() {
        eprintln!("skipped: bwrap cannot make a sandbox here");
        return;
    }
    let s = Scratch::new("replaced");
    let (cwd, kept, other) = (s.dir("cwd"), s.dir("kept"), s.dir("other"));
    std::fs::write(kept.join("secret"), "x").unwrap();
    std::fs::write(other.join("visible"), "x").unwrap();
    let (linked, remade, gone) = (s.dir("linked"), s.dir("remade"), s.dir("gone"));
    std::fs::write(remade.join("secret"), "x").unwrap();
    let args: Vec<String> = [&kept, &linked, &remade, &gone].iter().map(|p| format!("--cover-dir-if-there={}", p.display())).collect();
    let before = run(&cwd, &args, &kept, || ());
    assert_eq!((before.0, before.1.as_str()), (Some(0), "listed\n"), "the kept store is covered, empty: {}", before.2);
    let change = || {
        std::fs::remove_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&other, &linked).unwrap();
        std::fs::remove_dir_all(&remade).unwrap();
        std::fs::create_dir(&remade).unwrap();
        std::fs::write(remade.join("new-secret"), "x").unwrap();
        std::fs::remove_dir(&gone).unwrap();
    };
    let (code, out, err) = run(&cwd, &args, &other, change);
    assert_eq!((code, out.as_str()), (Some(0), "visible\nlisted\n"), "the link's target is left as it is: {err}");
    let (code, out, err) = run(&cwd, &args, &remade, || ());
    assert_eq!((code, out.as_str()), (Some(0), "listed\n"), "the store made again is covered: {err}");
}

/// A placeholder (a missing protected name's, held for the run) removed while the sandbox starts:
/// the name is uncovered, so the command never runs; the helper says the workspace changed, and the
/// runner plans the run again (which makes the placeholder anew), as for a removed read-only path,
/// rather than failing it.
#[test]
fn a_placeholder_removed_while_the_sandbox_starts_has_the_run_planned_again() {
    if !bwrap_works() {
        eprintln!("skipped: bwrap cannot make a sandbox here");
        return;
    }
    for first in [true, false] {
        let s = Scratch::new(if first { "ph-first" } else { "ph-second" });
        let (placeholder, other) = (s.dir("placeholder"), s.dir("other"));
        let mut args = vec!["--cover-dir=/proc/self/cwd/.".to_string()];
        if first {
            args.push(format!("--cover-dir={}", other.display()));
        } else {
            args.insert(0, format!("--cover-dir={}", other.display()));
        }
        let (code, out, err) = run(&placeholder, &args, &other, || std::fs::remove_dir(&placeholder).unwrap());
        assert_eq!(out, "", "the command ran: {err}");
        assert_ne!(code, Some(0));
        assert!(err.contains("removed since the sandbox was planned"), "first: {first}: {err}");
    }
}
