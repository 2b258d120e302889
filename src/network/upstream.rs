//! The user's own proxy (`NetworkPolicy.upstreamProxy`): where the host reaches the internet only
//! through an HTTP proxy, the run's proxy forwards what its policy allowed through that one (CONNECT
//! for tunnels, absolute-form requests for plain HTTP), with the credentials of its URL.
//!
//! Default: the host's `https_proxy`/`HTTPS_PROXY` (tunnels) and `http_proxy`/`HTTP_PROXY` (plain
//! HTTP), `all_proxy`/`ALL_PROXY` for either when unset, and `no_proxy`/`NO_PROXY` for the hosts
//! that go direct, read from the host process's own environment (never the command's, which names
//! the run's proxy: forwarding there would loop). Only `http://` proxies: a TLS or SOCKS upstream
//! is refused at the start of the run (`ERR_SANDBOX_UNSUPPORTED`), never silently bypassed.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::Serialize;

use super::host::Host;

/// One upstream proxy, parsed from its URL.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyUrl {
    /// Its host as the URL wrote it (a name, an IPv4 address, or an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
    /// `Proxy-Authorization` value (`Basic ...`) from the URL's user and password, if any.
    pub authorization: Option<String>,
    /// The URL's `user[:password]` as written, if any (what the command's environment must not
    /// carry: `command_env`).
    pub userinfo: Option<String>,
}

// The password never reaches a debug dump, an error or a result.
impl std::fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.shown())
    }
}

impl ProxyUrl {
    /// `http://host:port`, credentials left out.
    pub fn shown(&self) -> String {
        if self.host.contains(':') {
            format!("http://[{}]:{}", self.host, self.port)
        } else {
            format!("http://{}:{}", self.host, self.port)
        }
    }

    /// Parse `http://[user[:password]@]host[:port][/]` (port 80 by default; a bare `host:port`
    /// is taken as http, as curl does). `Err(true)`: a scheme sandspawn cannot forward through.
    pub fn parse(url: &str) -> Result<ProxyUrl, (bool, String)> {
        let url = url.trim();
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => return Err((true, format!("'{scheme}://' proxies are not supported (only http:// proxies, which CONNECT tunnels pass through)"))),
            None => url,
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.is_empty() || authority.contains(['/', '?', '#', ' ']) {
            return Err((false, "is not a proxy URL like http://proxy.example:3128".into()));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = split_host_port(hostport).ok_or_else(|| (false, "has no valid host and port (e.g. http://proxy.example:3128)".to_string()))?;
        let authorization = userinfo.map(|u| {
            let (user, password) = u.split_once(':').unwrap_or((u, ""));
            format!("Basic {}", super::credential::base64(format!("{}:{}", percent_decode(user), percent_decode(password)).as_bytes()))
        });
        Ok(ProxyUrl { host, port, authorization, userinfo: userinfo.map(str::to_string) })
    }
}

fn split_host_port(s: &str) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        h.parse::<std::net::Ipv6Addr>().ok()?;
        (h.to_string(), after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (s.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0)?,
        None => 80,
    };
    if host.is_empty() || !host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b)) {
        return None;
    }
    Some((host, port))
}

/// `%XX` escapes in a URL's user or password (`p%40ss` is `p@ss`).
pub(super) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `NO_PROXY`: the hosts that are reached directly although a proxy is set (curl's rules: `*` is
/// every host; a name matches itself and its subdomains, with or without a leading dot; an
/// address or CIDR range matches addresses; `:port` narrows an entry to that port).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoProxy {
    all: bool,
    entries: Vec<(NoProxyHost, Option<u16>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum NoProxyHost {
    Name(String),
    Net(IpNet),
}

impl NoProxy {
    pub fn parse(list: &str) -> NoProxy {
        let mut np = NoProxy::default();
        for raw in list.split([',', ' ']).map(str::trim).filter(|e| !e.is_empty()) {
            if raw == "*" {
                np.all = true;
                continue;
            }
            let (host, port) = entry_host_port(raw);
            let host = host.trim_start_matches('.').trim_end_matches('.').to_ascii_lowercase();
            let bare = host.as_str();
            let entry = match (bare.parse::<IpAddr>(), bare.parse::<IpNet>()) {
                (Ok(a), _) => NoProxyHost::Net(IpNet::from(a)),
                (_, Ok(n)) => NoProxyHost::Net(n.trunc()),
                _ => NoProxyHost::Name(host),
            };
            np.entries.push((entry, port));
        }
        np
    }

    pub fn matches(&self, host: &Host, port: u16) -> bool {
        self.all
            || self.entries.iter().any(|(e, p)| {
                p.is_none_or(|p| p == port)
                    && match (e, host) {
                        (NoProxyHost::Name(n), Host::Name(h)) => h == n || (h.len() > n.len() && h.ends_with(n.as_str()) && h.as_bytes()[h.len() - n.len() - 1] == b'.'),
                        (NoProxyHost::Net(net), Host::Ip(a)) => net.contains(a),
                        _ => false,
                    }
            })
    }
}

/// A `NO_PROXY` entry's host (brackets removed) and port. An address or range is taken whole, so
/// `::1` is not host `:` with port 1; a port only follows a name, an IPv4 address or a bracketed
/// IPv6 address (`[::1]:8080`). Anything else is kept as written (a name that matches nothing).
fn entry_host_port(raw: &str) -> (String, Option<u16>) {
    if raw.parse::<IpAddr>().is_ok() || raw.parse::<IpNet>().is_ok() {
        return (raw.to_string(), None);
    }
    let port = |p: &str| p.parse::<u16>().ok().filter(|p| *p != 0);
    if let Some((inside, after)) = raw.strip_prefix('[').and_then(|r| r.split_once(']')) {
        return match after.strip_prefix(':').map(port) {
            None if after.is_empty() => (inside.to_string(), None),
            Some(Some(p)) => (inside.to_string(), Some(p)),
            _ => (raw.to_string(), None),
        };
    }
    match raw.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => match port(p) {
            Some(p) => (h.to_string(), Some(p)),
            None => (raw.to_string(), None),
        },
        _ => (raw.to_string(), None),
    }
}

/// Where a run's proxy forwards: through `tunnels` (CONNECT, SOCKS5) and `plain` (absolute-form
/// HTTP), except for the hosts `direct` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub tunnels: Option<ProxyUrl>,
    pub plain: Option<ProxyUrl>,
    pub direct: NoProxy,
}

impl Upstream {
    /// The proxy a request for `host:port` goes through (a tunnel: CONNECT or SOCKS5; else plain
    /// HTTP), or `None` (direct).
    pub fn for_target(&self, host: &Host, port: u16, tunnel: bool) -> Option<&ProxyUrl> {
        let proxy = if tunnel { self.tunnels.as_ref() } else { self.plain.as_ref() }?;
        (!self.direct.matches(host, port)).then_some(proxy)
    }

    /// Every request through `url` (an explicit `upstreamProxy`).
    pub fn all_through(url: ProxyUrl) -> Upstream {
        Upstream { tunnels: Some(url.clone()), plain: Some(url), direct: NoProxy::default() }
    }

    /// From the host's environment (`get` reads one variable); `Ok(None)` when it names no proxy.
    /// `Err((unsupported, message))` names the variable.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Option<Upstream>, (bool, String)> {
        // Lowercase first, as curl reads them (its `http_proxy` is lowercase only: a CGI program's
        // HTTP_PROXY can come from a request header, "httpoxy"; the proxy's host process is no CGI).
        let var = |names: &[&'static str]| -> Option<(&'static str, String)> { names.iter().find_map(|n| get(n).filter(|v| !v.trim().is_empty()).map(|v| (*n, v))) };
        let parse = |found: Option<(&'static str, String)>| -> Result<Option<ProxyUrl>, (bool, String)> {
            found.map(|(name, v)| ProxyUrl::parse(&v).map_err(|(unsupported, m)| (unsupported, format!("the host's {name} {m}")))).transpose()
        };
        let all = ["all_proxy", "ALL_PROXY"];
        let tunnels = parse(var(&["https_proxy", "HTTPS_PROXY"]).or_else(|| var(&all)))?;
        let plain = parse(var(&["http_proxy", "HTTP_PROXY"]).or_else(|| var(&all)))?;
        if tunnels.is_none() && plain.is_none() {
            return Ok(None);
        }
        let direct = NoProxy::parse(&var(&["no_proxy", "NO_PROXY"]).map(|(_, v)| v).unwrap_or_default());
        Ok(Some(Upstream { tunnels, plain, direct }))
    }
}

/// `NetworkPolicy.upstreamProxy` as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamSetting {
    /// Not given: the host's proxy variables.
    FromEnvironment,
    /// `false`: direct connections, whatever the environment says.
    Off,
    Url(ProxyUrl),
}

// In a result's `policy`: the URL without its credentials.
impl Serialize for UpstreamSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            UpstreamSetting::FromEnvironment => s.serialize_str("environment"),
            UpstreamSetting::Off => s.serialize_bool(false),
            UpstreamSetting::Url(u) => s.serialize_str(&u.shown()),
        }
    }
}

impl UpstreamSetting {
    /// The upstream of a run, reading the host's environment with `get` where the setting says so.
    pub fn resolve(&self, get: impl Fn(&str) -> Option<String>) -> Result<Option<Upstream>, (bool, String)> {
        match self {
            UpstreamSetting::FromEnvironment => Upstream::from_env(get),
            UpstreamSetting::Off => Ok(None),
            UpstreamSetting::Url(u) => Ok(Some(Upstream::all_through(u.clone()))),
        }
    }
}

#[cfg(test)]
mod tests;
