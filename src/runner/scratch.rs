//! The Landlock mode's directory of one run: made in the host's temporary directory before the plan
//! is built (the plan grants it whole, see `plan::landlock`), removed when the run is over. It is the
//! command's `TMPDIR` when the shared temporary directory takes no new entries, and npm's cache.

use std::ffi::CString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, Result, SandboxError};

pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh directory `sandspawn-run-XXXXXX` (mode 0700) in `parent`.
    pub fn create(parent: &Path) -> Result<Scratch> {
        let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        let template = CString::new(parent.join("sandspawn-run-XXXXXX").into_os_string().into_vec())
            .map_err(|_| SandboxError::new(ErrorCode::SetupFailed, "the temporary directory's path holds a NUL byte"))?;
        let mut buf = template.into_bytes_with_nul();
        // SAFETY: a writable, NUL-terminated template that mkdtemp fills in place.
        if unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) }.is_null() {
            let e = std::io::Error::last_os_error();
            return Err(SandboxError::new(
                ErrorCode::SetupFailed,
                format!("cannot make the run's own directory in {} (the Landlock mode's TMPDIR): {}", parent.display(), sandspawn_helper::report::os_words(&e)),
            ));
        }
        buf.pop();
        Ok(Scratch(PathBuf::from(std::ffi::OsString::from_vec(buf))))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    /// Everything the run left there goes; `remove_dir_all` follows no symlink (a link the command
    /// put in place of the directory is removed, not what it points to).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_private_and_removed_with_what_it_holds() {
        let t = tempfile::tempdir().unwrap();
        let s = Scratch::create(t.path()).unwrap();
        let p = s.path().to_path_buf();
        assert!(p.starts_with(t.path().canonicalize().unwrap()) && p.file_name().unwrap().to_str().unwrap().starts_with("sandspawn-run-"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(t.path().join("keep"), "").unwrap();
        std::os::unix::fs::symlink(t.path(), p.join("d/link")).unwrap();
        drop(s);
        assert!(!p.exists() && t.path().join("keep").exists(), "the link's target is left alone");
        assert!(Scratch::create(Path::new("/nonexistent/dir")).is_err());
    }
}
