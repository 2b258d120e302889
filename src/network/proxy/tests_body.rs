//! Bodies on the plain-HTTP path: a chunked body made of 1-byte chunks (free for the command to
//! write) must not cost the host's proxy a hand-over and a write per chunk. The upstream (or the
//! client) sees the chunk boundaries the proxy wrote, so the test counts them: no clock involved.

use std::net::SocketAddr;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::tests::{exchange, proxy, serve_each};

const TINY_CHUNKS: usize = 20_000;

fn tiny_chunks() -> Vec<u8> {
    let mut body = b"1\r\nX\r\n".repeat(TINY_CHUNKS);
    body.extend_from_slice(b"0\r\n\r\n");
    body
}

/// Read past the head, then to the end of a chunked body of `X`s: (chunks, data bytes).
async fn read_chunked(s: &mut TcpStream, mut buf: Vec<u8>) -> (usize, usize) {
    let mut chunk = [0u8; 65536];
    while !buf.ends_with(b"\r\n0\r\n\r\n") {
        let n = s.read(&mut chunk).await.unwrap_or(0);
        assert!(n > 0, "the body ended early");
        buf.extend_from_slice(&chunk[..n]);
    }
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let (mut chunks, mut bytes, mut at) = (0, 0, head_end);
    loop {
        let line_end = at + buf[at..].windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&buf[at..line_end]).unwrap(), 16).unwrap();
        if size == 0 {
            return (chunks, bytes);
        }
        chunks += 1;
        bytes += size;
        at = line_end + 2 + size + 2;
    }
}

/// An upstream that answers a chunked request with the chunks and bytes it got, or, for the path
/// `/lone`, as soon as the chunk `hello` arrived (that request never ends).
pub(super) async fn chunk_counter() -> SocketAddr {
    serve_each(|mut s| async move {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let lone = |b: &[u8]| b.starts_with(b"POST /lone ");
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") || (lone(&buf) && !buf.ends_with(b"hello\r\n")) {
            let n = s.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body = if lone(&buf) {
            "lone chunk arrived".to_string()
        } else {
            let (chunks, bytes) = read_chunked(&mut s, buf).await;
            format!("chunks={chunks} bytes={bytes}")
        };
        let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
    })
    .await
}

#[tokio::test]
async fn a_body_of_tiny_chunks_goes_upstream_in_few_chunks() {
    let up = chunk_counter().await;
    let (_p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let mut req = format!("POST http://127.0.0.1:{}/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", up.port()).into_bytes();
    req.extend_from_slice(&tiny_chunks());
    let got = exchange(&mut c, &req, "bytes=").await;
    let chunks: usize = got.split("chunks=").nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(usize::MAX);
    assert!(got.contains(&format!("bytes={TINY_CHUNKS}")), "{got}");
    assert!(chunks <= TINY_CHUNKS / 100, "the proxy forwarded {chunks} chunks for {TINY_CHUNKS} tiny ones");
}

#[tokio::test]
async fn a_lone_small_chunk_is_forwarded_without_waiting_for_more() {
    let up = chunk_counter().await;
    let (_p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let req = format!("POST http://127.0.0.1:{}/lone HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", up.port());
    let got = exchange(&mut c, req.as_bytes(), "lone chunk arrived").await;
    assert!(got.contains("lone chunk arrived"), "{got}");
}

/// A server on 127.0.0.1 (its port) that answers one request with `body`, chunked as it is.
pub(super) async fn answers_chunked(body: Vec<u8>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        let Ok((mut s, _)) = l.accept().await else { return };
        let mut chunk = [0u8; 4096];
        let _ = s.read(&mut chunk).await;
        let mut resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        resp.extend_from_slice(&body);
        let _ = s.write_all(&resp).await;
        let _ = s.read(&mut chunk).await;
    });
    port
}

#[tokio::test]
async fn a_response_of_tiny_chunks_comes_back_in_few_chunks() {
    let port = answers_chunked(tiny_chunks()).await;
    let (_p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).await.unwrap();
    let (chunks, bytes) = tokio::time::timeout(std::time::Duration::from_secs(10), read_chunked(&mut c, Vec::new())).await.expect("the proxy answered");
    assert_eq!(bytes, TINY_CHUNKS);
    assert!(chunks <= TINY_CHUNKS / 100, "the proxy sent back {chunks} chunks for {TINY_CHUNKS} tiny ones");
}
