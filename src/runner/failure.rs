//! Why a run failed before or instead of its command: the spawn's own error, the helper's report
//! (it could not start the command), and bwrap exiting during setup, in Node's words where Node
//! has them (ENOENT, EACCES) and in the sandbox's otherwise.

use std::io;
use std::os::fd::OwnedFd;

use crate::error::{ErrorCode, SandboxError};
use crate::platform::SandboxType;
use sandspawn_helper::report::{Failure, Stage};

/// A spawn error: for the sandbox tool itself that means the sandbox is unavailable; for the
/// command it is ENOENT/EACCES as Node would report them.
pub(super) fn spawn_error(e: io::Error, command: &str, sandbox: SandboxType, program: &std::path::Path) -> SandboxError {
    if e.raw_os_error() == Some(libc::E2BIG) {
        return SandboxError::invalid(
            "env",
            format!("the environment and argument list are larger than the system allows for one command ({e}); pass fewer or smaller variables (extendEnv: false) or arguments"),
        );
    }
    if sandbox != SandboxType::None {
        // Not started for lack of processes or memory (another run may hold them): this run's to
        // retry, not a broken install.
        let what = format!("{} could not be started", program.display());
        if let Some(d) = crate::capabilities::diagnose::shortage_error(&what, &e) {
            return SandboxError::setup_failed_for(d.reason, d.fix);
        }
        return SandboxError::unavailable(
            format!("{} could not be executed ({e})", program.display()),
            "reinstall the sandbox tool (Linux: `sudo apt-get install -y bubblewrap`)",
        );
    }
    match e.raw_os_error() {
        Some(libc::ENOENT) => SandboxError::new(ErrorCode::NotFound, format!("spawn {command} ENOENT: command not found")),
        Some(libc::EACCES) | Some(libc::ENOEXEC) | Some(libc::EISDIR) => {
            SandboxError::new(ErrorCode::NotExecutable, format!("spawn {command} EACCES: command is not executable ({e})"))
        }
        _ => SandboxError::new(ErrorCode::SetupFailed, format!("spawn {command} failed: {e}")),
    }
}

/// A spawn that failed because the working directory cannot be entered (the spawn's `chdir` runs
/// before the program's exec, and its EACCES or ENOENT reads as the program's own): say so, with
/// the directory that blocks and the fix, not "reinstall the sandbox tool" or "command not found".
/// An earlier run (the same user) may have made the cwd, or a directory above it, mode 000; the
/// policy's own lookups (`policy::hidden`, `runner::path_modes`) cover the writable roots, but a
/// read-only run's cwd is no root. Looked up only after a failed spawn: nothing on the hot path.
pub(super) fn cwd_unusable(cwd: &std::path::Path, e: &io::Error) -> Option<SandboxError> {
    if !matches!(e.raw_os_error(), Some(libc::EACCES | libc::ENOENT | libc::ENOTDIR | libc::ELOOP)) {
        return None;
    }
    let why = match std::fs::metadata(cwd) {
        Err(gone) => format!("it cannot be looked up any more ({gone})"),
        Ok(m) if !m.is_dir() => "it is no longer a directory".to_string(),
        // `blocker` looks at the directories strictly above a path: ask about an entry in `cwd`
        // so that `cwd` itself is one of them.
        Ok(_) => match crate::search_blocker::blocker(&cwd.join("entry")) {
            Some(b) if b.owned => {
                return Some(SandboxError::setup_failed_for(
                    format!("the working directory {} cannot be entered: {}; an earlier sandboxed run may have changed it", cwd.display(), b.describe()),
                    format!("chmod u+rwx {}", b.dir.display()),
                ))
            }
            Some(b) => format!("{}, a directory of another user", b.describe()),
            None => return None,
        },
    };
    Some(SandboxError::setup_failed_for(format!("the working directory {} cannot be entered: {why}", cwd.display()), "pass a cwd this user can enter"))
}

/// What the helper wrote on its report descriptor: present only when the command never ran.
pub(super) fn read_report(fd: &OwnedFd) -> Option<Failure> {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 4096];
    let raw = fd.as_raw_fd();
    // Never wait: every writer has written (or never will) once the sandbox has exited.
    unsafe { libc::fcntl(raw, libc::F_SETFL, libc::fcntl(raw, libc::F_GETFL) | libc::O_NONBLOCK) };
    let n = unsafe { libc::read(raw, buf.as_mut_ptr().cast(), buf.len()) };
    (n > 0).then(|| Failure::decode(&buf[..n as usize])).flatten()
}

/// The helper could not start the command: ENOENT/EACCES as Node reports them, or a setup failure
/// in the helper's words.
pub(super) fn helper_failure(f: &Failure, command: &str, stderr: &str) -> SandboxError {
    let stderr = stderr.trim();
    let (code, message) = match (f.stage, f.errno) {
        (Stage::Exec, libc::ENOENT | libc::ENOTDIR) => {
            (ErrorCode::NotFound, format!("spawn {command} ENOENT: the command was not found inside the sandbox ({})", f.message))
        }
        (Stage::Exec, libc::EACCES | libc::ENOEXEC | libc::EISDIR | libc::EPERM) => {
            (ErrorCode::NotExecutable, format!("spawn {command} EACCES: the command is not executable inside the sandbox ({})", f.message))
        }
        (Stage::Exec, _) => (ErrorCode::SetupFailed, format!("spawn {command} failed inside the sandbox: {}", f.message)),
        (Stage::Setup, _) => (ErrorCode::SetupFailed, format!("sandbox setup failed before the command ran: sandspawn-helper: {}", f.message)),
        (Stage::Changed, _) => (
            ErrorCode::SetupFailed,
            format!("sandbox setup failed before the command ran: the workspace changed while the sandbox was set up (another process renamed or removed what it protects): {}", f.message),
        ),
    };
    SandboxError::new(code, message).with_stderr(stderr)
}

/// bwrap exited without running the command: say why, in its own words and ours.
pub(super) fn setup_failure(stderr: &str) -> SandboxError {
    let trimmed = stderr.trim();
    if let Some(d) = crate::capabilities::diagnose_with_host(trimmed, &crate::capabilities::HostFacts::read()) {
        let message = match d.code {
            ErrorCode::Unavailable => format!("sandbox unavailable: {}. Fix: {}", d.reason, d.fix),
            _ => format!("sandbox setup failed: {}. Fix: {}", d.reason, d.fix),
        };
        return SandboxError::new(d.code, message).with_stderr(trimmed);
    }
    SandboxError::setup_failed(format!("sandbox setup failed before the command ran: {}", if trimmed.is_empty() { "bwrap exited without a message" } else { trimmed }), trimmed)
}

#[cfg(test)]
mod helper_failure_tests {
    use super::*;

    #[test]
    fn a_sandbox_tool_that_could_not_start_for_lack_of_processes_or_memory_is_a_setup_failure_to_retry() {
        let helper = std::path::Path::new("/opt/sandspawn/sandspawn-helper");
        for errno in [libc::EAGAIN, libc::ENOMEM, libc::EMFILE, libc::ENFILE] {
            let e = spawn_error(io::Error::from_raw_os_error(errno), "echo", SandboxType::Bwrap, helper);
            assert_eq!(e.code, ErrorCode::SetupFailed, "{errno}: {}", e.message);
            assert!(e.message.contains("retry") && e.message.contains("sandspawn-helper"), "{}", e.message);
            assert!(!e.message.contains("reinstall") && !e.message.contains("sandbox unavailable"), "{}", e.message);
        }
        let e = spawn_error(io::Error::from_raw_os_error(libc::EAGAIN), "echo", SandboxType::Bwrap, helper);
        assert!(e.message.contains("RLIMIT_NPROC"), "{}", e.message);
        // A tool that is not there stays unavailable.
        let e = spawn_error(io::Error::from_raw_os_error(libc::ENOENT), "echo", SandboxType::Bwrap, helper);
        assert_eq!(e.code, ErrorCode::Unavailable);
    }

    #[test]
    fn a_cwd_that_cannot_be_entered_is_named_with_its_fix_not_taken_for_a_broken_install() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let cwd = d.path().join("ws");
        std::fs::create_dir(&cwd).unwrap();
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        // Enterable: the failure is the program's, judged as before.
        assert!(cwd_unusable(&cwd, &eacces).is_none());
        std::fs::set_permissions(&cwd, std::fs::Permissions::from_mode(0o000)).unwrap();
        let blocked = cwd_unusable(&cwd, &eacces);
        std::fs::set_permissions(&cwd, std::fs::Permissions::from_mode(0o700)).unwrap();
        // Root searches any directory: only an ordinary user sees the mode refuse it.
        if unsafe { libc::geteuid() } != 0 {
            let e = blocked.expect("a mode-000 cwd is named");
            assert_eq!(e.code, ErrorCode::SetupFailed);
            assert!(e.message.contains("working directory") && e.message.contains("mode 000") && e.message.contains("chmod u+rwx"), "{}", e.message);
        }
        std::fs::remove_dir(&cwd).unwrap();
        let e = cwd_unusable(&cwd, &io::Error::from_raw_os_error(libc::ENOENT)).expect("a cwd removed since the options were checked is named");
        assert!(e.message.contains("cannot be looked up"), "{}", e.message);
        assert!(cwd_unusable(&cwd, &io::Error::from_raw_os_error(libc::EAGAIN)).is_none());
    }

    fn failure(stage: Stage, errno: i32) -> Failure {
        Failure { stage, errno, message: "cannot run 'x': words".into() }
    }

    #[test]
    fn maps_the_helpers_report_to_node_style_codes() {
        let code = |f: Failure| helper_failure(&f, "x", "sandspawn-helper: cannot run 'x': words\n").code;
        assert_eq!(code(failure(Stage::Exec, libc::ENOENT)), ErrorCode::NotFound);
        assert_eq!(code(failure(Stage::Exec, libc::ENOTDIR)), ErrorCode::NotFound);
        assert_eq!(code(failure(Stage::Exec, libc::EACCES)), ErrorCode::NotExecutable);
        assert_eq!(code(failure(Stage::Exec, libc::ENOEXEC)), ErrorCode::NotExecutable);
        assert_eq!(code(failure(Stage::Exec, libc::E2BIG)), ErrorCode::SetupFailed);
        let setup = helper_failure(&failure(Stage::Setup, libc::EINVAL), "x", " words \n");
        assert_eq!(setup.code, ErrorCode::SetupFailed);
        assert!(setup.message.starts_with("sandbox setup failed before the command ran: sandspawn-helper: "), "{}", setup.message);
        assert_eq!(setup.stderr.as_deref(), Some("words"));
    }
}
