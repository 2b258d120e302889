//! The Landlock mode's supervisor: without a PID namespace nothing ends the command's tree for us,
//! so the helper stays as its parent. It is a child subreaper, so every orphan of the tree
//! (`setsid` daemons, double forks) is re-parented to it rather than to init; it stays outside the
//! Landlock domain, so the command cannot ptrace it (and, from ABI 6, not signal it either), and it
//! is not dumpable.
//!
//! It forwards the signals the runner sends it (the runner's `signal_tree`) to every descendant,
//! and it ends the whole tree (`tree_end`: freeze, SIGKILL, reap) when the command ends, or when
//! the runner closes the control descriptor (force kill, or the runner died). Then it exits as the
//! command did. The run's resource limits are the command's process's alone: the supervisor keeps
//! the ones it was started with, so no limit asked for the command can stop it ending the tree.

use sandspawn_helper::protocol::LandlockSteps;
use sandspawn_helper::report::Failure;
use sandspawn_helper::rlimit::Rlimit;

use crate::{confine, descendants, tree_end};

/// Signals forwarded to the tree (SIGCHLD is ours; SIGKILL/SIGSTOP cannot be caught).
const FORWARD: [i32; 9] = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2, libc::SIGALRM, libc::SIGTERM, libc::SIGWINCH, libc::SIGCONT];

/// Fork the command (its `rlimits` set, confined by `confine`, then `exec`), supervise it, exit as
/// it did. The supervisor keeps the limits it was started with.
pub fn run(ll: &LandlockSteps, report_fd: Option<i32>, rlimits: &[Rlimit], command: &[std::ffi::OsString]) -> ! {
    let prepared = match confine::prepare(ll) {
        Ok(p) => p,
        Err(f) => crate::fail(report_fd, f),
    };
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        let e = crate::last_errno();
        crate::fail(report_fd, Failure { stage: sandspawn_helper::report::Stage::Setup, errno: e, message: format!("prctl(PR_SET_CHILD_SUBREAPER) failed: {}", crate::describe(e)) });
    }
    // Not dumpable: no process of the user's may trace it or read its memory (Landlock already
    // refuses that to the command, and the filter refuses it the ptrace family; this is a third
    // wall). The command's exec makes the command dumpable again, as usual.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        let e = crate::last_errno();
        crate::fail(report_fd, Failure { stage: sandspawn_helper::report::Stage::Setup, errno: e, message: format!("prctl(PR_SET_DUMPABLE) failed: {}", crate::describe(e)) });
    }
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        for s in FORWARD {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
    }
    let sfd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
    if let Some(fd) = ll.control_fd {
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    if sfd < 0 {
        let e = crate::last_errno();
        crate::fail(report_fd, Failure { stage: sandspawn_helper::report::Stage::Setup, errno: e, message: format!("signalfd failed: {}", crate::describe(e)) });
    }
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = crate::last_errno();
        crate::fail(report_fd, Failure { stage: sandspawn_helper::report::Stage::Setup, errno: e, message: format!("fork failed: {}", crate::describe(e)) });
    }
    if pid == 0 {
        // The command's process: the signal mask survives exec, so restore the one we were given.
        unsafe { libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        if let Some(fd) = ll.control_fd {
            unsafe { libc::close(fd) };
        }
        // The OOM killer's first victim with no memory in its cores (`oom_first`, `core_memory`); before the limits
        // (`openFiles` may leave no descriptor for the write) and Landlock, which then keeps it.
        // This process is undumpable as the supervisor made itself, so its /proc files are root's,
        // which a user other than root may not write: dumpable for the one write (the exec makes
        // it dumpable anyway), then as it was.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
        let preferred = crate::oom_first::prefer_this_process().and_then(|()| crate::core_memory::keep_memory_out());
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        if let Err(f) = preferred {
            crate::fail(report_fd, f);
        }
        // The run's limits, here and not in the supervisor: a few descriptors (`openFiles`) left it
        // none for the /proc reads and pidfds that end the tree, and `cpuTime` (SIGXCPU),
        // `memory` and `fileSize` would bound what must outlast the command's tree.
        if let Err(f) = crate::set_rlimits(rlimits) {
            crate::fail(report_fd, f);
        }
        if let Err(f) = confine::apply(&prepared) {
            crate::fail(report_fd, f);
        }
        let failure = crate::exec(command);
        crate::fail(report_fd, failure);
    }
    confine::close(&prepared);
    if let Some(fd) = report_fd {
        unsafe { libc::close(fd) };
    }
    let mut reaper = tree_end::Reaper { command: pid, status: None };
    supervise(&mut reaper, sfd, ll.control_fd);
    tree_end::end(&mut reaper, sfd);
    // `end` reaps every child, the command included.
    exit_like(reaper.status.unwrap_or(libc::SIGKILL))
}

/// Wait for the command, forwarding signals, until it exits or the runner closes the control
/// descriptor (force kill, or the runner died).
fn supervise(reaper: &mut tree_end::Reaper, sfd: i32, control: Option<i32>) {
    let me = unsafe { libc::getpid() };
    loop {
        let mut fds = [libc::pollfd { fd: sfd, events: libc::POLLIN, revents: 0 }, libc::pollfd { fd: control.unwrap_or(-1), events: libc::POLLIN, revents: 0 }];
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            continue; // EINTR
        }
        if fds[1].revents != 0 {
            let mut buf = [0u8; 64];
            if unsafe { libc::read(fds[1].fd, buf.as_mut_ptr().cast(), buf.len()) } <= 0 {
                return;
            }
        }
        if fds[0].revents != 0 {
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            while unsafe { libc::read(sfd, (&mut info as *mut libc::signalfd_siginfo).cast(), size) } == size as isize {
                let sig = info.ssi_signo as i32;
                if sig != libc::SIGCHLD {
                    descendants::walk(me, |d| {
                        if !d.is_dead() {
                            sandspawn_helper::pid_signal::signal(d, sig);
                        }
                    });
                }
            }
        }
        // Reap whatever has exited: the command, and orphans re-parented to us (hoppers' spent
        // generations among them, which must not pile up as zombies).
        reaper.reap_exited();
        if reaper.status.is_some() {
            return;
        }
    }
}

/// Exit with the command's status: its exit code, or the signal that ended it (raised on
/// ourselves with the default action, and no core file of ours).
fn exit_like(status: i32) -> ! {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        unsafe {
            let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
        }
        std::process::exit(128 + sig);
    }
    std::process::exit(libc::WEXITSTATUS(status))
}
