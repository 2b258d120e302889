//! What `sandboxCapabilities()` returns: can this host sandbox, with what, and if not why and how
//! to fix it.

use serde::{Serialize, Serializer};

use crate::error::Attempt;
use crate::plan::BwrapInfo;
use crate::platform::{Platform, SandboxType};

fn ser_platform<S: Serializer>(p: &Platform, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.as_str())
}

/// What `sandboxCapabilities()` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    #[serde(serialize_with = "ser_platform")]
    pub platform: Platform,
    pub sandbox_type: SandboxType,
    pub available: bool,
    /// What is wrong, in words (when not available).
    pub reason: Option<String>,
    /// How to fix it (when not available).
    pub fix: Option<String>,
    /// A short stable id of the cause, e.g. `apparmor-userns` (see `diagnose::ALL_CAUSES`).
    pub cause: Option<String>,
    /// The bwrap that was found and probed (Linux), also when the probe failed.
    pub bwrap: Option<BwrapInfo>,
    /// What the sandbox tool printed when its self-test failed.
    pub stderr: Option<String>,
    /// Which mechanism runs (`bwrapSource` is `null` when none does, and off Linux).
    pub sandbox_details: SandboxDetails,
    /// Linux: each rung of the fallback ladder that was tried, in order (see `ladder`).
    pub attempts: Vec<Attempt>,
    /// When not available: every fix, least invasive first (`fix` is the first one's rung's).
    pub fixes: Vec<String>,
}

impl Capabilities {
    pub(super) fn unavailable(platform: Platform, sandbox_type: SandboxType, cause: &str, reason: String, fix: String) -> Self {
        Capabilities {
            platform,
            sandbox_type,
            available: false,
            reason: Some(reason),
            fix: Some(fix.clone()),
            cause: Some(cause.to_string()),
            bwrap: None,
            stderr: None,
            sandbox_details: SandboxDetails::default(),
            attempts: Vec::new(),
            fixes: vec![fix],
        }
    }
}

/// Which bwrap ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BwrapSource {
    System,
    Bundled,
}

/// `SpawnResult.sandboxDetails` and `sandboxCapabilities().sandboxDetails`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxDetails {
    pub bwrap_source: Option<BwrapSource>,
    /// The Landlock ABI in use (the Landlock mode only).
    pub landlock_abi: Option<u32>,
    /// Guarantees the running mechanism does not give (empty for bwrap and Seatbelt).
    pub not_enforced: Vec<String>,
}
