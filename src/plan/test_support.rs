//! Test helpers: build plans from JSON policies and run bwrap plans for real, providing the extra
//! fds as pipes the way the runner will.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::{build, LaunchPlan, PlanRequest};
use crate::platform::Platform;
use crate::policy::{resolve_policy, PolicyContext, ResolvedPolicy};

pub fn policy(v: serde_json::Value, cwd: &Path, platform: Platform) -> ResolvedPolicy {
    resolve_policy(Some(&v), &PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform }).unwrap()
}

pub fn plan_with_env(p: &ResolvedPolicy, cwd: &Path, platform: Platform, cmd: &[&str], env: &BTreeMap<String, String>) -> LaunchPlan {
    let command: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    build(&PlanRequest {
        command: &command,
        cwd,
        env,
        policy: p,
        platform,
        bwrap: None,
        resolved_program: None,
        with_status_fd: false,
    })
    .unwrap()
}

pub fn plan(p: &ResolvedPolicy, cwd: &Path, cmd: &[&str]) -> LaunchPlan {
    plan_with_env(p, cwd, Platform::Linux, cmd, &BTreeMap::new())
}

/// Does real bwrap work on this host? Tests print a notice and pass vacuously when it does not.
pub fn bwrap_works() -> bool {
    let ok = Command::new("/usr/bin/bwrap")
        .args(["--unshare-user", "--ro-bind", "/", "/", "--proc", "/proc", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("NOTE: /usr/bin/bwrap does not work here; real-bwrap test skipped");
    }
    ok
}

/// Spawn the plan with its extra fds as pipes pre-filled with their data.
pub fn run(plan: &LaunchPlan) -> Output {
    let mut pipes = Vec::new();
    for x in &plan.extra_fds {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let n = unsafe { libc::write(fds[1], x.data.as_ptr().cast(), x.data.len()) };
        assert_eq!(n as usize, x.data.len(), "data fits the pipe buffer");
        unsafe { libc::close(fds[1]) };
        pipes.push((fds[0], x.fd));
    }
    let mut cmd = Command::new(&plan.program);
    cmd.arg0(&plan.argv0).args(&plan.args).env_clear().envs(&plan.env).current_dir(&plan.cwd);
    let moves = pipes.clone();
    unsafe {
        cmd.pre_exec(move || {
            // Move every read end out of the way first, so a pipe numbered like a target is not
            // clobbered, then onto its target (dup2 clears O_CLOEXEC).
            let mut high = Vec::new();
            for (src, _) in &moves {
                high.push(libc::fcntl(*src, libc::F_DUPFD_CLOEXEC, 100));
            }
            for (h, (_, target)) in high.iter().zip(&moves) {
                if libc::dup2(*h, *target) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let out = cmd.stdin(Stdio::null()).output().expect("spawn bwrap");
    for (r, _) in pipes {
        unsafe { libc::close(r) };
    }
    out
}
