//! Running a sandbox tool briefly (`bwrap --version`, a probe): its output captured up to a bound,
//! and the whole process group killed at a deadline, so a wedged tool never wedges a caller.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most of each stream kept.
const MAX_CAPTURE: usize = 64 * 1024;

/// What a short helper process did.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    /// Exit code; `None` when killed by a signal (or by us on timeout).
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

fn drain(r: &mut Option<impl Read>, buf: &mut Vec<u8>) {
    let Some(reader) = r.as_mut() else { return };
    let mut chunk = [0u8; 4096];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => {
                *r = None;
                return;
            }
            Ok(n) => {
                if buf.len() < MAX_CAPTURE {
                    let take = n.min(MAX_CAPTURE - buf.len());
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return, // WouldBlock (or a real error): try again later
        }
    }
}

/// Run `program args...` with a timeout, capturing stdout and stderr (each up to 64 KiB).
pub fn run_with_timeout(program: &Path, args: &[&str], timeout: Duration) -> std::io::Result<RunOutput> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LC_ALL", "C")
        .env("LANG", "C")
        .env_remove("LANGUAGE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // ETXTBSY: the binary was just written (an upgrade in progress, or a test's fake whose write
    // descriptor a concurrently forked process still holds until its exec). Retry briefly.
    let mut attempt = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 10 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(5 * attempt));
            }
            other => break other?,
        }
    };
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    if let Some(o) = &out {
        set_nonblocking(o.as_raw_fd());
    }
    if let Some(e) = &err {
        set_nonblocking(e.as_raw_fd());
    }
    let (mut obuf, mut ebuf) = (Vec::new(), Vec::new());
    let start = Instant::now();
    let mut nap = Duration::from_millis(1);
    let mut timed_out = false;
    let status = loop {
        drain(&mut out, &mut obuf);
        drain(&mut err, &mut ebuf);
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            // The child is not reaped yet, so its pid (= its process group id) cannot be reused.
            // SAFETY: plain kill(2) on the group we created.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            break child.wait()?;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    drain(&mut out, &mut obuf);
    drain(&mut err, &mut ebuf);
    Ok(RunOutput {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout: String::from_utf8_lossy(&obuf).into_owned(),
        stderr: String::from_utf8_lossy(&ebuf).into_owned(),
    })
}
