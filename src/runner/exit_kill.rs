//! The process groups of this process's runs (bwrap's, an unsandboxed command's), ended when the host process exits
//! (`process.exit()`, a normal exit). A run started by then is ended by the kernel anyway
//! (`--die-with-parent`), but a sandbox still being set up is not: the outer bwrap has cloned
//! the sandbox's init, which waits for bwrap's go-ahead, and bwrap then dies of SIGPIPE at its
//! status write to the host that is gone, leaving the init waiting forever with its namespaces
//! (found by an attacker's review). Until that go-ahead the init is still in bwrap's process
//! group: one `killpg` at exit ends both. An unsandboxed run (`danger-full-access`) leads a group
//! of its own too, which nothing else ends: its processes outlived the host's `process.exit()`
//! (found by an attacker's review of the facade), unlike every sandboxed run's.

use std::collections::BTreeSet;
use std::sync::{Mutex, Once};

static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static AT_EXIT: Once = Once::new();

/// Track the process group `pgid` (a bwrap this process spawned, not reaped yet: its id stays
/// reserved until then).
pub fn track(pgid: i32) {
    // SAFETY: registering a plain function with no captured state.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(at_exit);
    });
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).insert(pgid);
}

/// Stop tracking `pgid`: its leader exited (call before reaping it, while the id is still ours).
pub fn untrack(pgid: i32) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).remove(&pgid);
}

extern "C" fn at_exit() {
    // Never block an exiting process: the lock is held only for an insert or a remove.
    for _ in 0..100 {
        if let Ok(live) = LIVE.try_lock() {
            for &g in live.iter() {
                // SAFETY: plain syscall on a group id this process still reserves.
                unsafe { libc::killpg(g, libc::SIGKILL) };
            }
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
