//! Finding and checking `sandspawn-helper`, the program every bwrap plan runs inside the sandbox in
//! place of the command (see the `sandspawn-helper` crate), and on the host in front of bwrap. It
//! ships next to the addon's `.node` file; a missing, non-executable or mismatched helper makes the
//! sandbox unavailable rather than letting a command run without what the helper enforces.
//!
//! Mismatched means any other bytes than the helper this addon was built with: the build bakes its
//! SHA-256 in (`build.rs`, from the file `scripts/build-helper.js` writes), and the file is hashed
//! before its first use and again whenever its identity changes (`digest`). A file that merely
//! carries the helper's marker (a wrapper script with the marker appended) is refused.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sandspawn_helper::protocol::{MARKER, PROTOCOL_TAG, VERSION};
use sandspawn_helper::report::os_words;

use crate::error::{Result, SandboxError};

pub const FILE_NAME: &str = "sandspawn-helper";

/// The file this code was loaded from: the `.node` addon (or, under `cargo test`, the test binary).
pub fn addon_file() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = addon_file as fn() -> Option<PathBuf> as *const libc::c_void;
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}

/// Where the helper must be: beside the addon.
pub fn expected_path() -> PathBuf {
    let dir = addon_file().and_then(|p| p.parent().map(Path::to_path_buf)).unwrap_or_default();
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
    /// The file could not be looked at for lack of memory or open files, which passes: the check
    /// is not kept, and a run is refused as a setup failure to retry, not told to reinstall.
    pub shortage: bool,
}

impl Problem {
    pub fn into_error(self) -> SandboxError {
        if self.shortage {
            return SandboxError::setup_failed_for(self.reason, self.fix);
        }
        let fix = self.fix.clone();
        SandboxError::unavailable(self.reason, self.fix).with_ladder(Vec::new(), vec![fix])
    }
}

/// The helper at `path` `what` (e.g. "cannot be read") because of `e`: a shortage that passes, or
/// a broken install.
fn io_problem(path: &Path, what: &str, e: &std::io::Error) -> Problem {
    let helper = format!("sandspawn's in-sandbox helper {}", path.display());
    match crate::capabilities::diagnose::shortage_error(&format!("{helper} {what}"), e) {
        Some(d) => Problem { reason: d.reason, fix: d.fix, shortage: true },
        None => Problem { reason: format!("{helper} {what}: {}", os_words(e)), fix: FIX_REINSTALL.to_string(), shortage: false },
    }
}

/// The helper's SHA-256, baked in at build time. A test build of this crate runs the helper that
/// `cargo build -p sandspawn-helper` made beside the test binary, which is not the one the digest
/// was taken of; its own tests check the digest rule with explicit digests (`check_with`).
#[cfg(not(test))]
const BUILT_DIGEST: Option<&str> = option_env!("SANDSPAWN_HELPER_SHA256");
#[cfg(test)]
const BUILT_DIGEST: Option<&str> = None;

type Identity = (u64, u64, u64, i64, i64);

/// The last check, with the identity of the file it checked: a run costs a `stat`.
fn checked() -> std::result::Result<PathBuf, Problem> {
    static CHECKED: Mutex<Option<(Option<Identity>, std::result::Result<PathBuf, Problem>)>> = Mutex::new(None);
    let path = expected_path();
    let id = std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino(), m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec(), m.ctime() * 1_000_000_000 + m.ctime_nsec()));
    let mut last = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seen, result)) = last.as_ref() {
        if *seen == id && id.is_some() {
            // The file is unchanged, but a directory above it may have been opened to others since
            // (a few `lstat`s, as `SANDSPAWN_BWRAP`'s every discovery pays).
            return result.clone().and_then(|canon| match loose_problem(&path) {
                Some(p) => Err(p),
                None => Ok(canon),
            });
        }
    }
    let result = check(&path);
    if !matches!(&result, Err(p) if p.shortage) {
        *last = Some((id, result.clone()));
    }
    result
}

/// The checked, canonical helper path, or the `ERR_SANDBOX_UNAVAILABLE` error that says what is
/// wrong with it. Checked again whenever the file changed since the last check.
pub fn require() -> Result<PathBuf> {
    checked().map_err(Problem::into_error)
}

/// What is wrong with the helper, if anything (for `sandboxCapabilities()` and `doctor`).
pub fn problem() -> Option<Problem> {
    checked().err()
}

const FIX_REINSTALL: &str = "reinstall sandspawn (`npm install sandspawn`) so that its platform package is complete; \
     in a source checkout run `npm run build`, which builds the helper next to the addon";

/// Exists, is a regular executable file, carries this addon's protocol and version, and is the
/// very file this addon was built with. The version is read from the file (see
/// `protocol::MARKER`), not by running it: nothing from the install directory is executed on the
/// host before it is verified.
pub fn check(path: &Path) -> std::result::Result<PathBuf, Problem> {
    check_with(path, BUILT_DIGEST, cfg!(not(test)))
}

/// `check`, against `digest` (`required`: a build without one is refused).
pub fn check_with(path: &Path, digest: Option<&str>, required: bool) -> std::result::Result<PathBuf, Problem> {
    let unavailable = |problem: String, fix: &str| Problem {
        reason: format!("sandspawn's in-sandbox helper {} {problem}", path.display()),
        fix: fix.to_string(),
        shortage: false,
    };
    let meta = std::fs::metadata(path).map_err(|e| io_problem(path, "cannot be used", &e))?;
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
    // Checked by its bytes below, executed by its path later: nobody else may be able to swap it
    // (and what another user controls is refused whatever its bytes are now).
    if let Some(problem) = loose_problem(path) {
        return Err(problem);
    }
    let bytes = std::fs::read(path).map_err(|e| io_problem(path, "cannot be read", &e))?;
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
    let canon = std::fs::canonicalize(path).map_err(|e| io_problem(path, "cannot be resolved", &e))?;
    match digest {
        Some(expected) => {
            let mut file = std::fs::File::open(&canon).map_err(|e| io_problem(path, "cannot be read", &e))?;
            let meta = file.metadata().map_err(|e| io_problem(path, "cannot be read", &e))?;
            let actual = crate::digest::sha256(&canon, &mut file, &meta).map_err(|e| io_problem(path, "cannot be read", &e))?;
            if !actual.eq_ignore_ascii_case(expected) {
                return Err(unavailable(
                    format!("was modified or replaced: its SHA-256 is {actual}, but this sandspawn was built with {expected}"),
                    FIX_REINSTALL,
                ));
            }
        }
        None if required => {
            return Err(unavailable(
                "cannot be verified: this build of sandspawn does not know its helper's digest (it was built without scripts/build-helper.js)".into(),
                "rebuild with `npm run build`, which builds the helper first and bakes its digest into the addon",
            ))
        }
        None => {}
    }
    Ok(canon)
}

/// Why another user could change the helper at `path` (its file, a directory above it, a symlink
/// on the way), as the problem that refuses it.
fn loose_problem(path: &Path) -> Option<Problem> {
    let why = match crate::capabilities::override_path::changeable_by_others(path) {
        Err(e) => return Some(io_problem(path, "cannot be resolved", &e)),
        Ok(why) => why?,
    };
    Some(Problem {
        reason: format!(
            "sandspawn's in-sandbox helper {} is refused: {why}; another user could replace it between its check and its use, \
             and the host would run their program",
            path.display()
        ),
        fix: format!(
            "make the helper and every directory above it root's or yours and writable by nobody else (`chmod go-w` the entry \
             named; `chown` one another user owns), or {FIX_REINSTALL} in a directory that is"
        ),
        shortage: false,
    })
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
    fn a_helper_that_cannot_be_read_for_lack_of_memory_or_files_is_a_setup_failure_to_retry() {
        let path = Path::new("/opt/sandspawn/sandspawn-helper");
        for errno in [libc::EMFILE, libc::ENFILE, libc::ENOMEM] {
            let p = io_problem(path, "cannot be read", &std::io::Error::from_raw_os_error(errno));
            assert!(p.shortage, "{p:?}");
            let e = p.into_error();
            assert_eq!(e.code, ErrorCode::SetupFailed, "{}", e.message);
            assert!(e.message.contains("retry") && !e.message.contains("reinstall"), "{}", e.message);
        }
        let p = io_problem(path, "cannot be read", &std::io::Error::from_raw_os_error(libc::EACCES));
        assert!(!p.shortage && p.fix.contains("reinstall"), "{p:?}");
        assert_eq!(p.into_error().code, ErrorCode::Unavailable);
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

    /// Found by an attacker's review (self39): the helper runs on the host in front of bwrap, by
    /// its path, after a check of its bytes; a helper (or a directory above it) another user owns
    /// or may write was used all the same, and that user's rewrite between the check and the exec
    /// ran as the host's user (as root: 1 run in 120 with a crude writer toggling the file).
    #[test]
    fn refuses_a_helper_another_user_could_change() {
        use std::os::unix::fs::chown;
        let dir = tempfile::tempdir().unwrap();
        let real = format!("\x7fELF...{MARKER}...");
        let p = write(dir.path(), real.as_bytes(), 0o755);
        assert!(check_with(&p, None, false).is_ok(), "a helper of this user's, in a directory of its own");
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        // A group with no entry (only root can give one): the owner's private group is no other
        // user (`capabilities::private_group`), and a user's own group may be one.
        if root {
            chown(&p, None, Some(64127)).unwrap();
        }
        let cases: &[(u32, &str)] = if root { &[(0o775, "its group"), (0o757, "everyone")] } else { &[(0o757, "everyone")] };
        for &(mode, who) in cases {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = check_with(&p, None, false).map_err(Problem::into_error).unwrap_err();
            assert_eq!(e.code, ErrorCode::Unavailable, "{}", e.message);
            assert!(e.message.contains(&format!("writable by {who}")) && e.message.contains("chmod go-w"), "{}", e.message);
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A directory on the way another user may write: a new file renamed over the helper.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_with(&p, None, false).map_err(Problem::into_error).unwrap_err();
        assert!(e.message.contains(&format!("{} is writable by everyone", dir.path().display())), "{}", e.message);
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        // Another user's file (only root can give one away: the rule is checked where it can be).
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            chown(&p, Some(64127), None).unwrap();
            let e = check_with(&p, None, false).map_err(Problem::into_error).unwrap_err();
            assert!(e.message.contains("is owned by uid 64127"), "{}", e.message);
            chown(&p, Some(0), None).unwrap();
        }
        // A symlink on the way is followed: its target's entries count.
        let other = tempfile::tempdir().unwrap();
        let link = other.path().join(FILE_NAME);
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(check_with(&link, None, false).is_ok());
        if root {
            chown(dir.path(), None, Some(64127)).unwrap();
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o770)).unwrap();
            let e = check_with(&link, None, false).map_err(Problem::into_error).unwrap_err();
            assert!(e.message.contains("writable by its group"), "{}", e.message);
        }
    }

    #[test]
    fn refuses_a_file_that_only_carries_the_marker() {
        let dir = tempfile::tempdir().unwrap();
        let real = format!("\x7fELF...{MARKER}...");
        let p = write(dir.path(), real.as_bytes(), 0o755);
        let good = "0b9c8d6d3ea5fa8b05c23d7ab3e4f25d59cc2b0d8ebf4e7c0bd6fd0df6f3f1f4";
        let wrapper = format!("#!/bin/sh\nexec /tmp/evil \"$@\"\n#{MARKER}");
        write(dir.path(), wrapper.as_bytes(), 0o755);
        let e = check_with(&p, Some(good), true).map_err(Problem::into_error).unwrap_err();
        assert!(e.message.contains("was modified or replaced") && e.message.contains(good), "{}", e.message);
        let e = check_with(&p, None, true).map_err(Problem::into_error).unwrap_err();
        assert!(e.message.contains("cannot be verified") && e.message.contains("npm run build"), "{}", e.message);
        // The right bytes pass, hashed again after a rewrite (the identity changed).
        write(dir.path(), real.as_bytes(), 0o755);
        let digest: String = {
            use sha2::Digest;
            sha2::Sha256::digest(real.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
        };
        assert!(check_with(&p, Some(&digest), true).is_ok());
        write(dir.path(), wrapper.as_bytes(), 0o755);
        assert!(check_with(&p, Some(&digest), true).is_err(), "a rewrite is hashed again");
    }
}
