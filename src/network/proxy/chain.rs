//! Forwarding through the user's own proxy (`network::upstream`): a connection to it, then for a
//! tunnel `CONNECT host:port` (with the URL's credentials) and its answer; for plain HTTP the
//! connection itself, on which `http::forward` sends the request in absolute form.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::context::Context;
use super::target::{connect_any, DialError, Dialed};
use crate::network::denials::Via;
use crate::network::host::Host;
use crate::network::upstream::ProxyUrl;

/// The user's proxy must answer a CONNECT within this time, in at most this many bytes.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_ANSWER: usize = 16 * 1024;

pub async fn open(ctx: &Arc<Context>, proxy: &ProxyUrl, host: &Host, port: u16, via: Via) -> Result<Dialed, DialError> {
    let mut stream = connect(ctx, proxy).await?;
    if via == Via::Http {
        return Ok(Dialed { stream, through_proxy: Some(proxy.authorization.clone()) });
    }
    let target = format!("{}:{port}", host.display());
    let auth = proxy.authorization.as_ref().map(|a| format!("Proxy-Authorization: {a}\r\n")).unwrap_or_default();
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{auth}\r\n");
    let unreachable = |why: String| DialError::Unreachable(format!("through the upstream proxy {}: {why}", proxy.shown()));
    stream.write_all(request.as_bytes()).await.map_err(|e| unreachable(e.to_string()))?;
    let status = match tokio::time::timeout(ANSWER_TIMEOUT, answer(&mut stream)).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(unreachable(e)),
        Err(_) => return Err(unreachable("no answer to CONNECT in time".into())),
    };
    match status {
        200..=299 => Ok(Dialed { stream, through_proxy: None }),
        407 => Err(unreachable("it asks for credentials (407); give them in its URL: http://user:password@host:port".into())),
        code => Err(unreachable(format!("it answered {code} to CONNECT {target}"))),
    }
}

/// A connection to the user's proxy. Its address is the user's choice, so the address guard does
/// not apply to it (it is often on loopback, like a local authenticating proxy).
async fn connect(ctx: &Context, proxy: &ProxyUrl) -> Result<TcpStream, DialError> {
    let addrs = match proxy.host.parse::<std::net::IpAddr>() {
        Ok(a) => vec![a],
        Err(_) => ctx
            .resolver
            .resolve(&proxy.host, proxy.port, &ctx.lookups)
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
