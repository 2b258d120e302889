//! Dropping every capability, the last privileged step before the command: after the private
//! mounts and the nested user namespace (`private_mounts`), and in the Landlock mode's command
//! process (`confine`). One function for both, so they cannot drift apart in strictness.

use sandspawn_helper::report::{Failure, setup};

use crate::{describe, last_errno};

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn current() -> [Data; 2] {
    let mut head = Header { version: CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: a valid header and a two-element data array, as capget(2) requires for version 3.
    unsafe { libc::syscall(libc::SYS_capget, &mut head as *mut Header, data.as_mut_ptr()) };
    data
}

fn any(data: &[Data; 2]) -> bool {
    data.iter().any(|d| d.effective | d.permitted | d.inheritable != 0)
}

/// Empty the bounding set, the ambient set and the effective, permitted and inheritable sets,
/// then check that nothing is left. A process that holds no capability at all (a user other than
/// root in the Landlock mode) cannot change its bounding set (that takes CAP_SETPCAP), and needs
/// not: under no_new_privs an exec cannot gain what the permitted set lacks.
pub fn drop_all() -> Result<(), Failure> {
    let had_any = any(&current());
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
        let head = Header { version: CAPABILITY_VERSION_3, pid: 0 };
        let zero = [Data::default(); 2];
        // SAFETY: a valid header and a two-element data array, as capset(2) requires.
        if unsafe { libc::syscall(libc::SYS_capset, &head as *const Header, zero.as_ptr()) } != 0 {
            let e = last_errno();
            return Err(setup(e, format!("dropping the capabilities failed: {}", describe(e))));
        }
    }
    if any(&current()) {
        return Err(setup(libc::EPERM, "capabilities remained after dropping them".into()));
    }
    Ok(())
}
