//! Forwarding through the user's proxy, and asking about hosts on neither list, in-process: the
//! user's proxy is a small test proxy on 127.0.0.1 that checks its credentials, answers CONNECT
//! by connecting where it is told, and answers absolute-form requests itself (naming what it got,
//! or, for `Max-Forwards: 0`, echoing the whole request as a last hop does).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::tests::{exchange, upstream};
use super::{Extras, Resolver, RunProxy};
use crate::network::ask::{Asker, Decision, Question, Questions};
use crate::network::denials::Via;
use crate::network::policy::{NetworkPolicy, Refusal};
use crate::network::upstream::{ProxyUrl, Upstream};

/// The user's proxy: every request line it received, and whether its credentials were right.
pub(super) async fn user_proxy(user: &'static str, password: &'static str) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    user_proxy_knowing(user, password, &[]).await
}

/// The user's proxy with name resolution of its own (`names`: name to address, as a rebinding or
/// split-horizon name server would answer it): a CONNECT to a name reaches that address. It only
/// ever connects to loopback; any other target gets a 502, so no test packet leaves the machine.
pub(super) async fn user_proxy_knowing(user: &'static str, password: &'static str, names: &[(&str, &str)]) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let names: Arc<HashMap<String, IpAddr>> = Arc::new(names.iter().map(|(n, a)| (n.to_string(), a.parse().unwrap())).collect());
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let expected = format!("Basic {}", crate::network::credential::base64(format!("{user}:{password}").as_bytes()));
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else { return };
            let (log, expected, names) = (log.clone(), expected.clone(), names.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let Ok(b) = s.read_u8().await else { return };
                    head.push(b);
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let line = text.lines().next().unwrap_or("").to_string();
                let authorized = text.lines().any(|l| l.eq_ignore_ascii_case(&format!("proxy-authorization: {expected}")));
                log.lock().unwrap().push(format!("{line} auth={authorized}"));
                if !authorized {
                    let _ = s.write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n").await;
                    return;
                }
                if let Some(target) = line.strip_prefix("CONNECT ").and_then(|r| r.split(' ').next()) {
                    let Some((host, port)) = target.rsplit_once(':') else { return };
                    let host = host.trim_start_matches('[').trim_end_matches(']');
                    let ip = names.get(host).copied().or_else(|| host.parse::<IpAddr>().ok());
                    let Some(ip) = ip.filter(|ip| ip.is_loopback()) else {
                        let _ = s.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
                        return;
                    };
                    let Ok(mut t) = TcpStream::connect(SocketAddr::new(ip, port.parse().unwrap_or(0))).await else { return };
                    let _ = s.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
                    let _ = tokio::io::copy_bidirectional(&mut s, &mut t).await;
                } else if text.to_ascii_lowercase().contains("\r\nmax-forwards: 0\r\n") {
                    // As RFC 9110 §7.6.2 asks (and squid does): the last hop answers TRACE and
                    // OPTIONS itself, a TRACE by echoing the request it got, credentials included.
                    let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: message/http\r\ncontent-length: {}\r\n\r\n{text}", text.len()).as_bytes()).await;
                } else {
                    let body = format!("user proxy got: {line}");
                    let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
                }
            });
        }
    });
    (addr, seen)
}

pub(super) async fn proxy_with(policy: serde_json::Value, names: &[(&str, &[&str])], extras: Extras) -> (RunProxy, SocketAddr) {
    let policy = NetworkPolicy::parse("sandbox.network", &policy).unwrap();
    let table: HashMap<String, Vec<IpAddr>> = names.iter().map(|(n, a)| (n.to_string(), a.iter().map(|s| s.parse().unwrap()).collect())).collect();
    let p = RunProxy::new(policy, Resolver::fixed(table), extras);
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    p.serve(l);
    (p, addr)
}

pub(super) fn through(addr: SocketAddr, userinfo: &str) -> Extras {
    let url = ProxyUrl::parse(&format!("http://{userinfo}@{addr}")).unwrap();
    Extras { upstream: Some(Upstream::all_through(url)), ..Extras::default() }
}

#[tokio::test]
async fn connect_and_plain_http_go_through_the_users_proxy_with_its_credentials() {
    let target = upstream().await;
    let (user, seen) = user_proxy("me", "p@ss").await;
    let policy = json!({"allowedDomains": ["far.test", "127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]});
    let (p, addr) = proxy_with(policy, &[], through(user, "me:p%40ss")).await;
    // A tunnel: CONNECT to the user's proxy, which connects to the target; bytes flow both ways.
    let mut c = TcpStream::connect(addr).await.unwrap();
    let head = exchange(&mut c, format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", target.port()).as_bytes(), "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(exchange(&mut c, b"TUNNEL\nping", "ping").await, "ping");
    // Plain HTTP: the absolute form, rebuilt, with the credentials (a name the host cannot resolve
    // is the user's proxy's to resolve).
    let mut h = TcpStream::connect(addr).await.unwrap();
    let got = exchange(&mut h, b"GET http://far.test/x?y=1 HTTP/1.1\r\nHost: far.test\r\nProxy-Authorization: Basic c2FuZHNwYXduOng=\r\n\r\n", "user proxy got").await;
    assert!(got.contains("user proxy got: GET http://far.test/x?y=1 HTTP/1.1"), "{got}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, [format!("CONNECT 127.0.0.1:{} HTTP/1.1 auth=true", target.port()), "GET http://far.test/x?y=1 HTTP/1.1 auth=true".to_string()]);
    assert!(p.finish().await.denials.is_empty());
}

#[tokio::test]
async fn the_users_proxy_never_widens_the_policy() {
    let (user, seen) = user_proxy("me", "pw").await;
    let policy = json!({"allowedDomains": ["far.test", "rebound.test"], "deniedDomains": ["bad.test"]});
    let (p, addr) = proxy_with(policy, &[("rebound.test", &["10.0.0.7", "127.0.0.1"])], through(user, "me:pw")).await;
    let cases = [
        ("CONNECT evil.test:443 HTTP/1.1\r\n\r\n", "(not_allowed)"),
        ("CONNECT bad.test:443 HTTP/1.1\r\n\r\n", "(denied)"),
        ("CONNECT 127.0.0.1:22 HTTP/1.1\r\n\r\n", "(not_allowed)"),
        // Listed, but the host resolves it only to refused addresses.
        ("CONNECT rebound.test:443 HTTP/1.1\r\n\r\n", "(private_address)"),
    ];
    super::tests::assert_refused(addr, &cases).await;
    assert!(seen.lock().unwrap().is_empty(), "the user's proxy was never asked");
    assert_eq!(p.finish().await.denials.len(), 4);
}

#[tokio::test]
async fn wrong_credentials_are_a_bad_gateway_that_says_so() {
    let (user, _) = user_proxy("me", "pw").await;
    let (p, addr) = proxy_with(json!({"allowedDomains": ["far.test"]}), &[], through(user, "me:wrong")).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut c, b"CONNECT far.test:443 HTTP/1.1\r\n\r\n", "credentials").await;
    assert!(answer.starts_with("HTTP/1.1 502") && answer.contains("asks for credentials (407)"), "{answer}");
    assert!(!answer.contains("wrong"), "the password is never shown");
    drop(p);
}

/// Answers every question with `decision`, recording them.
struct Always(Decision, Arc<Mutex<Vec<Question>>>);

impl Asker for Always {
    fn ask(&self, q: Question) -> Pin<Box<dyn Future<Output = Result<Decision, String>> + Send>> {
        self.1.lock().unwrap().push(q);
        let d = self.0;
        Box::pin(async move { Ok(d) })
    }
}

pub(super) fn asking(decision: Decision) -> (Extras, Arc<Mutex<Vec<Question>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let q = Questions::new(Arc::new(Always(decision, asked.clone())), std::time::Duration::from_secs(5));
    (Extras { questions: Some(Arc::new(q)), ..Extras::default() }, asked)
}

#[tokio::test]
async fn unknown_hosts_are_asked_only_past_the_deny_list_and_refused_addresses_never() {
    let target = upstream().await;
    let policy = json!({"allowedDomains": [], "deniedDomains": ["bad.test"], "allowPrivateAddresses": ["127.0.0.1"]});
    let (extras, asked) = asking(Decision::AllowRun);
    let names: &[(&str, &[&str])] = &[("local.test", &["127.0.0.1"]), ("inside.test", &["10.1.2.3"])];
    let (p, addr) = proxy_with(policy, names, extras).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let ok = exchange(&mut c, format!("GET http://local.test:{}/a HTTP/1.1\r\n\r\n", target.port()).as_bytes(), "host=").await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let cases = [
        ("CONNECT host.sandspawn.internal:22 HTTP/1.1\r\n\r\n", "(not_allowed)"),
        ("CONNECT bad.test:443 HTTP/1.1\r\n\r\n", "(denied)"),
        ("CONNECT inside.test:443 HTTP/1.1\r\n\r\n", "(private_address)"),
        ("CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", "(private_address)"),
    ];
    super::tests::assert_refused(addr, &cases).await;
    let asked: Vec<(String, u16, Via)> = asked.lock().unwrap().iter().map(|q| (q.host.clone(), q.port, q.protocol)).collect();
    // A name is asked about before it is looked up (`tests_lookups`): inside.test is offered, then
    // refused for its address.
    let expected = [("local.test".to_string(), target.port(), Via::Http), ("inside.test".to_string(), 443, Via::Connect)];
    assert_eq!(asked, expected, "denied hosts, refused addresses, and the host's loopback by its name, are never offered");
    let done = p.finish().await;
    let decided = json!([{"host": "local.test", "port": target.port(), "decision": "allow-run", "source": "callback"}, {"host": "inside.test", "port": 443, "decision": "allow-run", "source": "callback"}]);
    assert_eq!(serde_json::to_value(&done.decisions).unwrap(), decided);
}

#[tokio::test]
async fn a_declined_host_gets_a_403_that_says_what_would_allow_it() {
    let (extras, _) = asking(Decision::Deny);
    let (p, addr) = proxy_with(json!({"allowedDomains": [], "allowPrivateAddresses": ["127.0.0.1"]}), &[("local.test", &["127.0.0.1"])], extras).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut c, b"CONNECT local.test:443 HTTP/1.1\r\n\r\n", "To allow it").await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.to_lowercase().contains("x-sandspawn-denied: declined"), "{answer}");
    assert!(answer.contains("sandspawn: local.test:443 blocked by the network policy (declined)") && answer.contains("--allow-domain local.test"), "{answer}");
    let done = p.finish().await;
    assert_eq!(done.denials[0].reason, Refusal::Declined);
}

#[tokio::test]
async fn trace_is_refused_and_max_forwards_never_reaches_the_users_proxy() {
    let (user, seen) = user_proxy("me", "s3cret").await;
    let (p, addr) = proxy_with(json!({"allowedDomains": ["registry.test"]}), &[], through(user, "me:s3cret")).await;
    // The user's proxy would echo a TRACE with the Proxy-Authorization the run's proxy added.
    for method in ["TRACE", "TRACK", "trace"] {
        let mut c = TcpStream::connect(addr).await.unwrap();
        let answer = exchange(&mut c, format!("{method} http://registry.test/ HTTP/1.1\r\nHost: registry.test\r\nMax-Forwards: 0\r\nConnection: close\r\n\r\n").as_bytes(), "").await;
        assert!(answer.starts_with("HTTP/1.1 403") && answer.contains("blocked by the network policy (method_refused)"), "{method}: {answer}");
        let secret = crate::network::credential::base64(b"me:s3cret");
        assert!(!answer.contains(&secret) && !answer.to_lowercase().contains("proxy-authorization"), "{answer}");
    }
    // Max-Forwards is dropped from every request sent on: the user's proxy forwards an OPTIONS
    // rather than answering it itself.
    let mut c = TcpStream::connect(addr).await.unwrap();
    let answer = exchange(&mut c, b"OPTIONS http://registry.test/ HTTP/1.1\r\nHost: registry.test\r\nMax-Forwards: 0\r\n\r\n", "user proxy got").await;
    assert!(answer.contains("user proxy got: OPTIONS http://registry.test/ HTTP/1.1"), "{answer}");
    assert_eq!(seen.lock().unwrap().clone(), ["OPTIONS http://registry.test/ HTTP/1.1 auth=true"], "no TRACE reached the user's proxy");
    let done = p.finish().await;
    assert_eq!(done.denials.len(), 1, "one entry, counted: {:?}", done.denials);
    assert_eq!((done.denials[0].reason, done.denials[0].count), (Refusal::MethodRefused, 3));
}
