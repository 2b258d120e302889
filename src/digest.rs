//! SHA-256 of sandspawn's own executables (the bundled bwrap, the helper), remembered per file
//! identity (device, inode, size, mtime, ctime): a run costs an `fstat`, and any rewrite of a file
//! (which changes mtime and ctime) is hashed again before the file is used.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

type Identity = (u64, u64, u64, i64, i64);

fn identity(m: &std::fs::Metadata) -> Identity {
    (m.dev(), m.ino(), m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec(), m.ctime() * 1_000_000_000 + m.ctime_nsec())
}

/// (canonical path, identity) → hex digest of files already hashed.
static HASHED: Mutex<Vec<(PathBuf, Identity, String)>> = Mutex::new(Vec::new());
const HASHED_SLOTS: usize = 8;

fn sha256_hex(file: &mut std::fs::File) -> std::io::Result<String> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The lowercase hex SHA-256 of `file`, open at the canonical path `canon`, described by `meta`
/// (its `fstat`): from the cache when the file is the one hashed before.
pub fn sha256(canon: &Path, file: &mut std::fs::File, meta: &std::fs::Metadata) -> std::io::Result<String> {
    let id = identity(meta);
    let known = {
        let cache = HASHED.lock().unwrap_or_else(|e| e.into_inner());
        cache.iter().find(|(p, i, _)| p == canon && *i == id).map(|(_, _, d)| d.clone())
    };
    if let Some(d) = known {
        return Ok(d);
    }
    let d = sha256_hex(file)?;
    let mut cache = HASHED.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(p, _, _)| p != canon);
    if cache.len() >= HASHED_SLOTS {
        cache.remove(0);
    }
    cache.push((canon.to_path_buf(), id, d.clone()));
    Ok(d)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    /// A rewrite through another name (a hard link) that keeps the inode, the size and (set back)
    /// the mtime still changes the ctime, which no one can set back: the file is hashed again.
    #[test]
    fn a_rewrite_through_a_hard_link_with_the_mtime_set_back_is_hashed_again() {
        let t = tempfile::tempdir().unwrap();
        let (file, other) = (t.path().join("bwrap"), t.path().join("other-name"));
        std::fs::write(&file, "good").unwrap();
        std::fs::hard_link(&file, &other).unwrap();
        let hash = || {
            let mut f = std::fs::File::open(&file).unwrap();
            let m = f.metadata().unwrap();
            (super::sha256(&file, &mut f, &m).unwrap(), m)
        };
        let (good, before) = hash();
        // The coarse clock may stamp a change in the same tick as the last: rewrite until it moves.
        for _ in 0..100_000 {
            std::fs::write(&other, "evil").unwrap();
            let f = std::fs::File::options().write(true).open(&other).unwrap();
            f.set_modified(before.modified().unwrap()).unwrap();
            if std::fs::metadata(&file).unwrap().ctime_nsec() != before.ctime_nsec() || std::fs::metadata(&file).unwrap().ctime() != before.ctime() {
                break;
            }
        }
        let (evil, after) = hash();
        assert_eq!((after.ino(), after.size(), after.mtime(), after.mtime_nsec()), (before.ino(), before.size(), before.mtime(), before.mtime_nsec()));
        assert_ne!(evil, good, "the rewritten file was taken for the one hashed before");
    }
}
