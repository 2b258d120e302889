//! Reaping the processes a run orphans onto the host (Linux).
//!
//! A run leaves orphans behind: bwrap's outer process exits as soon as its namespace init reports
//! the command's status, before that init is reaped; and the members of an unsandboxed run's
//! process group outlive their parents when the group is killed. The kernel hands orphans to the
//! nearest child subreaper or to PID 1 of the PID namespace. When that is the host process (Node
//! as PID 1 of a container, or a host that made itself a subreaper), nobody else will ever reap
//! them, and libuv only waits for the pids it spawned itself.
//!
//! So each orphan is pinned with a pidfd while it is provably the run's own process, and waited
//! for through that pidfd once it has exited. `waitid(P_PIDFD)` reaps exactly that process, never
//! a recycled pid and never one of `child_process`'s children (no `waitpid(-1)` anywhere), and it
//! fails with ECHILD when the orphan went to another reaper, which then is that reaper's job.
//!
//! The host never becomes a subreaper on our account: that would hand it every orphan of its
//! other children too, which it cannot tell apart from ours and would leave as zombies.

use std::os::fd::OwnedFd;

/// How long a detached reaper waits for its orphans to exit. They were sent SIGKILL (the group
/// by `killpg`, a sandbox's init by bwrap's `--die-with-parent`), so this only bounds a process
/// stuck in the kernel; past it, the pidfds are closed and the zombies stay (not a hang).
#[cfg(target_os = "linux")]
const REAP_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether orphans of our children land on this process: it is PID 1 of its PID namespace or a
/// child subreaper. Elsewhere they go to an ancestor, and collecting them would be wasted work.
#[cfg(target_os = "linux")]
pub fn host_adopts_orphans() -> bool {
    if std::process::id() == 1 {
        return true;
    }
    let mut flag: libc::c_int = 0;
    let rc = unsafe { libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut flag as *mut libc::c_int, 0, 0, 0) };
    rc == 0 && flag != 0
}

#[cfg(not(target_os = "linux"))]
pub fn host_adopts_orphans() -> bool {
    false
}

#[cfg(target_os = "linux")]
pub(super) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(not(target_os = "linux"))]
pub(super) fn pidfd_open(_pid: i32) -> Option<OwnedFd> {
    None
}

/// A pidfd on the sandbox's init (`child-pid` on bwrap's status descriptor), if `pid` still is
/// that process: it must be in the PID namespace bwrap reported, checked after the pidfd is open
/// (a recycled pid would be in another namespace). None without pidfd support (Linux < 5.3).
#[cfg(target_os = "linux")]
pub fn pin_sandbox_init(pid: i32, ns_inode: u64) -> Option<OwnedFd> {
    let fd = pidfd_open(pid)?;
    (crate::pidns::ns_of(pid) == Some(ns_inode)).then_some(fd)
}

#[cfg(not(target_os = "linux"))]
pub fn pin_sandbox_init(_pid: i32, _ns_inode: u64) -> Option<OwnedFd> {
    None
}

/// The process group id and parent pid from `/proc/<pid>/stat` (after the `(comm)` field).
#[cfg(target_os = "linux")]
fn pgrp_and_ppid(pid: i32) -> Option<(i32, i32)> {
    let stat = crate::whole_file::read_to_string(format!("/proc/{pid}/stat"), crate::whole_file::PROC_FILE).ok()?;
    let mut rest = sandspawn_helper::proc_stat::fields(&stat)?;
    let ppid = rest.nth(1)?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some((pgrp, ppid))
}

/// Pidfds on every member of process group `pgid` except its leader, each checked to still be in
/// the group after its pidfd is open. Call it while the leader is an unreaped zombie (so the group
/// id cannot be reused) and before the group is killed.
#[cfg(target_os = "linux")]
pub fn pin_group_members(pgid: i32) -> Vec<OwnedFd> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if pid == pgid || pgrp_and_ppid(pid).map(|p| p.0) != Some(pgid) {
            continue;
        }
        if let Some(fd) = pidfd_open(pid) {
            if pgrp_and_ppid(pid).map(|p| p.0) == Some(pgid) {
                out.push(fd);
            }
        }
    }
    out
}

#[cfg(not(target_os = "linux"))]
pub fn pin_group_members(_pgid: i32) -> Vec<OwnedFd> {
    Vec::new()
}

/// Wait until every pinned process has exited, then reap those that are our children. Waiting
/// for all of them first matters: a process is handed to its reaper when its parent exits, so
/// only once the whole set has exited is it settled which of them are ours.
#[cfg(target_os = "linux")]
pub async fn reap_orphans(pidfds: Vec<OwnedFd>) {
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;
    let mut watched = Vec::with_capacity(pidfds.len());
    for fd in pidfds {
        // A pidfd polls readable once its process has exited. SAFETY: the OwnedFd owns its
        // descriptor, which stays open and unchanged until the AsyncFd (which owns it) drops.
        match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
            Ok(fd) => watched.push(fd),
            Err(_) => return,
        }
    }
    let all_exited = async {
        for fd in &watched {
            let _ = fd.readable().await;
        }
    };
    if tokio::time::timeout(REAP_BOUND, all_exited).await.is_err() {
        return;
    }
    for fd in &watched {
        reap_pidfd(fd.get_ref());
    }
}

#[cfg(not(target_os = "linux"))]
pub async fn reap_orphans(_pidfds: Vec<OwnedFd>) {}

/// `reap_orphans` for a caller on a blocking thread (the capability probes).
#[cfg(target_os = "linux")]
pub fn reap_orphans_blocking(pidfds: Vec<OwnedFd>) {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + REAP_BOUND;
    for fd in &pidfds {
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let rc = unsafe { libc::poll(&mut p, 1, left.as_millis().min(i32::MAX as u128) as i32) };
            if rc > 0 || (rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)) {
                break;
            }
        }
    }
    for fd in &pidfds {
        reap_pidfd(fd);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn reap_orphans_blocking(_pidfds: Vec<OwnedFd>) {}

/// Reap the exited process behind `fd` if it is our child; ECHILD (another reaper's) is fine.
#[cfg(target_os = "linux")]
fn reap_pidfd(fd: &OwnedFd) {
    use std::os::fd::AsRawFd;
    const P_PIDFD: libc::idtype_t = 3;
    loop {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(P_PIDFD, fd.as_raw_fd() as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG) };
        if rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_comm() {
        let me = std::process::id() as i32;
        let (pgrp, ppid) = pgrp_and_ppid(me).expect("own stat");
        assert_eq!(pgrp, unsafe { libc::getpgrp() });
        assert_eq!(ppid, unsafe { libc::getppid() });
    }

    #[test]
    fn init_of_another_namespace_is_not_pinned() {
        let me = std::process::id() as i32;
        let own_ns = crate::pidns::ns_of(me).expect("own ns");
        assert!(pin_sandbox_init(me, own_ns).is_some());
        assert!(pin_sandbox_init(me, own_ns + 1).is_none(), "a pid outside the reported namespace must not be pinned");
    }

    #[tokio::test]
    async fn reaps_an_exited_child_through_its_pidfd_and_leaves_others() {
        let pinned = std::process::Command::new("true").spawn().expect("spawn");
        let other = std::process::Command::new("true").spawn().expect("spawn");
        let fd = pidfd_open(pinned.id() as i32).expect("pidfd");
        reap_orphans(vec![fd]).await;
        let gone = unsafe { libc::waitpid(pinned.id() as i32, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(gone, -1, "the pinned child was reaped by reap_orphans");
        // The child that was not pinned is untouched: still ours to wait for.
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(other.id() as i32, &mut status, 0) }, other.id() as i32);
    }
}
