//! Finding and checking `sandspawn-helper`, the program every bwrap plan runs inside the sandbox in
//! place of the command (see the `sandspawn-helper` crate). It ships next to the addon's `.node`
//! file; a missing, non-executable or mismatched helper makes the sandbox unavailable rather than
//! letting a command run without what the helper enforces.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sandspawn_helper::protocol::{MARKER, PROTOCOL_TAG, VERSION};
use sandspawn_helper::report::os_words;

use crate::error::{Result, SandboxError};

pub const FILE_NAME: &str = "sandspawn-helper";

/// The file this code was loaded from: the `.node` addon (or, under `cargo test`, the test binary).
fn loaded_from() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = loaded_from as fn() -> Option<PathBuf> as *const libc::c_void;
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}

/// Where the helper must be: beside the addon.
pub fn expected_path() -> PathBuf {
    let dir = loaded_from().and_then(|p| p.parent().map(Path::to_path_buf)).unwrap_or_default();
    // `cargo test` binaries live in target/<profile>/deps; `cargo build -p sandspawn-helper` puts
    // the helper in target/<profile>.
    #[cfg(test)]
    if dir.ends_with("deps") && !dir.join(FILE_NAME).exists() {
        return dir.parent().map(|p| p.join(FILE_NAME)).unwrap_or_default();
    }
    dir.join(FILE_NAME)
}

/// Why the helper cannot be used, in words, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub reason: String,
    pub fix: String,
}

impl Problem {
    pub fn into_error(self) -> SandboxError {
        let fix = self.fix.clone();
        SandboxError::unavailable(self.reason, self.fix).with_ladder(Vec::new(), vec![fix])
    }
}

fn checked() -> &'static std::result::Result<PathBuf, Problem> {
    static CHECKED: OnceLock<std::result::Result<PathBuf, Problem>> = OnceLock::new();
    CHECKED.get_or_init(|| check(&expected_path()))
}

/// The checked, canonical helper path, or the `ERR_SANDBOX_UNAVAILABLE` error that says what is
/// wrong with it. Checked once per process.
pub fn require() -> Result<&'static Path> {
    checked().as_ref().map(PathBuf::as_path).map_err(|p| p.clone().into_error())
}

/// What is wrong with the helper, if anything (for `sandboxCapabilities()` and `doctor`).
pub fn problem() -> Option<&'static Problem> {
    checked().as_ref().err()
}

const FIX_REINSTALL: &str = "reinstall sandspawn (`npm install sandspawn`) so that its platform package is complete; \
     in a source checkout run `npm run build`, which builds the helper next to the addon";

/// Exists, is a regular executable file, and carries this addon's protocol and version. The version
/// is read from the file (see `protocol::MARKER`), not by running it: nothing from the install
/// directory is executed on the host.
pub fn check(path: &Path) -> std::result::Result<PathBuf, Problem> {
    let unavailable = |problem: String, fix: &str| Problem {
        reason: format!("sandspawn's in-sandbox helper {} {problem}", path.display()),
        fix: fix.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(|e| unavailable(format!("cannot be used: {}", os_words(&e)), FIX_REINSTALL))?;
    if !meta.is_file() {
        return Err(unavailable("is not a regular file".into(), FIX_REINSTALL));
    }
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| unavailable("has a NUL byte in its path".into(), FIX_REINSTALL))?;
    if unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } != 0 {
        use std::os::unix::fs::PermissionsExt;
        let fix = format!("make it executable (`chmod 755 {}`), or {FIX_REINSTALL}", path.display());
        return Err(unavailable(format!("is not executable (mode {:04o})", meta.permissions().mode() & 0o7777), &fix));
    }
    let bytes = std::fs::read(path).map_err(|e| unavailable(format!("cannot be read: {}", os_words(&e)), FIX_REINSTALL))?;
    if find(&bytes, MARKER.as_bytes()).is_none() {
        let found = find(&bytes, b"\0sandspawn-helper:protocol=").map(|at| {
            let rest = &bytes[at + 1..];
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len()).min(80);
            String::from_utf8_lossy(&rest[..end]).into_owned()
        });
        let problem = match found {
            Some(other) => format!("belongs to another sandspawn version ({other}; this addon needs protocol {PROTOCOL_TAG}, version {VERSION})"),
            None => "is not a sandspawn helper".into(),
        };
        return Err(unavailable(problem, FIX_REINSTALL));
    }
    std::fs::canonicalize(path).map_err(|e| unavailable(format!("cannot be resolved: {}", os_words(&e)), FIX_REINSTALL))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use std::os::unix::fs::PermissionsExt;

    fn write(dir: &Path, bytes: &[u8], mode: u32) -> PathBuf {
        let p = dir.join(FILE_NAME);
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn accepts_the_built_helper() {
        let p = require().expect("run `cargo build -p sandspawn-helper` before `cargo test`");
        assert!(p.is_absolute() && p.ends_with(FILE_NAME));
    }

    #[test]
    fn refuses_missing_unexecutable_and_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let check = |p: &Path| super::check(p).map_err(Problem::into_error);
        let missing = check(&dir.path().join(FILE_NAME)).unwrap_err();
        assert_eq!(missing.code, ErrorCode::Unavailable);
        assert!(missing.message.contains("No such file or directory") && !missing.message.contains("os error"), "{}", missing.message);

        let good = format!("\x7fELF...{MARKER}...");
        let p = write(dir.path(), good.as_bytes(), 0o644);
        let e = check(&p).unwrap_err();
        assert!(e.message.contains("is not executable (mode 0644)") && e.message.contains("chmod 755"), "{}", e.message);

        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check(&p).unwrap(), std::fs::canonicalize(&p).unwrap());

        write(dir.path(), b"\0sandspawn-helper:protocol=v0:version=0.0.1\0", 0o755);
        let e = check(&p).unwrap_err();
        assert!(e.message.contains("another sandspawn version (sandspawn-helper:protocol=v0:version=0.0.1"), "{}", e.message);

        write(dir.path(), b"#!/bin/sh\nexec \"$@\"\n", 0o755);
        assert!(check(&p).unwrap_err().message.contains("is not a sandspawn helper"));
    }
}
