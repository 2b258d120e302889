//! SOCKS5 (RFC 1928), CONNECT only, without authentication (Linux) or with the run's user name and
//! password (RFC 1929, macOS: see `network::credential`): a small state machine rather than a crate,
//! because the only permissively licensed server crates either resolve names themselves (which
//! must go through `dial`'s guard instead) or bring a framework. Host names (`socks5h`, ATYP 3)
//! are resolved on the host like every other request. A refusal is reply 0x02 ("connection not
//! allowed by ruleset").

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::dial::{dial, DialError};
use super::Context;
use crate::network::credential::Credential;
use crate::network::denials::Via;
use crate::network::host::{sanitize, Host};
use crate::network::policy::Refusal;

/// The whole greeting and request must arrive within this time (slow clients hold no resources).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

const METHOD_NONE: u8 = 0x00;
const METHOD_USER_PASSWORD: u8 = 0x02;

const REP_SUCCESS: u8 = 0x00;
const REP_NOT_ALLOWED: u8 = 0x02;
const REP_HOST_UNREACHABLE: u8 = 0x04;
const REP_REFUSED: u8 = 0x05;
const REP_COMMAND_NOT_SUPPORTED: u8 = 0x07;
const REP_ATYP_NOT_SUPPORTED: u8 = 0x08;

/// What the client asked for: a host (or the raw text of an invalid one) and a port.
enum Target {
    Valid(Host),
    Invalid(String),
}

/// How the greeting and request ended.
enum Handshake {
    Request(Target, u16),
    /// Refused and answered already (bad version, no acceptable method, unsupported command).
    Answered,
    /// The run's credential was required and not given (answered already).
    Unauthenticated,
}

pub async fn serve(mut s: TcpStream, ctx: Arc<Context>) {
    let (target, port) = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(&mut s, ctx.credential.as_ref())).await {
        Ok(Ok(Handshake::Request(target, port))) => (target, port),
        Ok(Ok(Handshake::Unauthenticated)) => {
            ctx.denials.record("", 0, Via::Socks5, Refusal::Unauthenticated);
            // Paced as every refusal is (`Context::refusals`): the close waits its turn.
            return ctx.refusals.turn().await;
        }
        _ => return, // timed out, malformed or already answered: close
    };
    let host = match target {
        Target::Valid(h) if port != 0 => h,
        Target::Valid(h) => return refuse(&mut s, &ctx, &h.display(), port, Refusal::Malformed).await,
        Target::Invalid(raw) => return refuse(&mut s, &ctx, &sanitize(&raw), port, Refusal::Malformed).await,
    };
    let upstream = match dial(&ctx, &host, port, Via::Socks5).await {
        Ok(u) => u.stream,
        Err(DialError::Refused(r)) => return refuse(&mut s, &ctx, &host.display(), port, r).await,
        // Failures are paced as refusals are (see http.rs's dial_failure).
        Err(DialError::Unresolvable(_)) => return failed(&mut s, &ctx, REP_HOST_UNREACHABLE).await,
        Err(DialError::Unreachable(_)) => return failed(&mut s, &ctx, REP_REFUSED).await,
    };
    if s.write_all(&reply_bytes(REP_SUCCESS)).await.is_err() {
        return;
    }
    super::relay::relay_tcp(s, &[], upstream, &ctx).await;
}

/// Greeting, method choice (user name and password when `credential` is set, else none) and
/// request.
async fn handshake(s: &mut TcpStream, credential: Option<&Credential>) -> std::io::Result<Handshake> {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).await?;
    let mut methods = vec![0u8; head[1] as usize];
    s.read_exact(&mut methods).await?;
    let method = if credential.is_some() { METHOD_USER_PASSWORD } else { METHOD_NONE };
    if head[0] != 5 || !methods.contains(&method) {
        s.write_all(&[5, 0xff]).await?; // no acceptable method
        return Ok(if head[0] == 5 && credential.is_some() { Handshake::Unauthenticated } else { Handshake::Answered });
    }
    s.write_all(&[5, method]).await?;
    if let Some(c) = credential {
        if !authenticate(s, c).await? {
            return Ok(Handshake::Unauthenticated);
        }
    }
    let mut req = [0u8; 4];
    s.read_exact(&mut req).await?;
    if req[0] != 5 {
        return Ok(Handshake::Answered);
    }
    let target = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).await?;
            Target::Valid(Host::Ip(std::net::IpAddr::from(a)))
        }
        3 => {
            let mut len = [0u8; 1];
            s.read_exact(&mut len).await?;
            let mut name = vec![0u8; len[0] as usize];
            s.read_exact(&mut name).await?;
            // Raw bytes: a NUL or a dot trick is refused by `Host::parse`, never passed to a resolver.
            let text = String::from_utf8_lossy(&name).into_owned();
            match Host::parse(&text) {
                Some(h) => Target::Valid(h),
                None => Target::Invalid(text),
            }
        }
        4 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).await?;
            Target::Valid(Host::Ip(crate::network::host::canonical_ip(std::net::IpAddr::from(a))))
        }
        _ => {
            reply(s, REP_ATYP_NOT_SUPPORTED).await;
            return Ok(Handshake::Answered);
        }
    };
    let mut port = [0u8; 2];
    s.read_exact(&mut port).await?;
    if req[1] != 1 {
        // BIND and UDP ASSOCIATE would open ways around the policy.
        reply(s, REP_COMMAND_NOT_SUPPORTED).await;
        return Ok(Handshake::Answered);
    }
    Ok(Handshake::Request(target, u16::from_be_bytes(port)))
}

/// RFC 1929: `1, ULEN, UNAME, PLEN, PASSWD`, answered `1, 0` (accepted) or `1, 1` (refused, and
/// the connection is closed).
async fn authenticate(s: &mut TcpStream, credential: &Credential) -> std::io::Result<bool> {
    let field = |len: u8| vec![0u8; len as usize];
    let mut head = [0u8; 2];
    s.read_exact(&mut head).await?;
    let mut user = field(head[1]);
    s.read_exact(&mut user).await?;
    let mut len = [0u8; 1];
    s.read_exact(&mut len).await?;
    let mut password = field(len[0]);
    s.read_exact(&mut password).await?;
    let ok = head[0] == 1 && credential.accepts_pair(&user, &password);
    s.write_all(&[1, if ok { 0 } else { 1 }]).await?;
    Ok(ok)
}

fn reply_bytes(code: u8) -> [u8; 10] {
    [5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

async fn reply(s: &mut TcpStream, code: u8) {
    let _ = s.write_all(&reply_bytes(code)).await;
}

async fn failed(s: &mut TcpStream, ctx: &Context, code: u8) {
    ctx.refusals.turn().await;
    reply(s, code).await;
}

async fn refuse(s: &mut TcpStream, ctx: &Context, host: &str, port: u16, reason: Refusal) {
    ctx.denials.record(host, port, Via::Socks5, reason);
    ctx.refusals.turn().await;
    // A name that could not be looked up is "host unreachable" to the client, recorded all the same.
    reply(s, if reason == Refusal::LookupFailed { REP_HOST_UNREACHABLE } else { REP_NOT_ALLOWED }).await;
}
