use std::collections::HashMap;

use super::*;

fn host(s: &str) -> Host {
    Host::parse(s).unwrap()
}

#[test]
fn proxy_urls() {
    let p = ProxyUrl::parse("http://us%40er:p%3Ass@proxy.corp.example:3128/").unwrap();
    assert_eq!((p.host.as_str(), p.port), ("proxy.corp.example", 3128));
    assert_eq!(p.authorization.as_deref(), Some(format!("Basic {}", crate::network::credential::base64(b"us@er:p:ss")).as_str()));
    assert_eq!(format!("{p:?}"), "http://proxy.corp.example:3128", "no credentials in a dump");
    let bare = ProxyUrl::parse("10.0.0.1:8080").unwrap();
    assert_eq!((bare.host.as_str(), bare.port, bare.authorization.is_none()), ("10.0.0.1", 8080, true));
    assert_eq!(ProxyUrl::parse("http://proxy").unwrap().port, 80);
    assert_eq!(ProxyUrl::parse("http://[::1]:3128").unwrap().shown(), "http://[::1]:3128");
    assert!(matches!(ProxyUrl::parse("https://proxy:443"), Err((true, _))));
    assert!(matches!(ProxyUrl::parse("socks5://proxy:1080"), Err((true, _))));
    for bad in ["", "http://", "http://proxy:0", "http://proxy:99999", "http://proxy/path", "http://pro xy:1"] {
        assert!(matches!(ProxyUrl::parse(bad), Err((false, _))), "{bad}");
    }
}

#[test]
fn no_proxy_rules() {
    let np = NoProxy::parse("localhost, .internal.example,corp.example:8080,10.0.0.0/8,[::1],192.168.1.5");
    assert!(np.matches(&host("localhost"), 80));
    assert!(np.matches(&host("a.internal.example"), 443));
    assert!(np.matches(&host("internal.example"), 443));
    assert!(!np.matches(&host("notinternal.example"), 443));
    assert!(np.matches(&host("corp.example"), 8080));
    assert!(!np.matches(&host("corp.example"), 443), "the port narrows the entry");
    assert!(np.matches(&host("10.2.3.4"), 80));
    assert!(np.matches(&host("[::1]"), 80));
    assert!(np.matches(&host("192.168.1.5"), 80));
    assert!(!np.matches(&host("192.168.1.6"), 80));
    assert!(!np.matches(&host("registry.example.org"), 443));
    assert!(NoProxy::parse("*").matches(&host("anything.example"), 1));
    assert!(!NoProxy::parse("").matches(&host("anything.example"), 1));
}

#[test]
fn from_the_environment() {
    let env = |pairs: &[(&str, &str)]| -> HashMap<String, String> { pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
    let get = |e: &HashMap<String, String>| {
        let e = e.clone();
        move |k: &str| e.get(k).cloned()
    };
    assert_eq!(Upstream::from_env(get(&env(&[]))).unwrap(), None);
    let e = env(&[("HTTPS_PROXY", "http://u:p@tunnel.example:3128"), ("http_proxy", "http://plain.example:8080"), ("HTTP_PROXY", "http://ignored.example:1"), ("NO_PROXY", ".corp.example")]);
    let up = Upstream::from_env(get(&e)).unwrap().unwrap();
    assert_eq!(up.tunnels.as_ref().unwrap().host, "tunnel.example");
    assert_eq!(up.plain.as_ref().unwrap().host, "plain.example", "lowercase first");
    assert_eq!(up.for_target(&host("registry.example.org"), 443, true).unwrap().host, "tunnel.example");
    assert_eq!(up.for_target(&host("registry.example.org"), 80, false).unwrap().host, "plain.example");
    assert_eq!(up.for_target(&host("registry.example.org"), 443, true).unwrap().host, "tunnel.example");
    assert!(up.for_target(&host("git.corp.example"), 443, true).is_none(), "NO_PROXY goes direct");
    let all = Upstream::from_env(get(&env(&[("ALL_PROXY", "http://all.example:3128")]))).unwrap().unwrap();
    assert_eq!((all.tunnels.unwrap().host, all.plain.unwrap().host), ("all.example".into(), "all.example".into()));
    let only_plain = Upstream::from_env(get(&env(&[("HTTP_PROXY", "http://plain.example:8080")]))).unwrap().unwrap();
    assert!(only_plain.for_target(&host("x.example"), 443, true).is_none(), "no HTTPS_PROXY: tunnels go direct");
    let (unsupported, m) = Upstream::from_env(get(&env(&[("HTTPS_PROXY", "https://tls.example:443")]))).unwrap_err();
    assert!(unsupported && m.contains("HTTPS_PROXY"), "{m}");
    let (unsupported, m) = Upstream::from_env(get(&env(&[("https_proxy", "http://bad host")]))).unwrap_err();
    assert!(!unsupported && m.contains("https_proxy"), "{m}");
    assert_eq!(UpstreamSetting::Off.resolve(get(&e)).unwrap(), None, "false: direct, whatever the environment says");
    assert_eq!(serde_json::to_value(UpstreamSetting::Url(ProxyUrl::parse("http://u:secret@p.example:1").unwrap())).unwrap(), "http://p.example:1");
}

#[test]
fn no_proxy_ipv6_entries_are_addresses_not_host_and_port() {
    // `::1` is no host `:` with port 1, nor `2001:db8::1234` one with port 1234.
    let np = NoProxy::parse("localhost,127.0.0.1,::1,2001:db8::1234,fd00::/8,[2001:db8::5]:8080,10.0.0.1:443");
    assert!(np.matches(&host("[::1]"), 18099), "::1 covers every port");
    assert!(np.matches(&host("[::1]"), 1));
    assert!(np.matches(&host("[2001:db8::1234]"), 443));
    assert!(np.matches(&host("[fd00::7]"), 80), "an unbracketed IPv6 range");
    assert!(np.matches(&host("[2001:db8::5]"), 8080), "a port only after a bracketed IPv6 address");
    assert!(!np.matches(&host("[2001:db8::5]"), 80));
    assert!(np.matches(&host("10.0.0.1"), 443));
    assert!(!np.matches(&host("10.0.0.1"), 80));
    assert!(!np.matches(&host("[2001:db8::1]"), 1234));
}
