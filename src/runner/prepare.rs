//! Everything between validated options and a spawnable plan: is the sandbox available, does the
//! command exist, which placeholders must be reserved, and the plan itself. Runs on a blocking
//! thread because the first call may probe bwrap.

use std::path::Path;

use crate::capabilities;
use crate::error::Result;
use crate::options::SpawnRequest;
use crate::plan::{self, mount_targets, LaunchPlan, PlanRequest};
use crate::platform::Platform;
use crate::policy::SandboxMode;
use crate::program::resolve_program;

pub struct Prepared {
    pub plan: LaunchPlan,
    /// Placeholders bwrap creates on the host; released (and removed) after the run.
    pub reservation: Option<mount_targets::Reservation>,
    /// What `SpawnResult.sandboxDetails` reports.
    pub details: capabilities::SandboxDetails,
}

pub fn prepare(req: &mut SpawnRequest) -> Result<Prepared> {
    let child_path = req.env.get("PATH").map(String::as_str);
    let resolved = resolve_program(&req.command[0], child_path, &req.cwd)?;
    let sandbox = if req.policy.mode == SandboxMode::DangerFullAccess {
        capabilities::Sandbox { bwrap: None, details: capabilities::SandboxDetails::default() }
    } else {
        // bwrap is looked up in the host's PATH (never in the command's cwd).
        let host_path = std::env::var("PATH").ok();
        capabilities::require_sandbox(req.platform, host_path.as_deref(), &req.cwd, &req.linux)?
    };
    let bwrap = sandbox.bwrap;
    // Here, on a blocking thread, not while the options were parsed on the JavaScript thread.
    crate::planted::walk_and_protect(&mut req.policy);
    let mut details = sandbox.details;
    if req.policy.planted.truncated {
        details.not_enforced.push(format!(
            "planted configuration: the walk for repositories and protected names stopped at its bound ({} directories, {} levels); \
             repositories beyond it are not protected",
            crate::planted::scan::MAX_DIRS,
            crate::planted::scan::MAX_DEPTH
        ));
    }
    let missing = req.policy.missing_read_only();
    let reservation = if missing.is_empty() || bwrap.is_none() { None } else { Some(mount_targets::reserve(&missing)) };
    let plan = build_plan(req, bwrap.as_ref(), Some(Path::new(&resolved)), bwrap.is_some())?;
    Ok(Prepared { plan, reservation, details })
}

/// The launch plan for a validated request (shared by the runner and `buildSandboxCommand`).
pub fn build_plan(req: &mut SpawnRequest, bwrap: Option<&crate::plan::BwrapInfo>, resolved: Option<&Path>, runner_fds: bool) -> Result<LaunchPlan> {
    crate::planted::walk_and_protect(&mut req.policy);
    // Linux sandbox plans run the helper; a missing or mismatched one makes them unavailable. A plan
    // for Linux built on another host (explain, tests) names where the helper would be.
    // A pty on macOS needs it too, sandboxed or not (see `plan::seatbelt::take_terminal_first`).
    let needs_helper = match req.platform {
        Platform::Linux => req.policy.mode != SandboxMode::DangerFullAccess,
        Platform::Darwin => req.pty.is_some(),
        Platform::Other => false,
    };
    let helper = if needs_helper {
        Some(if Platform::host() == req.platform { crate::helper::require()?.to_path_buf() } else { crate::helper::expected_path() })
    } else {
        None
    };
    plan::build(&PlanRequest {
        command: &req.command,
        cwd: &req.cwd,
        env: &req.env,
        policy: &req.policy,
        platform: req.platform,
        bwrap,
        resolved_program: resolved,
        helper: helper.as_deref(),
        runner_fds,
        terminal: req.pty.is_some(),
    })
}
