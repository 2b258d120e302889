//! Spawning a plan: its argv and environment as C strings, and the spawn itself on an owner
//! thread that lives as long as the child (bwrap's `--die-with-parent` follows the spawning
//! thread), with vfork semantics and no code run in a forked copy of the host.

use std::ffi::CString;
use std::path::PathBuf;

use tokio::sync::oneshot;

use crate::error::{ErrorCode, Result, SandboxError};
use crate::plan::LaunchPlan;
use crate::platform::SandboxType;

use super::child::{spawn_owned, ExitStatus, KillOnDrop, TreeKind};
use super::spawn::{cstring, spawn, SpawnSpec};
use super::wiring::ChildSide;

/// Start the plan with the child's descriptors; the child's side is closed here once it runs.
/// `bwrap` is the bwrap the plan runs (also when the helper runs in front of it): like the helper,
/// it is setup, not the command (see `Child::command_has_started`).
pub(super) async fn launch_child(plan: &LaunchPlan, fds: ChildSide, bwrap: Option<PathBuf>, command: &str) -> Result<(KillOnDrop, oneshot::Receiver<ExitStatus>)> {
    let (argv, envp) = command_line(plan)?;
    let (program, cwd) = (plan.program.clone(), plan.cwd.clone());
    let unsandboxed = plan.sandbox_type == SandboxType::None;
    let spawn_closure = Box::new(move || {
        let spec = SpawnSpec { program: &program, argv: &argv, envp: &envp, cwd: &cwd, fds: fds.fds() };
        match spawn(&spec) {
            Err(e) if unsandboxed && e.raw_os_error() == Some(libc::ENOEXEC) => spawn_with_shell(&spec).map_err(|_| e),
            done => done,
        }
        // `fds` is dropped (closed in this process) here.
    });
    let kind = match plan.sandbox_type {
        SandboxType::Bwrap => TreeKind::PidNamespace,
        SandboxType::Landlock => TreeKind::Supervisor,
        _ => TreeKind::ProcessGroup,
    };
    // Under bwrap, the command runs once a process in the sandbox is neither bwrap nor the helper.
    let setup_programs: Vec<PathBuf> = std::iter::once(plan.program.clone()).chain(plan.helper.clone()).chain(bwrap).collect();
    let internal = |what: &str, e: &dyn std::fmt::Display| SandboxError::new(ErrorCode::SetupFailed, format!("{what}: {e}"));
    let (started, exited) = spawn_owned(spawn_closure, kind, setup_programs).map_err(|e| internal("starting the owner thread failed", &e))?;
    match started.await {
        Ok(Ok(child)) => Ok((child, exited)),
        Ok(Err(e)) => Err(super::failure::cwd_unusable(&plan.cwd, &e).unwrap_or_else(|| super::failure::spawn_error(e, command, plan.sandbox_type, &plan.program))),
        Err(e) => Err(internal("spawning failed", &e)),
    }
}

/// A file without `#!` that the kernel will not run (ENOEXEC), run as a script of `/bin/sh`, as
/// `execvp` does: Node's `child_process`, and sandboxed runs (the helper's and sandbox-exec's exec),
/// run it so; unsandboxed, posix_spawn refused it. A failure here reports the file's own error.
fn spawn_with_shell(spec: &SpawnSpec) -> std::io::Result<nix::unistd::Pid> {
    let shell = std::path::Path::new("/bin/sh");
    let mut argv = vec![cstring(shell)?, cstring(spec.program)?];
    argv.extend(spec.argv.iter().skip(1).cloned());
    spawn(&SpawnSpec { program: shell, argv: &argv, envp: spec.envp, cwd: spec.cwd, fds: spec.fds.iter().map(|(t, f)| (*t, f.clone())).collect() })
}

fn command_line(plan: &LaunchPlan) -> Result<(Vec<CString>, Vec<CString>)> {
    let mut argv = Vec::with_capacity(plan.args.len() + 1);
    argv.push(cstring(&plan.argv0).map_err(|_| SandboxError::invalid_command("contains a NUL byte"))?);
    for a in &plan.args {
        argv.push(cstring(a).map_err(|_| SandboxError::invalid_command("an argument contains a NUL byte"))?);
    }
    let envp = plan
        .env
        .iter()
        .map(|(k, v)| CString::new(format!("{k}={v}")))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| SandboxError::invalid("env", "a variable contains a NUL byte"))?;
    Ok((argv, envp))
}
