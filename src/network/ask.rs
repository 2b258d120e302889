//! Asking about a host while its request waits (`NetworkPolicy.onRequest`): the run's proxy holds
//! a connection to a host on neither list until the caller answers. An address literal is asked
//! about only once it passed the address guard; a name before it is looked up (so a name the
//! command makes up reaches no name server unless the caller allows it), and an allowed name that
//! resolves to a refused address is then refused as `private_address`.
//!
//! One question per host, port and kind (plain HTTP, or a tunnel: CONNECT and SOCKS5) at a time:
//! concurrent requests for it wait for the same answer. `allow-run` and `deny-run` answer every
//! later request of the run for that host, port and kind. The
//! questions in flight are bounded per run (`MAX_OPEN`): a command that opens hundreds of unknown
//! hosts at once queues behind them, each within its timeout. No answer in time, a callback that
//! throws, rejects or answers something else: a deny. The question runs as a task of the proxy,
//! so a client that gives up does not cancel the answer the others wait for, and the end of the
//! run cancels every question still open.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{watch, Semaphore};

use super::denials::Via;

/// What the caller answered (`NetworkDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    Allow,
    Deny,
    AllowRun,
    DenyRun,
}

impl Decision {
    pub fn parse(s: &str) -> Option<Decision> {
        match s {
            "allow" => Some(Decision::Allow),
            "deny" => Some(Decision::Deny),
            "allow-run" => Some(Decision::AllowRun),
            "deny-run" => Some(Decision::DenyRun),
            _ => None,
        }
    }

    fn allows(self) -> bool {
        matches!(self, Decision::Allow | Decision::AllowRun)
    }

    fn for_the_run(self) -> bool {
        matches!(self, Decision::AllowRun | Decision::DenyRun)
    }
}

/// Where a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Callback,
    /// No answer within `requestTimeoutMs`: denied.
    Timeout,
    /// The callback threw, rejected or answered something that is no decision: denied.
    Error,
}

/// One entry of `SpawnResult.networkDecisions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkDecision {
    pub host: String,
    pub port: u16,
    pub decision: Decision,
    pub source: Source,
}

/// What the caller is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub host: String,
    pub port: u16,
    pub protocol: Via,
}

/// The caller's side: the binding calls JavaScript; tests answer from a table. `Err` is a callback
/// that failed (its text is for the caller's own warning, already given).
pub trait Asker: Send + Sync {
    fn ask(&self, q: Question) -> Pin<Box<dyn Future<Output = Result<Decision, String>> + Send>>;
}

/// `Arc<dyn Asker>` that can sit in a request (which is `Debug` and `Clone`).
#[derive(Clone)]
pub struct AskHandle(pub Arc<dyn Asker>);

impl std::fmt::Debug for AskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AskHandle")
    }
}

/// Questions in flight per run; more wait for a free one (within their timeout).
pub const MAX_OPEN: usize = 4;
/// Decisions kept per run; later ones still apply, only not listed.
pub const MAX_DECISIONS: usize = 256;

/// What one question covers: a host and port, and whether the proxy parses the requests (plain
/// HTTP, `true`) or moves raw bytes (a CONNECT or SOCKS5 tunnel): a caller that allowed inspected
/// requests to a host has not allowed a tunnel there.
type Key = (String, u16, bool);

/// The questions of one run.
pub struct Questions {
    asker: Arc<dyn Asker>,
    timeout: Duration,
    open: Arc<Semaphore>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// `allow-run` (true) and `deny-run` (false) answers.
    for_the_run: HashMap<Key, bool>,
    /// Questions being asked: their answer, once there is one.
    pending: HashMap<Key, watch::Receiver<Option<bool>>>,
    log: Vec<NetworkDecision>,
}

/// Where the answer of a question comes from: one already given for the run, one being asked, or
/// a new question (whose sender the caller must complete).
enum Lookup {
    Known(bool),
    Wait(watch::Receiver<Option<bool>>),
    Ask(watch::Sender<Option<bool>>, watch::Receiver<Option<bool>>),
}

impl Questions {
    pub fn new(asker: Arc<dyn Asker>, timeout: Duration) -> Questions {
        Questions { asker, timeout, open: Arc::new(Semaphore::new(MAX_OPEN)), state: Mutex::new(State::default()) }
    }

    /// Whether the request may go on. `spawn` runs the question as a task of the run's proxy.
    pub async fn allowed(self: &Arc<Self>, q: Question, spawn: impl FnOnce(Pin<Box<dyn Future<Output = ()> + Send>>)) -> bool {
        let key = (q.host.clone(), q.port, q.protocol == Via::Http);
        let mut rx = match self.lookup(&key) {
            Lookup::Known(allowed) => return allowed,
            Lookup::Wait(rx) => rx,
            Lookup::Ask(tx, rx) => {
                let me = self.clone();
                spawn(Box::pin(async move { me.ask(q, key, tx).await }));
                rx
            }
        };
        // A question cancelled with the run (sender dropped) is a deny.
        matches!(rx.wait_for(|a| a.is_some()).await.map(|a| *a), Ok(Some(true)))
    }

    fn lookup(&self, key: &Key) -> Lookup {
        let mut st = self.state.lock().unwrap();
        if let Some(allowed) = st.for_the_run.get(key) {
            return Lookup::Known(*allowed);
        }
        if let Some(rx) = st.pending.get(key) {
            return Lookup::Wait(rx.clone());
        }
        let (tx, rx) = watch::channel(None);
        st.pending.insert(key.clone(), rx.clone());
        Lookup::Ask(tx, rx)
    }

    async fn ask(&self, q: Question, key: Key, tx: watch::Sender<Option<bool>>) {
        let asked = async {
            let _slot = self.open.acquire().await;
            self.asker.ask(q).await
        };
        let (decision, source) = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(d)) => (d, Source::Callback),
            Ok(Err(_)) => (Decision::Deny, Source::Error),
            Err(_) => (Decision::Deny, Source::Timeout),
        };
        {
            let mut st = self.state.lock().unwrap();
            if decision.for_the_run() {
                st.for_the_run.insert(key.clone(), decision.allows());
            }
            st.pending.remove(&key);
            if st.log.len() < MAX_DECISIONS {
                st.log.push(NetworkDecision { host: key.0, port: key.1, decision, source });
            }
        }
        tx.send_replace(Some(decision.allows()));
    }

    /// Every decision so far, in the order made.
    pub fn decisions(&self) -> Vec<NetworkDecision> {
        self.state.lock().unwrap().log.clone()
    }
}

#[cfg(test)]
mod tests;
