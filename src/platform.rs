//! Which operating system a plan is built for, and which sandbox applies there.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Linux,
    Darwin,
    /// Windows and anything else: only `danger-full-access` runs.
    Other,
}

impl Platform {
    pub fn host() -> Platform {
        if cfg!(target_os = "linux") {
            Platform::Linux
        } else if cfg!(target_os = "macos") {
            Platform::Darwin
        } else {
            Platform::Other
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Darwin => "darwin",
            Platform::Other => std::env::consts::OS,
        }
    }
}

/// The sandbox that actually applies to a run (`SpawnResult.sandboxType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxType {
    None,
    Bwrap,
    Seatbelt,
    /// Linux without namespaces: Landlock + seccomp + the helper as supervisor (opt-in).
    Landlock,
}

impl SandboxType {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxType::None => "none",
            SandboxType::Bwrap => "bwrap",
            SandboxType::Seatbelt => "seatbelt",
            SandboxType::Landlock => "landlock",
        }
    }

    pub fn parse(s: &str) -> Option<SandboxType> {
        match s {
            "none" => Some(SandboxType::None),
            "bwrap" => Some(SandboxType::Bwrap),
            "seatbelt" => Some(SandboxType::Seatbelt),
            "landlock" => Some(SandboxType::Landlock),
            _ => None,
        }
    }
}
