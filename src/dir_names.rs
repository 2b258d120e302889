//! The names in a directory held by its descriptor, read with `getdents64` on that descriptor.
//!
//! `fdopendir` needs a descriptor of its own (it closes it), so the listing went through a
//! duplicate: `fcntl(F_DUPFD_CLOEXEC)`, then glibc's `fstat` and `fcntl(F_GETFL)` checks and its
//! `fcntl(F_SETFD)`, `lseek` (the rewind), two `getdents64`, `close`: 8 system calls for a small
//! directory. The tool caches list `pending`, `discard`, `slots` and each slot's `upper` and `work`
//! around every workspace-write run (perf45, `strace -f` of warm runs: 13.7 listings a run, 1 for
//! read-only), and `remove_tree`'s walks list each directory they empty. Here: the rewind and the
//! reads, on the descriptor itself (3 calls).
//!
//! The same answers as `readdir` over `fdopendir` of a duplicate: the duplicate shared the
//! descriptor's offset, so the offset is left where the old listing left it (at the end); entries
//! with inode 0 are skipped (glibc's readdir does); a directory's `.` and `..` are left out (the
//! callers did); a read that fails ends the listing with what was read before it, as `readdir`
//! returning NULL did (its error was never looked at: a directory removed while listed, `ENOENT`
//! from `getdents64`, lists as empty, as before), except a descriptor of something that is not a
//! directory, which `fdopendir` refused (`ENOTDIR`) and still is.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd};

/// glibc's buffer for a directory stream: one `getdents64` reads a directory of ~1,000 short names.
#[cfg(target_os = "linux")]
const BUFFER: usize = 32 << 10;

/// The names in `dir` (not `.`, `..`), from its first entry whatever was read of it before.
#[cfg(target_os = "linux")]
pub(crate) fn names(dir: &OwnedFd) -> std::io::Result<Vec<CString>> {
    let fd = dir.as_raw_fd();
    // From the first entry: a second listing of one descriptor (a fold resumed on a directory it
    // holds) would read nothing. Its error is not looked at, as rewinddir's was not.
    // SAFETY: a valid descriptor.
    unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
    let mut buf = vec![0u8; BUFFER];
    let mut out = Vec::new();
    let mut first = true;
    loop {
        // SAFETY: a valid descriptor and a buffer of `buf.len()` bytes it writes into.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return if first && e.raw_os_error() == Some(libc::ENOTDIR) { Err(e) } else { Ok(out) };
        }
        if n == 0 {
            return Ok(out);
        }
        first = false;
        entries(&buf[..n as usize], &mut out);
    }
}

/// Elsewhere (macOS): `fdopendir` of a duplicate, as before.
#[cfg(not(target_os = "linux"))]
pub(crate) fn names(dir: &OwnedFd) -> std::io::Result<Vec<CString>> {
    // SAFETY: duplicating our descriptor; fdopendir takes the duplicate, closedir closes it.
    let dup = unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the duplicate just made.
    let stream = unsafe { libc::fdopendir(dup) };
    if stream.is_null() {
        let e = std::io::Error::last_os_error();
        // SAFETY: ours, not taken by fdopendir.
        unsafe { libc::close(dup) };
        return Err(e);
    }
    // SAFETY: a valid stream (the duplicate shares the offset: from the first entry).
    unsafe { libc::rewinddir(stream) };
    let mut out = Vec::new();
    loop {
        // SAFETY: a valid stream; the entry is read before the next call.
        let ent = unsafe { libc::readdir(stream) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated.
        keep(unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) }, &mut out);
    }
    // SAFETY: the stream is ours.
    unsafe { libc::closedir(stream) };
    Ok(out)
}

fn keep(name: &CStr, out: &mut Vec<CString>) {
    if name != c"." && name != c".." {
        out.push(name.to_owned());
    }
}

/// The names in one `getdents64` answer: records of `d_ino` (8 bytes), `d_off` (8), `d_reclen`
/// (2), `d_type` (1), then the name and its NUL, padded to `d_reclen`.
#[cfg(target_os = "linux")]
fn entries(mut data: &[u8], out: &mut Vec<CString>) {
    const NAME: usize = 19;
    while data.len() > NAME {
        let ino = u64::from_ne_bytes(data[..8].try_into().expect("8 bytes"));
        let reclen = u16::from_ne_bytes(data[16..18].try_into().expect("2 bytes")) as usize;
        if reclen <= NAME || reclen > data.len() {
            return; // not a record the kernel writes: nothing past it is read as one
        }
        if ino != 0 {
            if let Ok(name) = CStr::from_bytes_until_nul(&data[NAME..reclen]) {
                keep(name, out);
            }
        }
        data = &data[reclen..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::os::fd::FromRawFd;

    fn open(p: &std::path::Path) -> OwnedFd {
        crate::no_symlinks::open_dir(p).unwrap()
    }

    /// As `std::fs::read_dir` lists it, and again from the first entry on the same descriptor.
    #[test]
    fn lists_as_read_dir_does_and_again_from_the_start() {
        let t = tempfile::tempdir().unwrap();
        // Past one buffer: 3,000 names of 40 bytes (~64-byte records) take several reads.
        for i in 0..3000 {
            std::fs::write(t.path().join(format!("{i:0>40}")), "").unwrap();
        }
        std::fs::create_dir(t.path().join("d")).unwrap();
        std::os::unix::fs::symlink("/nowhere", t.path().join("l")).unwrap();
        std::fs::write(t.path().join("with\nnewline \u{e9}"), "").unwrap();
        let expected: BTreeSet<Vec<u8>> = std::fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name().into_encoded_bytes()).collect();
        let fd = open(t.path());
        let got = |fd: &OwnedFd| names(fd).unwrap().into_iter().map(CString::into_bytes).collect::<BTreeSet<_>>();
        assert_eq!(expected.len(), 3003);
        assert_eq!(got(&fd), expected);
        assert_eq!(got(&fd), expected, "a second listing of one descriptor starts from the first entry");
        assert_eq!(names(&open(&t.path().join("d"))).unwrap(), Vec::<CString>::new(), "an empty directory: no . or ..");
    }

    /// A directory removed while held lists as empty (as readdir said), and a descriptor of a file
    /// is refused as fdopendir refused it.
    #[test]
    fn a_removed_directory_is_empty_and_a_file_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        std::fs::create_dir(&d).unwrap();
        let fd = open(&d);
        std::fs::remove_dir(&d).unwrap();
        assert_eq!(names(&fd).unwrap(), Vec::<CString>::new());
        let f = std::fs::File::create(t.path().join("f")).unwrap();
        // SAFETY: the file's own descriptor, moved into the OwnedFd.
        let f = unsafe { OwnedFd::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(f)) };
        assert_eq!(names(&f).unwrap_err().raw_os_error(), Some(libc::ENOTDIR));
    }
}
