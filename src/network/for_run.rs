//! What the runner calls for a run with a `NetworkPolicy`: where its proxy listens is decided by
//! the platform. On macOS the listener is bound on the host's loopback before the plan is built
//! (the profile and the environment name its port and credential); on Linux the helper binds it
//! inside the sandbox and hands it over the bridge (`runner::wiring` makes the socket pair) once
//! the command's sandbox exists. Who is asked about unknown hosts (`onRequest`) and which proxy
//! requests go through (`upstreamProxy`) are set here too.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;

use super::ask::{AskHandle, Questions};
use super::loopback::{self, Loopback};
use super::policy::NetworkPolicy;
use super::proxy::{Extras, RunProxy};
use super::upstream::Upstream;
use crate::error::{ErrorCode, Result, SandboxError};
use crate::platform::Platform;
use crate::policy::ResolvedPolicy;

/// macOS with an allow-list: the run's listener and credential, for the plan (`PlanRequest::proxy`)
/// and then for `start`. `None` otherwise.
pub fn before_plan(policy: &ResolvedPolicy, platform: Platform) -> Result<Option<Loopback>> {
    if policy.network_proxy.is_none() || platform != Platform::Darwin {
        return Ok(None);
    }
    loopback::bind()
        .map(Some)
        .map_err(|e| SandboxError::setup_failed(format!("cannot listen on the loopback for the network allow-list's proxy: {e}"), ""))
}

/// The run's proxy, with an allow-list: serving what the helper sends over `bridge` (Linux, the
/// host's end of `bridge::socket_pair`) or the listeners `before_plan` bound (macOS). Inside the
/// tokio runtime.
pub fn start(policy: &ResolvedPolicy, bridge: Option<OwnedFd>, loopback: Option<Loopback>, ask: Option<&AskHandle>) -> Result<Option<RunProxy>> {
    let Some(network) = &policy.network_proxy else { return Ok(None) };
    let own_port = loopback.as_ref().map(|l| l.endpoint.port);
    let extras = Extras { questions: ask.map(|a| questions(network, a)), upstream: upstream(network, own_port)? };
    let failed = |e: std::io::Error| SandboxError::new(ErrorCode::SetupFailed, format!("starting the network allow-list's proxy failed: {e}"));
    match (bridge, loopback) {
        (Some(bridge), _) => Ok(Some(RunProxy::start(bridge, network.clone(), extras))),
        (None, Some(listeners)) => RunProxy::on_loopback(listeners, network.clone(), extras).map(Some).map_err(failed),
        // The plan was refused before (it has neither); nothing to serve.
        (None, None) => Ok(None),
    }
}

fn questions(network: &NetworkPolicy, ask: &AskHandle) -> Arc<Questions> {
    let timeout = Duration::from_millis(network.request_timeout_ms);
    Arc::new(Questions::bounded(ask.0.clone(), timeout, network.max_questions, crate::network::pace::QUESTIONS))
}

/// The user's proxy for this run, from the policy or the host process's environment. An upstream
/// that is this very run's listener (macOS: the host's loopback at `own_port`) would loop: refused.
fn upstream(network: &NetworkPolicy, own_port: Option<u16>) -> Result<Option<Upstream>> {
    let up = network.upstream_proxy.resolve(|name| std::env::var(name).ok()).map_err(|(unsupported, m)| {
        let fix = "set sandbox.network.upstreamProxy to an http:// proxy URL, or to false to connect directly";
        let code = if unsupported { ErrorCode::Unsupported } else { ErrorCode::InvalidOptions };
        SandboxError::new(code, format!("options.sandbox.network.upstreamProxy: {m}; {fix}"))
    })?;
    let loops = |u: &Upstream| {
        [&u.tunnels, &u.plain].into_iter().flatten().any(|p| {
            Some(p.port) == own_port && p.host.parse::<std::net::IpAddr>().map(|a| a.is_loopback()).unwrap_or(p.host == "localhost")
        })
    };
    if up.as_ref().is_some_and(loops) {
        return Err(SandboxError::new(
            ErrorCode::InvalidOptions,
            "options.sandbox.network.upstreamProxy: the upstream proxy is this run's own proxy (it would forward to itself); set upstreamProxy to false or to another proxy",
        ));
    }
    Ok(up)
}
