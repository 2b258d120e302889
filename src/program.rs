//! Finding `command[0]` the way `execvp` would, in the child's PATH, so a missing or
//! non-executable command is a typed `ENOENT`/`EACCES` before anything is spawned.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, Result, SandboxError};

/// The default search path when the child has no PATH (glibc's `confstr(_CS_PATH)` value).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

pub fn resolve_program(name: &str, path_env: Option<&str>, cwd: &Path) -> Result<PathBuf> {
    if name.contains('/') {
        let p = cwd.join(name);
        return check_executable(&p, name).map(|_| p);
    }
    let mut saw_not_executable = false;
    for dir in path_env.unwrap_or(DEFAULT_PATH).split(':') {
        // An empty entry means the current directory, as in execvp.
        let candidate = if dir.is_empty() { cwd.join(name) } else { cwd.join(dir).join(name) };
        match check_executable(&candidate, name) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.code == ErrorCode::NotExecutable => saw_not_executable = true,
            Err(_) => {}
        }
    }
    if saw_not_executable {
        return Err(not_executable(name));
    }
    Err(SandboxError::new(ErrorCode::NotFound, format!("spawn {name} ENOENT: command not found in PATH")))
}

fn not_executable(name: &str) -> SandboxError {
    SandboxError::new(ErrorCode::NotExecutable, format!("spawn {name} EACCES: command is not executable"))
}

fn check_executable(path: &Path, name: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Err(_) => Err(SandboxError::new(ErrorCode::NotFound, format!("spawn {name} ENOENT: {} does not exist", path.display()))),
        Ok(m) if m.is_dir() => Err(not_executable(name)),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Err(not_executable(name)),
        Ok(_) => {
            // Mode bits are not the whole story (ACLs, noexec mounts, root): ask the kernel.
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| not_executable(name))?;
            if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
                Ok(())
            } else {
                Err(not_executable(name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_in_path_and_reports_missing() {
        let cwd = Path::new("/");
        assert_eq!(resolve_program("sh", Some("/nonexistent:/bin"), cwd).unwrap(), PathBuf::from("/bin/sh"));
        let e = resolve_program("definitely-not-a-command-xyz", Some("/bin:/usr/bin"), cwd).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
    }

    #[test]
    fn not_executable_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("script");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = resolve_program("./script", None, dir.path()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotExecutable);
        let e = resolve_program("script", Some(dir.path().to_str().unwrap()), Path::new("/")).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotExecutable);
        let e = resolve_program(dir.path().to_str().unwrap(), None, Path::new("/")).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotExecutable);
    }
}
