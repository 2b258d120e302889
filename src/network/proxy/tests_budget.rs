//! A run's allowance of small chunks (budget.rs): past it, a chunked body of 1-byte chunks is cut
//! off and reported as a `tiny_chunks` denial, on one connection or spread over many, and from
//! either side. The tests look at what was recorded and what arrived, never at a clock.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::budget::{BYTES_PER_CHUNK, GRACE, PER_REQUEST};
use super::tests::proxy;
use super::tests_body::{answers_chunked, chunk_counter};
use crate::network::denials::Via;
use crate::network::policy::Refusal;

/// The chunks of 1 byte a run may send in one request before it is cut off.
pub(super) const ALLOWED: usize = ((GRACE + PER_REQUEST) / (BYTES_PER_CHUNK - 1)) as usize;

fn tiny_chunks(n: usize) -> Vec<u8> {
    let mut body = b"1\r\nX\r\n".repeat(n);
    body.extend_from_slice(b"0\r\n\r\n");
    body
}

/// Send a chunked POST of `chunks` 1-byte chunks to the upstream at `port` (ignoring a write cut
/// short by the proxy closing), and read what comes back until the proxy closes.
pub(super) async fn post_tiny(proxy: std::net::SocketAddr, port: u16, chunks: usize) -> String {
    let c = TcpStream::connect(proxy).await.unwrap();
    let (mut r, mut w) = c.into_split();
    let mut req = format!("POST http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n").into_bytes();
    req.extend_from_slice(&tiny_chunks(chunks));
    let writer = tokio::spawn(async move {
        let _ = w.write_all(&req).await;
        w
    });
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), r.read_to_end(&mut got)).await.expect("the proxy answered or closed");
    let _ = writer.await;
    String::from_utf8_lossy(&got).into_owned()
}

fn tiny_chunk_denials(denials: &[crate::network::denials::NetworkDenial]) -> u64 {
    denials.iter().filter(|d| d.reason == Refusal::TinyChunks).inspect(|d| assert_eq!((d.host.as_str(), d.via), ("127.0.0.1", Via::Http))).map(|d| d.count).sum()
}

#[tokio::test]
async fn a_request_of_too_many_tiny_chunks_is_cut_off_and_reported() {
    let up = chunk_counter().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let got = post_tiny(addr, up.port(), ALLOWED + ALLOWED / 2).await;
    assert!(!got.contains("bytes="), "the upstream got the whole body: {got}");
    assert_eq!(tiny_chunk_denials(&p.finish().await.denials), 1);
}

#[tokio::test]
async fn opening_connections_buys_no_more_tiny_chunks() {
    let up = chunk_counter().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    // Each request alone stays well within the allowance; together they are half as much again.
    let each = ALLOWED / 20;
    let mut last = String::new();
    for _ in 0..30 {
        last = post_tiny(addr, up.port(), each).await;
    }
    assert!(!last.contains("bytes="), "the upstream got the last body whole: {last}");
    assert!(tiny_chunk_denials(&p.finish().await.denials) >= 5);
}

#[tokio::test]
async fn a_response_of_too_many_tiny_chunks_is_cut_off_and_reported() {
    let port = answers_chunked(tiny_chunks(ALLOWED + ALLOWED / 2)).await;
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), c.read_to_end(&mut got)).await.expect("the proxy closed the connection");
    assert!(got.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got[..got.len().min(200)]));
    assert!(!got.ends_with(b"\r\n0\r\n\r\n"), "the whole body came back");
    assert_eq!(tiny_chunk_denials(&p.finish().await.denials), 1);
}
