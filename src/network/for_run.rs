//! What the runner calls for a run with a `NetworkPolicy`: where its proxy listens is decided by
//! the platform. On macOS the listener is bound on the host's loopback before the plan is built
//! (the profile and the environment name its port and credential); on Linux the helper binds it
//! inside the sandbox and hands it over the bridge (`runner::wiring` makes the socket pair) once
//! the command's sandbox exists.

use std::io;
use std::os::fd::OwnedFd;

use super::loopback::{self, Loopback};
use super::proxy::RunProxy;
use crate::error::{Result, SandboxError};
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
pub fn start(policy: &ResolvedPolicy, bridge: Option<OwnedFd>, loopback: Option<Loopback>) -> io::Result<Option<RunProxy>> {
    let Some(network) = &policy.network_proxy else { return Ok(None) };
    match (bridge, loopback) {
        (Some(bridge), _) => Ok(Some(RunProxy::start(bridge, network.clone()))),
        (None, Some(listeners)) => RunProxy::on_loopback(listeners, network.clone()).map(Some),
        // The plan was refused before (it has neither); nothing to serve.
        (None, None) => Ok(None),
    }
}
