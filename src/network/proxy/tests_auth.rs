//! The macOS proxy as the runner starts it (`RunProxy::on_loopback` on `loopback::bind`'s host
//! listeners), driven on Linux by plain sockets: another local process that connects to the run's
//! port without the run's credential gets nothing (no policy decision, no connection upstream),
//! over HTTP, CONNECT and SOCKS5; the command, which has it, gets what the policy allows. The
//! upstream is an IP literal on 127.0.0.1 (listed in `allowPrivateAddresses`), so no name is looked
//! up.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::RunProxy;
use crate::network::denials::Via;
use crate::network::loopback::{self, Endpoint};
use crate::network::policy::{NetworkPolicy, Refusal};

/// An upstream that counts its connections and answers each request with the request's head, or
/// echoes what follows a `TUNNEL\n` line.
async fn upstream() -> (SocketAddr, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (addr, count) = (l.local_addr().unwrap(), Arc::new(AtomicUsize::new(0)));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = s.read(&mut chunk).await {
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.starts_with(b"TUNNEL\n") {
                        let _ = s.write_all(&buf[7..]).await;
                        buf.truncate(7);
                    } else if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                        buf.drain(..end + 4);
                        let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{head}", head.len()).as_bytes()).await;
                    }
                }
            });
        }
    });
    (addr, count)
}

/// The run's proxy exactly as the runner starts it on macOS.
fn run_proxy(allowed: &[&str]) -> (RunProxy, Endpoint) {
    let policy = NetworkPolicy::parse("sandbox.network", &json!({"allowedDomains": allowed, "allowPrivateAddresses": ["127.0.0.1"]})).unwrap();
    let l = loopback::bind().unwrap();
    let endpoint = l.endpoint.clone();
    (RunProxy::on_loopback(l, policy, super::Extras::default()).unwrap(), endpoint)
}

/// The `Basic` token for `user:secret` (the encoder is checked against RFC 4648's vectors).
fn basic(user: &str, secret: &str) -> String {
    crate::network::credential::base64(format!("{user}:{secret}").as_bytes())
}

async fn ask(port: u16, request: &[u8], until: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(request).await.unwrap();
    read_until(&mut s, until).await
}

async fn read_until(s: &mut TcpStream, until: &str) -> String {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        while let Ok(n) = s.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&chunk[..n]);
            if String::from_utf8_lossy(&got).contains(until) {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("the proxy answered");
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn http_and_connect_without_the_runs_credential_are_refused_before_any_connection() {
    let (up, connections) = upstream().await;
    let (p, e) = run_proxy(&["127.0.0.1"]);
    let wrong = basic("sandspawn", "0123456789abcdef0123456789abcdef");
    let other_run = basic("sandspawn", loopback::bind().unwrap().endpoint.credential.secret());
    for auth in [String::new(), format!("Proxy-Authorization: Basic {wrong}\r\n"), format!("Proxy-Authorization: Basic {other_run}\r\n")] {
        let connect = ask(e.port, format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n{auth}\r\n", up.port()).as_bytes(), "only the sandboxed command").await;
        assert!(connect.starts_with("HTTP/1.1 407"), "{connect}");
        assert!(connect.to_lowercase().contains("proxy-authenticate: basic realm=\"sandspawn\""), "{connect}");
        assert!(connect.to_lowercase().contains("x-sandspawn-denied: unauthenticated"), "{connect}");
        let get = ask(e.port, format!("GET http://127.0.0.1:{}/secret HTTP/1.1\r\nHost: x\r\n{auth}\r\n", up.port()).as_bytes(), "only the sandboxed command").await;
        assert!(get.starts_with("HTTP/1.1 407"), "{get}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0, "nothing reached the upstream");
    let denials = p.finish().await.denials;
    let shown: Vec<(&str, u16, Via, Refusal, u64)> = denials.iter().map(|d| (d.host.as_str(), d.port, d.via, d.reason, d.count)).collect();
    assert_eq!(shown, vec![("127.0.0.1", up.port(), Via::Connect, Refusal::Unauthenticated, 3), ("127.0.0.1", up.port(), Via::Http, Refusal::Unauthenticated, 3)]);
}

#[tokio::test]
async fn the_command_with_the_credential_gets_what_the_policy_allows_and_no_more() {
    let (up, connections) = upstream().await;
    let (p, e) = run_proxy(&["127.0.0.1"]);
    let auth = format!("Proxy-Authorization: Basic {}\r\n", basic("sandspawn", e.credential.secret()));
    let mut tunnel = TcpStream::connect(("127.0.0.1", e.port)).await.unwrap();
    tunnel.write_all(format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n{auth}\r\n", up.port()).as_bytes()).await.unwrap();
    let head = read_until(&mut tunnel, "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    tunnel.write_all(b"TUNNEL\nping").await.unwrap();
    assert_eq!(read_until(&mut tunnel, "ping").await, "ping");
    // Plain HTTP: forwarded, and the credential is not passed on to the upstream.
    let get = ask(e.port, format!("GET http://127.0.0.1:{}/a HTTP/1.1\r\nHost: x\r\n{auth}\r\n", up.port()).as_bytes(), "host:").await;
    assert!(get.starts_with("HTTP/1.1 200") && get.contains("get /a http/1.1"), "{get}");
    assert!(!get.contains("proxy-authorization"), "{get}");
    // The credential opens the proxy, not the policy.
    let denied = ask(e.port, format!("CONNECT 127.0.0.2:443 HTTP/1.1\r\n{auth}\r\n").as_bytes(), "\r\n\r\n").await;
    assert!(denied.starts_with("HTTP/1.1 403"), "{denied}");
    assert_eq!(connections.load(Ordering::SeqCst), 2);
    let denials = p.finish().await.denials;
    assert_eq!(denials.len(), 1);
    assert_eq!((denials[0].host.as_str(), denials[0].reason), ("127.0.0.2", Refusal::NotAllowed));
}

/// SOCKS5 greeting, then RFC 1929 with `user`/`password` when given; the server's replies.
async fn socks(port: u16, credential: Option<(&str, &str)>, target_port: u16) -> (TcpStream, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let method = if credential.is_some() { 2 } else { 0 };
    s.write_all(&[5, 1, method]).await.unwrap();
    let mut replies = vec![0u8; 2];
    s.read_exact(&mut replies).await.unwrap();
    if replies != [5, method] {
        return (s, replies);
    }
    if let Some((user, password)) = credential {
        let mut m = vec![1, user.len() as u8];
        m.extend_from_slice(user.as_bytes());
        m.push(password.len() as u8);
        m.extend_from_slice(password.as_bytes());
        s.write_all(&m).await.unwrap();
        let mut status = [0u8; 2];
        s.read_exact(&mut status).await.unwrap();
        replies.extend_from_slice(&status);
        if status != [1, 0] {
            return (s, replies);
        }
    }
    let mut req = vec![5, 1, 0, 1, 127, 0, 0, 1];
    req.extend_from_slice(&target_port.to_be_bytes());
    s.write_all(&req).await.unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).await.unwrap();
    replies.extend_from_slice(&reply[..2]);
    (s, replies)
}

#[tokio::test]
async fn socks5_asks_for_the_runs_user_name_and_password() {
    let (up, connections) = upstream().await;
    let (p, e) = run_proxy(&["127.0.0.1"]);
    // No authentication offered: "no acceptable method", and the connection is closed.
    let (mut s, replies) = socks(e.port, None, up.port()).await;
    assert_eq!(replies, [5, 0xff]);
    assert_eq!(s.read(&mut [0u8; 1]).await.unwrap_or(0), 0);
    // A wrong password: status 1, closed.
    let (mut s, replies) = socks(e.port, Some(("sandspawn", "0123456789abcdef0123456789abcdef")), up.port()).await;
    assert_eq!(replies, [5, 2, 1, 1]);
    assert_eq!(s.read(&mut [0u8; 1]).await.unwrap_or(0), 0);
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    // The run's: the tunnel works.
    let (mut s, replies) = socks(e.port, Some(("sandspawn", e.credential.secret())), up.port()).await;
    assert_eq!(replies, [5, 2, 1, 0, 5, 0]);
    s.write_all(b"TUNNEL\npong").await.unwrap();
    assert_eq!(read_until(&mut s, "pong").await, "pong");
    let denials = p.finish().await.denials;
    let shown: Vec<(&str, Via, Refusal, u64)> = denials.iter().map(|d| (d.host.as_str(), d.via, d.reason, d.count)).collect();
    assert_eq!(shown, vec![("", Via::Socks5, Refusal::Unauthenticated, 2)]);
}
