//! Launch plans: the exact program, argv and environment that enforce a `ResolvedPolicy` for one
//! command. Pure: nothing here spawns anything. A plan is self-contained: whatever must happen
//! inside the sandbox before the command (seccomp, ...) is done by `sandspawn-helper`, which the
//! plan runs in place of the command, so any spawner with plain stdio can run it.

use std::path::PathBuf;

use crate::platform::SandboxType;

mod child_env;
mod launch_plan;
mod memory_fs;
mod needs_runner;
mod path_arg;
mod proc_deny;
pub mod bwrap;
pub mod limited;
pub mod landlock;
pub mod landlock_grants;
pub mod seatbelt;
#[cfg(test)]
pub(crate) mod seatbelt_eval;
#[cfg(test)]
mod seatbelt_eval_regex;
mod seatbelt_network;
mod seatbelt_case;
mod seatbelt_nfd_table;
mod seatbelt_planted;
pub mod pins;
pub mod stores;
pub mod known_stores;
pub mod store_lookup;

pub(crate) use child_env::child_env;
pub use launch_plan::{BwrapInfo, LaunchPlan, PlanRequest};
pub(crate) use needs_runner::{proxy_needs_runner, timeout_needs_runner};
pub(crate) use path_arg::path_arg;

/// Build the launch plan for one command: direct for danger-full-access, bwrap on Linux, Seatbelt
/// on macOS. Pure: nothing is spawned and nothing on disk is changed.
pub fn build(req: &PlanRequest) -> crate::Result<LaunchPlan> {
    use crate::error::SandboxError;
    use crate::platform::Platform;
    use crate::policy::SandboxMode;

    if req.command.is_empty() {
        return Err(SandboxError::invalid_command("must have at least one element"));
    }
    if req.policy.mode == SandboxMode::DangerFullAccess {
        return limited::behind_helper(direct(req), req);
    }
    match req.platform {
        Platform::Linux => bwrap::build(req),
        Platform::Darwin => limited::behind_helper(seatbelt::build(req)?, req),
        Platform::Other => Err(SandboxError::unsupported(format!(
            "no sandbox is available on {}: only 'danger-full-access' runs here",
            req.platform.as_str()
        ))),
    }
}

/// No sandbox: the command itself, with the host's PATH lookup done by the caller. With a terminal
/// on Linux the runner's posix_spawn makes it the controlling tty (SETSID, then the slave opened
/// without O_NOCTTY), so no helper is needed; macOS goes through the helper (see `seatbelt`).
fn direct(req: &PlanRequest) -> LaunchPlan {
    LaunchPlan {
        program: req.resolved_program.map(PathBuf::from).unwrap_or_else(|| PathBuf::from(&req.command[0])),
        argv0: req.command[0].clone(),
        args: req.command[1..].to_vec(),
        env: child_env(req, SandboxType::None),
        cwd: req.cwd.to_path_buf(),
        sandbox_type: SandboxType::None,
        profile: None,
        status_fd: None,
        report_fd: None,
        helper: None,
        net_ctl_fd: None,
        control_fd: None,
        inside_args_at: None,
    }
}


#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_limits;
#[cfg(test)]
mod tests_review;
