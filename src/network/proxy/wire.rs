//! What a plain-HTTP connection's reads bring in, the client's and the upstream's (an allowed
//! server's answer), paid for from the run's allowance (budget.rs). hyper parses a chunked body's
//! framing (chunk-size lines, whitespace after them, extensions, trailers) a byte at a time, and an
//! endless chunk-size line (`000…`, or `1` and endless spaces) makes no data frame at all: paying
//! per frame (metered.rs) would let a command (or a hostile server) spend 30-40 times the
//! command's CPU on the host for nothing. So every byte read costs `FRAMING_BYTE` as it is read,
//! and is paid back once the proxy knows what it was: a head (estimated from the parsed request or
//! answer), a body of known length (the whole length is paid back at once), a chunked body's data
//! (with a chunk-size line's worth of framing per frame), an answer's data read until the
//! upstream closes, or bytes a CONNECT hands to its tunnel. What stays unpaid back is framing.
//! Once the run's allowance is overdrawn, a connection that still owes more than `LAG` (more than
//! a head read before it is parsed) when it reads again is cut off and reported (`tiny_chunks`).
//! Judged then, not as the bytes arrive: hyper reads again only once it has parsed what it read
//! and handed its data frames on (metered.rs pays them back as it takes them), so a big read of
//! body data is never the reason (an attacker's review, rfix26c: an 8 MiB upload in 64 KiB chunks
//! was cut off because its reads were charged before hyper made them frames).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context as TaskContext, Poll};

use hyper::body::{Body, Incoming};
use hyper::header::HeaderMap;
use hyper::{Request, Response};
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

/// One connection's account: a client's, or an upstream's for one forwarded exchange.
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
        // What earlier reads left unpaid, hyper having had the chance to make them frames.
        let unpaid = s.owed;
        s.read += n as u64;
        self.settle(&mut s);
        if unpaid <= LAG || !self.ctx.chunks.overdrawn() {
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

    /// A request was parsed: its head, and a body of known length, are paid back.
    pub fn parsed(&self, req: &Request<Incoming>) {
        let line = req.method().as_str().len() + req.uri().to_string().len() + "  HTTP/1.1\r\n".len();
        self.credit(line as u64 + head_and_length(req.headers(), req.body()));
    }

    /// An answer's head was parsed (on an upstream connection): the same.
    pub fn answered(&self, resp: &Response<Incoming>) {
        let reason = resp.status().canonical_reason().unwrap_or("").len();
        let line = "HTTP/1.1 200 \r\n".len() + reason;
        self.credit(line as u64 + head_and_length(resp.headers(), resp.body()));
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

/// A head's fields and the blank line after them, and its body's length when hyper knows it from
/// the head (`Content-Length`, or none at all, as for an answer to HEAD; not a chunked body).
fn head_and_length(headers: &HeaderMap, body: &Incoming) -> u64 {
    let fields: usize = headers.iter().map(|(n, v)| n.as_str().len() + v.len() + ": \r\n".len()).sum();
    (fields + "\r\n".len()) as u64 + body.size_hint().exact().unwrap_or(0)
}

/// A socket, its reads counted on a `Wire`.
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
