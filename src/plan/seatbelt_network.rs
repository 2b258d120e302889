//! The network part of a Seatbelt profile, and the proxy's variables of a macOS plan.
//!
//! - `network: true`: everything (outbound, inbound, sockets) and the services DNS and TLS use.
//! - A `NetworkPolicy`: outbound to the run's proxy port on the host's loopback, nothing else (no
//!   other loopback port: the host's databases, dev servers and other runs' proxies stay out of
//!   reach), plus the services TLS verification uses; names are resolved by the proxy, so the
//!   resolver's socket stays closed. The command is told the proxy's URL with the run's credential
//!   (`network::credential`), which other local processes do not have.
//! - Otherwise nothing: `(deny default)` refuses every connection, except the Unix sockets
//!   `allowUnixSockets` lists (with the network off or the allow-list).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::network::credential::USER;
use crate::network::loopback::Endpoint;
use crate::policy::{ResolvedPolicy, UnixSockets};

/// The Mach services DNS configuration and TLS certificate verification use (Codex's list).
const SERVICES: &str = r#"(allow mach-lookup
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.networkd")
  (global-name "com.apple.ocspd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd"))
(allow sysctl-read (sysctl-name-regex #"^net.routetable"))
"#;

/// The rules, and the socket paths whose `(path-literal (param "UNIX_SOCKET_i"))` rules follow
/// them (the caller numbers the parameters).
pub fn rules(policy: &ResolvedPolicy, proxy_port: Option<u16>) -> (String, Vec<PathBuf>) {
    if policy.network {
        return (format!("(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)\n{SERVICES}"), Vec::new());
    }
    let mut s = String::new();
    if policy.network_proxy.is_some() {
        // Without a port (a plan that has no proxy) nothing is added: no network at all.
        if let Some(port) = proxy_port {
            s.push_str(&format!("(allow network-outbound (remote ip \"localhost:{port}\"))\n"));
            // The routing socket Network.framework reads interfaces through, as Codex allows it.
            s.push_str("(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))\n");
            s.push_str(SERVICES);
        }
    }
    match &policy.unix_sockets {
        // `(deny default)` already refuses every socket connection.
        UnixSockets::Blocked => (s, Vec::new()),
        UnixSockets::All => {
            s.push_str("(allow system-socket (socket-domain AF_UNIX))\n(allow network-outbound (remote unix-socket))\n(allow network-bind (local unix-socket))\n");
            (s, Vec::new())
        }
        UnixSockets::Only(paths) => {
            s.push_str("(allow system-socket (socket-domain AF_UNIX))\n");
            (s, paths.clone())
        }
    }
}

/// The proxy's variables for the command (`sandspawn_helper::proxy_env`), the credential in
/// every URL. `inherited_java` is the `JAVA_TOOL_OPTIONS` the command would otherwise see.
pub fn variables(endpoint: &Endpoint, inherited_java: Option<&str>) -> BTreeMap<String, String> {
    use sandspawn_helper::proxy_env::{variables_for, Listener};
    let listener = Listener::HostLoopback { user: USER, secret: endpoint.credential.secret() };
    variables_for(listener, endpoint.port, inherited_java).into_iter().collect()
}
