//! The one error type of the core. Every failure that reaches JavaScript is a `SandboxError` with a
//! stable `code` (see API.md); the binding only copies these fields into a JS object.

use serde::Serialize;

/// Stable error codes of the public contract. `as_str` is what JavaScript sees in `error.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ErrorCode {
    /// A bad command or option; the message names the option.
    InvalidOptions,
    /// The platform sandbox cannot run on this host at all; the message says why and how to fix it.
    Unavailable,
    /// The sandbox tool started but failed before running the command.
    SetupFailed,
    /// The platform or the option combination is not supported.
    Unsupported,
    /// The command was not found (`ENOENT`).
    NotFound,
    /// The command is not executable (`EACCES`).
    NotExecutable,
    /// Writing to a stdin the command has closed (`EPIPE`).
    BrokenPipe,
    /// A change set is no longer the revision the caller showed (a run continued it meanwhile).
    ChangeSetChanged,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidOptions => "ERR_SANDBOX_INVALID_OPTIONS",
            ErrorCode::Unavailable => "ERR_SANDBOX_UNAVAILABLE",
            ErrorCode::SetupFailed => "ERR_SANDBOX_SETUP_FAILED",
            ErrorCode::Unsupported => "ERR_SANDBOX_UNSUPPORTED",
            ErrorCode::NotFound => "ENOENT",
            ErrorCode::NotExecutable => "EACCES",
            ErrorCode::BrokenPipe => "EPIPE",
            ErrorCode::ChangeSetChanged => "ERR_SANDBOX_CHANGE_SET_CHANGED",
        }
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// One rung of the Linux fallback ladder and what happened there (`cause` is `ok` for the rung
/// that runs): part of an unavailable sandbox's error, filled in by `capabilities`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    pub mechanism: &'static str,
    pub cause: String,
    pub message: String,
}

/// A typed failure. `stderr` holds what the sandbox tool printed when it failed during setup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SandboxError {
    pub code: ErrorCode,
    pub message: String,
    pub stderr: Option<String>,
    /// `ERR_SANDBOX_UNAVAILABLE` on Linux: each sandbox mechanism tried, and why it could not run.
    pub attempts: Vec<Attempt>,
    /// `ERR_SANDBOX_UNAVAILABLE`: the ways to fix it, least invasive first.
    pub fixes: Vec<String>,
}

impl SandboxError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        SandboxError { code, message: message.into(), stderr: None, attempts: Vec::new(), fixes: Vec::new() }
    }

    /// `ERR_SANDBOX_INVALID_OPTIONS` for `option`; the message always starts with the option's name
    /// so users can find the culprit in a large options object.
    pub fn invalid(option: &str, problem: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::InvalidOptions, format!("options.{option}: {problem}"))
    }

    /// `ERR_SANDBOX_INVALID_OPTIONS` about the `command` argument itself.
    pub fn invalid_command(problem: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::InvalidOptions, format!("command: {problem}"))
    }

    /// `ERR_SANDBOX_UNAVAILABLE`: `reason` says what is wrong, `fix` how to fix it.
    pub fn unavailable(reason: impl std::fmt::Display, fix: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::Unavailable, format!("sandbox unavailable: {reason}. Fix: {fix}"))
    }

    /// `ERR_SANDBOX_SETUP_FAILED` for a cause that passes (a shortage): nothing ran, `fix` says
    /// to retry.
    pub fn setup_failed_for(reason: impl std::fmt::Display, fix: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::SetupFailed, format!("sandbox setup failed: {reason}. Fix: {fix}"))
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unsupported, message)
    }

    pub fn setup_failed(message: impl Into<String>, stderr: impl Into<String>) -> Self {
        Self::new(ErrorCode::SetupFailed, message).with_stderr(stderr)
    }

    pub fn with_stderr(mut self, stderr: impl Into<String>) -> Self {
        self.stderr = Some(stderr.into());
        self
    }

    pub fn with_ladder(mut self, attempts: Vec<Attempt>, fixes: Vec<String>) -> Self {
        self.attempts = attempts;
        self.fixes = fixes;
        self
    }
}

pub type Result<T, E = SandboxError> = std::result::Result<T, E>;
