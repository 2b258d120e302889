//! From an allowed-looking request to a connected upstream socket: policy, one resolution on the
//! host, the address guard, the caller's answer for hosts on neither list (`onRequest`, asked
//! only once the guard passed), then a connection to exactly the addresses that passed (no
//! second lookup, so a name that rebinds between check and use gains nothing), or through the
//! user's own proxy (`super::chain`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use super::context::Context;
use crate::network::ask::Question;
use crate::network::denials::Via;
use crate::network::guard::refused;
use crate::network::host::Host;
use crate::network::policy::{names_host_loopback, Refusal};

/// Where [`crate::network::policy::HOST_LOOPBACK_NAME`] goes: the host's loopback, the proxy
/// being a host process (IPv4 first: most local services bind 127.0.0.1).
const HOST_LOOPBACK: [IpAddr; 2] = [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)];

pub use super::target::{DialError, Dialed};
use super::target::connect_any;

pub async fn dial(ctx: &Arc<Context>, host: &Host, port: u16, via: Via) -> Result<Dialed, DialError> {
    if port == 0 {
        return Err(DialError::Refused(Refusal::Malformed));
    }
    if names_host_loopback(host) {
        // Listed exactly (the policy's check): the guard is what the entry lifts, and the user's
        // upstream proxy, which would reach its own loopback, is never used for it.
        return match ctx.policy.check(host) {
            None => connect_any(&HOST_LOOPBACK, port).await.map(|stream| Dialed { stream, through_proxy: None }),
            Some(r) => Err(DialError::Refused(r)),
        };
    }
    let ask = match ctx.policy.check(host) {
        None => false,
        Some(Refusal::NotAllowed) if ctx.questions.is_some() => true,
        Some(r) => return Err(DialError::Refused(r)),
    };
    let proxy = ctx.upstream.as_ref().and_then(|u| u.for_target(host, port, via != Via::Http));
    let addrs = if proxy.is_some() { checked_for_proxy(ctx, host, port).await? } else { checked(ctx, host, port).await? };
    if ask && !asked(ctx, host, port, via).await {
        return Err(DialError::Refused(Refusal::Declined));
    }
    match proxy {
        Some(p) => super::chain::open(ctx, p, host, port, via).await,
        None => connect_any(&addrs, port).await.map(|stream| Dialed { stream, through_proxy: None }),
    }
}

fn passes(ctx: &Context, a: IpAddr) -> bool {
    !refused(a, &ctx.own) || ctx.policy.private_allowed(a)
}

/// The addresses a direct connection may use (at least one).
async fn checked(ctx: &Context, host: &Host, port: u16) -> Result<Vec<IpAddr>, DialError> {
    let addrs = match host {
        Host::Ip(a) => vec![*a],
        Host::Name(n) => ctx.resolver.resolve(n, port, &ctx.lookups).await.map_err(DialError::Unresolvable)?,
    };
    let mut passed: Vec<IpAddr> = addrs.into_iter().filter(|a| passes(ctx, *a)).collect();
    passed.dedup();
    if passed.is_empty() {
        return Err(DialError::Refused(Refusal::PrivateAddress));
    }
    Ok(passed)
}

/// Through the user's proxy, which resolves the name itself: an address literal must pass the
/// guard, and a name the host resolves must not have any address the guard refuses (a local
/// forward proxy would otherwise reach the host's own loopback for the command). A name the host
/// cannot resolve goes on: reaching such names is what the user's proxy is for.
async fn checked_for_proxy(ctx: &Context, host: &Host, port: u16) -> Result<Vec<IpAddr>, DialError> {
    let addrs = match host {
        Host::Ip(a) => vec![*a],
        Host::Name(n) => ctx.resolver.resolve(n, port, &ctx.lookups).await.unwrap_or_default(),
    };
    if addrs.iter().any(|a| !passes(ctx, *a)) {
        return Err(DialError::Refused(Refusal::PrivateAddress));
    }
    Ok(addrs)
}

async fn asked(ctx: &Arc<Context>, host: &Host, port: u16, protocol: Via) -> bool {
    let Some(questions) = &ctx.questions else { return false };
    let spawner = ctx.clone();
    questions.allowed(Question { host: host.display(), port, protocol }, move |fut| spawner.spawn(fut)).await
}
