//! How the proxy turns host names into addresses: `getaddrinfo` in threads of its own, bounded per
//! run and per process and given up after a while, so one run's slow names delay nobody else.

use std::net::IpAddr;
use std::time::Duration;

use crate::network::host::canonical_ip;

/// A lookup (waiting for a slot included) that takes longer fails; its thread may go on until the
/// system resolver gives up, holding its slots.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);
/// Lookups one run has in flight at once (each in a thread of its own, `getaddrinfo` being
/// blocking): a command that asks for thousands of slow names waits for these, and nothing else
/// of the host does.
pub const LOOKUPS_PER_RUN: usize = 4;
/// Lookups in flight in this process, over all runs: the most threads name resolution takes.
const LOOKUPS_IN_PROCESS: usize = 32;

/// The process-wide lookup slots. Name resolution never uses tokio's blocking pool, which the
/// runner's own work (preparing a sandbox, the walk) shares: slow names there delayed unrelated
/// runs by seconds.
static PROCESS_LOOKUPS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(LOOKUPS_IN_PROCESS);

/// How host names become addresses. `System` is getaddrinfo on the host; `Fixed` serves the
/// in-process tests (rebinding cases) without touching the machine's resolver.
pub enum Resolver {
    System,
    #[cfg(test)]
    Fixed(std::collections::HashMap<String, Vec<IpAddr>>),
}

impl Resolver {
    pub(super) async fn resolve(&self, name: &str, port: u16, run_lookups: &std::sync::Arc<tokio::sync::Semaphore>) -> Result<Vec<IpAddr>, String> {
        match self {
            Resolver::System => match tokio::time::timeout(RESOLVE_TIMEOUT, system_lookup(name, port, run_lookups)).await {
                Ok(Ok(addrs)) => Ok(addrs.into_iter().map(canonical_ip).collect()),
                Ok(Err(e)) => Err(e),
                Err(_) => Err("name resolution timed out".into()),
            },
            #[cfg(test)]
            Resolver::Fixed(map) => map.get(name).cloned().ok_or_else(|| "not found".to_string()),
        }
    }
}

/// `getaddrinfo` in a thread of its own, once a slot of the run and one of the process are free.
/// The thread holds both slots until the system resolver answers, even after the caller gave up:
/// so the run's threads, and the process's, stay bounded.
async fn system_lookup(name: &str, port: u16, run_lookups: &std::sync::Arc<tokio::sync::Semaphore>) -> Result<Vec<IpAddr>, String> {
    let run_slot = run_lookups.clone().acquire_owned().await.map_err(|e| e.to_string())?;
    let process_slot = PROCESS_LOOKUPS.acquire().await.map_err(|e| e.to_string())?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let name = name.to_string();
    std::thread::Builder::new()
        .name("sandspawn-resolve".into())
        .spawn(move || {
            use std::net::ToSocketAddrs;
            let found = (name.as_str(), port).to_socket_addrs().map(|a| a.map(|s| s.ip()).collect::<Vec<_>>()).map_err(|e| e.to_string());
            drop((run_slot, process_slot));
            let _ = tx.send(found);
        })
        .map_err(|e| format!("cannot start a lookup: {e}"))?;
    rx.await.map_err(|_| "the lookup ended without an answer".to_string())?
}
