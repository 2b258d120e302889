//! The public API's pure entry points in JSON terms (what the binding passes through). Kept out of
//! `binding` so they are unit-testable without a JavaScript engine.

use serde_json::{json, Value};

use crate::capabilities;
use crate::denial::{classify_sandbox_denial as classify, is_likely_sandbox_denied as likely, CommandOutput, DenialContext};
use crate::error::{Result, SandboxError};
use crate::describe::describe;
use crate::options::{parse_spawn_options, Entry, HostContext};
use crate::plan::BwrapInfo;
use crate::platform::{Platform, SandboxType};
use crate::policy::SandboxMode;
use crate::program::resolve_program;

/// `buildSandboxCommand`: the plan `spawnSandboxed` would run, built without running anything.
pub fn build_sandbox_command(command: &Value, options: &Value, host: &HostContext) -> Result<Value> {
    let mut req = parse_spawn_options(command, options, host, Entry::Build, None)?;
    refuse_without_bwrap(&req)?;
    if req.timeout.is_some() {
        return Err(crate::plan::timeout_needs_runner());
    }
    // The spawner that runs the plan runs this bwrap: one the run could re-point is refused alike.
    crate::runner::prepare::refuse_override_run_may_write(&req)?;
    let resolved = resolve_program(&req.command[0], req.env.get("PATH").map(String::as_str), &req.cwd).ok();
    let bwrap = if req.platform == Platform::Linux && req.policy.mode != SandboxMode::DangerFullAccess && Platform::host() == Platform::Linux {
        // Which bwrap a run would use, without probing: the system one, else the bundled one when
        // allowed and intact (a run decides after probing; see `capabilities::ladder`).
        let host_path = std::env::var("PATH").ok();
        let bundled = || req.linux.bundled_bwrap.then(|| capabilities::bundled::verify(&capabilities::BundledBwrap::installed()).ok()).flatten();
        capabilities::find_bwrap(host_path.as_deref(), &req.cwd)
            .or_else(bundled)
            .map(|path| BwrapInfo { path, version: None, disable_userns: true, proc_unmountable: false })
    } else {
        None
    };
    // Private tool caches publish each run's writes when its sandbox is gone, which only the
    // runner sees: a plan for another spawner keeps the caches read-only (the default), and one
    // that asks for them explicitly is refused rather than given less.
    if req.policy.tool_caches.explicit {
        return Err(SandboxError::unsupported(
            "sandbox.toolCaches 'private' and 'shared' need spawnSandboxed or startSandboxed, which keep what each run \
             wrote once its sandbox is gone; a launch plan for another spawner cannot. Leave toolCaches out (the caches \
             stay read-only) or run the command with spawnSandboxed",
        ));
    }
    req.policy.drop_tool_caches(&req.env, req.platform);
    // Limits go into the plan as the helper's rlimits, so the plan stays self-contained.
    let limits = crate::runner::prepare::decide_limits(&req)?;
    let plan = crate::runner::prepare::build_plan(&mut req, bwrap.as_ref(), resolved.as_deref(), false, &limits, None)?;
    // What a run's result would say it leaves unguarded: a plan has no result of its own, so it
    // carries the lines (found by an attacker's review, mode36: a repository past the walk's bound
    // was writable from a plan, with nothing said, where spawnSandboxed's result named the bound).
    let mut not_enforced = crate::runner::prepare::policy_not_enforced(&req);
    not_enforced.extend(crate::runner::prepare::core_dump_not_enforced(&req));
    if plan.sandbox_type == SandboxType::Bwrap {
        not_enforced.extend(crate::runner::prepare::write_guard_not_enforced(&req));
    }
    Ok(json!({
        "notEnforced": not_enforced,
        "program": plan.program,
        "argv0": plan.argv0,
        "args": plan.args,
        "env": plan.env,
        "cwd": plan.cwd,
        "sandboxType": plan.sandbox_type,
        "profile": plan.profile,
        "policy": req.policy,
    }))
}

/// A launch plan is a bwrap plan on Linux: the Landlock mode needs the supervisor `spawnSandboxed`
/// runs in this process. A request that rules bwrap out (`linux.allow`, or `SANDSPAWN_LINUX_ALLOW`
/// without it) is refused, not given a plan for a mechanism it did not allow.
fn refuse_without_bwrap(req: &crate::options::SpawnRequest) -> Result<()> {
    if req.platform != Platform::Linux || req.policy.mode == SandboxMode::DangerFullAccess || req.linux.allow_bwrap {
        return Ok(());
    }
    let asked = if req.linux.allow_from_env { "SANDSPAWN_LINUX_ALLOW (in this process's environment)" } else { "linux.allow" };
    Err(SandboxError::unsupported(format!(
        "{asked} rules bwrap out, and a launch plan is a bwrap plan: the Landlock mode needs the supervisor that \
         spawnSandboxed and startSandboxed run in this process. Run the command with spawnSandboxed, or allow 'bwrap'"
    )))
}

fn sandbox_type(v: &Value) -> Result<SandboxType> {
    v.as_str()
        .and_then(SandboxType::parse)
        .ok_or_else(|| SandboxError::invalid("sandboxType", format!("must be 'none', 'bwrap' or 'seatbelt', got {}", describe(v))))
}

fn text<'a>(output: &'a Value, field: &str) -> Result<&'a str> {
    match output.get(field) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(SandboxError::invalid(&format!("output.{field}"), format!("must be a string, got {}", describe(v)))),
    }
}

fn command_output(output: &Value) -> Result<CommandOutput<'_>> {
    if !output.is_object() {
        return Err(SandboxError::invalid("output", format!("must be an object like a SpawnResult, got {}", describe(output))));
    }
    let exit_code = match output.get("exitCode") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().map(|c| c as i32),
        Some(v) => return Err(SandboxError::invalid("output.exitCode", format!("must be an integer or null, got {}", describe(v)))),
    };
    let signal = match output.get("signal") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(v) => return Err(SandboxError::invalid("output.signal", format!("must be a string or null, got {}", describe(v)))),
    };
    // A SpawnResult's `cwd` (absolute) resolves relative paths in messages, as `result.denial` does.
    let cwd = output.get("cwd").and_then(Value::as_str).map(std::path::Path::new).filter(|p| p.is_absolute());
    Ok(CommandOutput { exit_code, signal, stdout: text(output, "stdout")?, stderr: text(output, "stderr")?, aggregated: text(output, "aggregatedOutput")?, cwd })
}

pub fn is_likely_sandbox_denied(sandbox: &Value, output: &Value) -> Result<bool> {
    Ok(likely(sandbox_type(sandbox)?, &command_output(output)?))
}

/// `classifySandboxDenial(result, policy?)`. Without an explicit policy, the result's own resolved
/// policy (attached by index.js as `policy`) is used when present.
pub fn classify_sandbox_denial(result: &Value, policy: Option<&Value>) -> Result<Value> {
    let st = match result.get("sandboxType") {
        Some(v) => sandbox_type(v)?,
        None => return Err(SandboxError::invalid("result.sandboxType", "is required (pass a SpawnResult)")),
    };
    let out = command_output(result)?;
    let ctx = match policy.filter(|p| !p.is_null()).or_else(|| result.get("policy").filter(|p| !p.is_null())) {
        Some(p) => Some(DenialContext::from_json(p).map_err(|e| SandboxError::invalid("policy", e))?),
        None => None,
    };
    // The result's cwd completes a policy that does not name one (a SpawnResult's own policy never
    // does), so `classifySandboxDenial(result)` judges exactly like `result.denial`.
    let ctx = match (ctx, out.cwd) {
        (Some(c), Some(cwd)) if c.cwd.is_none() => Some(c.with_cwd(cwd)),
        (c, _) => c,
    };
    // A SpawnResult of an allow-listed run carries the proxy's refusals: the policy's decide first
    // (not the command's own faults, `deciding_refusal`), exactly as for `result.denial`.
    let listed = result.get("networkDenials").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let refused = crate::denial::deciding_refusal(
        listed.iter().filter_map(|d| Some((d.get("host")?.as_str()?, crate::network::policy::Refusal::named(d.get("reason")?.as_str()?)?))),
    );
    let network = match refused {
        Some((host, why)) if st != crate::platform::SandboxType::None => crate::denial::network_denial(&out, host, why),
        _ => None,
    };
    let denial = network.or_else(|| classify(st, &out, ctx.as_ref()));
    Ok(serde_json::to_value(denial).unwrap_or(Value::Null))
}

/// `toolCacheStore({ clean })`: where the private tool cache store of the environment `env` (the
/// host's, as a run's default environment) is, how much it holds, and (with `clean`) empty it first.
pub fn tool_cache_store(options: &Value, env: &std::collections::BTreeMap<String, String>) -> Result<Value> {
    let clean = match options {
        Value::Null => false,
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| k.as_str() != "clean") {
                return Err(SandboxError::invalid(k, "unknown option (toolCacheStore accepts only clean)"));
            }
            match m.get("clean") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(v) => return Err(SandboxError::invalid("clean", format!("must be a boolean, got {}", describe(v)))),
            }
        }
        other => return Err(SandboxError::new(crate::ErrorCode::InvalidOptions, format!("options: expected an object, got {}", describe(other)))),
    };
    let report = crate::tool_caches::store::report(env, clean)?;
    Ok(serde_json::to_value(report).unwrap_or(Value::Null))
}

/// `sandboxCapabilities(options?)`: `options.linux` as for a spawn.
pub fn sandbox_capabilities(cwd: &std::path::Path, options: &Value) -> Result<Value> {
    let linux = match options {
        // As a run without `linux` would: SANDSPAWN_LINUX_ALLOW applies (found by an attacker's
        // review: doctor said bwrap while every run used the Landlock mode the variable chose).
        Value::Null => crate::options::parse_linux_options(None)?,
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| k.as_str() != "linux") {
                return Err(SandboxError::invalid(k, "unknown option (sandboxCapabilities accepts only linux)"));
            }
            crate::options::parse_linux_options(m.get("linux"))?
        }
        other => return Err(SandboxError::new(crate::ErrorCode::InvalidOptions, format!("options: expected an object, got {}", describe(other)))),
    };
    let path = std::env::var("PATH").ok();
    let found = capabilities::capabilities_cached_with(path.as_deref(), cwd, &linux);
    let review = crate::review::run::report(found.available, found.sandbox_type);
    let mut caps = serde_json::to_value(found).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut caps {
        m.insert("limits".into(), crate::limits::host_report(Platform::host()));
        m.insert("review".into(), review);
    }
    Ok(caps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed_run(denials: Value) -> Value {
        json!({ "sandboxType": "bwrap", "exitCode": 1, "signal": null, "stdout": "", "stderr": "npm error code E403\n",
                "aggregatedOutput": "npm error code E403\n", "networkDenials": denials })
    }

    fn refusal(host: &str, reason: &str) -> Value {
        json!({ "host": host, "port": 0, "via": "connect", "reason": reason, "count": 1 })
    }

    #[test]
    fn the_commands_own_malformed_or_excess_requests_are_no_network_denial() {
        // An allowed host asked for on port 0: the command's error, which no allowedDomains entry fixes.
        for own in ["malformed", "connection_limit", "unauthenticated", "tiny_chunks"] {
            let d = classify_sandbox_denial(&failed_run(json!([refusal("registry.npmjs.org", own)])), None).unwrap();
            assert_ne!(d.get("reason").and_then(Value::as_str), Some("network_denied"), "{own}: {d}");
        }
        // A policy refusal after them decides, whichever came first.
        let both = json!([refusal("registry.npmjs.org", "malformed"), refusal("", "connection_limit"), refusal("evil.test", "not_allowed")]);
        let d = classify_sandbox_denial(&failed_run(both), None).unwrap();
        assert_eq!((d["reason"].as_str(), d["host"].as_str(), d["networkReason"].as_str()), (Some("network_denied"), Some("evil.test"), Some("not_allowed")));
    }
}
