//! The helper binary as bwrap runs it: argument errors, exec failures with their exit codes and
//! report records, the seccomp filter, and a clean hand-over to the command (argv, env, no report
//! descriptor left open).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Output};

use sandspawn_helper::report::{Failure, Stage};

const HELPER: &str = env!("CARGO_BIN_EXE_sandspawn-helper");

fn helper(args: &[&str]) -> Output {
    Command::new(HELPER).args(args).output().unwrap()
}

/// Run the helper with a report pipe at descriptor `fd` and return (output, report bytes).
fn with_report(fd: i32, args: &[&str]) -> (Output, Vec<u8>) {
    let mut cmd = Command::new(HELPER);
    cmd.args(args);
    run_with_report(fd, cmd)
}

/// Run `cmd` (the helper, set up by the caller) with a report pipe at descriptor `fd`.
fn run_with_report(fd: i32, mut cmd: Command) -> (Output, Vec<u8>) {
    let mut p = [0; 2];
    assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
    let w_raw = w.as_raw_fd();
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            if libc::dup2(w_raw, fd) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    drop(w);
    let mut report = Vec::new();
    std::io::Read::read_to_end(&mut std::fs::File::from(r), &mut report).unwrap();
    (out, report)
}

#[test]
fn version_names_protocol() {
    let out = helper(&["--version"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("sandspawn-helper {} (protocol v1)\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn bad_arguments_are_setup_failures() {
    for args in [&["v2", "--", "true"][..], &["v1", "--bogus", "--", "true"], &["v1", "true"], &[]] {
        let out = helper(args);
        assert_eq!(out.status.code(), Some(125), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("sandspawn-helper: "), "{args:?}");
    }
}

#[test]
fn runs_the_command_with_its_arguments_and_environment() {
    let out = Command::new(HELPER).args(["v1", "--", "sh", "-c", "echo \"$0 $1 $X\"", "a b", "--"]).env("X", "y").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a b -- y\n");
}

#[test]
fn exec_failures_exit_127_or_126_and_are_reported() {
    let (out, report) = with_report(7, &["v1", "--report-fd=7", "--", "/nonexistent/cmd"]);
    assert_eq!(out.status.code(), Some(127));
    let f = Failure::decode(&report).expect("a record");
    assert_eq!((f.stage, f.errno), (Stage::Exec, libc::ENOENT));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "sandspawn-helper: cannot run '/nonexistent/cmd': No such file or directory\n");

    let dir = std::env::temp_dir().join(format!("helper-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    let (out, report) = with_report(7, &["v1", "--report-fd=7", "--", plain.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(Failure::decode(&report).map(|f| (f.stage, f.errno)), Some((Stage::Exec, libc::EACCES)));
}

#[test]
fn the_report_descriptor_is_closed_for_the_command() {
    // A command that runs leaves the report empty and cannot see the descriptor.
    let (out, report) = with_report(9, &["v1", "--report-fd=9", "--", "sh", "-c", "test -e /proc/self/fd/9 && echo open || echo closed"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "closed\n");
    assert!(report.is_empty());
}

#[cfg(target_os = "linux")]
#[test]
fn the_filter_refuses_unix_sockets_as_asked_and_new_namespaces_always() {
    let code = "import socket\nfor fam in (socket.AF_INET, socket.AF_UNIX):\n    try:\n        socket.socket(fam); print(fam.name, 'ok')\n    except OSError as e:\n        print(fam.name, e.errno)\nimport os\na, b = socket.socketpair(); print('socketpair ok')";
    let out = helper(&["v1", "--filter=inet", "--", "python3", "-c", code]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("AF_INET ok\nAF_UNIX {}\nsocketpair ok\n", libc::EPERM));
    for args in [&["v1", "--"][..], &["v1", "--filter=inet-unix", "--"][..]] {
        let all = helper(&[args, &["python3", "-c", code][..]].concat());
        assert_eq!(String::from_utf8_lossy(&all.stdout), "AF_INET ok\nAF_UNIX ok\nsocketpair ok\n", "{args:?}");
    }
    // no_new_privs comes with the filter, and the baseline refuses new user namespaces whatever
    // the socket rule (the unfiltered helper may create one: the rule is what refuses it).
    for filter in ["--filter=inet-unix", "--filter=inet"] {
        let nnp = helper(&["v1", filter, "--", "grep", "NoNewPrivs", "/proc/self/status"]);
        assert!(String::from_utf8_lossy(&nnp.stdout).contains('1'));
        let userns = helper(&["v1", filter, "--", "sh", "-c", "unshare -U true 2>&1 && echo created"]);
        assert_eq!(String::from_utf8_lossy(&userns.stdout), "unshare: unshare failed: Operation not permitted\n", "{filter}: {userns:?}");
    }
}

#[test]
fn rlimits_reach_the_command() {
    let out = helper(&["v1", "--rlimit=nofile:40:40", "--rlimit=cpu:7:8", "--rlimit=core:0:0", "--", "sh", "-c", "ulimit -n; ulimit -t; ulimit -H -t; ulimit -c"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "40\n7\n8\n0\n");
}

#[test]
fn rlimits_are_never_raised_above_the_hard_limit() {
    // The helper starts with a hard limit of 20 descriptors; asking for 1000 keeps 20 (stricter),
    // where a plain setrlimit would fail without privilege.
    let mut cmd = Command::new(HELPER);
    cmd.args(["v1", "--rlimit=nofile:1000:1000", "--", "sh", "-c", "ulimit -n; ulimit -H -n"]);
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let l = libc::rlimit { rlim_cur: 20, rlim_max: 20 };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "20\n20\n");
}

#[test]
fn a_file_size_limit_ends_the_writer_with_sigxfsz() {
    let dir = std::env::temp_dir().join(format!("helper-fsize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big");
    let script = format!("head -c 300000 /dev/zero > {}", file.display());
    // posix_spawn's children start with default dispositions; so must this one (cargo may ignore it).
    let out = helper(&["v1", "--rlimit=fsize:100000:100000", "--", "sh", "-c", &format!("trap - XFSZ; {script}")]);
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(size, 100000);
    assert_eq!(out.status.code(), Some(128 + libc::SIGXFSZ), "{out:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn the_command_inherits_the_signal_dispositions_the_helper_got() {
    // std::process::Command starts the helper with SIGPIPE at its default; the command must see the
    // same (Rust's own start-up would have ignored it, and exec keeps ignored signals ignored).
    let out = helper(&["v1", "--", "grep", "^SigIgn:", "/proc/self/status"]);
    let mask = u64::from_str_radix(String::from_utf8_lossy(&out.stdout).trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
    assert_eq!(mask & (1 << (libc::SIGPIPE - 1)), 0, "SIGPIPE ignored in the command: {mask:#x}");
}

#[test]
fn controlling_tty_needs_a_terminal_on_stdin() {
    // `output()` gives the helper a null stdin: not a terminal, so the step fails before the command.
    let (out, report) = with_report(4, &["v1", "--controlling-tty", "--report-fd=4", "--", "true"]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let f = Failure::decode(&report).expect("a report record");
    assert_eq!((f.stage, f.errno), (Stage::Setup, libc::ENOTTY));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a terminal"), "{out:?}");
}

#[cfg(not(target_os = "linux"))]
#[test]
fn steps_only_linux_has_are_refused_before_the_command() {
    let (out, report) = with_report(4, &["v1", "--rlimit=core:0:0", "--block-unix-sockets", "--report-fd=4", "--", "true"]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let f = Failure::decode(&report).expect("a report record");
    assert_eq!(f.stage, Stage::Setup);
    assert!(f.message.contains("--block-unix-sockets exists only on Linux"), "{f:?}");
}

/// A scratch directory of this test's own, removed when dropped.
struct Scratch(std::path::PathBuf);
impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("helper-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn file(&self, name: &str, text: &str, mode: u32) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// The helper's exec is glibc's execvp whichever C library it is built with (musl's does not run a
// file without `#!`): by path, and found through PATH, a script without one runs through /bin/sh.
#[test]
fn a_script_without_a_shebang_runs_through_sh() {
    let dir = Scratch::new("noshebang");
    let script = dir.file("plain-script", "echo \"ran $0 $1 $2\"\n", 0o755);
    let out = helper(&["v1", "--", script.to_str().unwrap(), "a", "b c"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("ran {} a b c\n", script.display()));

    let path = format!("/nonexistent:{}:/usr/bin:/bin", dir.0.display());
    let out = Command::new(HELPER).args(["v1", "--", "plain-script", "x"]).env("PATH", &path).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("ran {} x \n", script.display()));
}

// The PATH search goes past directories where the name is missing or not executable, reports
// EACCES when only a non-executable one was found, takes an empty element as the working
// directory, and without PATH searches /bin:/usr/bin.
#[test]
fn the_path_search_is_glibcs() {
    let first = Scratch::new("path-first");
    let second = Scratch::new("path-second");
    first.file("tool", "#!/bin/sh\necho first\n", 0o644);
    second.file("tool", "#!/bin/sh\necho second\n", 0o755);
    let path = format!("{}:{}", first.0.display(), second.0.display());
    let out = Command::new(HELPER).args(["v1", "--", "tool"]).env("PATH", &path).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "second\n", "{out:?}");

    let mut cmd = Command::new(HELPER);
    cmd.args(["v1", "--report-fd=7", "--", "tool"]).env("PATH", format!("/nonexistent:{}", first.0.display()));
    let (out, report) = run_with_report(7, cmd);
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert_eq!(Failure::decode(&report).map(|f| (f.stage, f.errno)), Some((Stage::Exec, libc::EACCES)));

    let out = Command::new(HELPER).args(["v1", "--", "tool"]).env("PATH", ":/nonexistent").current_dir(&second.0).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "second\n", "{out:?}");

    let out = Command::new(HELPER).args(["v1", "--", "sh", "-c", "echo $0"]).env_remove("PATH").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sh\n", "{out:?}");
}
