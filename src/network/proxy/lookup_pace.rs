//! How fast one run may have names looked up on the host: a burst, then a steady pace.
//!
//! Each lookup is a process of the host's (`resolver`, about 0.3 ms of CPU for the helper and as
//! much again to start it) and a query to the user's name server, none of it the command's to pay:
//! a run allowed a wildcard (`*.github.com`) made up names under it as fast as the proxy answered,
//! 15,728 lookups in 10 s (31,456 queries to the name server), 4.4 s of the host's CPU in lookup
//! processes for 1.9 s of the command's (an attacker's review, net44). Answers are reused for a
//! while (`resolver::ANSWER_REUSED_FOR`), so an install's hundreds of connections to one registry
//! take one lookup, and a run needs a few dozen names at most: those come at once, the rest wait.

use std::time::{Duration, Instant};

/// Lookups a run may start at once before the pace applies.
pub const LOOKUP_BURST: f64 = 64.0;
/// Lookups a run may start per second after its burst.
pub const LOOKUPS_PER_SECOND: f64 = 16.0;

/// A token bucket: `tokens` may go below zero, each lookup then waiting its turn.
pub struct LookupPace {
    tokens: f64,
    at: Instant,
}

impl LookupPace {
    pub fn new(now: Instant) -> LookupPace {
        LookupPace { tokens: LOOKUP_BURST, at: now }
    }

    /// Take one lookup's place at `now`; how long to wait before starting it. A waiter that gives
    /// up does not hand its place back: the run only waits longer, nobody else does.
    pub fn reserve(&mut self, now: Instant) -> Duration {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * LOOKUPS_PER_SECOND;
        self.tokens = (self.tokens + earned).min(LOOKUP_BURST) - 1.0;
        self.at = now;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / LOOKUPS_PER_SECOND)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_at_once_then_the_pace() {
        let t0 = Instant::now();
        let mut pace = LookupPace::new(t0);
        for i in 0..LOOKUP_BURST as usize {
            assert_eq!(pace.reserve(t0), Duration::ZERO, "lookup {i} of the burst");
        }
        // Past the burst, each waits one more period than the one before it.
        let period = Duration::from_secs_f64(1.0 / LOOKUPS_PER_SECOND);
        assert_eq!(pace.reserve(t0), period);
        assert_eq!(pace.reserve(t0), period * 2);
        // A second later the waits are paid and 16 - 2 places are free again.
        let later = t0 + Duration::from_secs(1);
        for _ in 0..(LOOKUPS_PER_SECOND as usize - 2) {
            assert_eq!(pace.reserve(later), Duration::ZERO);
        }
        assert!(pace.reserve(later) > Duration::ZERO);
    }

    #[test]
    fn an_idle_run_earns_its_burst_back_and_no_more() {
        let t0 = Instant::now();
        let mut pace = LookupPace::new(t0);
        for _ in 0..LOOKUP_BURST as usize {
            pace.reserve(t0);
        }
        let much_later = t0 + Duration::from_secs(3600);
        for _ in 0..LOOKUP_BURST as usize {
            assert_eq!(pace.reserve(much_later), Duration::ZERO);
        }
        assert!(pace.reserve(much_later) > Duration::ZERO, "an hour idle earns one burst, not 57,600 lookups");
    }
}
