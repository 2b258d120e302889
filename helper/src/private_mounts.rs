//! The private tool caches' overlays, mounted inside the sandbox before the command runs, and the
//! steps that then take every privilege away again.
//!
//! Why here and not in bwrap: bwrap 0.8 has no overlay support (`--overlay` came in 0.9), but the
//! kernel (5.11+) lets a process mount overlayfs in a user namespace it owns. So the plan keeps
//! CAP_SYS_ADMIN and CAP_DAC_OVERRIDE (the kernel creates the overlay's `work/work` with mode 000)
//! and CAP_SYS_RESOURCE (for `user.max_user_namespaces`) and CAP_SETFCAP (to map uid 0 into the nested
//! user namespace) for the helper alone. `userns::enter_own` then moves the command into a user
//! namespace of its own and drops every capability, so the command holds none, and the mounts
//! belong to the parent user namespace, where it cannot undo them.

use sandspawn_helper::protocol::Overlay;
use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::c;
use crate::{describe, last_errno};

/// Create the run's work directory and mount one overlay over its target.
pub fn mount_overlay(o: &Overlay) -> Result<(), Failure> {
    let work = c(&o.work)?;
    if unsafe { libc::mkdir(work.as_ptr(), 0o700) } != 0 && last_errno() != libc::EEXIST {
        let e = last_errno();
        return Err(setup(e, format!("creating the tool cache work directory {} failed: {}", o.work, describe(e))));
    }
    // `index=off`: concurrent runs once shared UPPER, which the kernel allows (with a warning) only
    // without the inode index. Each run has an upper directory of its own now, so the index could
    // be on; it stays off, as the kernel wants it without a shared upper.
    // The store's layers above the host's cache (`lowerdir` lists the uppermost first).
    let lowers: Vec<&str> = o.layers.iter().chain(std::iter::once(&o.target)).map(String::as_str).collect();
    crate::overlay::mount(&o.target, &lowers, &o.upper, &o.work, ",index=off", "the private tool cache")
}

/// Detach a bind mount that was there only for the overlays (the writable store).
pub fn unmount(path: &str) -> Result<(), Failure> {
    let p = c(path)?;
    if unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("detaching {path} failed: {}", describe(e))));
    }
    Ok(())
}

pub(crate) fn write_file(path: &str, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        setup(errno, format!("writing {path} failed: {}", describe(errno)))
    })
}

