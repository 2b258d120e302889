//! A process's state where its leader's `/proc/<pid>/stat` line says zombie: a process whose main
//! thread ended (`pthread_exit`) while another runs is alive, the command's code running in it,
//! and the Landlock supervisor must stop and kill it like any other (a pidfd or `kill` of its pid
//! signals the whole process, its live threads included); only its threads' lines say so
//! (`proc_stat::group_state`). Found by an attacker's review: taken for gone, such a process was
//! never stopped nor killed, and the supervisor, which cannot reap it while a thread lives, waited
//! for it forever. Kept in the library so that a unit test can reach it.

use crate::proc_stat::{self, Entry};

/// `d` with its process's state: its threads' where its leader's line says zombie.
pub fn with_threads_state(mut d: Entry) -> Entry {
    if d.state == b'Z' {
        d.state = proc_stat::group_state(d.state, thread_states(d.pid));
    }
    d
}

/// The states of `pid`'s threads but its leader, from `/proc/<pid>/task/<tid>/stat`, read as asked
/// (`group_state` stops at the first running one).
fn thread_states(pid: i32) -> impl Iterator<Item = u8> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
    tasks.filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()).filter(move |&tid| tid != pid).filter_map(move |tid| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
        proc_stat::parse(tid, &stat).map(|e| e.state)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A child of this test whose main thread has ended while another thread sleeps (30 s at
    /// most), SIGKILLed and reaped when dropped.
    struct LeaderGone(i32);

    impl LeaderGone {
        fn start() -> LeaderGone {
            extern "C" fn sleeper(_: *mut libc::c_void) -> *mut libc::c_void {
                for _ in 0..30 {
                    // SAFETY: a plain sleep.
                    unsafe { libc::sleep(1) };
                }
                std::ptr::null_mut()
            }
            // SAFETY: the child only starts a thread, then ends its own (SYS_exit ends the calling
            // thread alone); nothing of the test runs in it.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                unsafe {
                    let mut t: libc::pthread_t = std::mem::zeroed();
                    if libc::pthread_create(&mut t, std::ptr::null(), sleeper, std::ptr::null_mut()) != 0 {
                        libc::_exit(1);
                    }
                    libc::syscall(libc::SYS_exit, 0);
                    libc::_exit(0);
                }
            }
            LeaderGone(pid)
        }

        /// Its leader's own line.
        fn leader(&self) -> Option<Entry> {
            proc_stat::parse(self.0, &std::fs::read_to_string(format!("/proc/{}/stat", self.0)).ok()?)
        }

        /// Its entry as the supervisor's walks see it, once `until` holds for it (2 s at most).
        fn seen(&self, until: impl Fn(&Entry) -> bool) -> Option<Entry> {
            let began = Instant::now();
            loop {
                let d = self.leader().map(with_threads_state);
                if d.as_ref().is_some_and(&until) || began.elapsed() > Duration::from_secs(2) {
                    return d;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    impl Drop for LeaderGone {
        fn drop(&mut self) {
            // SAFETY: our own unreaped child.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
                libc::waitpid(self.0, std::ptr::null_mut(), 0);
            }
        }
    }

    #[test]
    fn a_process_whose_main_thread_ended_is_alive_stopped_and_killed_as_its_threads_are() {
        let _forks = crate::forks(false);
        let child = LeaderGone::start();
        let began = Instant::now();
        while !child.leader().is_some_and(|e| e.state == b'Z') && began.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(child.leader().map(|e| e.state as char), Some('Z'), "the leader did not end its thread");
        let d = child.seen(|d| !d.is_dead()).unwrap();
        assert!(!d.is_dead(), "a process whose thread still runs was taken for gone");
        crate::pid_signal::signal(&d, libc::SIGSTOP);
        let stopped = child.seen(|d| d.is_stopped()).unwrap();
        assert!(stopped.is_stopped(), "its threads were not stopped: {:?}", stopped.state as char);
        crate::pid_signal::signal(&stopped, libc::SIGKILL);
        let (began, mut status, mut reaped) = (Instant::now(), 0, 0);
        while reaped == 0 && began.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
            // SAFETY: our own child, not waited for elsewhere.
            reaped = unsafe { libc::waitpid(child.0, &mut status, libc::WNOHANG) };
        }
        assert_eq!(reaped, child.0, "not killed: still not reapable after 5 s");
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL);
        std::mem::forget(child);
    }
}
