//! Whether a Linux run keeps the host's core helper out: every bwrap and Landlock run sets the
//! command's `RLIMIT_CORE` to 1 byte (`sandspawn_helper::rlimit::NO_CORE_DUMP`), the one value
//! under which the kernel pipes no crash to a `kernel.core_pattern` program (run as root in the
//! host's namespaces, the whole core streamed into it; found by an attacker's review, kern33).
//! A caller whose hard limit is 0 cannot raise it to 1: the command keeps 0, which stops a core
//! file only, and the run says so in `notEnforced`.

/// The `notEnforced` line for a caller's hard `RLIMIT_CORE`, or none when 1 can be given.
pub fn not_enforced_for(hard: u64) -> Option<String> {
    (hard == 0).then(|| {
        "core dumps: this process's hard RLIMIT_CORE is 0, so the command's cannot be the 1 byte that keeps the kernel \
         from piping each crash to a core_pattern program (systemd-coredump, apport), which runs as root on the host; \
         start this process with a hard core limit of 1 or more (systemd's LimitCORE=, limits.conf's hard core)"
            .to_string()
    })
}

/// This process's hard `RLIMIT_CORE`'s line (Linux plans only); none when it cannot be read.
pub fn not_enforced() -> Option<String> {
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the struct given.
    if unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut current) } != 0 {
        return None;
    }
    not_enforced_for(current.rlim_max as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_hard_limit_of_0_is_said() {
        assert!(not_enforced_for(0).is_some_and(|l| l.contains("RLIMIT_CORE") && l.contains("core_pattern")));
        assert_eq!(not_enforced_for(1), None);
        assert_eq!(not_enforced_for(u64::MAX), None);
    }
}
