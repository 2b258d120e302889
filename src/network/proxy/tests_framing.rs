//! What hyper reads of a chunked request body besides its data (chunk-size lines, whitespace,
//! extensions, trailers) is paid for from the run's allowance too (wire.rs): an endless run of
//! leading zeros in a chunk-size line, or of whitespace after it, makes no data frame at all, yet
//! costs the host far more to parse than the command to write. The tests count what arrived and
//! what was recorded, never a clock.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::budget::{FRAMING_BYTE, GRACE, PER_REQUEST};
use super::tests::{proxy, serve_each};
use super::tests_body::{answers_chunked, chunk_counter};
use super::tests_budget::{post_tiny, ALLOWED};
use crate::network::policy::Refusal;

/// Twice what the allowance of a run's first request pays for, had it only framing to pay.
const PAST_THE_ALLOWANCE: usize = (2 * (GRACE + PER_REQUEST) / FRAMING_BYTE) as usize;

/// POST to the upstream at `port`: the head with `headers`, then `body` with `filler` bytes of
/// `fill` inserted at `at` (written in 1 MiB pieces, stopping when the proxy closes); what comes
/// back until the proxy closes.
async fn post(proxy: SocketAddr, port: u16, headers: &str, body: &[u8], at: usize, fill: u8, filler: usize) -> String {
    let c = TcpStream::connect(proxy).await.unwrap();
    let (mut r, mut w) = c.into_split();
    let mut head = format!("POST http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}\r\n").into_bytes();
    head.extend_from_slice(&body[..at]);
    let tail = body[at..].to_vec();
    let writer = tokio::spawn(async move {
        let piece = vec![fill; 1 << 20];
        let mut left = filler;
        let mut ok = w.write_all(&head).await.is_ok();
        while ok && left > 0 {
            let n = left.min(piece.len());
            ok = w.write_all(&piece[..n]).await.is_ok();
            left -= n;
        }
        if ok {
            let _ = w.write_all(&tail).await;
        }
        w
    });
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(120), r.read_to_end(&mut got)).await.expect("the proxy answered or closed");
    let _ = writer.await;
    String::from_utf8_lossy(&got).into_owned()
}

fn tiny_chunk_denials(denials: &[crate::network::denials::NetworkDenial]) -> u64 {
    denials.iter().filter(|d| d.reason == Refusal::TinyChunks).map(|d| d.count).sum()
}

/// A chunked body of one chunk `X`, its chunk-size line stretched at `at` by more bytes of `fill`
/// than the allowance pays for.
async fn endless_chunk_size_line(at: usize, fill: u8) {
    let up = chunk_counter().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let got = post(addr, up.port(), "Transfer-Encoding: chunked\r\n", b"1\r\nX\r\n0\r\n\r\n", at, fill, PAST_THE_ALLOWANCE).await;
    assert!(!got.contains("bytes="), "the upstream got the whole body: {got}");
    assert_eq!(tiny_chunk_denials(&p.finish().await.denials), 1);
}

#[tokio::test]
async fn a_chunk_size_of_endless_zeros_is_cut_off_and_reported() {
    endless_chunk_size_line(0, b'0').await;
}

#[tokio::test]
async fn a_chunk_size_with_endless_whitespace_is_cut_off_and_reported() {
    endless_chunk_size_line(1, b' ').await;
}

/// An upstream that reads a `Content-Length` body and answers with the bytes it got.
async fn length_counter() -> SocketAddr {
    serve_each(|mut s| async move {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let head_end = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match s.read(&mut chunk).await {
                Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
        let length: usize = head.split("content-length: ").nth(1).and_then(|v| v.split("\r\n").next()?.parse().ok()).unwrap_or(0);
        let mut got = buf.len() - head_end;
        while got < length {
            match s.read(&mut chunk).await {
                Ok(n) if n > 0 => got += n,
                _ => return,
            }
        }
        let body = format!("bytes={got}");
        let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
    })
    .await
}

#[tokio::test]
async fn a_large_upload_is_never_cut_off() {
    // Three times the data an allowance of framing alone would pay for: data is not framing.
    let big = 3 * PAST_THE_ALLOWANCE;
    let policy = json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]});
    let (p, addr) = proxy(policy, &[]).await;
    let chunked = chunk_counter().await;
    let size_line = format!("{big:x}\r\n");
    let body = format!("{size_line}\r\n0\r\n\r\n");
    let got = post(addr, chunked.port(), "Transfer-Encoding: chunked\r\n", body.as_bytes(), size_line.len(), b'X', big).await;
    assert!(got.ends_with(&format!(" bytes={big}")), "{got}");
    let length = length_counter().await;
    let got = post(addr, length.port(), &format!("Content-Length: {big}\r\n"), b"", 0, b'X', big).await;
    assert!(got.ends_with(&format!("bytes={big}")), "{got}");
    assert_eq!(tiny_chunk_denials(&p.finish().await.denials), 0);
}

#[tokio::test]
async fn an_answer_with_an_endless_chunk_size_line_is_cut_off_and_reported() {
    // A hostile allowed server: the proxy's client side parses its answer a byte at a time too.
    let mut body = vec![b'0'; PAST_THE_ALLOWANCE];
    body.extend_from_slice(b"1\r\nX\r\n0\r\n\r\n");
    let port = answers_chunked(body).await;
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(120), c.read_to_end(&mut got)).await.expect("the proxy closed the connection");
    assert!(!got.ends_with(b"X\r\n0\r\n\r\n"), "the whole answer came back");
    let denials = p.finish().await.denials;
    assert_eq!(tiny_chunk_denials(&denials), 1);
    assert!(denials.iter().any(|d| d.reason == Refusal::TinyChunks && d.host == "127.0.0.1" && d.port == port), "{denials:?}");
}

#[tokio::test]
async fn an_upload_in_big_chunks_goes_through_once_the_allowance_is_overdrawn() {
    let up = chunk_counter().await;
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    // A line-at-a-time streamer spends the run's allowance and is cut off, as documented.
    let got = post_tiny(addr, up.port(), ALLOWED + ALLOWED / 2).await;
    assert!(!got.contains("bytes="), "the streamer was not cut off: {got}");
    // Then 8 MiB in 64 KiB chunks on a new connection: data, not framing, and big chunks.
    let piece = 64 * 1024;
    let mut body = Vec::new();
    for _ in 0..128 {
        body.extend_from_slice(format!("{piece:x}\r\n").as_bytes());
        body.resize(body.len() + piece, b'X');
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let got = post(addr, up.port(), "Transfer-Encoding: chunked\r\n", &body, body.len(), b'X', 0).await;
    assert!(got.ends_with(&format!(" bytes={}", 128 * piece)), "{}", &got[..got.len().min(300)]);
    assert_eq!(tiny_chunk_denials(&p.finish().await.denials), 1, "only the streamer's");
}

#[tokio::test]
async fn a_large_answer_read_until_the_server_closes_is_never_cut_off() {
    // No length, no chunks: its data is paid back frame by frame, as a chunked body's is.
    let big = 3 * PAST_THE_ALLOWANCE;
    let port = serve_each(move |mut s| async move {
        let mut chunk = [0u8; 4096];
        let _ = s.read(&mut chunk).await;
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").await;
        let piece = vec![b'X'; 1 << 20];
        for n in (0..big).step_by(piece.len()) {
            let _ = s.write_all(&piece[..piece.len().min(big - n)]).await;
        }
        // The end of the answer is the FIN, but the socket stays open until the proxy has read
        // to it and closed: closed at once it is an orphan holding megabytes not yet sent (ss
        // showed 2.5 MB), which the kernel resets, dropping them, whenever the machine is past
        // tcp_mem or tcp_max_orphans (dmesg on the loaded test machine: "out of memory --
        // consider tuning tcp_mem", "too many orphaned sockets"); the answer then ended early.
        let _ = s.shutdown().await;
        let _ = s.read(&mut chunk).await;
    })
    .await
    .port();
    let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(120), c.read_to_end(&mut got)).await.expect("the proxy closed the connection");
    // The proxy sends it on chunked: its data is the `X`s, whole to the last chunk.
    assert!(got.ends_with(b"\r\n0\r\n\r\n"), "the answer ended early");
    assert_eq!(got.iter().filter(|&&b| b == b'X').count(), big);
    assert_eq!(tiny_chunk_denials(&p.finish().await.denials), 0);
}
