//! The proxy in-process: upstream test servers on 127.0.0.1 are reachable only because each test
//! lists them in `allowPrivateAddresses` (the real carve-out, no hidden switch); names resolve
//! through a fixed table, so nothing here touches the machine's resolver or leaves loopback.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{Resolver, RunProxy};
use crate::network::denials::Via;
use crate::network::policy::{NetworkPolicy, Refusal};

/// An upstream that answers every HTTP request with its path and Host header, or, after a
/// `TUNNEL\n` line, echoes bytes back.
pub(super) async fn upstream() -> SocketAddr {
    serve_each(|mut s| async move {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let Ok(n) = s.read(&mut chunk).await else { return };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            if buf.starts_with(b"TUNNEL\n") {
                let _ = s.write_all(&buf[7..]).await;
                buf.truncate(7);
                continue;
            }
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                buf.drain(..end + 4);
                let path = head.split(' ').nth(1).unwrap_or("").to_string();
                let host = head.lines().find_map(|l| l.strip_prefix("host: ").or_else(|| l.strip_prefix("Host: "))).unwrap_or("").to_string();
                let body = format!("path={path} host={host}");
                let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
            }
        }
    })
    .await
}

/// A server on 127.0.0.1 running `handle` for each connection it accepts.
pub(super) async fn serve_each<F, Fut>(handle: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            tokio::spawn(handle(s));
        }
    });
    addr
}

pub(super) async fn proxy(policy: serde_json::Value, names: &[(&str, &[&str])]) -> (RunProxy, SocketAddr) {
    proxy_idle(policy, names, super::relay::TUNNEL_IDLE).await
}

async fn proxy_idle(policy: serde_json::Value, names: &[(&str, &[&str])], idle: Duration) -> (RunProxy, SocketAddr) {
    let policy = NetworkPolicy::parse("sandbox.network", &policy).unwrap();
    let table: HashMap<String, Vec<IpAddr>> = names.iter().map(|(n, a)| (n.to_string(), a.iter().map(|s| s.parse().unwrap()).collect())).collect();
    let p = RunProxy::with_options(policy, Resolver::fixed(table), idle, None, super::Extras::default());
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    p.serve(l);
    (p, addr)
}

/// Send `request`, read until the server closes or `until` appears.
pub(super) async fn exchange(s: &mut TcpStream, request: &[u8], until: &str) -> String {
    s.write_all(request).await.unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            let n = s.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            got.extend_from_slice(&chunk[..n]);
            if !until.is_empty() && String::from_utf8_lossy(&got).contains(until) {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("the proxy answered");
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn connect_allowed_denied_and_torn_down() {
    let up = upstream().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]}), &[("allowed.test", &["127.0.0.1"])]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let head = exchange(&mut c, format!("CONNECT allowed.test:{} HTTP/1.1\r\nHost: allowed.test\r\n\r\n", up.port()).as_bytes(), "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let echoed = exchange(&mut c, b"TUNNEL\nping", "ping").await;
    assert_eq!(echoed, "ping");

    let mut d = TcpStream::connect(addr).await.unwrap();
    let denied = exchange(&mut d, b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", "allowedDomains").await;
    assert!(denied.starts_with("HTTP/1.1 403"), "{denied}");
    assert!(denied.to_lowercase().contains("x-sandspawn-denied: not_allowed"), "{denied}");
    assert!(denied.contains("sandspawn: evil.test:443 blocked by the network policy (not_allowed)"), "{denied}");

    assert!(p.live_tasks() > 0);
    let denials = p.finish().await.denials;
    assert_eq!(denials.len(), 1);
    assert_eq!((denials[0].host.as_str(), denials[0].port, denials[0].via, denials[0].reason), ("evil.test", 443, Via::Connect, Refusal::NotAllowed));
    // The open tunnel was closed by the teardown.
    let mut rest = Vec::new();
    let n = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut rest)).await.expect("tunnel closed").unwrap_or(0);
    assert_eq!(n, 0);
}

#[tokio::test]
async fn plain_http_checked_per_request_on_keep_alive() {
    let up = upstream().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]}), &[("allowed.test", &["127.0.0.1"])]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let req = format!("GET http://allowed.test:{}/a?b=1 HTTP/1.1\r\nHost: spoofed.test\r\nProxy-Authorization: x\r\n\r\n", up.port());
    let ok = exchange(&mut c, req.as_bytes(), "host=").await;
    assert!(ok.starts_with("HTTP/1.1 200") && ok.contains(&format!("path=/a?b=1 host=allowed.test:{}", up.port())), "{ok}");
    let denied = exchange(&mut c, b"GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", "(not_allowed)").await;
    assert!(denied.contains("HTTP/1.1 403"), "same connection, next host refused: {denied}");
    let denials = p.finish().await.denials;
    assert_eq!((denials[0].host.as_str(), denials[0].port, denials[0].via), ("evil.test", 80, Via::Http));
}

#[tokio::test]
async fn denied_wins_and_private_addresses_are_refused_before_dialing() {
    let up = upstream().await;
    let (p, addr) = proxy(
        json!({"allowedDomains": ["*.example.test", "loopback.test", "mixed.test", "127.0.0.1"], "deniedDomains": ["bad.example.test"], "allowPrivateAddresses": ["127.0.0.1"]}),
        &[("loopback.test", &["127.0.0.2"]), ("mixed.test", &["10.0.0.1", "127.0.0.1"]), ("ok.example.test", &["127.0.0.1"])],
    )
    .await;
    let ask = |target: String| async move {
        let mut c = TcpStream::connect(addr).await.unwrap();
        exchange(&mut c, format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes(), "\r\n\r\n").await
    };
    assert!(ask(format!("bad.example.test:{}", up.port())).await.starts_with("HTTP/1.1 403"));
    assert!(ask(format!("ok.example.test:{}", up.port())).await.starts_with("HTTP/1.1 200"));
    // Resolves to 127.0.0.2, not listed: refused without a connection attempt.
    assert!(ask(format!("loopback.test:{}", up.port())).await.contains("private_address"));
    // 10.0.0.1 is dropped by the guard; only the listed 127.0.0.1 is dialled.
    assert!(ask(format!("mixed.test:{}", up.port())).await.starts_with("HTTP/1.1 200"));
    // Numeric spellings and mapped forms of an allowed literal are the literal.
    assert!(ask(format!("127.1:{}", up.port())).await.starts_with("HTTP/1.1 200"));
    assert!(ask(format!("[::ffff:127.0.0.1]:{}", up.port())).await.starts_with("HTTP/1.1 200"));
    assert!(ask("[::ffff:169.254.169.254]:80".into()).await.contains("not_allowed"));
    let reasons: Vec<(String, Refusal)> = p.finish().await.denials.into_iter().map(|d| (d.host, d.reason)).collect();
    assert_eq!(reasons, [("bad.example.test".to_string(), Refusal::Denied), ("loopback.test".into(), Refusal::PrivateAddress), ("169.254.169.254".into(), Refusal::NotAllowed)]);
}

/// A SOCKS5 CONNECT to `name:port` (no authentication): the reply code, and the connection.
pub(super) async fn socks_connect(addr: SocketAddr, name: &str, port: u16) -> (u8, TcpStream) {
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(&[5, 1, 0]).await.unwrap();
    let mut m = [0u8; 2];
    c.read_exact(&mut m).await.unwrap();
    assert_eq!(m, [5, 0]);
    let mut req = vec![5, 1, 0, 3, name.len() as u8];
    req.extend_from_slice(name.as_bytes());
    req.extend_from_slice(&port.to_be_bytes());
    c.write_all(&req).await.unwrap();
    let mut rep = [0u8; 10];
    c.read_exact(&mut rep).await.unwrap();
    (rep[1], c)
}

/// Each request, on a connection of its own, is refused with a 403 whose answer names `reason`.
pub(super) async fn assert_refused(addr: SocketAddr, cases: &[(&str, &str)]) {
    for (req, reason) in cases {
        let mut c = TcpStream::connect(addr).await.unwrap();
        let answer = exchange(&mut c, req.as_bytes(), reason).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{req}: {answer}");
    }
}

#[tokio::test]
async fn socks5_names_allowed_and_refused() {
    let up = upstream().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]}), &[("allowed.test", &["127.0.0.1"])]).await;
    let socks = |name: &'static str, port: u16| socks_connect(addr, name, port);
    let (code, mut c) = socks("allowed.test", up.port()).await;
    assert_eq!(code, 0);
    assert_eq!(exchange(&mut c, b"TUNNEL\nhi", "hi").await, "hi");
    assert_eq!(socks("evil.test", 443).await.0, 2);
    assert_eq!(socks("evil.test\0.allowed.test", 443).await.0, 2, "NUL trick refused as malformed");
    assert_eq!(socks("allowed.test", 0).await.0, 2, "port 0");
    let d = p.finish().await.denials;
    let got: Vec<(&str, u16, Via, Refusal)> = d.iter().map(|d| (d.host.as_str(), d.port, d.via, d.reason)).collect();
    assert_eq!(got, [("evil.test", 443, Via::Socks5, Refusal::NotAllowed), ("evil.test?.allowed.test", 443, Via::Socks5, Refusal::Malformed), ("allowed.test", 0, Via::Socks5, Refusal::Malformed)]);
}

#[tokio::test]
async fn malformed_requests_are_answered_or_closed() {
    let (p, addr) = proxy(json!({"allowedDomains": ["allowed.test"]}), &[]).await;
    let talk = |bytes: Vec<u8>| async move {
        let mut c = TcpStream::connect(addr).await.unwrap();
        let _ = c.write_all(&bytes).await;
        let mut got = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), c.read_to_end(&mut got)).await.expect("closed, not hung");
        got
    };
    let talk_text = |bytes: Vec<u8>| async move { String::from_utf8_lossy(&talk(bytes).await).into_owned() };
    assert!(talk_text(b"\x16\x03\x01garbage\r\n\r\n".to_vec()).await.starts_with("HTTP/1.1 400"));
    let long = format!("GET http://allowed.test/{} HTTP/1.1\r\n\r\n", "a".repeat(100_000));
    let r = talk_text(long.into_bytes()).await;
    assert!(r.is_empty() || r.starts_with("HTTP/1.1 4"), "{r}");
    assert_eq!(talk(vec![4, 1, 0, 80, 127, 0, 0, 1, 0]).await, [0, 0x5b, 0, 0, 0, 0, 0, 0], "SOCKS4 rejected");
    let zero = talk_text(b"CONNECT allowed.test:0 HTTP/1.1\r\nConnection: close\r\n\r\n".to_vec()).await;
    assert!(zero.starts_with("HTTP/1.1 403") && zero.contains("malformed"), "{zero}");
    let origin = talk_text(b"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n".to_vec()).await;
    assert!(origin.starts_with("HTTP/1.1 403") && origin.contains("malformed"), "{origin}");
    assert_eq!(talk(vec![5, 1, 2]).await, [5, 0xff], "no acceptable SOCKS method");
    let reasons: Vec<Refusal> = p.finish().await.denials.iter().map(|d| d.reason).collect();
    assert_eq!(reasons, [Refusal::Malformed, Refusal::Malformed]);
}

#[tokio::test]
async fn many_concurrent_connections() {
    let up = upstream().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]}), &[("allowed.test", &["127.0.0.1"])]).await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        tasks.push(tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            let req = format!("GET http://allowed.test:{}/{i} HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", up.port());
            exchange(&mut c, req.as_bytes(), "").await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let body = t.await.unwrap();
        assert!(body.starts_with("HTTP/1.1 200") && body.contains(&format!("path=/{i} ")), "{body}");
    }
    assert!(p.finish().await.denials.is_empty());
}

/// Issue 29: tunnels hold one of the run's connection slots for their whole life, so one run can
/// hold at most `MAX_CONNECTIONS` tunnels (two descriptors each) however many it opens; the next
/// connection is refused with a `connection_limit` denial; another run's proxy is not affected.
#[tokio::test]
async fn tunnels_count_against_the_run_s_connections() {
    let up = upstream().await;
    let policy = json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]});
    let names: &[(&str, &[&str])] = &[("allowed.test", &["127.0.0.1"])];
    let (p, addr) = proxy(policy.clone(), names).await;
    let (other, other_addr) = proxy(policy, names).await;
    let connect = format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", up.port());
    let mut tunnels = Vec::new();
    for _ in 0..super::MAX_CONNECTIONS {
        let mut c = TcpStream::connect(addr).await.unwrap();
        let head = exchange(&mut c, connect.as_bytes(), "\r\n\r\n").await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        tunnels.push(c);
    }
    for _ in 0..3 {
        let mut c = TcpStream::connect(addr).await.unwrap();
        let refused = exchange(&mut c, connect.as_bytes(), "").await;
        assert!(refused.starts_with("HTTP/1.1 503") && refused.contains("connection_limit"), "{refused}");
    }
    // Another run's proxy serves as usual meanwhile.
    let mut c = TcpStream::connect(other_addr).await.unwrap();
    assert!(exchange(&mut c, connect.as_bytes(), "\r\n\r\n").await.starts_with("HTTP/1.1 200"));
    drop(c);
    // A tunnel that ends gives its slot back.
    drop(tunnels.pop());
    let mut again = None;
    for _ in 0..500 {
        let mut c = TcpStream::connect(addr).await.unwrap();
        if exchange(&mut c, connect.as_bytes(), "\r\n\r\n").await.starts_with("HTTP/1.1 200") {
            again = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut again = again.expect("the slot came back");
    assert_eq!(exchange(&mut again, b"TUNNEL\nping", "ping").await, "ping");
    let denials = p.finish().await.denials;
    assert_eq!(denials[0].reason, Refusal::ConnectionLimit);
    assert!(denials[0].count >= 3);
    assert!(other.finish().await.denials.is_empty());
}

/// Found by an attacker's review: a CONNECT took its connection's slot before dialling, and a refusal
/// dropped it while hyper kept the connection alive. Connections that each had one CONNECT refused
/// then held no slot at all (one run held 19,000 of the host's descriptors), and a tunnel opened on
/// such a connection afterwards did not count either.
#[tokio::test]
async fn a_refused_connect_keeps_its_connection_s_slot() {
    let up = upstream().await;
    let policy = json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]});
    let (p, addr) = proxy(policy, &[("allowed.test", &["127.0.0.1"])]).await;
    let mut held = Vec::new();
    for _ in 0..super::MAX_CONNECTIONS {
        let mut c = TcpStream::connect(addr).await.unwrap();
        // The whole refusal (its body ends the line), so the connection is ready for another request.
        let refused = exchange(&mut c, b"CONNECT denied.test:443 HTTP/1.1\r\n\r\n", ".\n").await;
        assert!(refused.starts_with("HTTP/1.1 403") && refused.ends_with(".\n"), "{refused}");
        held.push(c);
    }
    let connect = format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", up.port());
    let mut c = TcpStream::connect(addr).await.unwrap();
    let refused = exchange(&mut c, connect.as_bytes(), "\r\n\r\n").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    // A tunnel on a connection whose first CONNECT was refused holds that connection's slot.
    let mut first = held.swap_remove(0);
    let head = exchange(&mut first, connect.as_bytes(), "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(exchange(&mut first, b"TUNNEL\nping", "ping").await, "ping");
    let mut c = TcpStream::connect(addr).await.unwrap();
    let refused = exchange(&mut c, connect.as_bytes(), "\r\n\r\n").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    drop((held, first));
    let reasons: Vec<Refusal> = p.finish().await.denials.iter().map(|d| d.reason).collect();
    assert!(reasons.contains(&Refusal::ConnectionLimit), "{reasons:?}");
}

/// Found by an attacker's review: past `MAX_CONNECTIONS` every new connection was still accepted and
/// held (up to a second, waiting for its first byte to answer in its protocol), so one run flooding
/// its proxy held thousands of the host's descriptors and starved the host process. Connections
/// being refused are bounded too; past both bounds a new connection is closed as soon as accepted.
#[tokio::test]
async fn connections_beyond_the_limit_hold_a_bounded_number_of_the_host_s_descriptors() {
    let (p, addr) = proxy(json!({"allowedDomains": ["allowed.test"]}), &[]).await;
    // Silent clients: each holds a slot (or a refusal) while it sends nothing.
    let mut held = Vec::new();
    for _ in 0..super::MAX_CONNECTIONS {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    let flood: Vec<_> = (0..600).map(|_| tokio::spawn(tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr)))).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // One task per accepted connection, plus the accept loop.
    let accepted = p.live_tasks();
    assert!(accepted <= super::MAX_CONNECTIONS + super::context::MAX_REFUSING + 1, "{accepted} connections held by the proxy");
    for f in flood {
        let _ = f.await;
    }
    drop(held);
    let denials = p.finish().await.denials;
    assert_eq!(denials[0].reason, Refusal::ConnectionLimit);
}

/// An idle tunnel is closed after the proxy's idle time; an active one lives on.
#[tokio::test]
async fn idle_tunnels_close_and_active_ones_do_not() {
    let up = upstream().await;
    let policy = json!({"allowedDomains": ["allowed.test"], "allowPrivateAddresses": ["127.0.0.1"]});
    let idle = Duration::from_millis(300);
    let (p, addr) = proxy_idle(policy, &[("allowed.test", &["127.0.0.1"])], idle).await;
    let connect = format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", up.port());
    let mut quiet = TcpStream::connect(addr).await.unwrap();
    assert!(exchange(&mut quiet, connect.as_bytes(), "\r\n\r\n").await.starts_with("HTTP/1.1 200"));
    let mut busy = TcpStream::connect(addr).await.unwrap();
    assert!(exchange(&mut busy, connect.as_bytes(), "\r\n\r\n").await.starts_with("HTTP/1.1 200"));
    assert_eq!(exchange(&mut busy, b"TUNNEL\nping", "ping").await, "ping", "the echo mode is on");
    let started = std::time::Instant::now();
    while started.elapsed() < idle * 3 {
        assert_eq!(exchange(&mut busy, b"x", "x").await, "x", "an active tunnel stays open");
        tokio::time::sleep(idle / 6).await;
    }
    let mut rest = Vec::new();
    let n = tokio::time::timeout(Duration::from_secs(10), quiet.read_to_end(&mut rest)).await.expect("the idle tunnel was closed").unwrap_or(0);
    assert_eq!(n, 0);
    p.finish().await.denials;
}

#[tokio::test]
async fn host_sandspawn_internal_reaches_the_host_loopback_only_by_its_exact_entry() {
    let up = upstream().await;
    let connect = |addr: SocketAddr, target: String, until: &'static str| async move {
        let mut c = TcpStream::connect(addr).await.unwrap();
        exchange(&mut c, format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes(), until).await
    };
    let alias = format!("host.sandspawn.internal:{}", up.port());
    // Listed exactly: CONNECT and plain HTTP reach the upstream on 127.0.0.1, with no
    // allowPrivateAddresses entry; the loopback's own literal stays refused.
    let (p, addr) = proxy(json!({"allowedDomains": ["host.sandspawn.internal"]}), &[]).await;
    assert!(connect(addr, alias.clone(), "\r\n\r\n").await.starts_with("HTTP/1.1 200"));
    let mut c = TcpStream::connect(addr).await.unwrap();
    let got = exchange(&mut c, format!("GET http://{alias}/x HTTP/1.1\r\n\r\n").as_bytes(), "host=").await;
    assert!(got.contains(&format!("path=/x host={alias}")), "{got}");
    assert!(connect(addr, format!("127.0.0.1:{}", up.port()), "(not_allowed)").await.starts_with("HTTP/1.1 403"));
    assert_eq!(p.finish().await.denials.len(), 1);

    // A wildcard does not match it, and the refusal says what does.
    let (p, addr) = proxy(json!({"allowedDomains": ["*.sandspawn.internal"]}), &[]).await;
    let refused = connect(addr, alias.clone(), "never asked").await;
    assert!(refused.starts_with("HTTP/1.1 403") && refused.contains("add exactly 'host.sandspawn.internal'"), "{refused}");
    assert_eq!(p.finish().await.denials[0].reason, Refusal::NotAllowed);

    // deniedDomains wins over the exact entry.
    let (p, addr) = proxy(json!({"allowedDomains": ["host.sandspawn.internal"], "deniedDomains": ["*.sandspawn.internal"]}), &[]).await;
    assert!(connect(addr, alias, "(denied)").await.starts_with("HTTP/1.1 403"));
    assert_eq!(p.finish().await.denials[0].reason, Refusal::Denied);
}
