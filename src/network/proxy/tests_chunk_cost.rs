//! Not a test: a measurement, run by hand (`cargo test --lib chunk_cost -- --ignored --nocapture`).
//! The host's CPU for forwarding a chunked body against what writing it cost the command, for
//! chunks of several sizes, on the multi-threaded runtime the addon uses; the client and the
//! upstream are plain threads whose own CPU is left out of the proxy's.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use serde_json::json;

use super::tests::proxy;

/// CPU seconds of the calling thread (`RUSAGE_THREAD`) or of the whole process (`RUSAGE_SELF`).
fn cpu(who: i32) -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// An upstream that reads `conns` chunked requests, one after the other, each to its end (or to a
/// close), and answers 200.
fn upstream(conns: usize) -> (u16, std::thread::JoinHandle<f64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let start = cpu(libc::RUSAGE_THREAD);
        for _ in 0..conns {
            one_request(l.accept().unwrap().0);
        }
        cpu(libc::RUSAGE_THREAD) - start
    });
    (port, h)
}

fn one_request(mut s: TcpStream) {
        let mut buf = vec![0u8; 1 << 16];
        let mut tail = Vec::new();
        loop {
            let n = s.read(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.ends_with(b"\r\n0\r\n\r\n") {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
                break;
            }
            let keep = tail.len().saturating_sub(8);
            tail.drain(..keep);
        }
}

/// The command: `conns` connections one after the other, each a chunked POST of `chunks` chunks
/// of `size` bytes written in 64 KiB buffers.
fn client(proxy: std::net::SocketAddr, port: u16, size: usize, chunks: usize, conns: usize) -> (f64, String) {
    let start = cpu(libc::RUSAGE_THREAD);
    let mut status = String::new();
    for _ in 0..conns {
        status = post(proxy, port, size, chunks);
    }
    (cpu(libc::RUSAGE_THREAD) - start, format!("{conns} x {status}"))
}

fn post(proxy: std::net::SocketAddr, port: u16, size: usize, chunks: usize) -> String {
    let mut s = TcpStream::connect(proxy).unwrap();
    let head = format!("POST http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let mut one = format!("{size:x}\r\n").into_bytes();
    one.extend(std::iter::repeat(b'x').take(size));
    one.extend_from_slice(b"\r\n");
    let per_buf = (65536 / one.len()).max(1);
    let buf = one.repeat(per_buf);
    let mut sent = 0;
    while sent < chunks {
        let n = per_buf.min(chunks - sent);
        if s.write_all(&buf[..n * one.len()]).is_err() {
            break;
        }
        sent += n;
    }
    let _ = s.write_all(b"0\r\n\r\n");
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
    let status = String::from_utf8_lossy(&resp).lines().next().unwrap_or("").to_string();
    format!("{status} after {sent} chunks")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn chunk_cost() {
    // (size, chunks, connections): 90,000 1-byte chunks stay within the run's allowance (the cost
    // without a bound); 8 Mi of them, on one connection or spread over 400, run out of it.
    let cases = [(1usize, 90_000usize, 1usize), (1, 8 << 20, 1), (1, 20_000, 400), (256, 1 << 17, 1), (1024, 1 << 16, 1), (4096, 1 << 14, 1)];
    for (size, chunks, conns) in cases {
        let (p, addr) = proxy(json!({"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}), &[]).await;
        let (port, up) = upstream(conns);
        let before = cpu(libc::RUSAGE_SELF);
        let (command, status) = tokio::task::spawn_blocking(move || client(addr, port, size, chunks, conns)).await.unwrap();
        let upstream = tokio::task::spawn_blocking(move || up.join().unwrap()).await.unwrap();
        let host = cpu(libc::RUSAGE_SELF) - before - command - upstream;
        let denials = p.finish().await.denials;
        println!("size {size:5} x {chunks:8} x {conns:3} conns: command {command:.3}s, proxy {host:.3}s, ratio {:.1}, upstream {upstream:.3}s; {status}; denials {:?}", host / command, denials.iter().map(|d| d.reason.as_str()).collect::<Vec<_>>());
    }
}
