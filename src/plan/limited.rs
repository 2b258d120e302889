//! Plans without bwrap (Seatbelt, danger-full-access) that set resource limits: the helper runs in
//! front of the plan's program, sets the rlimits on itself and execs that program, which inherits
//! them. No fork and no `pre_exec` closure in the host: the limits are set in the helper's own,
//! freshly exec'd process. Under bwrap the helper already runs inside the sandbox (see `bwrap`).

use std::path::PathBuf;

use sandspawn_helper::protocol::Steps;

use super::{path_arg, LaunchPlan, PlanRequest};
use crate::error::{Result, SandboxError};

/// `plan` unchanged without limits; else the helper with the limits, then the plan's program by
/// absolute path. The program's `argv[0]` becomes that path (the helper execs it by path).
pub fn behind_helper(plan: LaunchPlan, req: &PlanRequest) -> Result<LaunchPlan> {
    if req.rlimits.is_empty() {
        return Ok(plan);
    }
    let helper = req.helper.ok_or_else(|| SandboxError::unavailable("sandspawn-helper, which sets the resource limits, was not found", "reinstall sandspawn"))?;
    // The runner's descriptor 3 carries the helper's failure report (stdio is 0..=2).
    let report_fd = req.runner_fds.then_some(3);
    let mut args = Steps { rlimits: req.rlimits.to_vec(), report_fd, ..Steps::default() }.to_args();
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
