//! The command is the kernel's first choice when memory runs out, and stays so.
//!
//! Why: the OOM killer (the machine's, or a memory cgroup's: the container, systemd unit or CI job
//! the host process runs in) kills the process with the most memory, scaled by its
//! `oom_score_adj`. The command kept the caller's adjustment (0), so a run that spread its memory
//! over processes each smaller than a host process made the kernel kill the host process: found by
//! an attacker's review (kern34), six 150 MiB processes of a default workspace-write run in a
//! 700 MiB memory cgroup with a 350 MiB host process (the agent's Node, an editor) got the host
//! process killed first, and the run went on.
//!
//! So the helper sets 1000, the largest, which the command and every process it starts inherit:
//! any of them goes before any host process of a lower adjustment. A process may lower its own
//! adjustment without a capability down to the least it inherited (the caller's, 0), so the
//! sandbox's proc is then made read-only: `/proc/self/oom_score_adj` and `oom_adj` cannot be
//! written back down (EROFS), nor any other file of the command's processes there. Reopening a
//! descriptor through `/proc/self/fd` is not affected (the link leads to the file's own mount).
//!
//! In the Landlock mode the command's process sets it before it is confined (`supervisor`), and
//! Landlock keeps it: the command may write nowhere in the host's proc.
//!
//! The helper's own writes in proc after this step (the command's user namespace's maps and
//! budgets, `userns`) go through `WritableProc`: the sandbox's proc bound once more, writable, and
//! detached from the mount tree at once, reachable only through the helper's close-on-exec
//! descriptor.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use sandspawn_helper::report::{setup, Failure};

use crate::mount_target::{c, mount, Kind, Target};
use crate::private_mounts::{unmount, write_file};
use crate::{describe, last_errno};

/// What the command's processes start with: the largest adjustment the kernel takes.
const FIRST_VICTIM: &str = "1000";

/// Where the writable copy of the sandbox's proc is bound for a moment (as `userns` once did for
/// its writes): a directory of proc itself, so nothing outside proc is touched.
const OVER: &str = "/proc/sys";

/// A directory of that copy (proc's own `sys`, there while `OVER` is) where the message queues'
/// mount and the covers' scratch directory are put to be detached with it, in its one RCU grace
/// period (`take_along`, from `main`: `write_guard::park_message_queues`, `covers::detach_deferred`).
const PARKED: &str = "/proc/sys/sys";

/// A writable copy of the sandbox's proc that no path of the mount tree reaches.
pub struct WritableProc(OwnedFd);

impl WritableProc {
    /// The path of `name` (relative to proc's top: `self/uid_map`) through this copy.
    pub fn path(&self, name: &str) -> String {
        format!("/proc/self/fd/{}/{name}", self.0.as_raw_fd())
    }
}

/// This process's adjustment set to the first victim's (raising it needs no capability); what it
/// starts inherits it. The Landlock mode's command process calls it before it is confined:
/// Landlock then refuses its writes to the host's proc (no writable root holds it), so it stays.
pub fn prefer_this_process() -> Result<(), Failure> {
    write_file("/proc/self/oom_score_adj", FIRST_VICTIM)
}

/// Set the helper's adjustment (the command's to be), keep a writable copy of proc for the
/// helper, and make the sandbox's proc read-only. With the capabilities bwrap kept for the helper.
/// `take_along` is given a directory of the copy of proc (`PARKED`) just before that copy is
/// detached: what it mounts there leaves with the copy, in the same RCU grace period.
pub fn keep_the_command_first(take_along: &dyn Fn(&std::ffi::CStr) -> Result<(), Failure>) -> Result<WritableProc, Failure> {
    prefer_this_process()?;
    let proc = Target::open("/proc", Kind::Dir, "the sandbox's proc")?;
    let writable = detached_copy(&proc, take_along)?;
    let flags = proc.mount_flags("/proc")?;
    mount(None, &proc.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags, None, "making the sandbox's proc read-only")?;
    Ok(writable)
}

/// The sandbox's proc (`proc`, bwrap's `--proc`, without the mounts on it) bound over `OVER`,
/// opened, and detached again: the descriptor keeps the copy.
fn detached_copy(proc: &Target, take_along: &dyn Fn(&std::ffi::CStr) -> Result<(), Failure>) -> Result<WritableProc, Failure> {
    let over = c(OVER)?;
    mount(Some(&proc.proc_path()), &over, None, libc::MS_BIND, None, "binding the sandbox's proc over /proc/sys")?;
    // SAFETY: a C string; the descriptor returned is owned below.
    let fd = unsafe { libc::open(over.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    let opened = if fd < 0 {
        let e = last_errno();
        Err(setup(e, format!("opening the copy of the sandbox's proc failed: {}", describe(e))))
    } else {
        // SAFETY: just opened, owned by nobody else.
        Ok(WritableProc(unsafe { OwnedFd::from_raw_fd(fd) }))
    };
    // Detached with the copy, in the one grace period its detach waits for.
    let moved = take_along(&c(PARKED)?);
    unmount(OVER)?;
    moved?;
    opened
}
