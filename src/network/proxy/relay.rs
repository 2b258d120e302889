//! Moving a tunnel's bytes both ways until either side closes, or until neither side has sent
//! anything for `TUNNEL_IDLE`: an idle tunnel holds two of the host's descriptors, and a command
//! could open thousands and leave them (the run's slots are bounded too: see `Slots`).
//!
//! Between two TCP sockets (every CONNECT and SOCKS5 tunnel) the kernel moves the bytes on Linux
//! (`splice`, see `super::splice`); elsewhere, or when no pipe can be had, they are copied through
//! a buffer of ours.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A tunnel with no byte in either direction for this long is closed.
pub const TUNNEL_IDLE: Duration = Duration::from_secs(600);

/// Bytes read per system call: large reads halve the calls of tokio's default 8 KiB buffer.
const CHUNK: usize = 64 * 1024;

/// Relay between the client's socket and the upstream's: `early` (what the client sent after its
/// request, already read by the HTTP parser) goes upstream first.
pub async fn relay_tcp(client: tokio::net::TcpStream, early: &[u8], mut upstream: tokio::net::TcpStream, ctx: &super::Context) {
    let idle = ctx.tunnel_idle;
    if !early.is_empty() && upstream.write_all(early).await.is_err() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let pipes = &ctx.pipes;
        let started = Instant::now();
        let last = AtomicU64::new(0);
        let moved = || last.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        let both = async {
            // A failed direction ends the tunnel; one that ended cleanly waits for the other.
            let _ = tokio::try_join!(super::splice::pump(&client, &upstream, pipes, moved), super::splice::pump(&upstream, &client, pipes, moved));
        };
        tokio::select! {
            _ = both => {}
            _ = idle_for(idle, started, &last) => {}
        }
    }
    #[cfg(not(target_os = "linux"))]
    relay(client, upstream, idle).await
}

/// Resolves once nothing moved (`last`, in ms since `started`) for `idle`.
async fn idle_for(idle: Duration, started: Instant, last: &AtomicU64) {
    loop {
        tokio::time::sleep(idle / 4).await;
        let quiet = started.elapsed().saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)));
        if quiet >= idle {
            return;
        }
    }
}

/// Relay between `a` and `b` until both directions ended, one failed, or the tunnel was idle for
/// `idle`. Each side's write half is shut down when the other side's read half reaches its end.
pub async fn relay<A, B>(a: A, b: B, idle: Duration)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let started = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let (mut ar, mut aw) = tokio::io::split(a);
    let (mut br, mut bw) = tokio::io::split(b);
    let both = async {
        tokio::join!(pump(&mut ar, &mut bw, &last, started), pump(&mut br, &mut aw, &last, started));
    };
    tokio::select! {
        _ = both => {}
        _ = idle_for(idle, started, &last) => {}
    }
}

async fn pump<R, W>(r: &mut R, w: &mut W, last: &AtomicU64, started: Instant)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        last.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        if w.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
    let _ = w.shutdown().await;
}
