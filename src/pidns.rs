//! Signalling every process in a PID namespace from the host (Linux). bwrap reports the namespace's
//! inode on its `--json-status-fd`; we find its members through /proc and signal each through a
//! pidfd, re-checking the namespace after opening the pidfd so a recycled pid is never hit.

use nix::sys::signal::Signal;

#[cfg(target_os = "linux")]
pub fn signal_namespace(ns_inode: u64, sig: Signal) {
    use std::os::fd::{FromRawFd, OwnedFd, AsRawFd};
    let Ok(entries) = std::fs::read_dir("/proc") else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if ns_of(pid) != Some(ns_inode) {
            continue;
        }
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            // No pidfd (kernel < 5.3): the namespace check above is the best we can do.
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
            continue;
        }
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        if ns_of(pid) == Some(ns_inode) {
            unsafe {
                libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), sig as i32, std::ptr::null::<libc::siginfo_t>(), 0);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn signal_namespace(_ns_inode: u64, _sig: Signal) {}

/// The PID namespace inode of `pid`, from the `pid:[4026531836]` link.
#[cfg(target_os = "linux")]
pub fn ns_of(pid: i32) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()?;
    let s = link.to_str()?;
    s.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// No PID namespaces elsewhere: no process is in one.
#[cfg(not(target_os = "linux"))]
pub fn ns_of(_pid: i32) -> Option<u64> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn reads_own_namespace() {
        assert!(super::ns_of(std::process::id() as i32).is_some());
    }
}
