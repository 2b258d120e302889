//! A run's allowance of chunks on the plain-HTTP path. hyper decodes a chunked body one chunk at a
//! time, each costing the host's proxy about a microsecond on the runtime every run shares, while
//! `1\r\nX\r\n` written in big buffers costs the command next to nothing: without a bound, a run
//! (or a hostile allowed server) gets 40-60 times its own CPU spent by the host, outside its
//! `cpuTime`. So small chunks are paid for: each frame of a chunked body under `BYTES_PER_CHUNK`
//! costs that much of the run's allowance; a larger one costs nothing (even once the allowance is
//! spent), and earns nothing. A run
//! that sends small ones spends the allowance it was given (`GRACE`, and `PER_REQUEST` a request,
//! which already costs the host a dial), and then its chunked bodies are cut off and reported
//! (`tiny_chunks`, metered.rs). Big frames once brought in their length beyond a chunk's: an
//! attacker's review (net26) sent 1 MiB chunks each followed by 1,023 one-byte ones, which never
//! ran out (4 million tiny chunks in 6 s, the host's CPU 6 to 7 times the command's, where big
//! chunks alone cost 3 times: the command writes them with `sendfile`, the host copies them). What a client or an allowed server sends besides a body's data (chunk framing, parsed a
//! byte at a time) is paid for from the same allowance, byte by byte (`FRAMING_BYTE`, wire.rs).
//! The allowance is the run's, not a connection's: opening connections buys nothing.

use std::sync::atomic::{AtomicI64, Ordering};

/// What a chunk must carry on average to be free: forwarding a chunk this size costs the host
/// about what writing it cost the command (measured: tests_chunk_cost.rs).
pub const BYTES_PER_CHUNK: i64 = 1024;
/// Chunks smaller than that a run may send anyway: some 0.1 s of the host's CPU.
pub const GRACE: i64 = 100_000 * BYTES_PER_CHUNK;
/// Each forwarded request adds this many chunks' worth (its own dial costs the host far more).
pub const PER_REQUEST: i64 = 64 * BYTES_PER_CHUNK;

/// What a byte hyper reads of a chunked body besides its data costs (wire.rs): parsing a
/// chunk-size line's byte costs the host some 20 ns, a 50th of a chunk's microsecond, while the
/// command writes it for next to nothing (measured: 200 MB of leading zeros, 4.5 s of the host's
/// CPU against 0.13 s of the command's).
pub const FRAMING_BYTE: i64 = 16;

/// The run's allowance, in payload bytes.
pub struct ChunkBudget {
    left: AtomicI64,
}

impl Default for ChunkBudget {
    fn default() -> Self {
        ChunkBudget { left: AtomicI64::new(GRACE) }
    }
}

impl ChunkBudget {
    pub fn request(&self) {
        self.left.fetch_add(PER_REQUEST, Ordering::Relaxed);
    }

    /// Charge (or, negative, pay back) `units` whatever is left (wire.rs).
    pub(super) fn charge(&self, units: i64) {
        self.left.fetch_sub(units, Ordering::Relaxed);
    }

    pub(super) fn overdrawn(&self) -> bool {
        self.left.load(Ordering::Relaxed) < 0
    }

    /// Pay for one frame of `len` bytes: `false` once the run has nothing left. A big frame is
    /// free even then: it is never the reason a body is cut off (rfix26c: a run that had spent
    /// its allowance on a streamer had every later upload in 64 KiB chunks refused).
    pub(super) fn pay(&self, len: usize) -> bool {
        if len as i64 >= BYTES_PER_CHUNK {
            return true;
        }
        self.left.fetch_sub(BYTES_PER_CHUNK, Ordering::Relaxed) - BYTES_PER_CHUNK >= 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_the_size_paid_for_never_run_out_smaller_ones_do() {
        let b = ChunkBudget::default();
        for _ in 0..1_000_000 {
            assert!(b.pay(BYTES_PER_CHUNK as usize));
        }
        let tiny = (GRACE / BYTES_PER_CHUNK) as usize;
        assert!((0..tiny).all(|_| b.pay(1)));
        assert!(!b.pay(1));
        // A request brings its own few, no more.
        b.request();
        let few = (0..PER_REQUEST).take_while(|_| b.pay(1)).count() as i64;
        assert!(few < PER_REQUEST / (BYTES_PER_CHUNK - 1) + 1, "{few}");
        // A large frame brings nothing in (net26: big chunks bought endless tiny ones).
        let b = ChunkBudget::default();
        assert!((0..GRACE / BYTES_PER_CHUNK).all(|_| b.pay(1)));
        assert!(b.pay(1 << 20), "a big frame is free");
        assert!(!b.pay(1), "and earned no tiny chunk");
        assert!(b.pay(1 << 20), "even once the allowance is spent");
    }
}
