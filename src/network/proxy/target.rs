//! What dialing yields and how it fails (`dial` directly, `chain` through the user's proxy), and
//! the connection to the first address of a list that answers.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpStream;

use crate::network::policy::Refusal;

/// Per address tried; a name with several addresses tries them in order.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub enum DialError {
    /// The policy, the guard or the caller says no: a denial, recorded and reported as such.
    Refused(Refusal),
    /// An allowed name does not resolve (not a denial: an outage or a typo).
    Unresolvable(String),
    /// Every permitted address failed to connect (or the user's proxy refused).
    Unreachable(String),
}

/// A connection on its way to the target.
pub struct Dialed {
    pub stream: TcpStream,
    /// Plain HTTP through the user's proxy: how to send the request (absolute form). `None`: the
    /// stream is the target itself (or a tunnel to it).
    pub through_proxy: Option<Through>,
}

/// A plain HTTP request through the user's proxy.
pub struct Through {
    /// `Proxy-Authorization` from the proxy's URL, if any.
    pub authorization: Option<String>,
    /// The authority of the absolute-form URL: the address the guard checked (`203.0.113.7:80`),
    /// or the name only when the host's resolver said it does not exist (`Host` keeps the name).
    pub authority: String,
}

pub(super) async fn connect_any(addrs: &[IpAddr], port: u16) -> Result<TcpStream, DialError> {
    let mut last = String::from("no address");
    for a in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(SocketAddr::new(*a, port))).await {
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
