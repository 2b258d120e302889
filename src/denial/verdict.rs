//! What the classifiers read (`CommandOutput`) and what they conclude (`SandboxDenial`: the reason,
//! the kind and where).

use serde::Serialize;

/// What a finished command left behind, as the classifiers read it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandOutput<'a> {
    /// `None` when the command died by a signal.
    pub exit_code: Option<i32>,
    /// The signal name (`"SIGSYS"`) when it died by one.
    pub signal: Option<&'a str>,
    pub stdout: &'a str,
    pub stderr: &'a str,
    /// stdout and stderr interleaved in arrival order.
    pub aggregated: &'a str,
    /// The run's working directory: relative paths in messages are reported against it (a
    /// context's own `cwd` wins when it has one).
    pub cwd: Option<&'a std::path::Path>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialReason {
    OperationNotPermitted,
    PermissionDenied,
    ReadOnlyFileSystem,
    NetworkUnreachable,
    PolicyDenied,
    Sigsys,
    FailedToWriteFile,
    /// The network allow-list's proxy refused a host the command asked for (see `network`).
    NetworkDenied,
}

impl DenialReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DenialReason::OperationNotPermitted => "operation_not_permitted",
            DenialReason::PermissionDenied => "permission_denied",
            DenialReason::ReadOnlyFileSystem => "read_only_file_system",
            DenialReason::NetworkUnreachable => "network_unreachable",
            DenialReason::PolicyDenied => "policy_denied",
            DenialReason::Sigsys => "sigsys",
            DenialReason::FailedToWriteFile => "failed_to_write_file",
            DenialReason::NetworkDenied => "network_denied",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DenialKind {
    Filesystem,
    Network,
    Process,
}

impl DenialKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DenialKind::Filesystem => "filesystem",
            DenialKind::Network => "network",
            DenialKind::Process => "process",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxDenial {
    pub reason: DenialReason,
    pub kind: DenialKind,
    /// The denied path when the output names one.
    pub path: Option<String>,
    /// The matching output (trimmed, at most 512 characters).
    pub snippet: String,
    /// The refused host, for `network_denied`.
    pub host: Option<String>,
    /// Why the proxy refused it (`networkDenials[].reason`), for `network_denied`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_reason: Option<String>,
    /// The option that would allow it, in words (network denials).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}
