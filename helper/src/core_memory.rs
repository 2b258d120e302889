//! A crash of the command's hands the kernel's core handler none of the run's memory.
//!
//! Why: `RLIMIT_CORE` of 1 byte (`rlimit::NO_CORE_DUMP`) keeps a crash from a core file and from a
//! piped `kernel.core_pattern`'s helper, but not from a socket one (`@/path`, `@@/path`, Linux 6.16+:
//! systemd's socket-activated coredump), which the kernel connects to and streams the whole core into
//! whatever the limit; nor from a pipe where the caller's hard limit is 0 and the run keeps 0. Found
//! by an attacker's review (kern35, after rfix33's 8.7 MB): a default workspace-write run's Python
//! holding 32 MiB streamed 42,246,144 bytes of the run's memory into the host's listener per crash.
//!
//! So the command starts with a `coredump_filter` of 0: no mapping is dumped (anonymous or file,
//! private or shared, huge pages, ELF headers), only what the kernel always writes (registers and
//! notes, the vDSO), a few KiB. Every process the command starts inherits it across fork and exec,
//! and none can raise it again: the sandbox's proc is read-only after `oom_first` (in the Landlock
//! mode, Landlock refuses the command's writes to the host's proc). Nothing inside loses a core by it:
//! the 1-byte limit already keeps every core file from being written.

use sandspawn_helper::report::Failure;

use crate::private_mounts::write_file;

/// No mapping of any kind in a core (the bits of `man 5 core`'s `coredump_filter`, all clear).
const NO_MAPPINGS: &str = "0";

/// Clear this process's `coredump_filter`, which what it starts inherits. A kernel without it (no
/// ELF core dumps: `CONFIG_ELF_CORE` off) dumps no core at all: nothing to clear.
pub fn keep_memory_out() -> Result<(), Failure> {
    const FILTER: &str = "/proc/self/coredump_filter";
    if !std::path::Path::new(FILTER).exists() {
        return Ok(());
    }
    write_file(FILTER, NO_MAPPINGS)
}
