//! The last check before the command runs under bwrap: bwrap itself is still there, at a moment
//! its pid 1 (the sandbox's init) already dies with it.
//!
//! bwrap's init arms its parent-death signal only in `do_init`, after it forked this process, and
//! never checks that bwrap is still there. A host killed by a signal during the setup kills bwrap
//! (`--die-with-parent`), and an init not yet past that point ran on with the command, re-parented
//! to init. The runner gives the helper a read end of bwrap's `--json-status-fd` pipe
//! (`Steps::bwrap_alive`), whose write end only bwrap's monitor holds: the host closes its own
//! right after the spawn, bwrap's sandbox child closes it right after the clone (so neither the
//! init nor this process has it), and the monitor keeps it until the init has ended (it writes the
//! exit code there). So, once the init sleeps in its wait for children (past its
//! PR_SET_PDEATHSIG), a pipe with no writer means bwrap died and nothing would end the init; a
//! pipe with one means bwrap is alive and its death from now on kills the init and the whole
//! namespace with it. The host's own descriptors are no witness: they close only after the
//! host's memory is torn down, later than bwrap's parent-death signal.
//!
//! A second witness for the window this one misses: bwrap arms its own parent-death signal only
//! after its clone, so a host killed before that (bwrap still parsing its arguments; wider under
//! load: 2 of 30 killed hosts' runs survived once with a build loading the machine) leaves bwrap
//! alive under init, its pipe still written. By the time the helper runs, such a host has usually
//! closed its descriptors (it died before bwrap's whole setup): the report pipe, whose read end
//! only the host holds until the run ends, then has no reader, and the command is refused too.
//! Still open: a host whose teardown outlasts bwrap's setup (README Limits).
//!
//! A plan another program runs has no host pipe: the helper in front of bwrap makes the status
//! descriptor itself, an `AF_UNIX` datagram pair (`status_pair`), whose closed end shows not as a
//! hangup but as a refused zero-length send.

use crate::report::{Failure, Stage};

/// How long the init may take to reach its wait after this process was forked (it runs a few
/// system calls in between; this bounds a machine stalled for that long).
const INIT_WAIT_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

/// Fail when bwrap is gone, or the host is (its end of the report pipe closed): the command must
/// not start, nothing would end it. Close `read`.
pub fn check(read: i32, report: Option<i32>) -> Result<(), Failure> {
    let waited = init_waits();
    let gone = waited.is_ok() && (writer_gone(read) || report.is_some_and(no_reader));
    // SAFETY: closing our own inherited descriptor; the command must not get it.
    unsafe { libc::close(read) };
    waited?;
    if gone {
        return Err(Failure {
            stage: Stage::Setup,
            errno: 0,
            message: "bwrap or its host ended while the sandbox was set up: the command was not started".into(),
        });
    }
    Ok(())
}

/// Wait until bwrap's init (our parent, pid 1 of the sandbox's namespace) sleeps: in `do_init`'s
/// wait for children, after its parent-death signal is armed. Before that it only runs (or waits
/// uninterruptibly in the kernel): it makes no sleeping call between its fork of us and the wait.
fn init_waits() -> Result<(), Failure> {
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != 1 {
        // No init of bwrap's (the command is bwrap's own child, its parent-death signal armed before exec).
        return Ok(());
    }
    let deadline = std::time::Instant::now() + INIT_WAIT_BOUND;
    let mut tries = 0u32;
    loop {
        let stat = std::fs::read_to_string("/proc/1/stat").map_err(|e| Failure {
            stage: Stage::Setup,
            errno: e.raw_os_error().unwrap_or(0),
            message: format!("reading the state of bwrap's pid 1 failed: {e}"),
        })?;
        if state_of(&stat) == Some('S') {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(Failure { stage: Stage::Setup, errno: 0, message: format!("bwrap's pid 1 did not reach its wait within {} s", INIT_WAIT_BOUND.as_secs()) });
        }
        tries += 1;
        if tries < 8 {
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        } else {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

/// The state letter of a `/proc/<pid>/stat` line (after the command name's closing parenthesis).
fn state_of(stat: &str) -> Option<char> {
    crate::proc_stat::fields(stat)?.next()?.chars().next()
}

/// Whether bwrap's status end is closed everywhere, seen from our end `read`: the runner's pipe
/// (see `no_writer`) or a plan's datagram pair (`status_pair`), where a zero-length send to a peer
/// that is gone fails (ECONNREFUSED; ENOTCONN once that was seen). Any other failure counts as gone
/// (fail closed) but a full send buffer, which only a live peer has. Two system calls.
pub fn writer_gone(read: i32) -> bool {
    // SAFETY: a zeroed stat is valid; fstat of our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(read, &mut st) } != 0 {
        return true;
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return no_writer(read);
    }
    // SAFETY: an empty send on our own descriptor, never blocking, never raising SIGPIPE.
    let sent = unsafe { libc::send(read, std::ptr::null(), 0, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
    sent < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EAGAIN)
}

/// Whether the pipe's write end is closed everywhere (POLLHUP on the read end).
fn no_writer(read: i32) -> bool {
    let mut p = libc::pollfd { fd: read, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, no wait.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// Whether a pipe's read end is closed everywhere (POLLERR on the write end `write`).
fn no_reader(write: i32) -> bool {
    let mut p = libc::pollfd { fd: write, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one valid pollfd, no wait.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & (libc::POLLERR | libc::POLLNVAL) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis() {
        assert_eq!(state_of("1 (bwrap) S 0 1 1 0"), Some('S'));
        assert_eq!(state_of("1 (a) R (b)) R 0"), Some('R'));
        assert_eq!(state_of("1 (bwrap"), None);
    }

    #[test]
    fn a_pipe_without_writer_is_seen_one_with_a_writer_is_not() {
        let _alone = crate::forks(true);
        let mut fds = [0; 2];
        // SAFETY: a fresh pipe of our own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert!(!no_writer(fds[0]));
        // SAFETY: our own descriptors.
        unsafe { libc::close(fds[1]) };
        assert!(no_writer(fds[0]));
        unsafe { libc::close(fds[0]) };
    }

    #[test]
    fn a_pipe_without_reader_is_seen_one_with_a_reader_is_not() {
        let _alone = crate::forks(true);
        let mut fds = [0; 2];
        // SAFETY: a fresh pipe of our own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert!(!no_reader(fds[1]));
        // SAFETY: our own descriptors.
        unsafe { libc::close(fds[0]) };
        assert!(no_reader(fds[1]));
        unsafe { libc::close(fds[1]) };
    }
}
