//! Plans without bwrap (Seatbelt, danger-full-access) that set resource limits, or give a pty on
//! macOS: the helper runs in front of the plan's program, sets the rlimits on itself and takes the
//! terminal as its controlling tty, then execs that program, which inherits both. No fork and no
//! `pre_exec` closure in the host: this happens in the helper's own, freshly exec'd process.
//! (posix_spawn on macOS cannot give the child a controlling terminal: its file actions run before
//! its setsid.) Under bwrap the helper already runs inside the sandbox (see `bwrap`).

use std::path::PathBuf;

use sandspawn_helper::protocol::Steps;

use super::{path_arg, LaunchPlan, PlanRequest};
use crate::error::{Result, SandboxError};

/// `plan` unchanged when there is nothing for the helper to do; else the helper with its steps,
/// then the plan's program by absolute path. The program's `argv[0]` becomes that path (the
/// helper execs it by path). On Linux without a sandbox a terminal alone needs no helper (the
/// runner's posix_spawn makes it controlling); with the helper in front, the helper takes it.
pub fn behind_helper(plan: LaunchPlan, req: &PlanRequest) -> Result<LaunchPlan> {
    let terminal_on_macos = req.terminal && req.platform == crate::platform::Platform::Darwin;
    if req.rlimits.is_empty() && !terminal_on_macos {
        return Ok(plan);
    }
    let helper = req.helper.ok_or_else(|| {
        SandboxError::unavailable(
            "sandspawn-helper, which sets resource limits and gives macOS commands their terminal, was not found",
            "reinstall sandspawn (the helper ships next to the .node file, mode 0755)",
        )
    })?;
    let report_fd = req.runner_fds.then_some(crate::child_fds::REPORT);
    let steps = Steps { rlimits: req.rlimits.to_vec(), controlling_tty: req.terminal, report_fd, ..Steps::default() };
    let mut args = steps.to_args();
    args.push(path_arg(&plan.program)?);
    args.extend(plan.args);
    Ok(LaunchPlan {
        program: helper.to_path_buf(),
        argv0: crate::helper::FILE_NAME.to_string(),
        args,
        report_fd,
        helper: Some(PathBuf::from(helper)),
        ..plan
    })
}
