//! `SandboxPolicy.network` as a `NetworkPolicy` object: parsed and validated here (the policy
//! module only hands the value over), and the per-host decision the proxy asks for.
//!
//! Matching (API.md): case-insensitive, trailing dot ignored; `*.x.y` matches strict subdomains
//! only; IP literals only by exact entry; `deniedDomains` is checked first and wins. Entries that
//! would mean more than the user probably wants (`*`, `*.com`, and in `allowedDomains` a wildcard on
//! a public suffix, `*.co.uk`: `public_suffix`), that cannot match what clients send
//! (non-ASCII: clients send punycode) or that carry a port or scheme are errors, not guesses.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::Serialize;
use serde_json::Value;

use super::host::{canonical_ip, valid_label, Host};
use super::public_suffix::{spans_owners, SpansOwners, ICANN};
use super::upstream::{ProxyUrl, UpstreamSetting};
use crate::error::{Result, SandboxError};
use crate::describe::describe;

/// One entry of `allowedDomains` / `deniedDomains`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Pattern {
    /// This host exactly.
    Exact(String),
    /// Strict subdomains of this host (`*.github.com` is stored as `github.com`).
    Subdomains(String),
    /// This address exactly.
    Ip(IpAddr),
}

impl Pattern {
    fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (Pattern::Exact(p), Host::Name(n)) => p == n,
            (Pattern::Subdomains(p), Host::Name(n)) => n.len() > p.len() + 1 && n.ends_with(p.as_str()) && n.as_bytes()[n.len() - p.len() - 1] == b'.',
            (Pattern::Ip(p), Host::Ip(a)) => p == a,
            _ => false,
        }
    }
}

/// A validated `NetworkPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicy {
    pub allowed_domains: Vec<Pattern>,
    pub denied_domains: Vec<Pattern>,
    /// Addresses the proxy may dial although the address guard would refuse them.
    #[serde(serialize_with = "nets_as_strings")]
    pub allow_private_addresses: Vec<IpNet>,
    /// How long a request waits for `onRequest`'s answer before it is denied.
    pub request_timeout_ms: u64,
    /// Distinct hosts, ports and kinds `onRequest` is asked about per run (`ask::Questions`).
    pub max_questions: usize,
    /// The proxy requests are forwarded through (`upstreamProxy`).
    pub upstream_proxy: UpstreamSetting,
}

/// The name that reaches the host's own loopback (API.md): allowed only by this exact entry in
/// `allowedDomains`, never by a wildcard (`*.sandspawn.internal`) and never by an `onRequest`
/// answer, because it opens every port of the host's loopback, which the address guard exists to
/// close. `deniedDomains` still wins.
pub const HOST_LOOPBACK_NAME: &str = "host.sandspawn.internal";

/// `true` when `host` is [`HOST_LOOPBACK_NAME`].
pub fn names_host_loopback(host: &Host) -> bool {
    matches!(host, Host::Name(n) if n == HOST_LOOPBACK_NAME)
}

/// `requestTimeoutMs` when not given (API.md).
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;
/// Distinct hosts, ports and kinds `onRequest` is asked about per run when `maxQuestions` is not
/// given, and the most it may be (`ask::MAX_ALLOWS`: every allow is listed).
pub const DEFAULT_MAX_QUESTIONS: usize = 256;
pub const MOST_MAX_QUESTIONS: usize = 4096;

fn nets_as_strings<S: serde::Serializer>(nets: &[IpNet], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(nets.iter().map(|n| n.to_string()))
}

/// Why the proxy refused a request (`networkDenials[].reason`, `X-Sandspawn-Denied`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    NotAllowed,
    Denied,
    PrivateAddress,
    Malformed,
    /// The run holds as many proxy connections as one run may (`proxy::MAX_CONNECTIONS`).
    ConnectionLimit,
    /// macOS: the request did not carry the run's proxy credential (`network::credential`).
    Unauthenticated,
    /// On neither list, and `onRequest` answered deny (or failed, or did not answer in time).
    Declined,
    /// The host's lookup of the name gave no answer to check (a timeout, a failing name server),
    /// or, for a name only `onRequest` allowed, said it does not exist: nothing was dialled.
    LookupFailed,
    /// A plain-HTTP `TRACE` or `TRACK`: the last proxy on the way echoes such a request, the
    /// `Proxy-Authorization` the run's proxy adds for the user's upstream proxy included.
    MethodRefused,
    /// On neither list, and `ask::MAX_WAITING` questions of the run were already open (or
    /// `ask::MAX_ALLOWS` allows were listed, none for this host): refused without asking.
    QuestionLimit,
    /// A plain-HTTP chunked body (the request's, or an answer's) cut off once the run had spent
    /// its allowance of small chunks (`proxy::budget`): each costs the host's proxy far more
    /// than writing it cost the command.
    TinyChunks,
}

impl Refusal {
    const ALL: [Refusal; 11] = [
        Refusal::NotAllowed,
        Refusal::Denied,
        Refusal::PrivateAddress,
        Refusal::Malformed,
        Refusal::ConnectionLimit,
        Refusal::Unauthenticated,
        Refusal::Declined,
        Refusal::LookupFailed,
        Refusal::MethodRefused,
        Refusal::QuestionLimit,
        Refusal::TinyChunks,
    ];

    /// The refusal `as_str` names (a result's `networkDenials[].reason`).
    pub fn named(s: &str) -> Option<Refusal> {
        Refusal::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::NotAllowed => "not_allowed",
            Refusal::Denied => "denied",
            Refusal::PrivateAddress => "private_address",
            Refusal::Malformed => "malformed",
            Refusal::ConnectionLimit => "connection_limit",
            Refusal::Unauthenticated => "unauthenticated",
            Refusal::Declined => "declined",
            Refusal::LookupFailed => "lookup_failed",
            Refusal::MethodRefused => "method_refused",
            Refusal::QuestionLimit => "question_limit",
            Refusal::TinyChunks => "tiny_chunks",
        }
    }

    /// `true` when the run's rules refused the host (its lists, the address guard, `onRequest`'s
    /// answer or bounds, a method never forwarded): a refusal a failed run is `network_denied` for.
    /// Not the command's own faults, which no option of the policy would change: a request naming
    /// no valid host and port (`malformed`, e.g. an allowed host on port 0), one past the run's
    /// connections (`connection_limit`), a body of too many tiny chunks (`tiny_chunks`), or one without the run's proxy credential
    /// (`unauthenticated`, another local process's or a tool's that dropped it). Reporting those as
    /// the policy's refusal of the host would advise allowing a host already allowed, and offer an
    /// unsandboxed rerun (`runWithEscalation`, the CLI's `--ask`) for a command that failed itself.
    pub fn is_policy_refusal(self) -> bool {
        !matches!(self, Refusal::Malformed | Refusal::ConnectionLimit | Refusal::Unauthenticated | Refusal::TinyChunks)
    }

    /// The sentence a 403 body gives, so an agent can tell a policy block from an outage.
    pub fn explain(self) -> &'static str {
        match self {
            Refusal::NotAllowed => "the host is not in allowedDomains (sandbox.network.allowedDomains; CLI: --allow-domain)",
            Refusal::Denied => "the host matches deniedDomains (sandbox.network.deniedDomains; CLI: --deny-domain), which no other rule overrides",
            Refusal::PrivateAddress => {
                "the host is or resolves to a loopback, private, link-local, multicast or metadata address, or one on the host's own network; listing that address in \
                 sandbox.network.allowPrivateAddresses (CLI: --allow-private) permits it"
            }
            Refusal::Malformed => "the request does not name a valid host and port",
            Refusal::ConnectionLimit => {
                "this run already holds 256 proxy connections (tunnels included), the most one run may; close or reuse connections and retry"
            }
            Refusal::Unauthenticated => {
                "the request did not carry this run's proxy credential (the user name and password in the HTTP_PROXY, HTTPS_PROXY and ALL_PROXY URLs); only the sandboxed command may use this proxy"
            }
            Refusal::Declined => "the host is not in allowedDomains, and the onRequest callback (CLI: --ask) answered deny, failed, or did not answer in time",
            Refusal::LookupFailed => {
                "the host's lookup of the name timed out or failed (or, for a host allowed only by onRequest and no upstream proxy, found \
                 no such name), so its addresses could not be checked against the address guard and nothing was dialled"
            }
            Refusal::QuestionLimit => {
                "the host is not in allowedDomains, and 256 requests of this run for other hosts were already waiting for the onRequest \
                 callback (CLI: --ask), or it had already been asked about as many hosts as sandbox.network.maxQuestions allows \
                 (256 by default), or it had already allowed 4,096 requests of this run (the most networkDecisions lists), so it was \
                 refused without asking"
            }
            Refusal::TinyChunks => {
                "this run sent (or was sent) more plain-HTTP chunked bodies of tiny chunks, or more chunk framing (chunk-size lines, \
                 whitespace, extensions), than one run may (100,000 chunks under 1 KiB beyond 64 a request, or some 6 MB of framing): \
                 each costs the host's proxy far more than writing it cost the command"
            }
            Refusal::MethodRefused => {
                "TRACE and TRACK are never forwarded: a proxy on the way answers them by echoing the request, with the credentials \
                 the run's proxy adds for the user's own proxy"
            }
        }
    }

    /// What the person or program running the command would change to allow `host` (shown as
    /// the proxy reports it), in the option's own words. For the 403 body and `denial.fix`.
    pub fn remedy(self, host: &str) -> String {
        match self {
            Refusal::NotAllowed | Refusal::Declined if host == HOST_LOOPBACK_NAME => format!(
                "add exactly '{HOST_LOOPBACK_NAME}' to sandbox.network.allowedDomains (CLI: --allow-domain {HOST_LOOPBACK_NAME}): it reaches every port of the host's loopback, so no wildcard matches it and onRequest is never asked"
            ),
            Refusal::NotAllowed | Refusal::Declined => {
                format!("add '{host}' to sandbox.network.allowedDomains (CLI: --allow-domain {host}), or answer allow from sandbox.network.onRequest (CLI: --ask on a terminal)")
            }
            Refusal::Denied => format!("remove the sandbox.network.deniedDomains entry that matches '{host}' (CLI: --deny-domain); no allow rule or answer overrides it"),
            Refusal::PrivateAddress => format!(
                "list the address '{host}' is or resolves to in sandbox.network.allowPrivateAddresses (CLI: --allow-private ADDRESS); onRequest is never asked about such addresses"
            ),
            Refusal::Malformed => "nothing: send a request that names a valid host and port".into(),
            Refusal::ConnectionLimit => "close or reuse connections; the limit is per run".into(),
            Refusal::Unauthenticated => "use the proxy URLs of the command's own environment, which carry the credential".into(),
            Refusal::QuestionLimit => format!(
                "answer the questions already waiting, raise sandbox.network.maxQuestions, or add '{host}' to sandbox.network.allowedDomains (CLI: --allow-domain {host}), and retry"
            ),
            Refusal::TinyChunks => "nothing: send chunked bodies in chunks of 1 KiB or more (or with a Content-Length), or use HTTPS".into(),
            Refusal::MethodRefused => "nothing: no option forwards TRACE or TRACK; use another method".into(),
            Refusal::LookupFailed => format!("check that '{host}' exists and that the host's name servers answer, then retry; a lookup that timed out is not passed on unchecked"),
        }
    }
}

impl NetworkPolicy {
    /// What each run says in `sandboxDetails.notEnforced` of the allowed wildcards on a suffix of
    /// the Public Suffix List's PRIVATE section (`*.github.io`, `*.githubusercontent.com`): taken,
    /// but they let in every owner's names under it, which the user may not know.
    pub fn spanning_private(&self) -> Vec<String> {
        let spanning = self.allowed_domains.iter().filter_map(|p| match p {
            Pattern::Subdomains(base) => spans_owners(base).map(|s| (base, s)),
            _ => None,
        });
        spanning
            .map(|(base, s)| {
                let what = if s.itself { format!("'{base}' is a public suffix") } else { format!("every name directly under '{base}' is a public suffix") };
                format!(
                    "network: allowedDomains '*.{base}' lets in every owner's hosts under it, not one owner's: {what} (Public Suffix \
                     List, {} section: each name under it is another user's); list the hosts you need to allow fewer",
                    s.section
                )
            })
            .collect()
    }

    /// `None` when the policy allows `host` (before the address guard), else why not.
    pub fn check(&self, host: &Host) -> Option<Refusal> {
        if self.denied_domains.iter().any(|p| p.matches(host)) {
            Some(Refusal::Denied)
        } else if names_host_loopback(host) {
            let exact = Pattern::Exact(HOST_LOOPBACK_NAME.to_string());
            if self.allowed_domains.contains(&exact) {
                None
            } else {
                Some(Refusal::NotAllowed)
            }
        } else if self.allowed_domains.iter().any(|p| p.matches(host)) {
            None
        } else {
            Some(Refusal::NotAllowed)
        }
    }

    /// `true` when the user listed `addr` in `allowPrivateAddresses`.
    pub fn private_allowed(&self, addr: IpAddr) -> bool {
        let addr = canonical_ip(addr);
        self.allow_private_addresses.iter().any(|n| n.contains(&addr))
    }

    /// Parse `value` (the object given as `sandbox.network`); `option` names it in errors.
    pub fn parse(option: &str, value: &Value) -> Result<NetworkPolicy> {
        let Value::Object(map) = value else {
            return Err(SandboxError::invalid(option, format!("must be a boolean or a NetworkPolicy object, got {}", describe(value))));
        };
        // `onRequest` (a function) is taken out by the JavaScript layer before the policy gets here.
        const FIELDS: [&str; 6] = ["allowedDomains", "deniedDomains", "allowPrivateAddresses", "requestTimeoutMs", "maxQuestions", "upstreamProxy"];
        if let Some(unknown) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(SandboxError::invalid(&format!("{option}.{unknown}"), format!("unknown field (known fields: {})", FIELDS.join(", "))));
        }
        let list = |name: &str, required: bool| -> Result<Vec<(String, String)>> {
            let field = format!("{option}.{name}");
            match map.get(name).filter(|v| !v.is_null()) {
                None if required => Err(SandboxError::invalid(&field, "is required (an array of host names; [] allows nothing but reports every attempt)")),
                None => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Value::String(s) => Ok((format!("{field}[{i}]"), s.clone())),
                        other => Err(SandboxError::invalid(&format!("{field}[{i}]"), format!("must be a string, got {}", describe(other)))),
                    })
                    .collect(),
                Some(v) => Err(SandboxError::invalid(&field, format!("must be an array of strings, got {}", describe(v)))),
            }
        };
        // A wildcard on a public suffix is refused in the allow-list only: in deniedDomains it
        // refuses more, which is what the user asked for.
        let patterns = |name: &str, required: bool, allowing: bool| -> Result<Vec<Pattern>> {
            list(name, required)?.iter().map(|(field, s)| parse_pattern(s, allowing).map_err(|m| SandboxError::invalid(field, m))).collect()
        };
        Ok(NetworkPolicy {
            allowed_domains: patterns("allowedDomains", true, true)?,
            denied_domains: patterns("deniedDomains", false, false)?,
            allow_private_addresses: list("allowPrivateAddresses", false)?
                .iter()
                .map(|(field, s)| parse_net(s).map_err(|m| SandboxError::invalid(field, m)))
                .collect::<Result<_>>()?,
            request_timeout_ms: request_timeout(option, map.get("requestTimeoutMs"))?,
            max_questions: max_questions(option, map.get("maxQuestions"))?,
            upstream_proxy: upstream_setting(option, map.get("upstreamProxy"))?,
        })
    }
}

fn request_timeout(option: &str, v: Option<&Value>) -> Result<u64> {
    match v.filter(|v| !v.is_null()) {
        None => Ok(DEFAULT_REQUEST_TIMEOUT_MS),
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f.is_finite() && f > 0.0 && f <= 3_600_000.0) => Ok(n.as_f64().unwrap_or(0.0).ceil() as u64),
        Some(v) => Err(SandboxError::invalid(&format!("{option}.requestTimeoutMs"), format!("must be a number of milliseconds from 1 to 3600000, got {}", describe(v)))),
    }
}

/// `maxQuestions`: a whole number from 1 to `MOST_MAX_QUESTIONS`.
fn max_questions(option: &str, v: Option<&Value>) -> Result<usize> {
    match v.filter(|v| !v.is_null()) {
        None => Ok(DEFAULT_MAX_QUESTIONS),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| (1..=MOST_MAX_QUESTIONS as u64).contains(&n)) => Ok(n.as_u64().unwrap_or(1) as usize),
        Some(v) => Err(SandboxError::invalid(
            &format!("{option}.maxQuestions"),
            format!("must be a whole number of questions from 1 to {MOST_MAX_QUESTIONS}, got {}", describe(v)),
        )),
    }
}

fn upstream_setting(option: &str, v: Option<&Value>) -> Result<UpstreamSetting> {
    let field = format!("{option}.upstreamProxy");
    match v.filter(|v| !v.is_null()) {
        None => Ok(UpstreamSetting::FromEnvironment),
        Some(Value::Bool(false)) => Ok(UpstreamSetting::Off),
        Some(Value::String(url)) => match ProxyUrl::parse(url) {
            Ok(u) => Ok(UpstreamSetting::Url(u)),
            Err((true, m)) => Err(SandboxError::new(crate::error::ErrorCode::Unsupported, format!("options.{field}: {m}"))),
            Err((false, m)) => Err(SandboxError::invalid(&field, m)),
        },
        Some(v) => Err(SandboxError::invalid(&field, format!("must be an http:// proxy URL or false, got {}", describe(v)))),
    }
}

/// One entry of a list; `allowing` when it is `allowedDomains`'s.
fn parse_pattern(s: &str, allowing: bool) -> std::result::Result<Pattern, String> {
    let shown = describe(&Value::String(s.to_string()));
    if s.is_empty() {
        return Err("is an empty string".into());
    }
    if !s.is_ascii() {
        return Err(format!("{shown} is not ASCII; write the name in its punycode form (xn--...), which is what clients send"));
    }
    if s.contains("://") {
        return Err(format!("{shown} has a scheme; give the host name only (e.g. 'registry.npmjs.org')"));
    }
    if s.contains('/') {
        return Err(format!("{shown} has a path or a CIDR; give a host name or a single address (address ranges go in allowPrivateAddresses)"));
    }
    if let Some(rest) = s.strip_prefix("*.") {
        let host = rest.strip_suffix('.').unwrap_or(rest).to_ascii_lowercase();
        let labels: Vec<&str> = host.split('.').collect();
        if rest.contains('*') || !labels.iter().all(|l| valid_label(l)) {
            return Err(format!("{shown} is not a valid wildcard ('*.' followed by a host name, e.g. '*.github.com')"));
        }
        if labels.len() < 2 {
            return Err(format!("{shown} is too broad: a wildcard must name at least two labels after '*.' (e.g. '*.github.com')"));
        }
        if matches!(Host::parse(&host), Some(Host::Ip(_))) {
            return Err(format!("{shown}: IP addresses are matched only by exact entry, never by wildcard"));
        }
        // The ICANN section's suffixes are countries' and registries' (`co.uk`): a wildcard on one
        // is never one owner's. The PRIVATE section's are companies' that serve their users'
        // content (`githubusercontent.com`, `googleapis.com`), where a wildcard is common and
        // usually meant: taken, and said in each run's notEnforced (`spanning_private`).
        if let Some(spans) = allowing.then(|| spans_owners(&host)).flatten().filter(|s| s.section == ICANN) {
            return Err(spanning_owners(&shown, &host, spans));
        }
        return Ok(Pattern::Subdomains(host));
    }
    if s.contains('*') {
        return Err(format!("{shown}: '*' is only allowed as a leading '*.' (subdomains of a name); '*' alone would allow everything (use network: true)"));
    }
    let bracketed = s.starts_with('[') && s.ends_with(']');
    if !bracketed && s.contains(':') && s.parse::<std::net::Ipv6Addr>().is_err() {
        return Err(format!("{shown} has a port; give the host name only (every port of an allowed host is allowed)"));
    }
    match Host::parse(s) {
        Some(Host::Name(n)) => Ok(Pattern::Exact(n)),
        Some(Host::Ip(a)) => Ok(Pattern::Ip(a)),
        None => Err(format!("{shown} is not a valid host name or IP address")),
    }
}

/// Why a wildcard on a public suffix is refused, and what to write instead: the registrable domain
/// (one owner's name under the suffix). The suffix alone, without `*.`, is one host and is taken.
fn spanning_owners(shown: &str, base: &str, spans: SpansOwners) -> String {
    let SpansOwners { section, itself } = spans;
    let (what, e_g) = if itself {
        (format!("'{base}' is a public suffix"), format!(" (e.g. '*.example.{base}')"))
    } else {
        (format!("every name directly under '{base}' is a public suffix"), String::new())
    };
    format!(
        "{shown} is too broad: {what} (Public Suffix List, {section} section), so the names under it belong to different owners and \
         the wildcard would allow every site of every one of them; name the registrable domain instead, one owner's name under the \
         suffix{e_g}, or list the hosts you need exactly"
    )
}

fn parse_net(s: &str) -> std::result::Result<IpNet, String> {
    let shown = describe(&Value::String(s.to_string()));
    let unbracketed = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')).unwrap_or(s);
    if let Ok(a) = unbracketed.parse::<IpAddr>() {
        return Ok(IpNet::from(canonical_ip(a)));
    }
    match unbracketed.parse::<IpNet>() {
        Ok(n) => Ok(match n {
            IpNet::V6(v6) if v6.prefix_len() >= 96 && v6.addr().to_ipv4_mapped().is_some() => {
                IpNet::new(IpAddr::V4(v6.addr().to_ipv4_mapped().expect("checked")), v6.prefix_len() - 96).expect("prefix in range").trunc()
            }
            n => n.trunc(),
        }),
        Err(_) => Err(format!("{shown} is not an IP address or CIDR range (e.g. '10.0.0.5', '192.168.0.0/16', '[fd00::1]')")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(v: Value) -> NetworkPolicy {
        NetworkPolicy::parse("sandbox.network", &v).unwrap()
    }

    fn err(v: Value) -> String {
        let e = NetworkPolicy::parse("sandbox.network", &v).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidOptions);
        e.message
    }

    fn check(p: &NetworkPolicy, host: &str) -> Option<Refusal> {
        p.check(&Host::parse(host).unwrap())
    }

    #[test]
    fn matching_rules() {
        let p = policy(json!({"allowedDomains": ["Registry.npmjs.org.", "*.github.com", "1.2.3.4", "[2001:db8::1]"], "deniedDomains": ["gist.github.com"]}));
        assert_eq!(check(&p, "registry.npmjs.org"), None);
        assert_eq!(check(&p, "REGISTRY.NPMJS.ORG."), None);
        assert_eq!(check(&p, "npmjs.org"), Some(Refusal::NotAllowed));
        assert_eq!(check(&p, "evilregistry.npmjs.org"), Some(Refusal::NotAllowed));
        assert_eq!(check(&p, "api.github.com"), None);
        assert_eq!(check(&p, "a.b.github.com"), None);
        assert_eq!(check(&p, "github.com"), Some(Refusal::NotAllowed), "apex not covered by *.");
        assert_eq!(check(&p, "evilgithub.com"), Some(Refusal::NotAllowed));
        assert_eq!(check(&p, "gist.github.com"), Some(Refusal::Denied), "denied wins over the wildcard");
        assert_eq!(check(&p, "1.2.3.4"), None);
        assert_eq!(check(&p, "[::ffff:1.2.3.4]"), None, "mapped form is the same address");
        assert_eq!(check(&p, "1.2.3.5"), Some(Refusal::NotAllowed));
        assert_eq!(check(&p, "[2001:db8::1]"), None);
        assert_eq!(check(&p, "2001:db8:0::1"), None);
        let none = policy(json!({"allowedDomains": []}));
        assert_eq!(check(&none, "example.com"), Some(Refusal::NotAllowed));
    }

    #[test]
    fn validation_names_the_entry() {
        for (v, field, needle) in [
            (json!({}), "sandbox.network.allowedDomains", "required"),
            (json!({"allowedDomains": "x.com"}), "sandbox.network.allowedDomains", "array"),
            (json!({"allowedDomains": [1]}), "sandbox.network.allowedDomains[0]", "string"),
            (json!({"allowedDomains": ["*"]}), "sandbox.network.allowedDomains[0]", "allow everything"),
            (json!({"allowedDomains": ["ok.com", "*.com"]}), "sandbox.network.allowedDomains[1]", "too broad"),
            (json!({"allowedDomains": ["a.*.com"]}), "sandbox.network.allowedDomains[0]", "leading"),
            (json!({"allowedDomains": ["bücher.de"]}), "sandbox.network.allowedDomains[0]", "punycode"),
            (json!({"allowedDomains": ["https://x.com"]}), "sandbox.network.allowedDomains[0]", "scheme"),
            (json!({"allowedDomains": ["x.com:443"]}), "sandbox.network.allowedDomains[0]", "port"),
            (json!({"allowedDomains": ["x.com/path"]}), "sandbox.network.allowedDomains[0]", "path"),
            (json!({"allowedDomains": [""]}), "sandbox.network.allowedDomains[0]", "empty"),
            (json!({"allowedDomains": ["a b.com"]}), "sandbox.network.allowedDomains[0]", "not a valid host"),
            (json!({"allowedDomains": ["*.1.2.3.4"]}), "sandbox.network.allowedDomains[0]", "exact entry"),
            (json!({"allowedDomains": [], "deniedDomains": ["*"]}), "sandbox.network.deniedDomains[0]", "allow"),
            (json!({"allowedDomains": [], "allowPrivateAddresses": ["localhost"]}), "sandbox.network.allowPrivateAddresses[0]", "CIDR"),
            (json!({"allowedDomains": [], "allowPrivateAddresses": ["10.0.0.0/33"]}), "sandbox.network.allowPrivateAddresses[0]", "CIDR"),
            (json!({"allowedDomains": [], "allowedDomain": []}), "sandbox.network.allowedDomain", "unknown field"),
        ] {
            let m = err(v.clone());
            assert!(m.starts_with(&format!("options.{field}:")) && m.contains(needle), "{v}: {m}");
        }
        assert!(err(json!("yes")).contains("boolean or a NetworkPolicy"));
    }

    /// Found by an attacker's review (mode30): `*.co.uk`, `*.github.io`, `*.s3.amazonaws.com` and
    /// `*.com.au` passed the "at least two labels" rule, though each allows every site of every
    /// owner under a public suffix (any GitHub Pages site of any user, any S3 bucket).
    #[test]
    fn wildcards_on_a_public_suffix_are_refused() {
        for (i, entry) in ["*.co.uk", "*.com.au", "*.CO.UK.", "*.foo.ck", "*.kawasaki.jp"].into_iter().enumerate() {
            let m = err(json!({"allowedDomains": ["ok.example.com", "*.example.co.uk", entry]}));
            let field = "options.sandbox.network.allowedDomains[2]: ";
            assert!(m.starts_with(field) && m.contains("public suffix") && m.contains("registrable domain"), "{i} {entry}: {m}");
        }
        // A public suffix named exactly is one host; a denied wildcard on one only refuses more.
        let p = policy(json!({"allowedDomains": ["co.uk", "github.io", "*.example.co.uk", "*.user.github.io", "*.sandspawn.internal", "*.example.test"], "deniedDomains": ["*.co.uk", "*.github.io"]}));
        assert_eq!(check(&p, "co.uk"), None);
        assert_eq!(check(&p, "github.io"), None);
        assert_eq!(check(&p, "www.example.co.uk"), Some(Refusal::Denied), "deniedDomains still wins");
        let p = policy(json!({"allowedDomains": ["*.example.co.uk", "*.user.github.io"]}));
        assert_eq!(check(&p, "www.example.co.uk"), None);
        assert_eq!(check(&p, "a.user.github.io"), None);
        assert_eq!(check(&p, "other.co.uk"), Some(Refusal::NotAllowed));
        assert!(p.spanning_private().is_empty(), "one owner's wildcards are said nowhere");
    }

    #[test]
    fn wildcards_on_a_private_public_suffix_are_taken_and_said() {
        let p = policy(json!({"allowedDomains": ["*.github.io", "*.S3.amazonaws.com.", "*.githubusercontent.com", "*.compute.amazonaws.com", "*.example.com"]}));
        assert_eq!(check(&p, "anyone.github.io"), None);
        let said = p.spanning_private();
        assert_eq!(said.len(), 4, "{said:?}");
        for (line, base) in said.iter().zip(["github.io", "s3.amazonaws.com", "githubusercontent.com", "compute.amazonaws.com"]) {
            assert!(line.starts_with(&format!("network: allowedDomains '*.{base}' lets in every owner's hosts")) && line.contains("PRIVATE"), "{line}");
        }
    }

    #[test]
    fn private_address_carve_outs() {
        let p = policy(json!({"allowedDomains": [], "allowPrivateAddresses": ["127.0.0.2", "10.1.0.0/16", "[::1]", "::ffff:192.168.1.0/120"]}));
        assert!(p.private_allowed("127.0.0.2".parse().unwrap()));
        assert!(!p.private_allowed("127.0.0.1".parse().unwrap()));
        assert!(p.private_allowed("10.1.200.3".parse().unwrap()));
        assert!(p.private_allowed("::ffff:10.1.0.1".parse().unwrap()));
        assert!(p.private_allowed("::1".parse().unwrap()));
        assert!(p.private_allowed("192.168.1.77".parse().unwrap()));
        assert!(!p.private_allowed("192.168.2.1".parse().unwrap()));
        let shown = serde_json::to_value(&p).unwrap();
        assert_eq!(shown["allowPrivateAddresses"], json!(["127.0.0.2/32", "10.1.0.0/16", "::1/128", "192.168.1.0/24"]));
    }
}
