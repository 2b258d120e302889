//! The command's share of the per-user budgets the kernel checks against the caller's own limit
//! (`rlimit::memlock_share`, `rlimit::nofile_share`): lowered from the limits the helper inherited,
//! in every bwrap run, before the plan's own limits (which may lower them further). Soft limits
//! are never raised: a program started with a low soft `RLIMIT_NOFILE` (for `select`) keeps it.

use sandspawn_helper::report::{Failure, Stage};
use sandspawn_helper::rlimit::{memlock_share, nofile_share, Resource};

use crate::{describe, last_errno};

pub fn lower() -> Result<(), Failure> {
    lower_to(Resource::Memlock, memlock_share)?;
    lower_to(Resource::Nofile, nofile_share)
}

fn lower_to(resource: Resource, share: fn(u64) -> u64) -> Result<(), Failure> {
    let failed = |what: &str| {
        let e = last_errno();
        let message = format!("{what} of the {} limit failed: {}", resource.name(), describe(e));
        Failure { stage: Stage::Setup, errno: e, message }
    };
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    if unsafe { libc::getrlimit(resource.raw(), &mut current) } != 0 {
        return Err(failed("reading"));
    }
    let hard = share(current.rlim_max as u64).min(current.rlim_max as u64);
    let new = libc::rlimit { rlim_cur: current.rlim_cur.min(hard as libc::rlim_t), rlim_max: hard as libc::rlim_t };
    if unsafe { libc::setrlimit(resource.raw(), &new) } != 0 {
        return Err(failed("setting"));
    }
    Ok(())
}
