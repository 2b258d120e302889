//! The command starts with none of its memory mergeable by KSM (kernel same-page merging).
//!
//! Why: ksmd merges identical pages of every mapping marked mergeable, whatever process or
//! namespace it belongs to, and a process sees which of its own pages were merged (smaps' KSM
//! field, a write's copy-on-write time): an oracle on the memory of every host process whose pages
//! are mergeable. The filter refuses marking memory (`madvise(MADV_MERGEABLE)`,
//! `prctl(PR_SET_MEMORY_MERGE)`), but a process keeps PR_SET_MEMORY_MERGE across fork and exec
//! (Linux 6.10), so a host process that has it (a service with systemd's MemoryKSM=yes) handed it
//! to bwrap, the helper and the command, all of whose memory was then merged unasked (found by an
//! attacker's review, kern45: a read-only run so started read a host process's byte).

use sandspawn_helper::report::{Failure, setup};

use crate::{describe, last_errno};

const PR_SET_MEMORY_MERGE: libc::c_int = 67;

/// Turn PR_SET_MEMORY_MERGE off for this process and what it execs. EINVAL is a kernel without KSM
/// or before 6.4: nothing to turn off. Anything else stops the command from running.
pub fn stop_merging() -> Result<(), Failure> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(PR_SET_MEMORY_MERGE, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong) } != 0 {
        let e = last_errno();
        if e != libc::EINVAL {
            return Err(setup(e, format!("prctl(PR_SET_MEMORY_MERGE, 0) failed: {}", describe(e))));
        }
    }
    Ok(())
}
