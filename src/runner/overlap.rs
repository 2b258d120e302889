//! A bwrap run's walk of its workspace, done while bwrap sets up. The walk (repositories below the
//! writable roots' tops, their carve-outs, the names held absent) and the keeper it feeds reach only
//! the in-sandbox helper's arguments; bwrap itself spends ~3 ms making its namespaces and mounts
//! before the helper runs. Measured (pbefore37, bench/RESULTS.md): the walk, the keeper's start and
//! the carve-outs' arguments are ~0.8 ms (an empty repository) to ~1.35 ms (200 nested ones) of
//! the host's 2.3-2.9 ms before bwrap.
//!
//! So the plan is built from the unwalked policy and spawned with the helper's arguments replaced
//! by `--args-from=HELPER_ARGS` (`sandspawn_helper::args_pipe`): the helper blocks on that pipe
//! before anything. Meanwhile the host walks, builds the plan again from the walked policy, starts
//! the keeper (the baseline is taken before the command can write, as when it ran before the
//! spawn), and only then sends the helper its arguments. Fail closed:
//! - the walked plan's own bwrap part (program, argv up to the helper, environment, descriptors)
//!   must be the one spawned, or nothing is sent: the helper sees end of file, the run is killed
//!   and planned again with its walk before its spawn (`SpawnRequest::walk_before_spawn`);
//! - a cut or failed walk kills bwrap (the helper never got anything) and reports as before;
//! - the write end is the host's alone (close-on-exec, above every child's numbers) and the helper
//!   closes the read end before any step: nothing of it reaches the command.

use std::io::Write;
use std::os::fd::OwnedFd;

use crate::error::{Result, SandboxError};
use crate::limits::LimitPlan;
use crate::options::SpawnRequest;
use crate::plan::LaunchPlan;
use crate::planted::keeper::{EndRun, Keeper};
use crate::platform::SandboxType;

use super::prepare::Deferred;

/// The plan spawned before the walk: bwrap's part as planned, the helper's arguments to come.
pub(super) struct First {
    pub plan: LaunchPlan,
    /// Where the helper's arguments began in the plan it was made from.
    at: usize,
}

impl First {
    /// None for a plan that is not bwrap's with its helper's arguments marked.
    pub fn of(plan: &LaunchPlan) -> Option<First> {
        let at = plan.inside_args_at.filter(|at| *at <= plan.args.len() && plan.sandbox_type == SandboxType::Bwrap)?;
        let mut args = plan.args[..at].to_vec();
        args.push(format!("{}{}", sandspawn_helper::args_pipe::ARGS_FROM, crate::child_fds::HELPER_ARGS));
        // A failure before the arguments came is reported like any of the helper's.
        args.extend(plan.report_fd.map(|fd| format!("--report-fd={fd}")));
        let plan = LaunchPlan {
            program: plan.program.clone(),
            argv0: plan.argv0.clone(),
            args,
            env: plan.env.clone(),
            cwd: plan.cwd.clone(),
            sandbox_type: plan.sandbox_type,
            profile: None,
            status_fd: plan.status_fd,
            report_fd: plan.report_fd,
            helper: plan.helper.clone(),
            net_ctl_fd: plan.net_ctl_fd,
            control_fd: plan.control_fd,
            inside_args_at: None,
        };
        Some(First { plan, at })
    }

    /// The helper's arguments of `walked` when its bwrap part is the one spawned, else None.
    fn helper_args<'a>(&self, walked: &'a LaunchPlan) -> Option<&'a [String]> {
        let at = walked.inside_args_at?;
        let spawned = &self.plan;
        let same = walked.program == spawned.program
            && walked.argv0 == spawned.argv0
            && walked.env == spawned.env
            && walked.cwd == spawned.cwd
            && walked.sandbox_type == spawned.sandbox_type
            && walked.status_fd == spawned.status_fd
            && walked.report_fd == spawned.report_fd
            && walked.net_ctl_fd == spawned.net_ctl_fd
            && walked.helper == spawned.helper
            && walked.args.get(..at) == spawned.args.get(..self.at);
        same.then(|| &walked.args[at..])
    }
}

/// What the walk after the spawn gave.
pub(super) struct Walked {
    /// The plan of the walked policy (what the run reports and reads its failures against).
    pub plan: LaunchPlan,
    pub keeper: Option<Keeper>,
    /// The walk's lines for `sandboxDetails.notEnforced`, and the keeper's.
    pub not_enforced: Vec<String>,
    /// The helper's arguments, framed, to `send` once the run goes on as started: None when bwrap's
    /// part differs, when the run must be killed and planned again.
    pub args: Option<Vec<u8>>,
}

/// On a blocking thread, after the spawn of `first`: walk, plan again, start the keeper (its
/// baseline before the command can write), and frame the helper's arguments. Nothing is sent here:
/// the run may still be cut while this runs, and a cut run must be one whose helper got nothing
/// (`send`, once the runner has taken this walk).
pub(super) fn walk_and_plan(
    req: &mut SpawnRequest,
    deferred: &Deferred,
    limits: &LimitPlan,
    first: &First,
    own_links: &[crate::own_links::Recorded],
    end_run: EndRun,
    ended: &dyn Fn() -> bool,
) -> Result<Walked> {
    req.policy.walk_and_protect_until(crate::planted::Absent::UndoneAfter, ended).map_err(|_| super::prepare::cut_while_preparing())?;
    let mut not_enforced = super::prepare::policy_not_enforced(req);
    let plan = super::prepare::build_plan(req, deferred.bwrap.as_ref(), Some(&deferred.resolved), true, limits, None)?;
    // The window a test changes the workspace in: between the plan of the walked policy and the helper.
    #[cfg(test)]
    super::test_hooks::planned(&req.cwd);
    // Before the command can run: the keeper's baseline is the host as the walk saw it.
    let keeper = super::side_services::start_keeper(req, SandboxType::Bwrap, own_links, end_run, &mut not_enforced);
    let args = match first.helper_args(&plan) {
        Some(args) => Some(sandspawn_helper::args_pipe::encode(args).ok_or_else(|| SandboxError::invalid_command("an argument contains a NUL byte"))?),
        None => None,
    };
    Ok(Walked { plan, keeper, not_enforced, args })
}

/// Send the helper its arguments, on a blocking thread the run does not wait for: the write blocks
/// until the helper reads (the arguments of hundreds of repositories exceed a pipe's buffer, and
/// the helper reads them only once bwrap is done), and ends with the run at the latest (the helper
/// killed with the tree: EPIPE). Called only once the run goes on as a started one: its kill and
/// its timeout then end it as any run's, with the check after it. `cwd`: the run's (test hooks).
pub(super) fn send(to_helper: OwnedFd, framed: Vec<u8>, cwd: std::path::PathBuf) {
    // EPIPE: the helper is gone (bwrap failed its setup, or the run was ended); the run reports why.
    let _ = std::fs::File::from(to_helper).write_all(&framed);
    #[cfg(test)]
    super::test_hooks::sent(&cwd);
    #[cfg(not(test))]
    drop(cwd);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bwrap_plan(args: &[&str], at: usize) -> LaunchPlan {
        LaunchPlan {
            program: "/usr/bin/bwrap".into(),
            argv0: "bwrap".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Default::default(),
            cwd: "/ws".into(),
            sandbox_type: SandboxType::Bwrap,
            profile: None,
            status_fd: Some(3),
            report_fd: Some(4),
            helper: Some("/h".into()),
            net_ctl_fd: None,
            control_fd: None,
            inside_args_at: Some(at),
        }
    }

    #[test]
    fn the_first_plan_ends_with_the_pipe_in_place_of_the_helper_s_arguments() {
        let plan = bwrap_plan(&["--ro-bind", "/", "/", "--", "/h", "v1", "--", "true"], 5);
        let first = First::of(&plan).unwrap();
        assert_eq!(first.plan.args, ["--ro-bind", "/", "/", "--", "/h", "--args-from=6", "--report-fd=4"]);
        assert_eq!(first.helper_args(&plan).unwrap(), ["v1", "--", "true"]);
    }

    /// The walk changed bwrap's own part (a pin above a carve-out it found): nothing is sent.
    #[test]
    fn a_walked_plan_whose_bwrap_part_differs_sends_nothing() {
        let first = First::of(&bwrap_plan(&["--ro-bind", "/", "/", "--", "/h", "v1", "--", "true"], 5)).unwrap();
        let pinned = bwrap_plan(&["--ro-bind", "/", "/", "--bind", "/ws/a", "/ws/a", "--", "/h", "v1", "--read-only", "/ws/a/.git", "--", "true"], 8);
        assert!(first.helper_args(&pinned).is_none());
        let mut env = bwrap_plan(&["--ro-bind", "/", "/", "--", "/h", "v1", "--", "true"], 5);
        env.env.insert("X".into(), "1".into());
        assert!(first.helper_args(&env).is_none());
        let walked = bwrap_plan(&["--ro-bind", "/", "/", "--", "/h", "v1", "--read-only", "/ws/r/.git", "--", "true"], 5);
        assert_eq!(first.helper_args(&walked).unwrap(), ["v1", "--read-only", "/ws/r/.git", "--", "true"]);
    }

    #[test]
    fn only_a_bwrap_plan_with_its_helper_s_arguments_marked_is_spawned_first() {
        let mut plan = bwrap_plan(&["--", "/h", "v1", "--", "true"], 2);
        plan.inside_args_at = None;
        assert!(First::of(&plan).is_none());
        let mut landlock = bwrap_plan(&["v1", "--", "true"], 0);
        landlock.sandbox_type = SandboxType::Landlock;
        assert!(First::of(&landlock).is_none());
    }
}
