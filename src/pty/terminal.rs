//! The terminal pair of one run: the master stays with the runner (read into the capture, written
//! by `write()`, resized by `resize()`); the slave becomes the command's stdin, stdout and stderr.
//! Both are opened close-on-exec, so no other child of the host inherits them, and the runner
//! closes its copy of the slave as soon as the command has it (else the master never reports the
//! end of the output: node-pty's lydell#13).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;

use super::PtySize;
use crate::error::{ErrorCode, SandboxError};

pub struct Terminal {
    pub master: OwnedFd,
    pub slave: OwnedFd,
    /// The slave's path (`/dev/pts/N`), for a child that must open it itself to make it its
    /// controlling terminal (the unsandboxed path on Linux).
    pub slave_path: CString,
}

/// `ptsname` returns a static buffer; `ptsname_r` is not on every platform we build for.
static PTSNAME: Mutex<()> = Mutex::new(());

fn os_error(what: &str) -> SandboxError {
    let e = io::Error::last_os_error();
    let limit = match e.raw_os_error() {
        // The system's pty limit is reached (Linux kernel.pty.max, macOS kern.tty.ptmx_max).
        Some(libc::ENOSPC) | Some(libc::EAGAIN) | Some(libc::EMFILE) | Some(libc::ENFILE) => {
            " (the system's or this process's limit of terminals or descriptors is reached: Linux `sysctl kernel.pty.max`, macOS `sysctl kern.tty.ptmx_max`)"
        }
        _ => "",
    };
    SandboxError::new(ErrorCode::SetupFailed, format!("allocating a pseudo-terminal failed: {what}: {e}{limit}"))
}

fn set_cloexec(fd: &OwnedFd) {
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
}

impl Terminal {
    /// Open a new pair of the given size.
    pub fn open(size: PtySize) -> Result<Terminal, SandboxError> {
        #[cfg(target_os = "linux")]
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        #[cfg(not(target_os = "linux"))]
        let flags = libc::O_RDWR | libc::O_NOCTTY;
        let raw = unsafe { libc::posix_openpt(flags) };
        if raw < 0 {
            return Err(os_error("posix_openpt"));
        }
        let master = unsafe { OwnedFd::from_raw_fd(raw) };
        set_cloexec(&master);
        if unsafe { libc::grantpt(raw) } != 0 {
            return Err(os_error("grantpt"));
        }
        if unsafe { libc::unlockpt(raw) } != 0 {
            return Err(os_error("unlockpt"));
        }
        let slave_path = {
            let _guard = PTSNAME.lock().unwrap_or_else(|p| p.into_inner());
            let name = unsafe { libc::ptsname(raw) };
            if name.is_null() {
                return Err(os_error("ptsname"));
            }
            unsafe { CStr::from_ptr(name) }.to_owned()
        };
        resize(&master, size).map_err(|e| SandboxError::new(ErrorCode::SetupFailed, format!("allocating a pseudo-terminal failed: setting its size: {e}")))?;
        let raw_slave = unsafe { libc::open(slave_path.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
        if raw_slave < 0 {
            return Err(os_error("opening the terminal's slave side"));
        }
        let slave = unsafe { OwnedFd::from_raw_fd(raw_slave) };
        set_cloexec(&slave);
        set_utf8(&slave);
        Ok(Terminal { master, slave, slave_path })
    }
}

/// Line editing (backspace in cooked mode) counts UTF-8 characters, not bytes, as node-pty sets up.
fn set_utf8(slave: &OwnedFd) {
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(slave.as_raw_fd(), &mut t) == 0 {
            t.c_iflag |= libc::IUTF8;
            libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
        }
    }
}

/// Set the window size; the kernel sends SIGWINCH to the terminal's foreground process group.
pub fn resize(master: &impl AsRawFd, size: PtySize) -> io::Result<()> {
    let ws = libc::winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ as _, &ws) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_a_pair_of_the_asked_size() {
        let t = Terminal::open(PtySize { cols: 100, rows: 40 }).unwrap();
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::ioctl(t.slave.as_raw_fd(), libc::TIOCGWINSZ as _, &mut ws) }, 0);
        assert_eq!((ws.ws_col, ws.ws_row), (100, 40));
        assert!(t.slave_path.to_str().unwrap().starts_with("/dev/"));
        for fd in [&t.master, &t.slave] {
            let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
            assert_ne!(flags & libc::FD_CLOEXEC, 0, "both ends are close-on-exec");
        }
        resize(&t.master, PtySize { cols: 20, rows: 10 }).unwrap();
        assert_eq!(unsafe { libc::ioctl(t.slave.as_raw_fd(), libc::TIOCGWINSZ as _, &mut ws) }, 0);
        assert_eq!((ws.ws_col, ws.ws_row), (20, 10));
    }

    #[test]
    fn bytes_written_to_the_slave_come_out_of_the_master() {
        let t = Terminal::open(PtySize { cols: 80, rows: 24 }).unwrap();
        assert_eq!(unsafe { libc::write(t.slave.as_raw_fd(), b"hi\n".as_ptr().cast(), 3) }, 3);
        let mut buf = [0u8; 16];
        let n = unsafe { libc::read(t.master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(&buf[..n as usize], b"hi\r\n", "ONLCR: the terminal turns \\n into \\r\\n");
    }
}
