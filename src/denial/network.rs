//! `network_denied`: a failed run whose network allow-list proxy refused something. The proxy's
//! record (`networkDenials`) is the evidence, so this needs no guessing from the output; the output
//! only supplies the snippet (what the tool printed about the refusal, when it printed anything).

use super::text::{find_ci, snippet};
use super::{CommandOutput, DenialKind, DenialReason, SandboxDenial};
use crate::network::policy::Refusal;

/// What tools print when the proxy refuses (collected from real runs through a refusing proxy; see
/// `__test__/network.test.js`): curl, git, Python (urllib, requests, pip), wget, npm, and the
/// proxy's own 403 body.
const REFUSAL_TEXTS: &[&str] = &[
    "blocked by the network policy",
    "x-sandspawn-denied",
    "connect tunnel failed, response 403",
    "tunnel connection failed: 403",
    "proxy tunneling failed: forbidden",
    "can't complete socks5 connection to",
    "npm error code e403",
    "403 forbidden",
];

/// The refusal a failed run's `network_denied` names: the first the policy made (`is_policy_refusal`),
/// whatever the command's own faults came before it; `None` when there is none.
pub fn deciding_refusal<'a>(refusals: impl IntoIterator<Item = (&'a str, Refusal)>) -> Option<(&'a str, Refusal)> {
    refusals.into_iter().find(|(_, why)| why.is_policy_refusal())
}

/// The verdict for a run that failed (`exitCode` non-zero or a signal) after the proxy refused
/// `host` (the first refusal the run recorded).
pub fn network_denial(out: &CommandOutput, host: &str, why: Refusal) -> Option<SandboxDenial> {
    if out.exit_code == Some(0) {
        return None;
    }
    let found = [out.stderr, out.stdout, out.aggregated]
        .into_iter()
        .find_map(|section| REFUSAL_TEXTS.iter().find_map(|t| find_ci(section, t).map(|at| snippet(section, Some(at)))));
    Some(SandboxDenial {
        reason: DenialReason::NetworkDenied,
        kind: DenialKind::Network,
        path: None,
        snippet: found.unwrap_or_else(|| format!("sandspawn's network proxy refused {host}")),
        host: Some(host.to_string()),
        network_reason: Some(why.as_str().to_string()),
        fix: Some(why.remedy(host)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out<'a>(code: i32, stderr: &'a str) -> CommandOutput<'a> {
        CommandOutput { exit_code: Some(code), signal: None, stdout: "", stderr, aggregated: stderr, cwd: None }
    }

    #[test]
    fn names_the_host_and_quotes_the_tool() {
        let d = network_denial(&out(56, "curl: (56) CONNECT tunnel failed, response 403\n"), "evil.test", Refusal::NotAllowed).unwrap();
        assert_eq!((d.reason, d.kind, d.host.as_deref()), (DenialReason::NetworkDenied, DenialKind::Network, Some("evil.test")));
        assert_eq!(d.snippet, "curl: (56) CONNECT tunnel failed, response 403");
        let quiet = network_denial(&out(1, ""), "evil.test", Refusal::Declined).unwrap();
        assert_eq!(quiet.snippet, "sandspawn's network proxy refused evil.test");
        assert_eq!(network_denial(&out(0, "403 Forbidden"), "evil.test", Refusal::NotAllowed), None, "a run that succeeded is no denial");
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["reason"], "network_denied");
        assert_eq!(v["host"], "evil.test");
        assert_eq!(v["networkReason"], "not_allowed");
        assert!(v["fix"].as_str().unwrap().contains("--allow-domain evil.test"), "{v}");
        assert_eq!(serde_json::to_value(&quiet).unwrap()["networkReason"], "declined");
    }

    #[test]
    fn the_policy_refusal_decides_not_the_commands_own_faults() {
        let own = [("registry.npmjs.org", Refusal::Malformed), ("", Refusal::ConnectionLimit), ("x", Refusal::Unauthenticated), ("127.0.0.1", Refusal::TinyChunks)];
        assert_eq!(deciding_refusal(own), None);
        let then = own.into_iter().chain([("evil.test", Refusal::NotAllowed), ("10.0.0.1", Refusal::PrivateAddress)]);
        assert_eq!(deciding_refusal(then), Some(("evil.test", Refusal::NotAllowed)));
    }
}
