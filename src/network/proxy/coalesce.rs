//! Bodies forwarded on the plain-HTTP path, handed over in frames of up to `MAX_FRAME` bytes.
//!
//! hyper gives a chunked body one chunk at a time, and passes each from the connection that
//! decoded it to the one that re-encodes it through a one-item channel. Forwarded as is, a command
//! writing `1\r\nX\r\n` over and over (almost free for it) costs the host's proxy a hand-over
//! between two tasks, a wake-up of the other runtime thread and a `writev` per byte: some 30x the
//! command's CPU, on the runtime every run's proxy shares, and outside the run's `cpuTime`.
//! Gathered here, the frames already decoded go upstream as one chunk and one write.
//!
//! Nothing waits for data to arrive: when the source has nothing ready the body yields for one turn
//! of the scheduler (the task that decodes the next chunk is runnable, as taking the last one woke
//! it), again while that brought more, and then hands over what it holds; so a lone small chunk is
//! late by a turn of the scheduler, not by a timer, and a streaming request still streams.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use bytes::{Bytes, BytesMut};
use hyper::body::{Body, Frame, SizeHint};

/// Large enough that a write carries many tiny chunks, small enough that a frame is not held long.
pub const MAX_FRAME: usize = 64 * 1024;

pub struct Coalesced<B> {
    inner: B,
    buf: BytesMut,
    /// A trailers frame, or the end (`Some(None)`), read while data was held: handed over after it.
    after: Option<Option<Frame<Bytes>>>,
    /// Whether data came since the last turn began: if so, the next `Pending` yields once more.
    grew: bool,
    turn: Option<Arc<Turn>>,
}

/// One turn of the scheduler: woken by tokio once the tasks ready now (the decoding one among
/// them) have run. hyper polls a body again and again within one poll of its connection, so
/// yielding by waking the task at once would not let anything else run in between.
struct Turn {
    over: AtomicBool,
    task: Waker,
}

impl Turn {
    fn start(cx: &mut Context<'_>) -> Arc<Turn> {
        let turn = Arc::new(Turn { over: AtomicBool::new(false), task: cx.waker().clone() });
        let waker = Waker::from(turn.clone());
        // Its first poll hands the waker to the scheduler's deferred list and returns `Pending`.
        let _ = pin!(tokio::task::yield_now()).poll(&mut Context::from_waker(&waker));
        turn
    }
}

impl Wake for Turn {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.over.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}

impl<B> Coalesced<B> {
    pub fn new(inner: B) -> Self {
        Coalesced { inner, buf: BytesMut::new(), after: None, grew: false, turn: None }
    }

    fn take(&mut self) -> Frame<Bytes> {
        self.grew = false;
        self.turn = None;
        Frame::data(self.buf.split().freeze())
    }
}

impl<B> Body for Coalesced<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        loop {
            if this.after.is_some() {
                if !this.buf.is_empty() {
                    return Poll::Ready(Some(Ok(this.take())));
                }
                // Trailers are the last frame: after them, and after the end, only the end.
                return Poll::Ready(this.after.replace(None).flatten().map(Ok));
            }
            let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending if this.buf.is_empty() => return Poll::Pending,
                Poll::Pending => {
                    if this.turn.as_ref().is_some_and(|t| !t.over.load(Ordering::Acquire)) {
                        return Poll::Pending;
                    }
                    if !this.grew {
                        return Poll::Ready(Some(Ok(this.take())));
                    }
                    this.grew = false;
                    this.turn = Some(Turn::start(cx));
                    return Poll::Pending;
                }
                // An error ends the request; what was held is not worth forwarding before it.
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => frame,
                Poll::Ready(None) => {
                    this.after = Some(None);
                    continue;
                }
            };
            let data = match frame.into_data() {
                Ok(data) => data,
                Err(other) => {
                    this.after = Some(Some(other));
                    continue;
                }
            };
            // A large frame on its own (a `Content-Length` body comes in read-buffer sized
            // pieces) goes on without a copy.
            if this.buf.is_empty() && data.len() >= MAX_FRAME {
                return Poll::Ready(Some(Ok(Frame::data(data))));
            }
            this.buf.extend_from_slice(&data);
            this.grew = true;
            if this.buf.len() >= MAX_FRAME {
                return Poll::Ready(Some(Ok(this.take())));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.after {
            Some(after) => self.buf.is_empty() && after.is_none(),
            None => self.buf.is_empty() && self.inner.is_end_stream(),
        }
    }

    /// The source's, plus what is held: hyper sends `Content-Length` when the size is exact.
    fn size_hint(&self) -> SizeHint {
        let held = self.buf.len() as u64;
        if self.after.is_some() {
            return SizeHint::with_exact(held);
        }
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + held);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + held);
        }
        hint
    }
}
