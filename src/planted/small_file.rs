//! Reading, on the host, a small file a run may have written: a git directory's `config`,
//! `config.worktree` and `commondir`, a `gitdir:` file. Found by an attacker's review: these were
//! read with `read_to_string`, and a run made the `config` of a repository it created a FIFO (the
//! host's thread blocked in `open` forever: the run never settled, its timeout was ignored), a 3 GB
//! sparse file or a link to `/dev/zero` (read whole into the host's memory).
//!
//! A symlink is followed, as git follows it: the file git would read is the one judged. What it
//! leads to is `stat`ed first, so that nothing but a regular file is ever opened (opening a device
//! can do something); the open is non-blocking all the same (a FIFO put there between the two
//! steps returns at once), what was opened is checked again with `fstat`, and at most `MAX_BYTES`
//! (and one more, to tell a longer file) are read, whatever the file said its size was.
//!
//! Nor is a file on a kernel filesystem read (found by an attacker's review): a run planted
//! `pyproject.toml -> /sys/kernel/tracing/trace_pipe`, a regular file of size 0, and the host's
//! next setup read it, consuming the host's ftrace buffer (`/proc/kmsg` does so to the kernel's
//! log; debugfs files run drivers' code). Its filesystem is asked (`statfs`) before the open and
//! again of what was opened; no git configuration lives there.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most the host reads of one such file: git writes a few KiB; the review's reader of a
/// change set's configuration has the same bound.
pub const MAX_BYTES: u64 = 1 << 20;

/// What the host made of one file.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// Its text (bytes that are not UTF-8 replaced: a stray byte must not hide the rest).
    Text(String),
    /// Nothing git could read there: absent, a directory, or unreadable to this user.
    Absent,
    /// There, and git on the host would read it (and wait forever on a FIFO), but the host did
    /// not: `why` says what it is.
    Unjudged { why: String },
}

/// The file at `path` (its symlinks followed), as `Read` says.
pub fn read(path: &Path) -> Read {
    read_up_to(path, MAX_BYTES)
}

/// `read`, with another bound than `MAX_BYTES`: a git configuration, which git reads whatever its
/// size (`global_git` bounds what it reads of one in all).
pub fn read_up_to(path: &Path, max: u64) -> Read {
    let Ok(meta) = std::fs::metadata(path) else { return Read::Absent };
    if let Some(why) = unreadable(&meta, max).or_else(|| kernel_fs(path)) {
        return why;
    }
    // O_NONBLOCK: a FIFO swapped in after the stat opens at once (and is refused below); O_NOCTTY:
    // a terminal swapped in does not become the host's. std adds O_CLOEXEC.
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path);
    let Ok(file) = opened else { return Read::Absent };
    match file.metadata() {
        Ok(meta) => match unreadable(&meta, max).or_else(|| kernel_fs_of(&file)) {
            Some(why) => why,
            None => bounded(file, max),
        },
        Err(_) => Read::Absent,
    }
}

/// Why the host does not read a file of this kind and size, or `None` for a regular file within
/// the bound.
fn unreadable(meta: &Metadata, max: u64) -> Option<Read> {
    let t = meta.file_type();
    let what = if t.is_file() {
        if meta.len() <= max {
            return None;
        }
        format!("larger than {}: {} bytes", size(max), meta.len())
    } else if t.is_dir() {
        return Some(Read::Absent);
    } else if t.is_fifo() {
        "a FIFO, on which git on the host would wait forever".into()
    } else if t.is_char_device() {
        "a character device".into()
    } else if t.is_block_device() {
        "a block device".into()
    } else if t.is_socket() {
        "a socket".into()
    } else {
        "not a regular file".into()
    };
    Some(Read::Unjudged { why: what })
}

/// Why the host does not read `path` when it lies on a kernel filesystem (its symlinks followed,
/// as the open follows them).
#[cfg(target_os = "linux")]
fn kernel_fs(path: &Path) -> Option<Read> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statfs is valid for statfs to fill; a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // f_type's integer type differs between libcs; the magic numbers are 32-bit.
    let kind = (unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0).then(|| sandspawn_helper::kernel_fs::named(st.f_type as u32)).flatten();
    kind.map(on_kernel_fs)
}

/// As `kernel_fs`, of what was opened (a link swapped in between).
#[cfg(target_os = "linux")]
fn kernel_fs_of(file: &File) -> Option<Read> {
    use std::os::fd::AsRawFd as _;
    sandspawn_helper::kernel_fs::of_fd(file.as_raw_fd()).map(on_kernel_fs)
}

#[cfg(target_os = "linux")]
fn on_kernel_fs(kind: &str) -> Read {
    Read::Unjudged { why: format!("on {kind}, a kernel filesystem, whose reads can have effects on the host (a trace_pipe read consumes its trace buffer)") }
}

/// macOS: no kernel filesystem holds regular files a path can lead to.
#[cfg(not(target_os = "linux"))]
fn kernel_fs(_: &Path) -> Option<Read> {
    None
}

#[cfg(not(target_os = "linux"))]
fn kernel_fs_of(_: &File) -> Option<Read> {
    None
}

/// `max` bytes said as people say them: `1 MiB`, `300 bytes`.
fn size(max: u64) -> String {
    match max >= 1 << 20 && max % (1 << 20) == 0 {
        true => format!("{} MiB", max >> 20),
        false => format!("{max} bytes"),
    }
}

/// At most `max` bytes of an opened regular file: one that grew past them since its `fstat` is
/// not judged either.
fn bounded(file: File, max: u64) -> Read {
    let mut bytes = Vec::new();
    if file.take(max.saturating_add(1)).read_to_end(&mut bytes).is_err() {
        return Read::Absent;
    }
    if bytes.len() as u64 > max {
        return Read::Unjudged { why: format!("larger than {}", size(max)) };
    }
    Read::Text(String::from_utf8_lossy(&bytes).into_owned())
}

/// Its text, if the host read it.
pub fn text(path: &Path) -> Option<String> {
    match read(path) {
        Read::Text(t) => Some(t),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unjudged(r: Read) -> String {
        match r {
            Read::Unjudged { why } => why,
            other => panic!("judged: {other:?}"),
        }
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("config");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let at = fifo.clone();
        std::thread::spawn(move || tx.send(read(&at)).unwrap());
        let r = rx.recv_timeout(std::time::Duration::from_secs(5)).expect("read returns, not blocked in open");
        assert!(unjudged(r).starts_with("a FIFO"));
        // Through a link too.
        std::os::unix::fs::symlink(&fifo, t.path().join("link")).unwrap();
        assert!(unjudged(read(&t.path().join("link"))).starts_with("a FIFO"));
    }

    /// Found by an attacker's review: a run planted `pyproject.toml -> /sys/kernel/tracing/trace_pipe`
    /// (a regular file of size 0) and the host's next setup read it, consuming the host's trace
    /// buffer. A file on a kernel filesystem is not read; `/proc/self/status` stands in for it here
    /// (reading it has no effect).
    #[test]
    #[cfg(target_os = "linux")]
    fn a_file_on_a_kernel_filesystem_is_refused_unread() {
        let t = tempfile::tempdir().unwrap();
        let link = t.path().join("pyproject.toml");
        std::os::unix::fs::symlink("/proc/self/status", &link).unwrap();
        assert!(unjudged(read(&link)).starts_with("on proc, a kernel filesystem"));
        assert_eq!(text(&link), None);
        let sysfs = Path::new("/sys/kernel/uevent_seqnum");
        if sysfs.exists() {
            assert!(unjudged(read(sysfs)).starts_with("on sysfs"), "sysfs too");
        }
    }

    #[test]
    fn an_oversized_file_is_refused_unread() {
        let t = tempfile::tempdir().unwrap();
        let big = t.path().join("config");
        // Sparse: 3 GB said, nothing written.
        File::create(&big).unwrap().set_len(3 << 30).unwrap();
        let started = std::time::Instant::now();
        assert!(unjudged(read(&big)).starts_with("larger than 1 MiB"));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        File::create(&big).unwrap().set_len(MAX_BYTES + 1).unwrap();
        assert!(unjudged(read(&big)).starts_with("larger than 1 MiB"));
    }

    #[test]
    fn a_link_to_dev_zero_is_refused_unopened() {
        let t = tempfile::tempdir().unwrap();
        let link = t.path().join("config");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert_eq!(unjudged(read(&link)), "a character device");
    }

    #[test]
    fn a_regular_file_is_read_through_a_link_and_whatever_its_bytes() {
        let t = tempfile::tempdir().unwrap();
        let config = t.path().join("config");
        std::fs::write(&config, b"[core]\n\tfsmonitor = x\n# \xff\n").unwrap();
        assert_eq!(read(&config), Read::Text("[core]\n\tfsmonitor = x\n# \u{fffd}\n".into()));
        std::os::unix::fs::symlink(&config, t.path().join("link")).unwrap();
        assert_eq!(text(&t.path().join("link")).as_deref(), Some("[core]\n\tfsmonitor = x\n# \u{fffd}\n"));
        File::create(&config).unwrap().set_len(MAX_BYTES).unwrap();
        assert!(matches!(read(&config), Read::Text(t) if t.len() as u64 == MAX_BYTES), "the bound itself is read");
        assert_eq!(read(&t.path().join("missing")), Read::Absent);
        assert_eq!(read(t.path()), Read::Absent, "a directory");
    }
}
