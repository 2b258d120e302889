//! Folding one run's overlay upper directory into a cache's base layer, as overlayfs would show the
//! two stacked: what the run wrote replaces what the base held, a whiteout (a character device 0:0)
//! removes the entry below it, and an opaque directory (`user.overlay.opaque = y`, the `userxattr`
//! form a user namespace's overlay writes) replaces the whole directory below it.
//!
//! Everything moves by `rename` within one filesystem: nothing is copied, and an entry of the base
//! is replaced in one step. Whiteouts and opaque markers are kept in the base: below it lies the
//! host's own cache, whose entries they must go on hiding. Runs only while no run has the base
//! mounted (`layers`: under the cache's exclusive lock), so no overlay sees it change.

#[cfg(target_os = "linux")]
use std::ffi::CString;
use std::io;
#[cfg(target_os = "linux")]
use std::os::unix::ffi::OsStrExt;
#[cfg(all(test, target_os = "linux"))]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

#[cfg(target_os = "linux")]
const OPAQUE: &std::ffi::CStr = c"user.overlay.opaque";

/// A character device 0:0: how overlayfs records a deletion in an upper directory (moved into the
/// base like any entry: see the module comment).
#[cfg(all(test, target_os = "linux"))]
fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// The directory carries the opaque marker: the layers below it are hidden there.
#[cfg(target_os = "linux")]
fn is_opaque(dir: &Path) -> bool {
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else { return false };
    let mut value = [0u8; 2];
    // SAFETY: a valid C string and a buffer of the length passed.
    let n = unsafe { libc::lgetxattr(c.as_ptr(), OPAQUE.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
    n == 1 && value[0] == b'y'
}

/// Opaque markers are overlayfs's, which only Linux has; a store elsewhere holds none.
#[cfg(not(target_os = "linux"))]
fn is_opaque(_dir: &Path) -> bool {
    false
}

/// Remove `p` whatever it is (a tree is made writable first: tools leave read-only ones).
fn remove_any(p: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => super::store::remove_tree(p),
        Ok(_) => std::fs::remove_file(p),
    }
}

/// Move everything of `layer` into `base` (both directories of one filesystem); `layer` is left
/// empty of entries (its directories may remain, for the caller to remove).
pub fn merge_into(layer: &Path, base: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(layer)? {
        let entry = entry?;
        let from = entry.path();
        let to = base.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&from)?;
        let below = std::fs::symlink_metadata(&to).ok();
        if meta.is_dir() && !is_opaque(&from) && below.as_ref().is_some_and(|b| b.is_dir()) {
            // Both directories: their entries merge, the layer's winning.
            merge_into(&from, &to)?;
            continue;
        }
        // A file, a link, a whiteout, an opaque directory, or a directory over a non-directory:
        // it replaces what was below, in one rename where it can.
        if below.is_some() && (meta.is_dir() || below.as_ref().is_some_and(|b| b.is_dir())) {
            remove_any(&to)?;
        }
        std::fs::rename(&from, &to)?;
    }
    Ok(())
}

// The layers' tests make whiteouts and opaque directories as overlayfs does: Linux only.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn whiteout(p: &Path) -> bool {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string; creating a 0:0 character device (root, or a user namespace's
        // overlay) — skipped where not permitted.
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, 0) == 0 }
    }

    fn opaque(dir: &Path) -> bool {
        let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid C strings and a one-byte value.
        unsafe { libc::lsetxattr(c.as_ptr(), OPAQUE.as_ptr(), b"y".as_ptr().cast(), 1, 0) == 0 }
    }

    #[test]
    fn a_layer_folds_into_the_base_as_the_overlay_showed_it() {
        let t = tempfile::tempdir().unwrap();
        let (base, layer) = (t.path().join("base"), t.path().join("layer"));
        for d in ["base/keep", "base/replaced", "base/gone-dir/sub", "base/opaque-dir", "layer/keep", "layer/new", "layer/opaque-dir"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        std::fs::write(base.join("keep/old"), "old").unwrap();
        std::fs::write(base.join("replaced/f"), "base").unwrap();
        std::fs::write(base.join("opaque-dir/hidden"), "x").unwrap();
        std::fs::write(base.join("file-to-dir"), "f").unwrap();
        std::fs::write(layer.join("keep/added"), "added").unwrap();
        std::fs::write(layer.join("new/n"), "n").unwrap();
        std::fs::write(layer.join("replaced"), "now a file").unwrap();
        std::fs::create_dir(layer.join("file-to-dir")).unwrap();
        std::fs::write(layer.join("opaque-dir/shown"), "y").unwrap();
        std::os::unix::fs::symlink("keep/old", layer.join("link")).unwrap();
        let can_whiteout = whiteout(&layer.join("gone-dir"));
        let can_opaque = opaque(&layer.join("opaque-dir"));
        merge_into(&layer, &base).unwrap();
        let read = |p: &str| std::fs::read_to_string(base.join(p)).unwrap();
        assert_eq!((read("keep/old"), read("keep/added"), read("new/n"), read("replaced")), ("old".into(), "added".into(), "n".into(), "now a file".into()));
        assert!(base.join("file-to-dir").is_dir());
        assert_eq!(std::fs::read_link(base.join("link")).unwrap(), Path::new("keep/old"));
        if can_whiteout {
            let m = std::fs::symlink_metadata(base.join("gone-dir")).unwrap();
            assert!(is_whiteout(&m), "the whiteout replaces the directory, and stays (it hides the host's)");
        }
        if can_opaque {
            assert!(!base.join("opaque-dir/hidden").exists() && base.join("opaque-dir/shown").exists());
            assert!(is_opaque(&base.join("opaque-dir")), "the marker stays");
        }
        assert_eq!(std::fs::read_dir(&layer).unwrap().filter(|e| !e.as_ref().unwrap().path().is_dir()).count(), 0, "nothing but directories left in the layer");
    }
}
