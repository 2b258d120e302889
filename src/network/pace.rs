//! How fast one run may make the host work for it: a burst, then a steady pace (a token bucket).
//!
//! What a run's proxy does for its command is the host's to pay, never counted in
//! `limits.cpuTime`, so each kind of work a command can ask for without bound is paced per run:
//! - name lookups (`LOOKUPS`): each is a process of the host's (about 0.3 ms of CPU for the helper
//!   and as much again to start it) and a query to the user's name server. A run allowed a
//!   wildcard (`*.github.com`) made up names under it, 15,728 lookups in 10 s (31,456 queries),
//!   4.4 s of the host's CPU for 1.9 s of the command's (an attacker's review, net44). Answers are
//!   reused for a while (`resolver::ANSWER_REUSED_FOR`), so a run needs a few dozen at most.
//! - refusals (`REFUSALS`): a pipelined refused request costs the command about 1.5 µs and the
//!   host about 5 µs to parse, record and answer: 8 connections of refused `GET`s drew 57,000
//!   refusals a second, 2.4 s of the host's CPU for 0.68 s of the command's (net44).
//! - `onRequest` questions (`QUESTIONS`): each calls the host's JavaScript (or asks the person at
//!   the terminal); a command making up names had the callback called 21,412 times in 8 s (net44).
//!
//! A waiter holds only what its own request holds (the run's lookup slot, its connection, its
//! question's place): the proxy, other runs and the host never wait with it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A burst taken at once, then `per_second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub burst: f64,
    pub per_second: f64,
}

/// Lookups a run may start: 64 at once, then 16 a second.
pub const LOOKUPS: Rate = Rate { burst: 64.0, per_second: 16.0 };
/// Refusals a run's proxy answers: 256 at once, then 64 a second (about 0.3 ms of the host's CPU a
/// second). A run's tools meet a few refusals (a telemetry host, an install's retries); past the
/// pace each waits its turn on its own connection.
pub const REFUSALS: Rate = Rate { burst: 256.0, per_second: 64.0 };
/// `onRequest` questions a run may have asked: 64 at once, then 16 a second (faster than a person
/// answers). Each waits its turn within its `requestTimeoutMs`.
pub const QUESTIONS: Rate = Rate { burst: 64.0, per_second: 16.0 };

/// A token bucket: `tokens` may go below zero, each taker then waiting its turn.
pub struct Pace {
    rate: Rate,
    tokens: f64,
    at: Instant,
}

impl Pace {
    pub fn new(rate: Rate, now: Instant) -> Pace {
        Pace { rate, tokens: rate.burst, at: now }
    }

    /// Take one place at `now`; how long to wait before using it. A waiter that gives up does not
    /// hand its place back: the run only waits longer, nobody else does.
    pub fn reserve(&mut self, now: Instant) -> Duration {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * self.rate.per_second;
        self.tokens = (self.tokens + earned).min(self.rate.burst) - 1.0;
        self.at = now;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.rate.per_second)
        }
    }
}

/// A run's pace shared by its tasks.
pub struct Paced(Mutex<Pace>);

impl Paced {
    pub fn new(rate: Rate) -> Paced {
        Paced(Mutex::new(Pace::new(rate, Instant::now())))
    }

    /// Wait for this taker's turn.
    pub async fn turn(&self) {
        let wait = self.0.lock().unwrap_or_else(|p| p.into_inner()).reserve(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_at_once_then_the_pace() {
        for rate in [LOOKUPS, REFUSALS, QUESTIONS] {
            let t0 = Instant::now();
            let mut pace = Pace::new(rate, t0);
            for i in 0..rate.burst as usize {
                assert_eq!(pace.reserve(t0), Duration::ZERO, "place {i} of the burst");
            }
            // Past the burst, each waits one more period than the one before it.
            let period = Duration::from_secs_f64(1.0 / rate.per_second);
            assert_eq!(pace.reserve(t0), period);
            assert_eq!(pace.reserve(t0), period * 2);
            // A second later the waits are paid and per_second - 2 places are free again.
            let later = t0 + Duration::from_secs(1);
            for _ in 0..(rate.per_second as usize - 2) {
                assert_eq!(pace.reserve(later), Duration::ZERO);
            }
            assert!(pace.reserve(later) > Duration::ZERO);
        }
    }

    #[test]
    fn an_idle_run_earns_its_burst_back_and_no_more() {
        let t0 = Instant::now();
        let mut pace = Pace::new(LOOKUPS, t0);
        for _ in 0..LOOKUPS.burst as usize {
            pace.reserve(t0);
        }
        let much_later = t0 + Duration::from_secs(3600);
        for _ in 0..LOOKUPS.burst as usize {
            assert_eq!(pace.reserve(much_later), Duration::ZERO);
        }
        assert!(pace.reserve(much_later) > Duration::ZERO, "an hour idle earns one burst, not 57,600 lookups");
    }
}
