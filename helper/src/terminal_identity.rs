//! Telling terminals apart, for the helper's `stdio_terminals` (here so that a unit test can reach
//! it): whether a descriptor is a pty's master, and whether two descriptors are files of one
//! terminal. A terminal's device number names it only within one devpts instance, and a file of
//! `/dev/tty` tells nothing else of the terminal behind it.

/// Whether `fd` is a pty's master (only a master tells its terminal's index).
pub fn is_master(fd: i32) -> bool {
    let mut index: libc::c_uint = 0;
    // SAFETY: TIOCGPTN writes one unsigned int; any other descriptor refuses it.
    unsafe { libc::ioctl(fd, libc::TIOCGPTN, &mut index) == 0 }
}

/// Whether `a` and `b` are files of one terminal: its exclusive flag (TIOCEXCL: the terminal's, not
/// a file's) turned over through `a` shows through `b`. Put back at once; meanwhile (microseconds)
/// an open of the terminal fails with EBUSY if it was not exclusive, succeeds if it was.
pub fn same_terminal(a: i32, b: i32) -> bool {
    let exclusive = |fd: i32| {
        let mut on: libc::c_int = 0;
        // SAFETY: TIOCGEXCL writes one int.
        (unsafe { libc::ioctl(fd, libc::TIOCGEXCL, &mut on) } == 0).then_some(on != 0)
    };
    let (Some(was), Some(seen)) = (exclusive(a), exclusive(b)) else { return false };
    let (turn, back) = if was { (libc::TIOCNXCL, libc::TIOCEXCL) } else { (libc::TIOCEXCL, libc::TIOCNXCL) };
    // SAFETY: TIOCEXCL and TIOCNXCL take no argument.
    if was != seen || unsafe { libc::ioctl(a, turn) } != 0 {
        return false;
    }
    let turned = exclusive(b);
    // SAFETY: as above.
    unsafe { libc::ioctl(a, back) };
    turned == Some(!was)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A new pty: (master, slave).
    fn pty() -> (OwnedFd, OwnedFd) {
        let (mut m, mut s) = (-1, -1);
        // SAFETY: two ints to fill; no name, termios or size.
        assert_eq!(unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) }, 0);
        // SAFETY: descriptors openpty just returned, owned from here.
        unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
    }

    fn exclusive(fd: &OwnedFd) -> bool {
        let mut on: libc::c_int = 0;
        // SAFETY: TIOCGEXCL writes one int.
        assert_eq!(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGEXCL, &mut on) }, 0);
        on != 0
    }

    /// What tells the terminal behind `/dev/tty` from another of the same number: two files of
    /// one terminal are told apart from files of two, and the terminal's flag is as it was.
    #[test]
    fn one_terminal_is_told_from_another_and_left_as_it_was() {
        let ((m1, s1), (_m2, s2)) = (pty(), pty());
        let again = std::fs::OpenOptions::new().read(true).write(true).open(format!("/proc/self/fd/{}", s1.as_raw_fd())).unwrap();
        assert!(same_terminal(s1.as_raw_fd(), again.as_raw_fd()), "the same terminal, opened twice");
        assert!(!same_terminal(s1.as_raw_fd(), s2.as_raw_fd()), "two terminals");
        assert!(!exclusive(&s1) && !exclusive(&s2));
        // SAFETY: TIOCEXCL takes no argument.
        assert_eq!(unsafe { libc::ioctl(s1.as_raw_fd(), libc::TIOCEXCL) }, 0);
        assert!(same_terminal(s1.as_raw_fd(), again.as_raw_fd()), "an exclusive one too");
        assert!(exclusive(&s1), "and it stays exclusive");
        assert!(!same_terminal(s1.as_raw_fd(), std::fs::File::open("/dev/null").unwrap().as_raw_fd()), "not a terminal");
        assert!(is_master(m1.as_raw_fd()) && !is_master(s1.as_raw_fd()));
    }
}
