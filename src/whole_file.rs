//! Reading a small file whole in two `read`s: its bytes, then the end.
//!
//! `std::fs::read` and `read_to_string` size their buffer from the file's size (a `statx` first),
//! and a /proc file says 0: std then reads 32 bytes to probe, and doubles its buffer from there, so
//! a /proc/PID/status (about 1.4 KiB) took 8 `read`s and a `statx`, /proc/self/mountinfo 8 and a
//! `statx`, /proc/PID/stat 5 and a `statx` (perf44, `strace -f` of warm runs: 181 `read`s of such
//! files on the host a workspace-write run, most of them the waits' /proc polling). Here the buffer
//! starts at `capacity`, and grows by doubling if the file is longer: the same bytes, read in order
//! to the end of the file, whatever the file said its size was.

use std::io::Read;
use std::path::Path;

/// What a buffer for one /proc/PID file starts at: `status` is about 1.4 KiB, `stat` and `children`
/// a few hundred bytes at most.
pub const PROC_FILE: usize = 4096;

/// What a buffer for a mount table starts at (a host's is a few KiB; grown past it).
pub const MOUNT_TABLE: usize = 16 << 10;

/// The bytes of the file at `path` (opened as `std::fs::read` opens it: read-only, close-on-exec).
pub fn read(path: impl AsRef<Path>, capacity: usize) -> std::io::Result<Vec<u8>> {
    read_from(std::fs::File::open(path)?, capacity)
}

/// `read`, as UTF-8 text: an error of kind `InvalidData` where it is not (as `std::fs::read_to_string`).
pub fn read_to_string(path: impl AsRef<Path>, capacity: usize) -> std::io::Result<String> {
    String::from_utf8(read(path, capacity)?).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Everything `from` gives until its end (a read of 0), into a buffer of `capacity` bytes first.
pub fn read_from(mut from: impl Read, capacity: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; capacity.max(64)];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match from.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What std reads, whether the file is shorter or longer than the first buffer, and for a
    /// /proc file that says it is empty.
    #[test]
    fn reads_what_std_reads() {
        let dir = tempfile::tempdir().unwrap();
        for size in [0, 1, 63, 64, 65, 4096, 10_000] {
            let p = dir.path().join(format!("f{size}"));
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            std::fs::write(&p, &bytes).unwrap();
            assert_eq!(read(&p, 64).unwrap(), bytes, "size {size}");
            assert_eq!(read(&p, PROC_FILE).unwrap(), bytes, "size {size}");
        }
        let status = read_to_string("/proc/self/status", 64).unwrap();
        assert!(status.starts_with("Name:") && status.ends_with('\n') && status.contains("\nVmHWM:"), "{status}");
        let mounts = read("/proc/self/mountinfo", 64).unwrap();
        assert!(mounts.ends_with(b"\n") && mounts.len() > 64);
        assert_eq!(read_to_string(dir.path().join("missing"), 64).unwrap_err().kind(), std::io::ErrorKind::NotFound);
        std::fs::write(dir.path().join("latin1"), b"caf\xe9").unwrap();
        assert_eq!(read_to_string(dir.path().join("latin1"), 64).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
    }

    /// A `take` bound holds: no more than it allows is read.
    #[test]
    fn a_bound_reader_stops_at_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 1000]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        assert_eq!(read_from(f.take(300), 64).unwrap(), vec![7u8; 300]);
    }
}
