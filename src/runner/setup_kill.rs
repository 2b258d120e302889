//! Ending a bwrap sandbox that has not started its command: by the runner's force kill
//! (`Child::kill_sandbox_in_setup`) and when the host process exits (`exit_kill`).
//!
//! The order matters. bwrap leads its process group (spawned with setsid), and the sandbox's init
//! it cloned stays in that group until `--new-session`'s setsid, after bwrap's go-ahead: one killpg
//! takes both while it lasts. Past that setsid only bwrap's list of children finds the init, and
//! the init arms --die-with-parent later still (bwrap's `do_init`, after its fork of the command,
//! with no check that its parent is still there). So bwrap must still be alive when its children
//! are read: killed first (as the runner did), it could exit before the read, orphaning an init
//! between the two onto the host's reaper, where it and its command lived on (a `sleep` left
//! after `.ci/run`'s 500 runs; with the bundled bwrap killed at random points of its setup in
//! that order, 10 of 300 inits outlived the kill). Stopped first, bwrap can neither exit, nor
//! clone, nor give the go-ahead: an init not in the list read after the stop is one still in
//! bwrap's group, for the killpg after it.

use std::os::fd::OwnedFd;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// SIGKILL the sandbox of `bwrap` (a child of this process, not reaped, so its pid is its own),
/// its init (`init`, when bwrap has reported it) and bwrap itself. Returns pidfds on bwrap's
/// children, opened while bwrap is stopped (so each pid is still its unreaped child's): once bwrap
/// is dead they are orphans of the host, which a host that adopts orphans must reap (`reap`). A
/// run cut during the overlap's walk is killed here before its status stream is read, so the init
/// was never pinned from bwrap's report: with Node as PID 1 of a container, `reaping.test.js`'s
/// 300 mixed runs (50 ms timeouts) left 11 zombie inits (`bwrap`).
pub(super) fn end_sandbox_in_setup(bwrap: Pid, init: Option<i32>) -> Vec<OwnedFd> {
    let pid = bwrap.as_raw();
    let _ = kill(bwrap, Signal::SIGSTOP);
    let mut pinned = Vec::new();
    if let Ok(children) = crate::whole_file::read_to_string(format!("/proc/{pid}/task/{pid}/children"), crate::whole_file::PROC_FILE) {
        for c in children.split_whitespace().filter_map(|c| c.parse::<i32>().ok()) {
            pinned.extend(super::reap::pidfd_open(c));
            let _ = kill(Pid::from_raw(c), Signal::SIGKILL);
        }
    }
    if let Some(init) = init {
        let _ = kill(Pid::from_raw(init), Signal::SIGKILL);
    }
    let _ = killpg(bwrap, Signal::SIGKILL);
    #[cfg(test)]
    group_killed::call(bwrap);
    let _ = kill(bwrap, Signal::SIGKILL);
    pinned
}

/// Test-only: a function called on the killing thread right after bwrap's process group was
/// SIGKILLed (a test makes bwrap's death win the race with what follows).
#[cfg(test)]
pub mod group_killed {
    use std::cell::RefCell;

    thread_local! {
        static HOOK: RefCell<Option<Box<dyn FnMut(nix::unistd::Pid)>>> = RefCell::new(None);
    }

    /// Call `hook` (on this thread only) after every group kill, until `clear`.
    pub fn set(hook: impl FnMut(nix::unistd::Pid) + 'static) {
        HOOK.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
    }

    pub fn clear() {
        HOOK.with(|h| *h.borrow_mut() = None);
    }

    pub(super) fn call(bwrap: nix::unistd::Pid) {
        HOOK.with(|h| {
            if let Some(hook) = h.borrow_mut().as_mut() {
                hook(bwrap);
            }
        });
    }
}
