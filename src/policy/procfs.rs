//! Symlinks on procfs lead wherever the process that follows them is: `/proc/self` (and
//! `/proc/thread-self`) to its own pid, `/proc/<pid>/cwd`, `root`, `exe`, `fd/N` and `map_files/*`
//! to that process's working directory, root and open files; `/dev/fd` and `/dev/stdin` lead
//! through them. Found by an attacker's review: a run made `lib -> /proc/self/cwd/../../tmp/x`.
//! This process (the host's Node, its cwd the workspace) resolved it from its own cwd, where it led
//! nowhere, and reported nothing; the host's shell in the workspace's parent followed it into a
//! repository planted in `/tmp`, and git ran its `core.fsmonitor`. Where such a link leads cannot be
//! judged from here: the callers say so (`path_walk::Unjudged::ThroughProc`). Imports nothing of
//! the crate.

use std::path::Path;

/// Whether the directory (or file) open as `fd` (`O_PATH` will do) lies on procfs.
#[cfg(target_os = "linux")]
pub(crate) fn on_procfs(fd: i32) -> bool {
    // SAFETY: a zeroed statfs is valid; a valid descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstatfs(fd, &mut st) } == 0) && st.f_type == libc::PROC_SUPER_MAGIC
}

/// macOS has no procfs.
#[cfg(not(target_os = "linux"))]
pub(crate) fn on_procfs(_fd: i32) -> bool {
    false
}

/// What a path leads to, followed as a host tool follows it.
#[derive(Debug)]
pub(crate) enum Followed {
    /// To this (its `stat`).
    To(std::fs::Metadata),
    /// To nothing (dangling, a loop, not searchable).
    Nowhere,
    /// Through a magic link of procfs, or onto procfs: it leads elsewhere for each process. (Walked
    /// by `path_walk::follow` before Linux 5.6: also a way past its bounds.)
    Unjudged,
}

/// The kernel's own walk of `path` with magic links refused (`openat2`, `RESOLVE_NO_MAGICLINKS`),
/// and where it ends on procfs (`/proc/self/environ`: the follower's) said as well. `None` where
/// the kernel has no `openat2` (before Linux 5.6): the caller walks the path itself.
#[cfg(target_os = "linux")]
pub(crate) fn follow_by_kernel(path: &Path) -> Option<Followed> {
    use sandspawn_helper::no_symlinks::{openat2, RESOLVE_NO_MAGICLINKS};
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return Some(Followed::Nowhere) };
    let file = match openat2(&c, libc::O_PATH, RESOLVE_NO_MAGICLINKS)? {
        Ok(fd) => std::fs::File::from(fd),
        Err(e) => {
            return match e.raw_os_error() {
                // A magic link refused, or a loop: the kernel's plain walk tells which.
                Some(libc::ELOOP) if std::fs::metadata(path).is_ok() => Some(Followed::Unjudged),
                _ => Some(Followed::Nowhere),
            }
        }
    };
    if on_procfs(std::os::fd::AsRawFd::as_raw_fd(&file)) {
        return Some(Followed::Unjudged);
    }
    Some(file.metadata().map_or(Followed::Nowhere, Followed::To))
}

/// macOS has no procfs: the kernel's walk as it is.
#[cfg(not(target_os = "linux"))]
pub(crate) fn follow_by_kernel(path: &Path) -> Option<Followed> {
    Some(std::fs::metadata(path).map_or(Followed::Nowhere, Followed::To))
}
