//! Ending the Landlock supervisor's tree, pid hoppers included (processes that fork and exit at
//! once, each generation re-parented to the supervisor): SIGKILL aimed at a list of pids misses
//! every generation born after the list was made, so the tree is frozen first. Every descendant is
//! sent SIGSTOP, walk after walk, until a walk finds no pid it had not seen and the walk before it
//! found them all stopped (a stopped process forks no more, and by then its last fork's child was
//! in `/proc` for the second walk to meet); then all are SIGKILLed at once. Every exited child is
//! reaped on every walk, so zombies never pile up in the host's pid space.

use std::collections::HashSet;

use crate::descendants;

/// Walks one freeze may take before the tree is killed as it stands: a process in an
/// uninterruptible wait (a `vfork` parent until its stopped child is killed) never shows stopped.
const FREEZE_WALKS: usize = 64;
/// Reads of the supervisor's own children per freeze walk (see `stop_own_children`).
const CHILD_READS: usize = 256;
/// How long to wait for a killed child to exit before walking again (ms).
const REAP_WAIT_MS: i32 = 100;
/// How long `end` keeps freezing and killing before it gives up on what is left: a process in an
/// uninterruptible wait dies only once that wait ends, its SIGKILL pending (it runs none of its own
/// code meanwhile), and one the walks cannot tell alive would hold the supervisor for good. The
/// supervisor exits all the same, and the run settles (found by an attacker's review: a process
/// the walks took for gone kept it, and the run, waiting forever). The runner's own bound after its
/// force kill (`runner::until_exit`) is longer.
const END_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// The supervisor's children as they exit, and the command's wait status once it is reaped.
pub struct Reaper {
    pub command: i32,
    pub status: Option<i32>,
}

impl Reaper {
    /// Reap every child that has exited; false once no child is left.
    pub fn reap_exited(&mut self) -> bool {
        loop {
            let mut st = 0;
            let p = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if p == 0 {
                return true;
            }
            if p < 0 {
                if crate::last_errno() == libc::EINTR {
                    continue;
                }
                return false;
            }
            if p == self.command {
                self.status = Some(st);
            }
        }
    }
}

/// Freeze, SIGKILL and reap the whole tree until the supervisor has no child left, or `END_BOUND`
/// has passed: then say what is left on the run's stderr and return all the same. `sfd` is the
/// signalfd that reports SIGCHLD.
pub fn end(reaper: &mut Reaper, sfd: i32) {
    let me = unsafe { libc::getpid() };
    let began = std::time::Instant::now();
    while reaper.reap_exited() {
        if began.elapsed() > END_BOUND {
            report_left(me);
            return;
        }
        freeze(me, reaper);
        descendants::walk(me, |d| {
            if !d.is_dead() {
                sandspawn_helper::pid_signal::signal(d, libc::SIGKILL);
            }
        });
        wait_for_a_child(sfd);
    }
}

/// Say on the run's stderr (which the result's `stderr` holds) that the tree outlived `END_BOUND`,
/// and which of its processes were still there: re-parented to the supervisor's parent's reaper
/// once it exits, with their SIGKILL pending.
fn report_left(me: i32) {
    let left: Vec<String> = descendants::walk(me, |_| {}).iter().filter(|d| !d.is_dead()).map(|d| d.pid.to_string()).collect();
    let line = format!("sandspawn-helper: the command's processes {} were still there {} s after SIGKILL; they may outlive the run\n", left.join(" "), END_BOUND.as_secs());
    // SAFETY: a write of our own buffer to stderr.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

/// SIGSTOP every descendant until none is left running (or `FREEZE_WALKS` walks have passed).
fn freeze(me: i32, reaper: &mut Reaper) {
    let mut seen = HashSet::new();
    let mut all_stopped = false;
    for _ in 0..FREEZE_WALKS {
        stop_own_children(me, reaper);
        let (mut new, mut running) = (false, false);
        descendants::walk(me, |d| {
            if d.is_dead() {
                return;
            }
            new |= seen.insert(d.pid);
            if !d.is_stopped() {
                running = true;
                sandspawn_helper::pid_signal::signal(d, libc::SIGSTOP);
            }
        });
        if !new && all_stopped {
            return;
        }
        all_stopped = !running;
    }
}

/// SIGSTOP the supervisor's children (a hopper's live generation is one) until a read of them
/// names no new one, reaping the spent generations as they come; a bounded number of reads.
fn stop_own_children(me: i32, reaper: &mut Reaper) {
    let mut last: HashSet<i32> = HashSet::new();
    for _ in 0..CHILD_READS {
        reaper.reap_exited();
        let Some(children) = descendants::own_children(me) else { return };
        for &p in &children {
            unsafe { libc::kill(p, libc::SIGSTOP) };
        }
        if children.iter().all(|p| last.contains(p)) {
            return;
        }
        last = children.into_iter().collect();
    }
}

/// Wait (a little, never forever: a child may have escaped the walk) for SIGCHLD.
fn wait_for_a_child(sfd: i32) {
    let mut fds = [libc::pollfd { fd: sfd, events: libc::POLLIN, revents: 0 }];
    unsafe { libc::poll(fds.as_mut_ptr(), 1, REAP_WAIT_MS) };
    let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    while unsafe { libc::read(sfd, (&mut info as *mut libc::signalfd_siginfo).cast(), size) } == size as isize {}
}
