//! A run's allowance of chunks on the plain-HTTP path. hyper decodes a chunked body one chunk at a
//! time, each costing the host's proxy about a microsecond on the runtime every run shares, while
//! `1\r\nX\r\n` written in big buffers costs the command next to nothing: without a bound, a run
//! (or a hostile allowed server) gets 40-60 times its own CPU spent by the host, outside its
//! `cpuTime`. So every chunk is paid for in payload bytes: each frame of a chunked body costs
//! `BYTES_PER_CHUNK`, and brings in its own length. A chunk that size or larger costs the command
//! about what forwarding it costs the host, so bodies of such chunks never run out; a run that
//! sends smaller ones spends the allowance it was given (`GRACE`, and `PER_REQUEST` a request,
//! which already costs the host a dial), and then its chunked bodies are cut off and reported
//! (`tiny_chunks`, metered.rs). What a client sends besides a body's data (chunk framing, parsed a
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

    /// Pay for one frame of `len` bytes: `false` once the run has nothing left.
    pub(super) fn pay(&self, len: usize) -> bool {
        let delta = (len as i64).min(i64::MAX / 4) - BYTES_PER_CHUNK;
        self.left.fetch_add(delta, Ordering::Relaxed) + delta >= 0
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
        let tiny = (GRACE / (BYTES_PER_CHUNK - 1)) as usize;
        assert!((0..tiny).all(|_| b.pay(1)));
        assert!(!b.pay(1));
        // A request brings its own few, no more.
        b.request();
        let few = (0..PER_REQUEST).take_while(|_| b.pay(1)).count() as i64;
        assert!(few < PER_REQUEST / (BYTES_PER_CHUNK - 1) + 1, "{few}");
        // A large frame (a big chunk read in pieces) pays for itself and more.
        assert!(b.pay(1 << 20) && b.pay(1));
    }
}
