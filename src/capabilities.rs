//! (placeholder until the capabilities branch lands)
use std::path::Path;
use crate::error::{ErrorCode, Result};
use crate::plan::BwrapInfo;
use crate::platform::Platform;
pub struct Diagnosis { pub code: ErrorCode, pub cause: &'static str, pub reason: String, pub fix: String }
pub fn diagnose_bwrap_failure(_stderr: &str) -> Option<Diagnosis> { None }
pub fn require_sandbox(_p: Platform, _path: Option<&str>, _cwd: &Path) -> Result<Option<BwrapInfo>> {
    Ok(Some(BwrapInfo { path: "/usr/bin/bwrap".into(), version: None, disable_userns: true, proc_unmountable: false }))
}
#[derive(serde::Serialize)] pub struct Capabilities { pub available: bool }
pub fn find_bwrap(_p: Option<&str>, _cwd: &Path) -> Option<std::path::PathBuf> { Some("/usr/bin/bwrap".into()) }
pub fn capabilities_cached(_p: Option<&str>, _cwd: &Path) -> Capabilities { Capabilities { available: true } }
