//! Signalling a process met in `/proc` by the Landlock supervisor's walks, and no other.

use crate::proc_stat::{self, Entry};

/// Send `sig` to `d`, the process a walk met, and never to one that took its pid since. The walk
/// read `d` a moment ago, and a process of the tree may have reaped it meanwhile (a grandchild is
/// reaped by its own parent, not by the supervisor): its pid may then name a host process, which
/// the supervisor, running as the user (as root, with every capability), could stop or kill. So a
/// pidfd is taken first and the pid's stat read again: the same start time means the pidfd names
/// `d` (a pid held from the walk to the second read was never free). Without pidfds (kernels
/// before 5.3, or a filter refusing them: Landlock itself needs 5.13), a plain `kill` as before.
/// A second read that fails sends nothing: the pidfd pins whatever held the pid when it was
/// opened, which may already be another process, so signalling through it unchecked would be the
/// very pid reuse this guards against. Such a failure is the supervisor's own (no descriptor or
/// memory left), which is why the run's limits are never the supervisor's (`supervisor::run`).
pub fn signal(d: &Entry, sig: i32) {
    // SAFETY: pidfd_open takes a pid and flags; returns a descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, d.pid, 0) } as i32;
    if fd < 0 {
        if matches!(std::io::Error::last_os_error().raw_os_error().unwrap_or(0), libc::ENOSYS | libc::EPERM) {
            // SAFETY: a plain signal.
            unsafe { libc::kill(d.pid, sig) };
        }
        return; // ESRCH: gone already.
    }
    let now = std::fs::read_to_string(format!("/proc/{}/stat", d.pid)).ok().and_then(|s| proc_stat::parse(d.pid, &s));
    if now.is_some_and(|now| now.start == d.start) {
        // SAFETY: our own pidfd, no siginfo, no flags.
        unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd, sig, std::ptr::null::<libc::siginfo_t>(), 0) };
    }
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process met under a pid that now names another (another start time) is left alone.
    #[test]
    fn a_pid_that_names_another_process_now_is_not_signalled() {
        let _forks = crate::forks(false);
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let met = proc_stat::parse(pid, &stat).unwrap();
        signal(&Entry { start: met.start + 1, ..met }, libc::SIGKILL);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(child.try_wait().unwrap().is_none(), "a process with another start time was killed");
        signal(&met, libc::SIGKILL);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
