//! What runs on the host beside one run's command: the keeper of the names that must stay absent
//! at the writable roots' tops (bwrap and Landlock runs), and the network allow-list's proxy; and, once the
//! command has exited, the check for what the sandbox could not prevent (`hostRisks`).

use std::os::fd::OwnedFd;

use crate::error::{ErrorCode, Result, SandboxError};
use crate::network::loopback::Loopback;
use crate::network::proxy::{Finished, RunProxy};
use crate::options::SpawnRequest;
use crate::planted::{keeper::Keeper, HostRisk};
use crate::platform::SandboxType;

pub(super) struct SideServices {
    keeper: Option<Keeper>,
    proxy: Option<RunProxy>,
}

impl SideServices {
    /// Start the keeper (a missing `.git` or protected name created at a top is moved aside at once)
    /// and the proxy, which serves the listener the helper sends over `bridge` (Linux) or the one
    /// bound on the host's loopback for the plan (macOS; see `network::for_run`).
    pub fn start(req: &SpawnRequest, sandbox: SandboxType, bridge: Option<OwnedFd>, loopback: Option<Loopback>) -> Result<SideServices> {
        // The Landlock mode too: its roots' tops stay creatable (`plan::landlock_grants`).
        let keeper = match sandbox {
            SandboxType::Bwrap | SandboxType::Landlock => {
                // A reviewed root's writes go to its change set, never to the host's top.
                let direct = req.policy.writable_roots.iter().filter(|r| !req.policy.is_reviewed(&r.root));
                let tops: Vec<std::path::PathBuf> = direct.map(|r| r.root.clone()).collect();
                crate::planted::keeper::start(&req.policy.planted.absent, &tops, &req.policy.planted.home)
            }
            _ => None,
        };
        let proxy = crate::network::for_run::start(&req.policy, bridge, loopback, req.network_ask.as_ref())?;
        Ok(SideServices { keeper, proxy })
    }

    /// The run is over: close the proxy's listeners and every connection it holds; what it refused
    /// and what the caller decided.
    pub async fn stop_proxy(&mut self) -> Finished {
        match self.proxy.take() {
            Some(p) => p.finish().await,
            None => Finished { denials: Vec::new(), decisions: Vec::new() },
        }
    }

    /// What the mounts (or the Landlock rules) could not prevent (Linux), after the placeholders
    /// are gone: what the keeper moved aside, and the walk's findings.
    pub async fn host_risks(mut self, req: &SpawnRequest, sandbox: SandboxType) -> Result<Vec<HostRisk>> {
        if !matches!(sandbox, SandboxType::Bwrap | SandboxType::Landlock) {
            return Ok(Vec::new());
        }
        let keeper = self.keeper.take();
        let baseline = req.policy.planted.clone();
        let keep_absent = req.policy.missing_read_only();
        tokio::task::spawn_blocking(move || {
            // One bounded list (`planted::MAX_REPORTED`), what the keeper moved aside among it.
            let during_run = keeper.map(|k| k.finish()).unwrap_or_default();
            let risks = crate::planted::detect_after(&baseline, during_run);
            // Placeholders of plans other programs ran, at paths this run kept absent.
            crate::placeholders::remove_leftovers(&keep_absent);
            risks
        })
        .await
        .map_err(|e| SandboxError::new(ErrorCode::SetupFailed, format!("checking for planted configuration failed: {e}")))
    }
}
