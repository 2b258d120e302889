//! From an allowed-looking request to a connected upstream socket: policy, the caller's answer for
//! hosts on neither list (`onRequest`, asked before any lookup, so a name the command makes up
//! reaches no name server unless the caller allowed it), one resolution on the host, the address
//! guard, then a connection to exactly the addresses that passed (no second lookup, so a name that
//! rebinds between check and use gains nothing), directly or through the user's own proxy
//! (`super::chain`), which is handed the checked addresses, not the name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use super::chain::Destination;
use super::context::Context;
use super::resolver::LookupError;
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
    // An address literal, or a name the host answers without a name server (`localhost`,
    // `/etc/hosts`), needs no lookup: the guard first, and one it refuses is never offered.
    let local = match host {
        Host::Ip(a) => Some(vec![*a]),
        Host::Name(n) if ask => super::local_names::addresses(n),
        Host::Name(_) => None,
    };
    if local.is_some_and(|addrs| !addrs.iter().any(|a| passes(ctx, *a))) {
        return Err(DialError::Refused(Refusal::PrivateAddress));
    }
    if ask {
        asked(ctx, host, port, via).await.map_err(DialError::Refused)?;
    }
    let found = looked_up(ctx, host).await;
    match ctx.upstream.as_ref().and_then(|u| u.for_target(host, port, via != Via::Http)) {
        Some(proxy) => super::chain::open(ctx, proxy, host, &for_proxy(ctx, found)?, port, via).await,
        None => connect_any(&direct(ctx, found, ask)?, port).await.map(|stream| Dialed { stream, through_proxy: None }),
    }
}

fn passes(ctx: &Context, a: IpAddr) -> bool {
    !refused(a, &ctx.own) || ctx.policy.private_allowed(a)
}

async fn looked_up(ctx: &Context, host: &Host) -> Result<Vec<IpAddr>, LookupError> {
    match host {
        Host::Ip(a) => Ok(vec![*a]),
        Host::Name(n) => ctx.resolver.resolve(n, &ctx.lookups).await,
    }
}

/// The addresses that pass the guard (at least one).
fn passed(ctx: &Context, addrs: Vec<IpAddr>) -> Result<Vec<IpAddr>, DialError> {
    let mut passed: Vec<IpAddr> = addrs.into_iter().filter(|a| passes(ctx, *a)).collect();
    passed.dedup();
    if passed.is_empty() {
        return Err(DialError::Refused(Refusal::PrivateAddress));
    }
    Ok(passed)
}

/// The addresses a direct connection may use. A name that does not resolve is an outage or a typo
/// when the allow-list named it; when only `onRequest` allowed it (`asked`), it is recorded as a
/// denial, so a run's result shows every name it tried that nobody listed.
fn direct(ctx: &Context, found: Result<Vec<IpAddr>, LookupError>, asked: bool) -> Result<Vec<IpAddr>, DialError> {
    match found {
        Ok(addrs) => passed(ctx, addrs),
        Err(_) if asked => Err(DialError::Refused(Refusal::LookupFailed)),
        Err(e) => Err(DialError::Unresolvable(e.to_string())),
    }
}

/// What the user's proxy is asked for. It would resolve a name again, and may get another answer
/// (an allowed name rebinding to loopback, or one the host's lookup could not check): so it gets
/// the addresses that passed the guard. Only a name the host's resolver says does not exist goes
/// as a name, whether the allow-list or only `onRequest` allowed it (unlike `direct`, which records
/// the latter as `lookup_failed`): reaching names only the user's proxy can resolve is what it is
/// for. A lookup that
/// timed out or failed (a command can make the run's lookups wait by keeping its slots busy) is
/// no such answer, and is refused.
fn for_proxy(ctx: &Context, found: Result<Vec<IpAddr>, LookupError>) -> Result<Destination, DialError> {
    match found {
        Ok(addrs) => Ok(Destination::Addresses(passed(ctx, addrs)?)),
        Err(LookupError::NotFound(_)) => Ok(Destination::Name),
        Err(LookupError::Failed(_)) => Err(DialError::Refused(Refusal::LookupFailed)),
    }
}

async fn asked(ctx: &Arc<Context>, host: &Host, port: u16, protocol: Via) -> Result<(), Refusal> {
    let Some(questions) = &ctx.questions else { return Err(Refusal::Declined) };
    let spawner = ctx.clone();
    questions.allowed(Question { host: host.display(), port, protocol }, move |fut| spawner.spawn(fut)).await
}
