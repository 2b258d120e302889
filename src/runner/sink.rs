//! Where a run's output goes as it arrives (the JavaScript callback in the addon), with backpressure.

use std::future::Future;
use std::pin::Pin;

use super::output::Stream;

/// Receives every output chunk as it arrives, before any truncation. The returned future resolves
/// when the sink can take more (backpressure), so a slow consumer slows the reader instead of
/// queueing unbounded memory.
pub trait OutputSink: Send + Sync + 'static {
    fn chunk(&self, stream: Stream, data: &[u8]) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}
