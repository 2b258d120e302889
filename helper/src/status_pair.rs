//! Host side, in front of bwrap, for plans another program runs (`Steps::status_pair`): what lets
//! the helper inside tell that bwrap is still there (`bwrap_alive`), made after the spawner's
//! fork, so the spawner never holds any of it.
//!
//! The runner's runs give bwrap a status pipe whose read end the host keeps and the helper gets a
//! copy of. A plan has nobody outside to read: a pipe's read end held only inside the sandbox
//! would be gone (the helper closes it before exec) when bwrap's monitor writes the exit code at
//! the end, and bwrap would die of SIGPIPE instead of exiting as the command did (the first
//! attempt). A connected `AF_UNIX` datagram pair has no such death: a write to a peer that is gone
//! fails with ECONNREFUSED (bwrap ignores that failure of its last write), and a zero-length send
//! the other way fails the same when the status end is closed everywhere: that is the witness.
//! bwrap's monitor keeps `--json-status-fd` until the sandbox's init ends; its sandbox child
//! closes it right after the clone; the exec of bwrap is this very process, so nobody else ever
//! has it.
//!
//! The parent-death signal armed first narrows the other window, a spawner that dies before bwrap
//! arms its own (after its clone): bwrap would live on under init and the witness would say alive.
//! It stays armed across the exec of bwrap (not across a set-user-ID one, which re-arms its own).

use crate::report::{Failure, Stage};

/// SIGKILL when the spawner (the thread that forked us) ends, as bwrap's `--die-with-parent` does
/// after its clone, from now on. A spawner already gone before this is not seen (no pid of it is known).
pub fn arm_parent_death() -> Result<(), Failure> {
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(failed("arming the parent-death signal"));
    }
    Ok(())
}

/// The datagram pair, one end at `status`, the other at `alive`, both inherited across exec.
/// Made after every descriptor the other host-side steps open at fixed numbers (below ours).
pub fn open_at(status: i32, alive: i32) -> Result<(), Failure> {
    let mut ends = [-1; 2];
    // SAFETY: a fresh pair of our own into a two-element array.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0, ends.as_mut_ptr()) } != 0 {
        return Err(failed("making bwrap's status socket pair"));
    }
    // Both lifted above the targets first, and the originals closed (one may sit at a target), so
    // placing one end never closes the other.
    let above = status.max(alive) + 1;
    // SAFETY: duplicating and closing our own descriptors; dup2 leaves the copy inheritable.
    let lifted = ends.map(|end| unsafe { libc::fcntl(end, libc::F_DUPFD_CLOEXEC, above) });
    ends.iter().for_each(|&end| unsafe {
        libc::close(end);
    });
    let mut placed = Ok(());
    for (end, target) in lifted.into_iter().zip([status, alive]) {
        if placed.is_ok() && (end < 0 || unsafe { libc::dup2(end, target) } != target) {
            placed = Err(failed(&format!("placing bwrap's status socket pair at descriptors {status} and {alive}")));
        }
    }
    lifted.iter().filter(|&&end| end >= 0).for_each(|&end| unsafe {
        libc::close(end);
    });
    placed
}

fn failed(what: &str) -> Failure {
    let e = std::io::Error::last_os_error();
    Failure { stage: Stage::Setup, errno: e.raw_os_error().unwrap_or(0), message: format!("{what} failed: {e}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pair lands at the numbers asked, inheritable, and is the witness `bwrap_alive` reads:
    /// alive while the status end is open, gone once it is closed; the status end's write then
    /// fails without a signal (bwrap's last write of the exit code).
    #[test]
    fn the_pair_is_placed_inheritable_and_tells_the_status_end_closed() {
        let _alone = crate::forks(true);
        // Numbers no other test uses, above the usual ones.
        let (status, alive) = (930, 931);
        open_at(status, alive).unwrap();
        // SAFETY: our own descriptors.
        unsafe { libc::close(status) };
        unsafe { libc::close(alive) };
        // The pair made where the targets are (the lowest free numbers, as in a plan's helper,
        // where 6 and 7 were free): each end must stay where it was made, open (the first version
        // closed both).
        let mut free = [-1; 2];
        // SAFETY: a probe pair of our own, closed at once: its numbers are the next pair's.
        assert_eq!(unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, free.as_mut_ptr()) }, 0);
        free.iter().for_each(|&fd| unsafe {
            libc::close(fd);
        });
        open_at(free[0], free[1]).unwrap();
        for fd in free {
            // SAFETY: reading, then closing, our own descriptor.
            assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, 0, "descriptor {fd} made in place is still open");
            unsafe { libc::close(fd) };
        }
        open_at(status, alive).unwrap();
        for fd in [status, alive] {
            // SAFETY: reading our own descriptor's flags.
            assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, 0, "descriptor {fd} is inheritable");
        }
        assert!(!crate::bwrap_alive::writer_gone(alive));
        // SAFETY: our own descriptors.
        unsafe { libc::close(status) };
        assert!(crate::bwrap_alive::writer_gone(alive));
        unsafe { libc::close(alive) };
        open_at(status, alive).unwrap();
        unsafe { libc::close(alive) };
        // SAFETY: a write of our own buffer to our own descriptor, SIGPIPE as the process has it.
        let n = unsafe { libc::write(status, b"x".as_ptr().cast(), 1) };
        assert_eq!((n, std::io::Error::last_os_error().raw_os_error()), (-1, Some(libc::ECONNREFUSED)));
        unsafe { libc::close(status) };
    }
}
