//! (placeholder until the denial branch lands)
use serde::Serialize;
use crate::platform::SandboxType;
use crate::policy::ResolvedPolicy;
pub struct CommandOutput<'a> { pub exit_code: Option<i32>, pub signal: Option<&'a str>, pub stdout: &'a str, pub stderr: &'a str, pub aggregated: &'a str }
#[derive(Debug, Clone, Serialize)] pub struct SandboxDenial { pub snippet: String }
pub struct DenialContext;
impl From<&ResolvedPolicy> for DenialContext { fn from(_: &ResolvedPolicy) -> Self { DenialContext } }
pub fn is_likely_sandbox_denied(_s: SandboxType, _o: &CommandOutput) -> bool { false }
pub fn classify_sandbox_denial(_s: SandboxType, _o: &CommandOutput, _c: Option<&DenialContext>) -> Option<SandboxDenial> { None }
impl DenialContext { pub fn from_json(_v: &serde_json::Value) -> Result<DenialContext, String> { Ok(DenialContext) } }
