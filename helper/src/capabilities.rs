//! Dropping every capability, the last privileged step before the command: after the private
//! mounts and the nested user namespace (`private_mounts`), and in the Landlock mode's command
//! process (`confine`). One function for both, so they cannot drift apart in strictness.

use sandspawn_helper::capability_sets::{self, Data, any};
use sandspawn_helper::report::{Failure, setup};

use crate::{describe, last_errno};

/// Empty the bounding set, the ambient set and the effective, permitted and inheritable sets,
/// then check that nothing is left. A process that holds no capability at all (a user other than
/// root in the Landlock mode) cannot change its bounding set (that takes CAP_SETPCAP), and needs
/// not: under no_new_privs an exec cannot gain what the permitted set lacks.
pub fn drop_all() -> Result<(), Failure> {
    // A failed capget reads as holding some: the drop is then tried, and checked below.
    let had_any = capability_sets::get().map_or(true, |d| any(&d));
    if had_any {
        for cap in 0..64 {
            // SAFETY: prctl with plain integer arguments.
            // EINVAL past the kernel's last capability.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 && last_errno() != libc::EINVAL {
                let e = last_errno();
                return Err(setup(e, format!("dropping capability {cap} from the bounding set failed: {}", describe(e))));
            }
        }
    }
    // SAFETY: prctl with plain integer arguments.
    if unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("clearing the ambient capabilities failed: {}", describe(e))));
    }
    if had_any {
        if let Err(e) = capability_sets::set(&[Data::default(); 2]) {
            let e = e.raw_os_error().unwrap_or(libc::EPERM);
            return Err(setup(e, format!("dropping the capabilities failed: {}", describe(e))));
        }
    }
    if capability_sets::get().map_or(true, |d| any(&d)) {
        return Err(setup(libc::EPERM, "capabilities remained after dropping them".into()));
    }
    Ok(())
}
