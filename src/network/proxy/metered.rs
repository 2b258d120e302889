//! Chunked bodies on the plain-HTTP path, paid for frame by frame from the run's allowance of
//! chunks (budget.rs); one that runs out is cut off, and the run's denials say so.

use std::error::Error;
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use super::budget::BYTES_PER_CHUNK;
use super::wire::{Wire, FRAMING_PER_FRAME};
use super::Context;
use crate::network::denials::Via;
use crate::network::policy::Refusal;

pub type BoxError = Box<dyn Error + Send + Sync>;

/// The error a body cut off for its chunks ends with.
#[derive(Debug)]
pub struct TinyChunks;

impl fmt::Display for TinyChunks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Refusal::TinyChunks.explain())
    }
}

impl Error for TinyChunks {}

/// Who pays for a forwarded exchange's chunked bodies, and whether one was cut off (its denial
/// then recorded, once).
pub struct Payer {
    ctx: Arc<Context>,
    host: String,
    port: u16,
    refused: AtomicBool,
}

impl Payer {
    pub fn new(ctx: Arc<Context>, host: String, port: u16) -> Arc<Payer> {
        Arc::new(Payer { ctx, host, port, refused: AtomicBool::new(false) })
    }

    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    /// Pay for a frame of `len` bytes, or take it `free`.
    fn pay(&self, len: usize, free: bool) -> bool {
        if self.refused() {
            return false;
        }
        if free || self.ctx.chunks.pay(len) {
            return true;
        }
        self.refuse();
        false
    }

    /// Cut off: the denial is recorded once.
    pub fn refuse(&self) {
        if !self.refused.swap(true, Ordering::Relaxed) {
            self.ctx.denials.record(&self.host, self.port, Via::Http, Refusal::TinyChunks);
        }
    }
}

/// A body paid for frame by frame when it is chunked (`payer`); otherwise passed through (a
/// `Content-Length` body comes in frames of what one read brought, each a write of the sender's).
/// What was read of a body whose length its head did not give (chunked, or an answer read until
/// the upstream closes) is also paid back to its connection's `wire`: it is not framing.
pub struct Metered<B> {
    inner: B,
    payer: Option<Arc<Payer>>,
    wire: Option<Arc<Wire>>,
    /// The last frame was 1 KiB or more: a small one right after it is the rest of a chunk that
    /// one read cut in two, free (a big chunk is never the reason for a cut).
    after_big: bool,
}

impl<B: Body> Metered<B> {
    pub fn new(inner: B, payer: Option<Arc<Payer>>) -> Self {
        Metered { inner, payer, wire: None, after_big: false }
    }

    /// Pay back to `wire` what is read of the body, unless its head already did (wire.rs).
    pub fn read_from(self, wire: Arc<Wire>) -> Self {
        let wire = self.inner.size_hint().exact().is_none().then_some(wire);
        Metered { wire, ..self }
    }
}

impl<B> Body for Metered<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        let Some(len) = frame.data_ref().map(|d| d.len()) else {
            return Poll::Ready(Some(Ok(frame)));
        };
        let free = std::mem::replace(&mut self.after_big, len >= BYTES_PER_CHUNK as usize);
        if let Some(payer) = &self.payer {
            if !payer.pay(len, free) {
                return Poll::Ready(Some(Err(Box::new(TinyChunks))));
            }
        }
        if let Some(wire) = &self.wire {
            let framing = if self.payer.is_some() { FRAMING_PER_FRAME } else { 0 };
            wire.credit(len as u64 + framing);
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

