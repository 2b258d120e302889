//! The user's inotify watch budget, as the walk's watcher (`watch`) may use it.
//!
//! The kernel counts watches per user, every process and instance of the user together, against
//! `fs.inotify.max_user_watches` and against each user namespace's own `user.max_inotify_watches`
//! on the way up. The watcher's watches last as long as the walks that made them are kept, after
//! their runs too, so its cap alone (half of the budget) said nothing of what other processes hold:
//! one run making 100,000 directories left the host process holding 96,273 of the user's 192,546
//! watches, and two such processes (two agents of one user) held all of them, so the user's editors
//! and every other run's file watchers got `ENOSPC` (found by an attacker's review, cross29). So
//! past a small floor the watcher takes more only while the user's watches in all stay within half
//! of the budget, counted here from `/proc`.
//!
//! What is counted: the inotify instances of this user's processes in this user namespace (an
//! editor, another sandspawn process, a shell's tools), each instance's `inotify wd:` lines in its
//! `fdinfo`. Not counted: processes in other user namespaces (a sandbox's own are bounded by its
//! helper to a quarter of the budget), and processes whose descriptors this user cannot read
//! (non-dumpable ones: ssh-agent, gpg-agent).

use std::os::fd::RawFd;
use std::os::unix::fs::MetadataExt;

/// The user's whole budget here: the global `fs.inotify.max_user_watches`, or this user
/// namespace's own `user.max_inotify_watches` where that is lower (the kernel checks both).
pub fn budget() -> Option<usize> {
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|s| s.trim().parse::<usize>().ok());
    match (read("/proc/sys/fs/inotify/max_user_watches"), read("/proc/sys/user/max_inotify_watches")) {
        (Some(global), Some(own)) => Some(global.min(own)),
        (global, own) => global.or(own),
    }
}

/// Watches held by this user's processes in this user namespace, but by the instance `own` of this
/// process. A few system calls per process and per descriptor of the user's: asked once per
/// `watch::STEP` watches the watcher adds past its floor, and at most every `watch::RECOUNT_AFTER`
/// while it is refused more.
pub fn held_elsewhere(own: RawFd) -> usize {
    let me = std::process::id();
    // SAFETY: plain syscall.
    let uid = unsafe { libc::geteuid() };
    let Ok(ns) = std::fs::metadata("/proc/self/ns/user").map(|m| m.ino()) else { return 0 };
    let Ok(procs) = std::fs::read_dir("/proc") else { return 0 };
    let mut held = 0;
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let base = format!("/proc/{pid}");
        let ours = std::fs::metadata(&base).is_ok_and(|m| m.uid() == uid)
            && std::fs::metadata(format!("{base}/ns/user")).is_ok_and(|m| m.ino() == ns);
        if ours {
            held += held_by(&base, (pid == me).then_some(own));
        }
    }
    held
}

/// The watches of the inotify instances among the descriptors of the process at `base`, but `skip`.
fn held_by(base: &str, skip: Option<RawFd>) -> usize {
    let Ok(fds) = std::fs::read_dir(format!("{base}/fd")) else { return 0 };
    let mut held = 0;
    for fd in fds.flatten() {
        let Some(n) = fd.file_name().to_str().and_then(|n| n.parse::<RawFd>().ok()) else { continue };
        if Some(n) == skip || !std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:inotify") {
            continue;
        }
        if let Ok(info) = std::fs::read_to_string(format!("{base}/fdinfo/{n}")) {
            held += info.lines().filter(|l| l.starts_with("inotify wd:")).count();
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    fn instance() -> OwnedFd {
        // SAFETY: plain syscall; the descriptor is owned from here.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    fn watch(on: &OwnedFd, dir: &std::path::Path) {
        let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid descriptor and path.
        assert!(unsafe { libc::inotify_add_watch(on.as_raw_fd(), path.as_ptr(), libc::IN_CREATE) } >= 0);
    }

    /// Another instance's watches are counted, the instance asked about is not.
    #[test]
    fn the_watches_of_the_users_other_instances_are_counted() {
        let t = tempfile::tempdir().unwrap();
        let dirs: Vec<_> = (0..5).map(|i| t.path().join(format!("d{i}"))).collect();
        dirs.iter().for_each(|d| std::fs::create_dir(d).unwrap());
        let (own, other) = (instance(), instance());
        dirs.iter().for_each(|d| watch(&own, d));
        dirs[..3].iter().for_each(|d| watch(&other, d));
        // Other tests of this process may add or drop watches meanwhile: only this test's are sure.
        let counted = super::held_elsewhere(own.as_raw_fd());
        assert!(counted >= 3, "another instance's 3 watches counted as {counted}");
        drop(other);
        assert!(super::budget().is_some_and(|b| b > 0));
    }
}
