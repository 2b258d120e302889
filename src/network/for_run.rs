//! What the runner calls for a run with a `NetworkPolicy`: where its proxy listens is decided by
//! the platform. On macOS the listener is bound on the host's loopback before the plan is built
//! (the profile and the environment name its port and credential); on Linux the helper binds it
//! inside the sandbox and hands it over the bridge once the command's sandbox exists.

use std::io;
use std::os::fd::{OwnedFd, RawFd};

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

/// The run's proxy (none without an allow-list), and on Linux the child's end of the bridge with
/// the descriptor the plan wants it at (`LaunchPlan::net_ctl_fd`). Inside the tokio runtime.
pub fn start(policy: &ResolvedPolicy, net_ctl_fd: Option<RawFd>, loopback: Option<Loopback>, min_fd: RawFd) -> io::Result<(Option<RunProxy>, Option<(RawFd, OwnedFd)>)> {
    let Some(network) = &policy.network_proxy else { return Ok((None, None)) };
    match (net_ctl_fd, loopback) {
        (Some(fd), _) => {
            let (ours, theirs) = super::bridge::socket_pair(min_fd)?;
            Ok((Some(RunProxy::start(ours, network.clone())), Some((fd, theirs))))
        }
        (None, Some(listeners)) => Ok((Some(RunProxy::on_loopback(listeners, network.clone())?), None)),
        // The plan was refused before (it has neither); nothing to serve.
        (None, None) => Ok((None, None)),
    }
}
