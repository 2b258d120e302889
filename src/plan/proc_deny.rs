//! The `denyRead` entries under `/proc` a bwrap plan cannot honour, refused before anything runs.
//!
//! The sandbox's `/proc` is its own (bwrap's `--proc`, in a pid namespace of its own): it lists
//! only the sandbox's processes, and its global entries are the kernel's, which a mask below
//! `/proc` hides as anywhere else (`/proc/sys/kernel/hostname`, `/proc/tty`). Two kinds cannot be
//! hidden so, and each failed every run at setup (found by an attacker's review):
//! - `/proc` itself: bwrap and the helper read and write it to set the sandbox up (the mount table,
//!   the command's id maps, its descriptors), and every process inside needs `/proc/self`.
//! - a process's directory, `/proc/<pid>` and what lies in it (`/proc/self` and `/proc/thread-self`
//!   lead to one, resolved on the host to the caller's pid): the sandbox numbers its own processes,
//!   so the host's pid names another process inside, or none (bwrap could not mount there); the
//!   host's processes are not in the sandbox at all.

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::error::{Result, SandboxError};

const WHOLE: &str = "would hide the sandbox's own /proc, which bwrap and sandspawn's helper need to set the sandbox up and every \
                     process inside reads (/proc/self); it lists only the sandbox's processes: deny the entries below it instead \
                     (/proc/sys, /proc/tty, ...)";
const PROCESS: &str = "lies in a process's directory under /proc (/proc/self and /proc/thread-self lead to the caller's): the sandbox \
                       numbers its own processes, so the host's pid names another process there or none, and the host's processes \
                       are not in the sandbox to be read";

/// An error naming the first entry of `deny_read` (paths as the policy resolved them, symlinks
/// followed) that is `/proc` or lies in a process's directory.
pub fn check(deny_read: &[PathBuf]) -> Result<()> {
    match deny_read.iter().find_map(|d| problem(d).map(|why| (d, why))) {
        Some((d, why)) => Err(SandboxError::invalid("sandbox", format!("sandbox.denyRead entry {} {why}", d.display()))),
        None => Ok(()),
    }
}

/// Why `p` is refused: it is `/proc`, or its first component below `/proc` is all digits. Other
/// entries below `/proc` and paths outside it are fine.
fn problem(p: &Path) -> Option<&'static str> {
    match p.strip_prefix("/proc").ok()?.components().next() {
        None => Some(WHOLE),
        Some(Component::Normal(name)) if name.as_bytes().iter().all(u8::is_ascii_digit) => Some(PROCESS),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(p: &str) -> Option<String> {
        check(&[PathBuf::from("/tmp/fine"), PathBuf::from(p)]).err().map(|e| e.message)
    }

    #[test]
    fn proc_itself_and_process_directories_are_refused() {
        assert!(refused("/proc").unwrap().contains("entry /proc would hide the sandbox's own /proc"));
        assert!(refused("/proc/").unwrap().contains("would hide the sandbox's own /proc"));
        assert!(refused("/proc/1").unwrap().contains("process's directory"));
        assert!(refused("/proc/4242/environ").unwrap().contains("entry /proc/4242/environ lies in a process's directory"));
    }

    #[test]
    fn global_entries_below_proc_and_look_alikes_are_fine() {
        for p in ["/proc/sys", "/proc/sys/kernel/hostname", "/proc/tty/drivers", "/proc/1x", "/procfs/1", "/var/proc/1", "/"] {
            assert_eq!(refused(p), None, "{p}");
        }
    }
}
