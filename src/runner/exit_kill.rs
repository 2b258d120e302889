//! The process groups of this process's runs (bwrap's, an unsandboxed command's), ended when the host process exits
//! (`process.exit()`, a normal exit). A run started by then is ended by the kernel anyway
//! (`--die-with-parent`), but a sandbox still being set up is not: the outer bwrap has cloned
//! the sandbox's init, which waits for bwrap's go-ahead, and bwrap then dies of SIGPIPE at its
//! status write to the host that is gone, leaving the init waiting forever with its namespaces
//! (found by an attacker's review). Until that go-ahead the init is still in bwrap's process
//! group: one `killpg` at exit ends both. An unsandboxed run (`danger-full-access`) leads a group
//! of its own too, which nothing else ends: its processes outlived the host's `process.exit()`
//! (found by an attacker's review of the facade), unlike every sandboxed run's. A bwrap's group is
//! ended as a sandbox in setup (`setup_kill`): past `--new-session` its init is out of the group,
//! and bwrap dying first (of the killpg, or of its parent-death signal as the host's threads end)
//! could orphan an init that has not armed its own parent-death signal yet, command and all.

use std::collections::BTreeMap;
use std::sync::{Mutex, Once};

/// Each group, and whether its leader is a bwrap (a sandbox) rather than an unsandboxed command.
static LIVE: Mutex<BTreeMap<i32, bool>> = Mutex::new(BTreeMap::new());
static AT_EXIT: Once = Once::new();

/// Track the process group `pgid` (a bwrap this process spawned, `sandbox`, or an unsandboxed
/// command; not reaped yet: its id stays reserved until then).
pub fn track(pgid: i32, sandbox: bool) {
    // SAFETY: registering a plain function with no captured state.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(at_exit);
    });
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).insert(pgid, sandbox);
}

/// Stop tracking `pgid`: its leader exited (call before reaping it, while the id is still ours).
pub fn untrack(pgid: i32) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).remove(&pgid);
}

extern "C" fn at_exit() {
    // Never block an exiting process: the lock is held only for an insert or a remove.
    for _ in 0..100 {
        if let Ok(live) = LIVE.try_lock() {
            for (&g, &sandbox) in live.iter() {
                if sandbox {
                    // The process is exiting: nothing is left to reap what is pinned.
                    drop(super::setup_kill::end_sandbox_in_setup(nix::unistd::Pid::from_raw(g), None));
                } else {
                    // SAFETY: plain syscall on a group id this process still reserves.
                    unsafe { libc::killpg(g, libc::SIGKILL) };
                }
            }
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
