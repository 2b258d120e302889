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

pub use super::getaddrinfo::LookupError;

/// How host names become addresses. `System` is getaddrinfo on the host; `Fixed` serves the
/// in-process tests without touching the machine's resolver.
pub enum Resolver {
    System,
    #[cfg(test)]
    Fixed(FixedNames),
}

/// Test names: a name missing from `names` does not exist (NXDOMAIN); one listed with no address
/// is a lookup that fails (a timeout). `asked` lists every lookup, in order.
#[cfg(test)]
pub struct FixedNames {
    pub names: std::collections::HashMap<String, Vec<IpAddr>>,
    pub asked: std::sync::Mutex<Vec<String>>,
}

#[cfg(test)]
impl Resolver {
    pub fn fixed(names: std::collections::HashMap<String, Vec<IpAddr>>) -> Resolver {
        Resolver::Fixed(FixedNames { names, asked: Default::default() })
    }

    /// The names looked up so far (empty for `System`).
    pub fn asked(&self) -> Vec<String> {
        match self {
            Resolver::Fixed(f) => f.asked.lock().unwrap().clone(),
            Resolver::System => Vec::new(),
        }
    }
}

impl Resolver {
    pub(super) async fn resolve(&self, name: &str, run_lookups: &std::sync::Arc<tokio::sync::Semaphore>) -> Result<Vec<IpAddr>, LookupError> {
        match self {
            Resolver::System => match tokio::time::timeout(RESOLVE_TIMEOUT, system_lookup(name, run_lookups)).await {
                Ok(Ok(addrs)) => Ok(addrs.into_iter().map(canonical_ip).collect()),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(LookupError::Failed("name resolution timed out".into())),
            },
            #[cfg(test)]
            Resolver::Fixed(f) => {
                f.asked.lock().unwrap().push(name.to_string());
                match f.names.get(name) {
                    None => Err(LookupError::NotFound("not found".into())),
                    Some(a) if a.is_empty() => Err(LookupError::Failed("name resolution timed out".into())),
                    Some(a) => Ok(a.clone()),
                }
            }
        }
    }
}

/// `getaddrinfo` in a thread of its own, once a slot of the run and one of the process are free.
/// The thread holds both slots until the system resolver answers, even after the caller gave up:
/// so the run's threads, and the process's, stay bounded.
async fn system_lookup(name: &str, run_lookups: &std::sync::Arc<tokio::sync::Semaphore>) -> Result<Vec<IpAddr>, LookupError> {
    let failed = |why: String| LookupError::Failed(why);
    let run_slot = run_lookups.clone().acquire_owned().await.map_err(|e| failed(e.to_string()))?;
    let process_slot = PROCESS_LOOKUPS.acquire().await.map_err(|e| failed(e.to_string()))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let name = name.to_string();
    std::thread::Builder::new()
        .name("sandspawn-resolve".into())
        .spawn(move || {
            let found = super::getaddrinfo::lookup(&name);
            drop((run_slot, process_slot));
            let _ = tx.send(found);
        })
        .map_err(|e| failed(format!("cannot start a lookup: {e}")))?;
    rx.await.map_err(|_| failed("the lookup ended without an answer".into()))?
}
