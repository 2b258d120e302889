//! Discarding what a terminal holds typed but not yet read. The CLI asks its questions (run again
//! without the sandbox, allow a host, apply a change set) on the user's terminal while, or right
//! after, the command ran there. Keys typed meanwhile (an answer to a question the *command*
//! printed, whose stdin was /dev/null) wait in the terminal's input queue, and the next read takes
//! them: they would answer a question nobody had seen yet. Node has no `tcflush`; this is it.

use std::io;
use std::os::fd::RawFd;

/// Drop every byte the terminal on `fd` received but nobody read yet (typed ahead, and a line
/// being edited in canonical mode). An error (`ENOTTY`: not a terminal) changes nothing.
pub fn discard(fd: RawFd) -> io::Result<()> {
    // SAFETY: tcflush only reads the descriptor number; a bad one fails with EBADF.
    if unsafe { libc::tcflush(fd, libc::TCIFLUSH) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn drops_what_was_typed_and_keeps_what_comes_after() {
        let t = super::super::Terminal::open(super::super::PtySize { cols: 80, rows: 24 }).unwrap();
        let (mut master, mut slave) = (std::fs::File::from(t.master), std::fs::File::from(t.slave));
        master.write_all(b"y\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        discard(slave.as_raw_fd()).unwrap();
        master.write_all(b"n\n").unwrap();
        let mut buf = [0u8; 16];
        let n = slave.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"n\n");
    }

    #[test]
    fn not_a_terminal_is_an_error() {
        let f = tempfile::tempfile().unwrap();
        assert!(discard(f.as_raw_fd()).is_err());
    }
}
