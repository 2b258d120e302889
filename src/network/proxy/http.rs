//! HTTP/1.1 on the proxy port, parsed by hyper: `CONNECT host:port` tunnels, and absolute-form
//! requests (`GET http://host/path`) forwarded one by one. The policy is checked per request, so a
//! keep-alive connection cannot switch to a denied host after an allowed one. Forwarded requests
//! are rebuilt from the parsed URI (origin-form path, `Host` from the authority, hop-by-hop headers
//! dropped), so what the upstream sees is what the policy checked. TRACE and TRACK are refused and
//! `Max-Forwards` dropped: either would let the user's upstream proxy answer, echoing its credential.

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_TYPE, HOST, MAX_FORWARDS, TRANSFER_ENCODING, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;

use super::metered::{BoxError, Metered, Payer};
use super::wire::{Wire, Wired};
use super::coalesce::Coalesced;
use super::dial::{dial, DialError};
use super::Context;
use crate::network::denials::Via;
use crate::network::host::{sanitize, Host};
use crate::network::policy::Refusal;

/// Request line plus headers (Codex uses the same cap); larger is refused by hyper with 431.
const MAX_HEADER_BYTES: usize = 64 * 1024;
/// A client that sends its headers slower than this is disconnected (slowloris).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

type Body = BoxBody<Bytes, BoxError>;

/// Serve one client connection, which holds `slot` of the run's connections; a CONNECT that dials
/// takes the slot over to its tunnel, which outlives this function.
pub async fn serve(stream: TcpStream, ctx: Arc<Context>, slot: OwnedSemaphorePermit) {
    let slot = Arc::new(Mutex::new(Some(slot)));
    let wire = Wire::new(ctx.clone());
    let svc = {
        let ctx = ctx.clone();
        let wire = wire.clone();
        service_fn(move |req| handle(req, ctx.clone(), slot.clone(), wire.clone()))
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(MAX_HEADER_BYTES)
        .serve_connection(TokioIo::new(Wired::new(stream, wire)), svc)
        .with_upgrades();
    let _ = conn.await;
}

async fn handle(req: Request<Incoming>, ctx: Arc<Context>, slot: Arc<Mutex<Option<OwnedSemaphorePermit>>>, wire: Arc<Wire>) -> Result<Response<Body>, Infallible> {
    wire.parsed(&req);
    // Before anything else, the CONNECT's slot included: a request without the run's credential
    // (macOS) gets no decision, no lookup and no connection.
    if let Some(c) = &ctx.credential {
        if !req.headers().get_all(PROXY_AUTHORIZATION).iter().any(|v| c.accepts_header(v.as_bytes())) {
            return Ok(unauthenticated(&ctx, &req).await);
        }
    }
    if req.method() == Method::CONNECT {
        return Ok(connect(req, ctx, &slot).await);
    }
    Ok(forward(req, ctx, wire).await)
}

/// `(host, port)` of an authority, or the text to report when it is not valid.
fn target(uri: &Uri, default_port: Option<u16>) -> Result<(Host, u16), (String, u16)> {
    let Some(auth) = uri.authority() else {
        return Err((String::new(), 0));
    };
    let port = auth.port_u16().or(default_port).unwrap_or(0);
    match Host::parse(auth.host()) {
        Some(h) if port != 0 => Ok((h, port)),
        Some(h) => Err((h.display(), port)),
        None => Err((sanitize(auth.host()), port)),
    }
}

/// A CONNECT takes its connection's slot over to the tunnel only once the dial succeeded: after a
/// refusal hyper keeps the connection alive for more requests, and it must still hold the slot.
async fn connect(req: Request<Incoming>, ctx: Arc<Context>, slot: &Mutex<Option<OwnedSemaphorePermit>>) -> Response<Body> {
    let (host, port) = match target(req.uri(), None) {
        Ok(t) => t,
        Err((shown, port)) => return refusal(&ctx, &shown, port, Via::Connect, Refusal::Malformed).await,
    };
    let upstream = match dial(&ctx, &host, port, Via::Connect).await {
        Ok(u) => u.stream,
        Err(e) => return dial_failure(&ctx, &host, port, Via::Connect, e).await,
    };
    let slot = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    let idle_ctx = ctx.clone();
    let tunnel = async move {
        let ctx = idle_ctx;
        if let Ok(upgraded) = hyper::upgrade::on(req).await {
            // The client's own socket again (hyper hands back what it read past the request), so
            // the kernel can move the tunnel's bytes.
            match upgraded.downcast::<TokioIo<Wired>>() {
                Ok(parts) => {
                    let client = parts.io.into_inner().into_tunnel(parts.read_buf.len());
                    super::relay::relay_tcp(client, &parts.read_buf, upstream, &ctx).await
                }
                Err(upgraded) => super::relay::relay(TokioIo::new(upgraded), upstream, ctx.tunnel_idle).await,
            }
        }
        drop(slot);
    };
    ctx.spawn(tunnel);
    Response::new(empty())
}

async fn forward(req: Request<Incoming>, ctx: Arc<Context>, wire: Arc<Wire>) -> Response<Body> {
    if req.uri().scheme_str() != Some("http") {
        let host = req.headers().get(HOST).and_then(|h| h.to_str().ok()).map(sanitize).unwrap_or_default();
        return refusal(&ctx, &host, 0, Via::Http, Refusal::Malformed).await;
    }
    let (host, port) = match target(req.uri(), Some(80)) {
        Ok(t) => t,
        Err((shown, port)) => return refusal(&ctx, &shown, port, Via::Http, Refusal::Malformed).await,
    };
    if echoes_the_request(req.method()) {
        return refusal(&ctx, &host.display(), port, Via::Http, Refusal::MethodRefused).await;
    }
    let dialed = match dial(&ctx, &host, port, Via::Http).await {
        Ok(d) => d,
        Err(e) => return dial_failure(&ctx, &host, port, Via::Http, e).await,
    };
    let (mut parts, body) = req.into_parts();
    // Chunked bodies, both ways, are paid for from the run's allowance of chunks (budget.rs).
    ctx.chunks.request();
    let payer = Payer::new(ctx.clone(), host.display(), port);
    let pays = |headers: &HeaderMap| headers.contains_key(TRANSFER_ENCODING).then(|| payer.clone());
    let reporter = payer.clone();
    wire.forwarding(move || reporter.refuse());
    // The answer's reads are paid for as the request's are: an allowed server's endless
    // chunk-size line costs the host as much (rfix26c: 42 times the command's CPU).
    let upstream = Wire::new(ctx.clone());
    let reporter = payer.clone();
    upstream.forwarding(move || reporter.refuse());
    let body = Metered::new(body, pays(&parts.headers)).read_from(wire);
    strip_hop_by_hop(&mut parts.headers);
    // `Max-Forwards: 0` makes the next proxy answer an OPTIONS (or TRACE) itself: the command
    // would be talking to the user's upstream proxy, not the host the policy checked.
    parts.headers.remove(MAX_FORWARDS);
    let host_header = if port == 80 { host.display() } else { format!("{}:{port}", host.display()) };
    parts.headers.insert(HOST, HeaderValue::from_str(&host_header).expect("a canonical host is a valid header"));
    let path = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    parts.uri = match &dialed.through_proxy {
        // The user's proxy gets the absolute form, rebuilt from what the policy and the guard
        // checked: the address (`Host` keeps the name), so it cannot resolve the name elsewhere.
        Some(through) => {
            if let Some(value) = through.authorization.as_deref().and_then(|a| HeaderValue::from_str(a).ok()) {
                parts.headers.insert(PROXY_AUTHORIZATION, value);
            }
            format!("http://{}{path}", through.authority).parse().unwrap_or_else(|_| Uri::from_static("/"))
        }
        None => path.parse().unwrap_or_else(|_| Uri::from_static("/")),
    };
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(Wired::new(dialed.stream, upstream.clone()))).await {
        Ok(pair) => pair,
        Err(e) => return bad_gateway(&host, port, &e.to_string()),
    };
    // Both ways in gathered frames: a body of tiny chunks would cost the host a hand-over and a
    // write per chunk (see coalesce.rs); a hostile allowed server could send one as well.
    let sent = sender.send_request(Request::from_parts(parts, Coalesced::new(body)));
    // Until the answer's head, the upstream connection runs in this task, the one that decodes
    // the request body: a chunk handed over wakes no other task or thread.
    let mut conn = Box::pin(conn);
    let mut conn_done = false;
    let sent = {
        let mut sent = std::pin::pin!(sent);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(r) = sent.as_mut().poll(cx) {
                return Poll::Ready(r);
            }
            // Once ended (the upstream closed), `sent` is ready with the error on its next poll.
            if !conn_done && conn.as_mut().poll(cx).is_ready() {
                conn_done = true;
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
        .await
    };
    if !conn_done {
        ctx.spawn(async move {
            let _ = conn.await;
        });
    }
    match sent {
        Ok(resp) => {
            upstream.answered(&resp);
            let (mut parts, body) = resp.into_parts();
            let body = Metered::new(body, pays(&parts.headers)).read_from(upstream);
            strip_hop_by_hop(&mut parts.headers);
            Response::from_parts(parts, Coalesced::new(body).boxed())
        }
        // The request's body was cut off: the denial is recorded, the 403 says why.
        Err(_) if payer.refused() => refused(&host.display(), port, Refusal::TinyChunks),
        Err(e) => bad_gateway(&host, port, &e.to_string()),
    }
}

/// TRACE (RFC 9110 §9.3.8) and its IIS twin TRACK: the answer is the request as the last hop got
/// it, so a command would read the `Proxy-Authorization` added for the user's upstream proxy. In
/// any case: methods are case-sensitive, but some servers are not.
fn echoes_the_request(method: &Method) -> bool {
    ["TRACE", "TRACK"].iter().any(|m| method.as_str().eq_ignore_ascii_case(m))
}

/// RFC 9110 §7.6.1: the connection-specific headers, and every header `Connection` names.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in ["connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"] {
        headers.remove(name);
    }
}

async fn dial_failure(ctx: &Context, host: &Host, port: u16, via: Via, e: DialError) -> Response<Body> {
    match e {
        DialError::Refused(r) => refusal(ctx, &host.display(), port, via, r).await,
        // A failure costs the host a lookup or a connect and an answer: paced as refusals are
        // (net45: pipelined requests to an allowed closed port drew 90,944 502s in 6.3 s).
        DialError::Unresolvable(why) => {
            ctx.refusals.turn().await;
            bad_gateway(host, port, &format!("cannot resolve the host: {why}"))
        }
        DialError::Unreachable(why) => {
            ctx.refusals.turn().await;
            bad_gateway(host, port, &why)
        }
    }
}

/// A denial: recorded for the run, and, at its turn in the run's pace of refusals, a 403 whose
/// body and header say it was the policy. The wait holds this connection only (hyper answers a
/// connection's pipelined requests one by one), so a command pipelining refused requests gets
/// them answered no faster than the pace, and the host's CPU for them is bounded.
async fn refusal(ctx: &Context, host: &str, port: u16, via: Via, reason: Refusal) -> Response<Body> {
    ctx.denials.record(host, port, via, reason);
    ctx.refusals.turn().await;
    refused(host, port, reason)
}

/// The 403 of a refusal already recorded.
fn refused(host: &str, port: u16, reason: Refusal) -> Response<Body> {
    let by = if reason == Refusal::TinyChunks { "refused by the run's proxy" } else { "blocked by the network policy" };
    let body = format!("sandspawn: {host}:{port} {by} ({}): {}. To allow it: {}.\n", reason.as_str(), reason.explain(), reason.remedy(host));
    text(StatusCode::FORBIDDEN, body, Some(reason.as_str()))
}

/// `407` asking for the run's credential; recorded, as a tool inside that drops the proxy URL's
/// user name and password (the JVM's CONNECT, `nc -X`) shows up here.
async fn unauthenticated(ctx: &Context, req: &Request<Incoming>) -> Response<Body> {
    let (via, default_port) = if req.method() == Method::CONNECT { (Via::Connect, None) } else { (Via::Http, Some(80)) };
    let (host, port) = match target(req.uri(), default_port) {
        Ok((h, p)) => (h.display(), p),
        Err(shown) => shown,
    };
    let reason = Refusal::Unauthenticated;
    ctx.denials.record(&host, port, via, reason);
    ctx.refusals.turn().await;
    let body = format!("sandspawn: {host}:{port} refused by the run's proxy ({}): {}\n", reason.as_str(), reason.explain());
    let mut resp = text(StatusCode::PROXY_AUTHENTICATION_REQUIRED, body, Some(reason.as_str()));
    resp.headers_mut().insert(PROXY_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"sandspawn\""));
    resp
}

fn bad_gateway(host: &Host, port: u16, why: &str) -> Response<Body> {
    text(StatusCode::BAD_GATEWAY, format!("sandspawn: {}:{port} could not be reached: {why}\n", host.display()), None)
}

fn text(status: StatusCode, body: String, denied: Option<&'static str>) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from(body)).map_err(|never| match never {}).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    if let Some(reason) = denied {
        resp.headers_mut().insert("x-sandspawn-denied", HeaderValue::from_static(reason));
    }
    resp
}

fn empty() -> Body {
    Empty::<Bytes>::new().map_err(|never| match never {}).boxed()
}
