//! The network allow-list on macOS: Seatbelt has no network namespaces, so the run's proxy listens
//! on the host's own loopback, bound here before the plan is built (the plan's profile allows
//! connecting to this one port and nothing else, and its environment names the port and the
//! run's credential, `credential`). The same proxy serves it as on Linux; only the listener and
//! the credential differ.
//!
//! Seatbelt's `(remote ip "localhost:PORT")` matches `127.0.0.1` and `::1` alike, so the proxy
//! holds the port on both: otherwise a host service that happened to listen on `[::1]` at that
//! number would be reachable from the sandbox. When another process already holds `[::1]:PORT`,
//! another port is tried.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};

use super::credential::Credential;

/// Where the command finds the run's proxy, and what it must send to use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub port: u16,
    pub credential: Credential,
}

/// The run's listeners (bound, listening, not yet served) and their endpoint.
#[derive(Debug)]
pub struct Loopback {
    pub endpoint: Endpoint,
    pub listeners: Vec<TcpListener>,
}

/// Ports tried before giving up (each attempt fails only if `[::1]` has that port taken).
const ATTEMPTS: usize = 16;

/// Bind a fresh port on `127.0.0.1` (and `::1` where IPv6 exists) and make a credential for it.
pub fn bind() -> io::Result<Loopback> {
    bind_with(|| TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))))
}

/// `bind`, taking each attempt's IPv4 listener from `next_v4`.
fn bind_with(mut next_v4: impl FnMut() -> io::Result<TcpListener>) -> io::Result<Loopback> {
    let credential = Credential::generate()?;
    for _ in 0..ATTEMPTS {
        let v4 = next_v4()?;
        let port = v4.local_addr()?.port();
        match TcpListener::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port))) {
            Ok(v6) => return Ok(Loopback { endpoint: Endpoint { port, credential }, listeners: vec![v4, v6] }),
            // Taken on ::1 only: that port is not ours to offer; try another.
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => continue,
            // No IPv6 loopback on this host: nothing can listen on `[::1]:port` either.
            Err(_) => return Ok(Loopback { endpoint: Endpoint { port, credential }, listeners: vec![v4] }),
        }
    }
    Err(io::Error::new(io::ErrorKind::AddrInUse, format!("no loopback port was free on both 127.0.0.1 and ::1 after {ATTEMPTS} attempts")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_port_on_both_loopbacks_and_a_fresh_credential_each_run() {
        let a = bind().unwrap();
        let b = bind().unwrap();
        assert_ne!(a.endpoint.port, b.endpoint.port);
        assert_ne!(a.endpoint.credential, b.endpoint.credential);
        for l in &a.listeners {
            let addr = l.local_addr().unwrap();
            assert!(addr.ip().is_loopback(), "{addr}: never on another interface");
            assert_eq!(addr.port(), a.endpoint.port);
        }
        // The port cannot be bound again by another process on either address.
        assert_eq!(a.listeners.len(), 2, "this host has an IPv6 loopback");
        assert!(TcpListener::bind(("127.0.0.1", a.endpoint.port)).is_err());
        assert!(TcpListener::bind(("::1", a.endpoint.port)).is_err());
    }

    #[test]
    fn a_port_taken_on_ipv6_only_is_not_offered() {
        // Another process holds `[::1]:P`; the first attempt's IPv4 listener happens to get P.
        let other = TcpListener::bind(("::1", 0)).expect("this test needs the IPv6 loopback");
        let taken = other.local_addr().unwrap().port();
        let mut first = Some(TcpListener::bind(("127.0.0.1", taken)).unwrap());
        let l = bind_with(|| first.take().map(Ok).unwrap_or_else(|| TcpListener::bind(("127.0.0.1", 0)))).unwrap();
        assert_ne!(l.endpoint.port, taken);
        assert_eq!(l.listeners.len(), 2);
        assert!(first.is_none(), "the first attempt was made and given up");
    }
}
