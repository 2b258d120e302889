//! The helper's arguments sent through a pipe instead of argv (the runner's bwrap runs). The runner
//! starts bwrap before its walk of the workspace is done: bwrap's own arguments do not depend on
//! the walk, only the helper's (the carve-outs of nested repositories) do, and bwrap spends ~3 ms
//! making its namespaces meanwhile. The helper is started as `sandspawn-helper --args-from=N
//! [--report-fd=R]` and blocks on descriptor N before anything else: it reads one framed list
//! (`encode`), closes N, and goes on as if that list were its argv. End of file before the whole
//! list (the host closed it, or died), or a malformed list, ends the helper before any step: the
//! command never runs (fail closed).
//!
//! Frame: the byte length of the body as 8 bytes little-endian, then the body: each argument
//! followed by a NUL byte. Arguments are bytes (paths need not be UTF-8: `protocol::path_word`).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// The flag that names the descriptor (the helper's first and only argument, but `--report-fd`).
pub const ARGS_FROM: &str = "--args-from=";

/// The most bytes a list may take: argv itself is bounded by the kernel (ARG_MAX, ~2 MiB with the
/// default stack limit); a pipe is not, so a length beyond this is refused as bad data.
pub const MAX_BODY: u64 = 64 * 1024 * 1024;

/// The framed list of `args`. An argument with a NUL byte cannot be an argument (exec refuses it
/// too): None.
pub fn encode<S: AsRef<[u8]>>(args: &[S]) -> Option<Vec<u8>> {
    let body_len: usize = args.iter().map(|a| a.as_ref().len() + 1).sum();
    let mut out = Vec::with_capacity(8 + body_len);
    out.extend_from_slice(&(body_len as u64).to_le_bytes());
    for a in args {
        if a.as_ref().contains(&0) {
            return None;
        }
        out.extend_from_slice(a.as_ref());
        out.push(0);
    }
    Some(out)
}

/// The body's length from the frame's first 8 bytes, if it is one a list may have.
pub fn body_len(head: [u8; 8]) -> Result<usize, String> {
    match u64::from_le_bytes(head) {
        0 => Err("the helper's arguments were empty".into()),
        n if n > MAX_BODY => Err(format!("the helper's arguments were {n} bytes long, more than {MAX_BODY}")),
        n => Ok(n as usize),
    }
}

/// The arguments of a body: every one ends with a NUL byte.
pub fn decode(body: &[u8]) -> Result<Vec<OsString>, String> {
    let Some(rest) = body.strip_suffix(&[0]) else {
        return Err("the helper's arguments did not end with a NUL byte".into());
    };
    Ok(rest.split(|b| *b == 0).map(|a| OsString::from_vec(a.to_vec())).collect())
}

/// `sandspawn-helper --args-from=N [--report-fd=R]`: `(N, R)`. None when argv is another form.
pub fn from_argv(args: &[OsString]) -> Option<Result<(i32, Option<i32>), String>> {
    let first = args.first()?.as_bytes().strip_prefix(ARGS_FROM.as_bytes())?;
    let fd = |text: &[u8]| std::str::from_utf8(text).ok()?.parse::<i32>().ok().filter(|fd| *fd > 2);
    let bad = || Err(format!("malformed arguments {:?}; expected {ARGS_FROM}N [--report-fd=N]", args));
    let Some(from) = fd(first) else { return Some(bad()) };
    let report = match &args[1..] {
        [] => None,
        [r] => match r.as_bytes().strip_prefix(b"--report-fd=").and_then(fd) {
            Some(r) => Some(r),
            None => return Some(bad()),
        },
        _ => return Some(bad()),
    };
    Some(Ok((from, report)))
}

/// Read exactly `buf.len()` bytes from `fd`, retrying on EINTR. End of file first is an error.
fn read_exact(fd: i32, buf: &mut [u8]) -> Result<(), String> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: writing into the unfilled part of `buf`.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        match n {
            0 => return Err(format!("the host closed the helper's arguments after {got} of {} bytes (the run was abandoned)", buf.len())),
            n if n < 0 => {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(format!("reading the helper's arguments failed: {}", crate::report::os_words(&e)));
            }
            n => got += n as usize,
        }
    }
    Ok(())
}

/// Block on `fd` until the whole list came, then close it (the command must not inherit it,
/// whatever happened). Any failure means the command must not run.
pub fn read_from(fd: i32) -> Result<Vec<OsString>, String> {
    let read = || {
        let mut head = [0u8; 8];
        read_exact(fd, &mut head)?;
        let mut body = vec![0u8; body_len(head)?];
        read_exact(fd, &mut body)?;
        decode(&body)
    };
    let args = read();
    // SAFETY: closing our own descriptor; it is not used again.
    unsafe { libc::close(fd) };
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_list_comes_back_as_sent_whatever_its_bytes() {
        let args: Vec<Vec<u8>> = vec![b"v1".to_vec(), b"--read-only".to_vec(), b"/ws/\xff\xfe".to_vec(), Vec::new(), b"--".to_vec(), b"true".to_vec()];
        let framed = encode(&args).unwrap();
        let len = body_len(framed[..8].try_into().unwrap()).unwrap();
        assert_eq!(len, framed.len() - 8);
        let back = decode(&framed[8..]).unwrap();
        assert_eq!(back.iter().map(|a| a.as_bytes().to_vec()).collect::<Vec<_>>(), args);
    }

    #[test]
    fn an_argument_with_a_nul_byte_is_not_encoded() {
        assert!(encode(&[b"a\0b".to_vec()]).is_none());
    }

    #[test]
    fn an_empty_an_oversized_or_an_unterminated_list_is_refused() {
        assert!(body_len(0u64.to_le_bytes()).is_err());
        assert!(body_len((MAX_BODY + 1).to_le_bytes()).is_err());
        assert!(decode(b"abc").is_err());
    }

    #[test]
    fn only_the_pipe_form_of_argv_is_taken_as_such() {
        assert_eq!(from_argv(&os(&["--args-from=6"])), Some(Ok((6, None))));
        assert_eq!(from_argv(&os(&["--args-from=6", "--report-fd=4"])), Some(Ok((6, Some(4)))));
        assert!(matches!(from_argv(&os(&["--args-from=1"])), Some(Err(_))), "stdio is not a pipe of ours");
        assert!(matches!(from_argv(&os(&["--args-from=6", "--", "true"])), Some(Err(_))), "no command on argv");
        assert!(matches!(from_argv(&os(&["--args-from=6", "--report-fd=x"])), Some(Err(_))));
        assert_eq!(from_argv(&os(&["v1", "--", "true"])), None);
    }

    fn pipe() -> (i32, i32) {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    /// The pipe's inode, or None when `fd` is not open.
    fn inode(fd: i32) -> Option<libc::ino_t> {
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
    }

    /// Whether `fd` no longer names the pipe it named. Not `fcntl(fd) == -1`: the tests run on
    /// parallel threads, and another test's pipe may take the number as soon as it is closed
    /// (a CI run failed so); the freed pipe's inode number is not reused meanwhile.
    fn closed(fd: i32, pipe_inode: libc::ino_t) -> bool {
        inode(fd) != Some(pipe_inode)
    }

    fn write(fd: i32, bytes: &[u8]) {
        assert_eq!(unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) }, bytes.len() as isize);
    }

    #[test]
    fn a_whole_list_is_read_and_the_descriptor_closed() {
        let _alone = crate::forks(true);
        let (r, w) = pipe();
        let ino = inode(r).unwrap();
        write(w, &encode(&["v1", "--", "true"]).unwrap());
        unsafe { libc::close(w) };
        assert_eq!(read_from(r).unwrap(), os(&["v1", "--", "true"]));
        assert!(closed(r, ino));
    }

    /// The host closed its end (it died, or abandoned the run) before or during the list.
    #[test]
    fn end_of_file_before_the_whole_list_is_an_error() {
        let _alone = crate::forks(true);
        let framed = encode(&["v1", "--", "true"]).unwrap();
        for cut in [0, 3, 8, framed.len() - 1] {
            let (r, w) = pipe();
            let ino = inode(r).unwrap();
            write(w, &framed[..cut]);
            unsafe { libc::close(w) };
            let e = read_from(r).unwrap_err();
            assert!(e.contains("closed") || e.contains("empty"), "{cut}: {e}");
            assert!(closed(r, ino), "{cut}");
        }
    }
}
