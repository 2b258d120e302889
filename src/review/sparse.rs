//! Where a file's data lies, skipping its holes (`SEEK_DATA`, `SEEK_HOLE`). A run can make a file
//! of any size at no cost (`truncate -s 16T`): the host must not pay for its holes, neither in time
//! when comparing it with the host's file (`changes::same_content`) nor on disk when applying it
//! (`host_fs::Dir::write_file`). A filesystem that does not tell holes apart says its whole file
//! is data, which is what it costs there.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Where `whence` (`SEEK_DATA` or `SEEK_HOLE`) finds the next offset at or after `from`; `None`
/// when there is no data at or after it.
fn seek(f: &File, from: u64, whence: libc::c_int) -> std::io::Result<Option<u64>> {
    // SAFETY: our descriptor; only its offset moves (readers and writers here give theirs).
    match unsafe { libc::lseek(f.as_raw_fd(), from as libc::off_t, whence) } {
        n if n >= 0 => Ok(Some(n as u64)),
        _ => match std::io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::ENXIO) => Ok(None),
            e => Err(e),
        },
    }
}

/// The first stretch of data at or after `from` and below `len`, as `start..end`; `None` when
/// only holes remain. Where the filesystem does not know holes (`EINVAL`), the rest is data.
pub fn next_data(f: &File, from: u64, len: u64) -> std::io::Result<Option<std::ops::Range<u64>>> {
    if from >= len {
        return Ok(None);
    }
    let start = match seek(f, from, libc::SEEK_DATA) {
        Ok(Some(start)) if start < len => start,
        Ok(_) => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(Some(from..len)),
        Err(e) => return Err(e),
    };
    // Every file ends in a hole (its end), so `None` here means it shrank meanwhile: data to `len`.
    let end = seek(f, start, libc::SEEK_HOLE)?.map_or(len, |end| end.min(len));
    Ok(Some(start..end.max(start + 1)))
}

/// The next stretch at or after `from` where `a` or `b` holds data: from where the first of them
/// begins, to where that one ends (`a`'s when both begin there). Between the stretches both files
/// are holes, so equal; inside one, a file's hole reads as the zeros it stands for.
pub fn next_data_of_either(a: &File, b: &File, from: u64, len: u64) -> std::io::Result<Option<std::ops::Range<u64>>> {
    Ok(match (next_data(a, from, len)?, next_data(b, from, len)?) {
        (Some(x), Some(y)) if y.start < x.start => Some(y),
        (Some(x), _) => Some(x),
        (None, y) => y,
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileExt;

    #[test]
    fn the_stretches_of_data_are_found_and_the_holes_skipped() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let len = 1u64 << 30;
        let fa = std::fs::File::create(&a).unwrap();
        fa.set_len(len).unwrap();
        fa.write_all_at(b"a", 256 << 20).unwrap();
        let fb = std::fs::File::create(&b).unwrap();
        fb.set_len(len).unwrap();
        fb.write_all_at(b"b", 512 << 20).unwrap();
        let first = super::next_data_of_either(&fa, &fb, 0, len).unwrap().unwrap();
        assert!(first.start <= 256 << 20 && first.end > 256 << 20 && first.end <= 257 << 20, "{first:?}");
        let second = super::next_data_of_either(&fa, &fb, first.end, len).unwrap().unwrap();
        assert!(second.start <= 512 << 20 && second.end > 512 << 20 && second.end <= 513 << 20, "{second:?}");
        assert_eq!(super::next_data_of_either(&fa, &fb, second.end, len).unwrap(), None);
    }
}
