//! The inotify watch budget the test binary's watchers run under: one the tests control, not the
//! room left in the user's machine-wide budget.
//!
//! The kernel charges an instance's watches to the user who made the instance, every process of
//! that user together, against `fs.inotify.max_user_watches` (192,540 here); and the product's
//! watcher takes no more than half of that budget, every other process of the user counted
//! (`watch_budget`). So the watcher tests (`armed`: "the next ones do not [read]", `links_via`: "none
//! followed again") failed whenever other processes of the same user held about half of the
//! budget (reproduced with one process holding 97,000 watches, the test binary past its floor of
//! 4,096), or all of it: a watch refused is a directory not vouched for, and the tests, which
//! assert what the watcher vouches for, failed on a healthy product.
//!
//! Here, as root (CI), each watcher's instance is made by a thread whose effective uid is
//! `OWN_UID` for that one system call: its watches are charged to that uid, which no process runs
//! as, and no other process's watches leave the tests without room. The process's shared watcher
//! (`watch::global`) then takes no account of the user's other processes (nothing they hold
//! counts against the instance's budget); the half-of-the-budget rule itself is tested on a
//! watcher of its own in a user namespace of its own (`watch`'s tests).
//!
//! Not root (a developer's `cargo test`): the instance is the user's, and a watch the kernel
//! refuses for lack of budget (`ENOSPC`) fails the test at once with a message that says so,
//! rather than as a directory not vouched for.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// The uid whose watch budget the tests' instances are charged to: no process runs as it, so only
/// sandspawn test binaries (a few thousand watches each) spend it.
const OWN_UID: libc::uid_t = 3_935_002_044;

/// Whether an instance was made as the user, `OWN_UID` out of reach (for `refused`'s message).
static AS_THE_USER: AtomicBool = AtomicBool::new(false);

/// A fresh inotify instance (`flags` for `inotify_init1`), charged to `OWN_UID` when this process
/// may take that uid for a moment, else to the user.
pub fn instance(flags: libc::c_int) -> io::Result<OwnedFd> {
    let made = std::thread::spawn(move || made_as(OWN_UID, flags)).join().unwrap_or(None);
    let fd = match made {
        Some(fd) => fd,
        None => {
            AS_THE_USER.store(true, Ordering::Relaxed);
            // SAFETY: plain syscall.
            unsafe { libc::inotify_init1(flags) }
        }
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `inotify_init1` with this thread's effective uid `uid`, the thread's own back after it; `None`
/// when the uid cannot be taken (not root) or given back. The raw system call changes this
/// thread's credentials only (glibc's `setresuid` would change every thread's).
fn made_as(uid: libc::uid_t, flags: libc::c_int) -> Option<libc::c_int> {
    // SAFETY: plain syscall.
    let own = unsafe { libc::geteuid() };
    let keep = libc::uid_t::MAX; // -1: the real and saved uids stay
    // SAFETY: plain syscall on this thread's credentials.
    if unsafe { libc::syscall(libc::SYS_setresuid, keep, uid, keep) } != 0 {
        return None;
    }
    // SAFETY: plain syscall; the descriptor is owned by the caller.
    let fd = unsafe { libc::inotify_init1(flags) };
    // SAFETY: plain syscall on this thread's credentials (the saved uid is still `own`).
    let back = unsafe { libc::syscall(libc::SYS_setresuid, keep, own, keep) } == 0;
    // The thread ends here; a thread that could not give the uid back must not run anything more.
    assert!(back, "could not take uid {own} back: {}", io::Error::last_os_error());
    (fd >= 0).then_some(fd)
}

/// Called when the kernel refused a watch: for lack of budget (`ENOSPC`) the test fails here,
/// saying so, instead of later as a listing not vouched for.
pub fn refused(why: &io::Error) {
    if why.raw_os_error() != Some(libc::ENOSPC) {
        return;
    }
    let whose = if AS_THE_USER.load(Ordering::Relaxed) {
        format!("this user's (the tests could not take uid {OWN_UID}, whose budget is theirs alone: not root in the initial user namespace)")
    } else {
        format!("uid {OWN_UID}'s (the tests' own budget: other sandspawn test binaries hold the rest)")
    };
    panic!(
        "the kernel refused an inotify watch (ENOSPC): {whose} watches over the machine are at the budget \
         (fs.inotify.max_user_watches, or this user namespace's user.max_inotify_watches: {:?}); \
         the watcher tests need a few thousand. Run them as root, or stop what holds the user's watches",
        super::watch_budget::budget()
    );
}
