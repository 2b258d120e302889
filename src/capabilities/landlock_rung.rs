//! The ladder's third rung: the Landlock mode (see the helper's `supervisor` and `confine`). Only
//! tried when the caller allowed it. Needs Landlock ABI >= 3 (before that a read-only file could
//! still be truncated); what it cannot enforce is listed in `sandboxDetails.notEnforced`.

use sandspawn_helper::landlock::{not_enforced, MIN_ABI};

use super::{Capabilities, SandboxDetails};
use crate::platform::{Platform, SandboxType};

/// The kernel's Landlock ABI by the raw `landlock_create_ruleset(NULL, 0, VERSION)` call; 0 when
/// the kernel has no Landlock (ENOSYS) or it is disabled (EOPNOTSUPP).
pub fn kernel_abi() -> u32 {
    let rc = unsafe { libc::syscall(444, std::ptr::null::<u8>(), 0usize, 1u32) };
    if rc < 0 {
        0
    } else {
        rc as u32
    }
}

/// The rung's capabilities at kernel ABI `abi`, or `(cause, message)` when it cannot run.
pub fn landlock(abi: u32) -> Result<Capabilities, (&'static str, String)> {
    if abi == 0 {
        return Err(("landlock-enosys", "the kernel has no Landlock (or it is disabled)".to_string()));
    }
    if abi < MIN_ABI {
        return Err((
            "landlock-abi-too-old",
            format!("the kernel's Landlock ABI is {abi}; sandspawn needs ABI {MIN_ABI} (Linux 6.2) or newer to refuse truncating read-only files"),
        ));
    }
    let used = abi.min(sandspawn_helper::landlock::MAX_KNOWN_ABI);
    Ok(Capabilities {
        platform: Platform::Linux,
        sandbox_type: SandboxType::Landlock,
        available: true,
        reason: None,
        fix: None,
        cause: None,
        bwrap: None,
        stderr: None,
        sandbox_details: SandboxDetails {
            bwrap_source: None,
            landlock_abi: Some(used),
            not_enforced: not_enforced(used).into_iter().map(String::from).collect(),
        },
        attempts: Vec::new(),
        fixes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_missing_and_old_landlock() {
        assert_eq!(landlock(0).unwrap_err().0, "landlock-enosys");
        assert_eq!(landlock(2).unwrap_err().0, "landlock-abi-too-old");
        let c = landlock(4).unwrap();
        assert_eq!(c.sandbox_type, SandboxType::Landlock);
        assert_eq!(c.sandbox_details.landlock_abi, Some(4));
        assert!(c.sandbox_details.not_enforced.contains(&"pid-isolation".to_string()));
        assert!(c.sandbox_details.not_enforced.contains(&"signal-scope".to_string()));
        // Found by an attacker's review: the host's tracefs, page map and zram-control, which
        // every bwrap plan hides, were read in this mode, and notEnforced did not say so.
        assert!(c.sandbox_details.not_enforced.contains(&"host-kernel-files".to_string()));
        assert_eq!(landlock(99).unwrap().sandbox_details.landlock_abi, Some(sandspawn_helper::landlock::MAX_KNOWN_ABI));
    }
}
