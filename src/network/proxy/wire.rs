//! What a plain-HTTP client connection's reads bring in, paid for from the run's allowance
//! (budget.rs). hyper parses a chunked body's framing (chunk-size lines, whitespace after them,
//! extensions, trailers) a byte at a time, and an endless chunk-size line (`000…`, or `1` and
//! endless spaces) makes no data frame at all: paying per frame (metered.rs) would let a command
//! spend 30-40 times its own CPU on the host for nothing. So every byte read off the client costs
//! `FRAMING_BYTE` as it is read, and is paid back once the proxy knows what it was: a request head
//! (estimated from the parsed request), a `Content-Length` body (cheap to move: the whole declared
//! length is paid back at once), a chunked body's data (with a chunk-size line's worth of framing
//! per frame), or bytes a CONNECT hands to its tunnel. What stays unpaid back is framing. Once the
//! run's allowance is overdrawn, a connection owing more than `LAG` (more than a head read before
//! it is parsed) is cut off and reported (`tiny_chunks`).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context as TaskContext, Poll};

use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::Request;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::budget::FRAMING_BYTE;
use super::Context;
use crate::network::denials::Via;
use crate::network::policy::Refusal;

/// What a connection may owe once the allowance is overdrawn: a head read but not yet parsed.
pub const LAG: u64 = 16 * 1024;
/// Framing paid back with each data frame of a chunked body: a chunk-size line and its CRLFs.
pub const FRAMING_PER_FRAME: u64 = 24;

type Report = Box<dyn Fn() + Send + Sync>;

/// One client connection's account.
pub struct Wire {
    ctx: Arc<Context>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    read: u64,
    credited: u64,
    /// What the allowance was charged for (`read - credited`, or nothing).
    owed: u64,
    cut: bool,
    /// Reports a cut off for the last request forwarded (its `Payer`, metered.rs).
    report: Option<Report>,
}

impl Wire {
    pub fn new(ctx: Arc<Context>) -> Arc<Wire> {
        Arc::new(Wire { ctx, state: Mutex::new(State::default()) })
    }

    /// `n` bytes read: `false` once the connection is cut off.
    fn read(&self, n: usize) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.cut {
            return false;
        }
        s.read += n as u64;
        self.settle(&mut s);
        if s.owed <= LAG || !self.ctx.chunks.overdrawn() {
            return true;
        }
        s.cut = true;
        match &s.report {
            Some(report) => report(),
            None => self.ctx.denials.record("", 0, Via::Http, Refusal::TinyChunks),
        }
        false
    }

    /// `n` of the bytes read (or about to be) were not framing.
    pub fn credit(&self, n: u64) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.credited = s.credited.saturating_add(n);
        self.settle(&mut s);
    }

    /// A request was parsed: its head, and a `Content-Length` body, are paid back.
    pub fn parsed(&self, req: &Request<Incoming>) {
        let h = req.headers();
        let line = req.method().as_str().len() + req.uri().to_string().len() + "  HTTP/1.1\r\n\r\n".len();
        let fields: usize = h.iter().map(|(n, v)| n.as_str().len() + v.len() + ": \r\n".len()).sum();
        let length = match h.contains_key(TRANSFER_ENCODING) {
            true => 0,
            false => h.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok()).unwrap_or(0),
        };
        self.credit((line + fields) as u64 + length);
    }

    /// A request is forwarded: a cut off from now on is reported by `report` (for its host).
    pub fn forwarding(&self, report: impl Fn() + Send + Sync + 'static) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).report = Some(Box::new(report));
    }

    fn settle(&self, s: &mut State) {
        let owed = s.read.saturating_sub(s.credited);
        let delta = owed as i64 - s.owed as i64;
        self.ctx.chunks.charge(delta.saturating_mul(FRAMING_BYTE));
        s.owed = owed;
    }
}

/// The client's socket, reads counted on its `Wire`.
pub struct Wired {
    inner: TcpStream,
    wire: Arc<Wire>,
}

impl Wired {
    pub fn new(inner: TcpStream, wire: Arc<Wire>) -> Wired {
        Wired { inner, wire }
    }

    /// The socket again, for a tunnel: `handed` bytes read past the CONNECT go to it, not to hyper.
    pub fn into_tunnel(self, handed: usize) -> TcpStream {
        self.wire.credit(handed as u64);
        self.inner
    }
}

impl AsyncRead for Wired {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let n = buf.filled().len() - before;
        if n > 0 && !self.wire.read(n) {
            buf.set_filled(before);
            return Poll::Ready(Err(io::Error::other(Refusal::TinyChunks.explain())));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Wired {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
