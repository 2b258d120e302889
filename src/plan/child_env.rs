//! The environment a plan gives its program: the caller's, plus the `SANDSPAWN_*` markers and,
//! with the network off, the variables that make package managers give up at once; unless the
//! run has the full network, without the user's own proxy (`network::command_env`).

use std::collections::BTreeMap;

use super::launch_plan::PlanRequest;
use crate::platform::SandboxType;

/// The child's environment: the caller's plus the `SANDSPAWN_*` markers API.md promises.
pub(crate) fn child_env(req: &PlanRequest, sandbox: SandboxType) -> BTreeMap<String, String> {
    let mut env = req.env.clone();
    // The host's opt-in into weaker modes is not the command's business (nor its to pass on).
    env.remove("SANDSPAWN_LINUX_ALLOW");
    if sandbox != SandboxType::None {
        env.insert("SANDSPAWN_SANDBOX".into(), sandbox.as_str().into());
    }
    // With an allow-list the proxy variables and `SANDSPAWN_NETWORK=proxy` are set by the helper
    // inside bwrap (Linux) or by the Seatbelt plan (macOS), after this.
    without_users_proxy(req, &mut env);
    let offline = !req.policy.network && req.policy.network_proxy.is_none();
    if offline {
        env.insert("SANDSPAWN_NETWORK_DISABLED".into(), "1".into());
    }
    if sandbox != SandboxType::None {
        // The caller's own setting of any of these wins.
        let retries: &[(&str, &str)] = if offline {
            &OFFLINE_NO_RETRIES
        } else if req.policy.network_proxy.is_some() {
            &ALLOW_LIST_FEW_RETRIES
        } else {
            &[]
        };
        for (name, value) in retries {
            env.entry(name.to_string()).or_insert_with(|| value.to_string());
        }
    }
    env
}

/// With `tmp: 'private'` the command's `TMPDIR` is its private `/tmp` unless the caller's lies in
/// a writable root: one elsewhere is read-only in the sandbox (or, under `/tmp`, not there at all),
/// and mktemp and every tool that uses it failed, leaving the shared, writable `/tmp` as the way to
/// make them work (found by an attacker's review, mode32). Linux: macOS refuses `'private'`.
pub(crate) fn private_tmpdir(req: &PlanRequest, env: &mut BTreeMap<String, String>) {
    if req.policy.tmp != crate::policy::TmpMode::Private {
        return;
    }
    let Some(given) = env.get("TMPDIR").filter(|t| !t.is_empty()) else { return };
    let path = std::path::Path::new(given);
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let writable = real == std::path::Path::new("/tmp") || req.policy.writable_roots.iter().any(|r| real.starts_with(&r.root));
    if !(path.is_absolute() && writable) {
        env.insert("TMPDIR".into(), "/tmp".into());
    } else if real != path {
        // Its real path: a symlink on the way may not be there (one under the shared /tmp is not
        // in the private one; found by an attacker's review, rfix32: mktemp failed).
        env.insert("TMPDIR".into(), real.to_string_lossy().into_owned());
    }
}

/// Remove every variable naming the user's own proxy, or carrying its password, unless the run
/// has the full network: then the command connects through that proxy itself. With the network
/// off it has no use for them, and with the allow-list its proxy is the run's; either way the
/// password would only be there for the command to print or write down.
pub(crate) fn without_users_proxy(req: &PlanRequest, env: &mut BTreeMap<String, String>) {
    use crate::network::{command_env::scrub, upstream::UpstreamSetting};
    let host_env = || std::env::vars().collect();
    match &req.policy.network_proxy {
        Some(network) => scrub(env, &network.upstream_proxy, host_env),
        None if !req.policy.network => scrub(env, &UpstreamSetting::FromEnvironment, host_env),
        None => {}
    }
}

/// With an allow-list, a host the proxy refuses stays refused for the whole run, yet pip (urllib3
/// counts a refused CONNECT as a connection error) retried it five times with growing pauses,
/// about 8 s per refused host, and cargo three times, about 11 s, before saying why. One retry
/// each keeps a second chance for a real network blip (pip's costs no pause, cargo's about 1 s).
/// Set unless the caller set them. npm and git do not retry a refusal.
const ALLOW_LIST_FEW_RETRIES: [(&str, &str); 2] = [("PIP_RETRIES", "1"), ("CARGO_NET_RETRY", "1")];

/// With the network off a failed request cannot succeed later, yet npm retries even a final
/// "name not found" for about 70 s, pip for about 10 s and cargo for about 11 s, so an agent's
/// timeout kills them before they print why. Set unless the caller set them. pip gets one retry,
/// which costs nothing (urllib3 waits only from the second) and is what makes it print the cause
/// of the failure. `CARGO_NET_RETRY` outranks `net.retry` in cargo's config files.
const OFFLINE_NO_RETRIES: [(&str, &str); 3] = [("npm_config_fetch_retries", "0"), ("PIP_RETRIES", "1"), ("CARGO_NET_RETRY", "0")];
