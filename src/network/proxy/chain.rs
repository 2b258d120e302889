//! Forwarding through the user's own proxy (`network::upstream`): a connection to it, then for a
//! tunnel `CONNECT address:port` (with the URL's credentials) and its answer; for plain HTTP the
//! connection itself, on which `http::forward` sends the request in absolute form. The target is
//! the address `dial` checked, so the user's proxy cannot resolve the name to somewhere else.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::context::Context;
use super::target::{connect_any, DialError, Dialed, Through};
use crate::network::denials::Via;
use crate::network::host::Host;
use crate::network::upstream::ProxyUrl;

/// The user's proxy must answer a CONNECT within this time, in at most this many bytes.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_ANSWER: usize = 16 * 1024;

/// What the user's proxy is asked to reach (`dial::for_proxy`).
pub enum Destination {
    /// The addresses the host resolved and the guard passed.
    Addresses(Vec<IpAddr>),
    /// The name itself: the host's resolver said it does not exist, so only the user's proxy knows it.
    Name,
}

impl Destination {
    /// The targets to try, in order, as `host[:port]` (`:80` left out for plain HTTP). IPv4 first:
    /// which families the user's proxy reaches is unknown, and IPv4 is the one it almost surely does.
    fn authorities(&self, host: &Host, port: u16, plain: bool) -> Vec<String> {
        let with_port = |h: String| if plain && port == 80 { h } else { format!("{h}:{port}") };
        match self {
            Destination::Name => vec![with_port(host.display())],
            Destination::Addresses(addrs) => {
                let (v4, v6): (Vec<IpAddr>, Vec<IpAddr>) = addrs.iter().partition(|a| a.is_ipv4());
                v4.into_iter().chain(v6).map(|a| with_port(Host::Ip(a).display())).collect()
            }
        }
    }
}

pub async fn open(ctx: &Arc<Context>, proxy: &ProxyUrl, host: &Host, to: &Destination, port: u16, via: Via) -> Result<Dialed, DialError> {
    let mut targets = to.authorities(host, port, via == Via::Http).into_iter();
    if via == Via::Http {
        let stream = connect(ctx, proxy).await?;
        // The first address only: the answer to a plain request is the target's, whatever it says.
        let authority = targets.next().unwrap_or_default();
        return Ok(Dialed { stream, through_proxy: Some(Through { authorization: proxy.authorization.clone(), authority }) });
    }
    let mut last = DialError::Unreachable("no address".into());
    for target in targets {
        match tunnel(ctx, proxy, &target).await {
            Ok(stream) => return Ok(Dialed { stream, through_proxy: None }),
            // The proxy answered (it could not reach this address): the next one may do.
            Err(Tunnel::Answered(e)) => last = e,
            Err(Tunnel::Failed(e)) => return Err(e),
        }
    }
    Err(last)
}

/// How a CONNECT through the user's proxy failed: it answered no (another address may work), or
/// the proxy itself failed (no other address will do better).
enum Tunnel {
    Answered(DialError),
    Failed(DialError),
}

async fn tunnel(ctx: &Context, proxy: &ProxyUrl, target: &str) -> Result<TcpStream, Tunnel> {
    let mut stream = connect(ctx, proxy).await.map_err(Tunnel::Failed)?;
    let auth = proxy.authorization.as_ref().map(|a| format!("Proxy-Authorization: {a}\r\n")).unwrap_or_default();
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{auth}\r\n");
    let unreachable = |why: String| DialError::Unreachable(format!("through the upstream proxy {}: {why}", proxy.shown()));
    stream.write_all(request.as_bytes()).await.map_err(|e| Tunnel::Failed(unreachable(e.to_string())))?;
    let status = match tokio::time::timeout(ANSWER_TIMEOUT, answer(&mut stream)).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(Tunnel::Failed(unreachable(e))),
        Err(_) => return Err(Tunnel::Failed(unreachable("no answer to CONNECT in time".into()))),
    };
    match status {
        200..=299 => Ok(stream),
        407 => Err(Tunnel::Failed(unreachable("it asks for credentials (407); give them in its URL: http://user:password@host:port".into()))),
        code => Err(Tunnel::Answered(unreachable(format!("it answered {code} to CONNECT {target}")))),
    }
}

/// A connection to the user's proxy. Its address is the user's choice, so the address guard does
/// not apply to it (it is often on loopback, like a local authenticating proxy).
async fn connect(ctx: &Context, proxy: &ProxyUrl) -> Result<TcpStream, DialError> {
    let addrs = match proxy.host.parse::<std::net::IpAddr>() {
        Ok(a) => vec![a],
        Err(_) => ctx
            .resolver
            .resolve(&proxy.host, &ctx.lookups)
            .await
            .map_err(|e| DialError::Unreachable(format!("cannot resolve the upstream proxy {}: {e}", proxy.shown())))?,
    };
    connect_any(&addrs, proxy.port).await.map_err(|e| match e {
        DialError::Unreachable(why) => DialError::Unreachable(format!("cannot connect to the upstream proxy {}: {why}", proxy.shown())),
        other => other,
    })
}

/// Read the proxy's answer head byte by byte (nothing of the tunnel may be read with it) and
/// return its status code.
async fn answer(stream: &mut TcpStream) -> Result<u16, String> {
    let mut head = Vec::with_capacity(256);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_ANSWER {
            return Err("its answer to CONNECT is too long".into());
        }
        let b = stream.read_u8().await.map_err(|e| format!("it closed the connection ({e})"))?;
        head.push(b);
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(&head) {
        Ok(httparse::Status::Complete(_)) => resp.code.ok_or_else(|| "its answer has no status".to_string()),
        _ => Err("its answer to CONNECT is not HTTP".into()),
    }
}
