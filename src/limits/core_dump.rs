//! Whether a Linux run keeps the host's core helper out: every bwrap and Landlock run sets the
//! command's `RLIMIT_CORE` to 1 byte (`sandspawn_helper::rlimit::NO_CORE_DUMP`), the one value
//! under which the kernel pipes no crash to a `kernel.core_pattern` program (run as root in the
//! host's namespaces, the whole core streamed into it; found by an attacker's review, kern33).
//! A caller whose hard limit is 0 cannot raise it to 1: the command keeps 0, which stops a core
//! file only, and the run says so in `notEnforced`.
//!
//! Nor does 1 keep out a `core_pattern` of `@/path` or `@@/path` (kernel 6.16+, systemd's
//! socket-activated coredump): the kernel connects to that AF_UNIX socket, whose listener is a host
//! process, and streams the whole core into it whatever the limit (found by an attacker's review,
//! rfix33: 8.7 MB of a Python's core at RLIMIT_CORE 1). No filter keeps a crash from it, so a run
//! says so in `notEnforced`. What reaches it is a core without the run's memory: the helper gives
//! the command a `coredump_filter` of 0 (`sandspawn_helper`'s `core_memory`; kern35: 64 KiB of
//! registers and notes where a 32 MiB Python streamed 42 MB), which a pipe's program under a hard
//! limit of 0 gets too.

/// The `notEnforced` line for a caller's hard `RLIMIT_CORE`, or none when 1 can be given.
pub fn not_enforced_for(hard: u64) -> Option<String> {
    (hard == 0).then(|| {
        "core dumps: this process's hard RLIMIT_CORE is 0, so the command's cannot be the 1 byte that keeps the kernel \
         from piping each crash to a core_pattern program (systemd-coredump, apport), which runs as root on the host \
         for each crash (it is given a core without the run's memory, some 64 KiB); start this process with a hard core limit of 1 or more (systemd's LimitCORE=, limits.conf's hard core)"
            .to_string()
    })
}

/// The `notEnforced` line for the host's `kernel.core_pattern`, or none unless it is a socket.
pub fn not_enforced_for_pattern(pattern: &str) -> Option<String> {
    pattern.starts_with('@').then(|| {
        "core dumps: the host's kernel.core_pattern is a socket (@), and the kernel hands each crash to the host process \
         listening there whatever the command's RLIMIT_CORE (the 1 byte keeps a piped core_pattern's program out only): \
         a core without the run's memory (its coredump_filter is 0), some 64 KiB of registers and notes a crash"
            .to_string()
    })
}

/// The host's `kernel.core_pattern` (a sysctl of the whole machine); none when it cannot be read.
const PATTERN: &str = "/proc/sys/kernel/core_pattern";

/// The lines for this process's hard `RLIMIT_CORE` and the host's `kernel.core_pattern` (Linux
/// plans only); none for what cannot be read.
pub fn not_enforced() -> Vec<String> {
    let mut out = Vec::new();
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the struct given.
    if unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut current) } == 0 {
        out.extend(not_enforced_for(current.rlim_max as u64));
    }
    // One short read: the pattern is at most 128 bytes (CORENAME_MAX_SIZE).
    if let Ok(pattern) = std::fs::read_to_string(PATTERN) {
        out.extend(not_enforced_for_pattern(&pattern));
    }
    out
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

    #[test]
    fn only_a_socket_pattern_is_said() {
        for p in ["@/run/systemd/coredump\n", "@@/run/x.sock"] {
            assert!(not_enforced_for_pattern(p).is_some_and(|l| l.contains("core_pattern") && l.contains("socket")), "{p}");
        }
        for p in ["core\n", "|/usr/lib/systemd/systemd-coredump %P", "/var/crash/core.%p", ""] {
            assert_eq!(not_enforced_for_pattern(p), None, "{p}");
        }
    }
}
