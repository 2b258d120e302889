//! One run's proxy: serves the listeners the helper handed over (or any listener, on hosts where
//! the proxy port is a host port), tells HTTP from SOCKS by the first byte, and records refusals.
//! Every task it starts (connections, tunnels, upstream connections) is tracked and cancelled when
//! the run ends, so no socket or task outlives the run.

mod budget;
mod chain;
mod coalesce;
mod context;
mod dial;
mod http;
mod local_names;
mod metered;
mod relay;
mod resolver;
mod socks5;
#[cfg(target_os = "linux")]
mod splice;
mod target;
mod wire;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use context::{Context, MAX_CONNECTIONS};
use context::FIRST_BYTE_TIMEOUT;
pub use resolver::Resolver;

use super::ask::{NetworkDecision, Omitted, Questions};
use super::credential::Credential;
use super::denials::{DenialLog, NetworkDenial};
use super::guard::own_addresses;
use super::policy::NetworkPolicy;

/// The proxy of one run. Dropping it cancels everything it runs; `finish` also waits for that.
pub struct RunProxy {
    ctx: Arc<Context>,
}

/// What a run's proxy has besides its policy: who to ask about unknown hosts (`onRequest`), and
/// the proxy it forwards through (`upstreamProxy`).
#[derive(Default)]
pub struct Extras {
    pub questions: Option<Arc<Questions>>,
    pub upstream: Option<super::upstream::Upstream>,
}

/// Splice pipes a run may hold at once (none where tunnels are copied).
#[cfg(target_os = "linux")]
const PIPES: usize = splice::PIPES_PER_RUN;
#[cfg(not(target_os = "linux"))]
const PIPES: usize = 0;

/// What a finished proxy reports.
pub struct Finished {
    pub denials: Vec<NetworkDenial>,
    /// Refused requests `denials` leaves out (`denials::MAX_ENTRIES`).
    pub denials_omitted: u64,
    pub decisions: Vec<NetworkDecision>,
    /// Decisions `decisions` leaves out (`ask::MAX_DECISIONS`, `ask::MAX_ALLOWS`), denials and
    /// repeated allows apart.
    pub decisions_omitted: Omitted,
}

impl RunProxy {
    pub fn new(policy: NetworkPolicy, resolver: Resolver, extras: Extras) -> RunProxy {
        Self::with_options(policy, resolver, relay::TUNNEL_IDLE, None, extras)
    }

    fn with_options(policy: NetworkPolicy, resolver: Resolver, tunnel_idle: Duration, credential: Option<Credential>, extras: Extras) -> RunProxy {
        RunProxy {
            ctx: Arc::new(Context {
                policy,
                denials: DenialLog::default(),
                own: own_addresses(),
                resolver,
                slots: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
                refusing: Arc::new(Semaphore::new(context::MAX_REFUSING)),
                lookups: Arc::new(resolver::RunLookups::new()),
                tunnel_idle,
                credential,
                questions: extras.questions,
                upstream: extras.upstream,
                chunks: budget::ChunkBudget::default(),
                pipes: Arc::new(Semaphore::new(PIPES)),
                refusals: super::pace::Paced::new(super::pace::REFUSALS),
                token: CancellationToken::new(),
                tracker: TaskTracker::new(),
            }),
        }
    }

    /// The proxy of a sandboxed run: receive the listeners the helper sends on `bridge` (the
    /// host's end of `network::bridge::socket_pair`), then serve them until the run ends.
    pub fn start(bridge: std::os::fd::OwnedFd, policy: NetworkPolicy, extras: Extras) -> RunProxy {
        let proxy = RunProxy::new(policy, Resolver::System, extras);
        let ctx = proxy.ctx.clone();
        proxy.spawn(async move {
            // Nothing received (EOF): the helper stopped before the command; its report says why.
            if let Ok(Some(listeners)) = super::bridge::receive(bridge).await {
                for l in listeners {
                    ctx.spawn(accept_loop(l, ctx.clone()));
                }
            }
        });
        proxy
    }

    /// The proxy of a macOS run: serve the host loopback listeners `network::loopback` bound for
    /// it, answering only requests that carry its credential. Must be called inside a tokio runtime.
    pub fn on_loopback(loopback: super::loopback::Loopback, policy: NetworkPolicy, extras: Extras) -> std::io::Result<RunProxy> {
        let proxy = RunProxy::with_options(policy, Resolver::System, relay::TUNNEL_IDLE, Some(loopback.endpoint.credential), extras);
        for l in loopback.listeners {
            l.set_nonblocking(true)?;
            proxy.serve(TcpListener::from_std(l)?);
        }
        Ok(proxy)
    }

    /// Serve `listener` until the run ends. Must be called inside a tokio runtime.
    pub fn serve(&self, listener: TcpListener) {
        let ctx = self.ctx.clone();
        self.ctx.spawn(accept_loop(listener, ctx));
    }

    /// Run `fut` (e.g. receiving the listeners first) as one of this proxy's tasks.
    pub fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        self.ctx.spawn(fut)
    }

    /// Stop serving, close every socket (and every question still open), and return what was
    /// refused and decided.
    pub async fn finish(self) -> Finished {
        self.end();
        self.ctx.tracker.close();
        self.ctx.tracker.wait().await;
        let (decisions, decisions_omitted) = self.ctx.questions.as_ref().map(|q| q.decisions()).unwrap_or_default();
        let (denials, denials_omitted) = self.ctx.denials.snapshot();
        Finished { denials, denials_omitted, decisions, decisions_omitted }
    }

    /// The names the proxy looked up so far (tests with a fixed resolver).
    #[cfg(test)]
    pub fn looked_up(&self) -> Vec<String> {
        self.ctx.resolver.asked()
    }

    /// The run is over: no question is asked any more (before the tasks are cancelled, so one
    /// woken by a slot the cancellation frees cannot ask), and every task is cancelled.
    fn end(&self) {
        if let Some(q) = &self.ctx.questions {
            q.end();
        }
        self.ctx.token.cancel();
    }

    /// Tasks still running (tests check that nothing outlives `finish`).
    pub fn live_tasks(&self) -> usize {
        self.ctx.tracker.len()
    }
}

impl Drop for RunProxy {
    fn drop(&mut self) {
        self.end();
    }
}

async fn accept_loop(listener: TcpListener, ctx: Arc<Context>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let c = ctx.clone();
                if let Ok(slot) = ctx.slots.clone().try_acquire_owned() {
                    ctx.spawn(connection(stream, c, slot));
                } else if let Ok(refusing) = ctx.refusing.clone().try_acquire_owned() {
                    ctx.spawn(refuse_over_limit(stream, c, refusing));
                } else {
                    // Past both bounds (`MAX_REFUSING`): closed at once, so a flood holds none of
                    // the host's descriptors. Still accepted, not left in the listen backlog: a
                    // client queued there may give up, and its dead connection would later take
                    // a slot that a live one was refused for.
                    ctx.denials.record("", 0, super::denials::Via::Connect, super::policy::Refusal::ConnectionLimit);
                    drop(stream);
                }
            }
            // Out of descriptors or a connection reset before accept: wait, then go on serving.
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// The run holds `MAX_CONNECTIONS` already: say so in the client's own protocol, record it, close.
async fn refuse_over_limit(mut stream: TcpStream, ctx: Arc<Context>, _refusing: OwnedSemaphorePermit) {
    let mut first = [0u8; 1];
    let protocol = match tokio::time::timeout(Duration::from_secs(1), stream.peek(&mut first)).await {
        Ok(Ok(1)) => first[0],
        _ => 0,
    };
    let reason = super::policy::Refusal::ConnectionLimit;
    // Answered at its turn in the run's pace of refusals, holding one of the `MAX_REFUSING`
    // places meanwhile: past them, connections are closed at once.
    ctx.refusals.turn().await;
    if protocol == 5 {
        ctx.denials.record("", 0, super::denials::Via::Socks5, reason);
        // Greeting answered "no acceptable method": the client gives up at once.
        let _ = stream.write_all(&[5, 0xff]).await;
    } else {
        ctx.denials.record("", 0, super::denials::Via::Connect, reason);
        let body = format!("sandspawn: proxy connection refused ({}): {}\n", reason.as_str(), reason.explain());
        let head = format!(
            "HTTP/1.1 503 Service Unavailable\r\nX-Sandspawn-Denied: {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            reason.as_str(),
            body.len()
        );
        let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
    }
    let _ = stream.shutdown().await;
}

async fn connection(mut stream: TcpStream, ctx: Arc<Context>, slot: OwnedSemaphorePermit) {
    let mut first = [0u8; 1];
    match tokio::time::timeout(FIRST_BYTE_TIMEOUT, stream.peek(&mut first)).await {
        Ok(Ok(1)) => {}
        _ => return,
    }
    match first[0] {
        5 => socks5::serve(stream, ctx).await,
        // SOCKS4 cannot carry what the policy needs reliably (4a names are optional): "rejected".
        4 => {
            // Read the request first: closing with unread bytes would reset the connection, and the
            // client would see a reset instead of the rejection.
            let mut request = [0u8; 512];
            let _ = tokio::time::timeout(Duration::from_secs(1), tokio::io::AsyncReadExt::read(&mut stream, &mut request)).await;
            let _ = stream.write_all(&[0, 0x5b, 0, 0, 0, 0, 0, 0]).await;
            let _ = stream.shutdown().await;
        }
        _ => http::serve(stream, ctx, slot).await,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_auth;
#[cfg(test)]
mod tests_chain;
#[cfg(test)]
mod tests_lookups;
#[cfg(test)]
mod tests_body;
#[cfg(all(test, target_os = "linux"))]
mod tests_chunk_cost;
#[cfg(test)]
mod tests_budget;
#[cfg(test)]
mod tests_framing;
