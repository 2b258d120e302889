//! From an allowed-looking request to a connected upstream socket: policy, one resolution on the
//! host, the address guard, then a connection to exactly the addresses that passed (no second
//! lookup, so a name that rebinds between check and use gains nothing).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpStream;

use super::context::Context;
use crate::network::guard::refused;
use crate::network::host::Host;
use crate::network::policy::Refusal;

/// Per address tried; a name with several addresses tries them in order.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
#[derive(Debug)]
pub enum DialError {
    /// The policy or the guard says no: a denial, recorded and reported as such.
    Refused(Refusal),
    /// The name does not resolve (not a denial: an outage or a typo).
    Unresolvable(String),
    /// Every permitted address failed to connect.
    Unreachable(String),
}

pub async fn dial(ctx: &Context, host: &Host, port: u16) -> Result<TcpStream, DialError> {
    if port == 0 {
        return Err(DialError::Refused(Refusal::Malformed));
    }
    if let Some(refusal) = ctx.policy.check(host) {
        return Err(DialError::Refused(refusal));
    }
    let addrs = match host {
        Host::Ip(a) => vec![*a],
        Host::Name(n) => ctx.resolver.resolve(n, port, &ctx.lookups).await.map_err(DialError::Unresolvable)?,
    };
    let mut passed: Vec<IpAddr> = addrs.into_iter().filter(|a| !refused(*a, &ctx.own) || ctx.policy.private_allowed(*a)).collect();
    passed.dedup();
    if passed.is_empty() {
        return Err(DialError::Refused(Refusal::PrivateAddress));
    }
    let mut last = String::new();
    for a in passed {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(SocketAddr::new(a, port))).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => last = "connection timed out".into(),
        }
    }
    Err(DialError::Unreachable(last))
}
