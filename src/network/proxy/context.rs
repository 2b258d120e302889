//! What every task of one run's proxy shares: the policy, the refusals so far, the run's connection
//! and lookup slots, and the cancellation that ends them all with the run.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::resolver::Resolver;
use crate::network::credential::Credential;
use crate::network::denials::DenialLog;
use crate::network::policy::NetworkPolicy;

/// Client connections a run holds at once, tunnels included (each is at most two of the host's
/// descriptors: the client's and the upstream's). Beyond it a new connection is refused with a
/// `connection_limit` denial; other runs and the host are not touched.
pub const MAX_CONNECTIONS: usize = 256;
/// Connections over `MAX_CONNECTIONS` being refused at once (each waits up to a second for its
/// first byte, to refuse in the client's protocol). Past both, a new connection is closed as soon
/// as it is accepted: what a run keeps opening holds none of the host's descriptors.
/// README's bound of a run's descriptors (598) counts these, the slots' two each, the splice pipes'
/// (`splice::PIPES_PER_RUN`) and the lookups' (`resolver::LOOKUPS_PER_RUN`).
pub const MAX_REFUSING: usize = 16;
/// The first byte must arrive within this time.
pub(super) const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(30);

/// What every task of one run's proxy shares.
pub struct Context {
    pub policy: NetworkPolicy,
    pub denials: DenialLog,
    /// The host's own addresses with their interfaces' networks, refused like loopback (listed
    /// once, when the run starts).
    pub own: Vec<ipnet::IpNet>,
    pub resolver: Resolver,
    /// This run's connection slots (`MAX_CONNECTIONS`): one per client connection, kept by its
    /// tunnel when it becomes one.
    pub(super) slots: Arc<Semaphore>,
    /// Connections being refused over the limit (`MAX_REFUSING`).
    pub(super) refusing: Arc<Semaphore>,
    /// This run's concurrent name lookups (`resolver::LOOKUPS_PER_RUN`) and the answers it reuses.
    pub lookups: Arc<super::resolver::RunLookups>,
    /// A tunnel idle this long is closed (`relay::TUNNEL_IDLE`; shorter in tests).
    pub tunnel_idle: Duration,
    /// What every request must carry (macOS, where the listener is on the host's loopback);
    /// `None` on Linux, where only the sandbox's own namespace can reach the listener.
    pub credential: Option<Credential>,
    /// Who decides about hosts on neither list (`onRequest`); `None`: they are refused.
    pub questions: Option<Arc<crate::network::ask::Questions>>,
    /// The proxy requests are forwarded through (`upstreamProxy`); `None`: direct connections.
    pub upstream: Option<crate::network::upstream::Upstream>,
    /// Small chunks of plain-HTTP bodies this run may still send or be sent (`budget`).
    pub(super) chunks: super::budget::ChunkBudget,
    /// This run's splice pipes (Linux: `splice::PIPES_PER_RUN`, taken by tunnels moving bytes).
    pub(super) pipes: Arc<Semaphore>,
    /// This run's pace of refusals (`pace::REFUSALS`): each refused request, and each that failed
    /// to reach an allowed host, is answered at its turn, so what they cost the host per second is
    /// bounded whatever the command sends.
    pub(super) refusals: crate::network::pace::Paced,
    pub(super) token: CancellationToken,
    pub(super) tracker: TaskTracker,
}

impl Context {
    /// Run `fut` as part of this proxy: cancelled, and waited for, when the run ends.
    pub fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        let token = self.token.clone();
        self.tracker.spawn(async move {
            token.run_until_cancelled(fut).await;
        });
    }
}
