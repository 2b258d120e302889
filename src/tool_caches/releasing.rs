//! How many of this process's runs are still letting go of the store (removing their directories
//! and folding, after the result went out), and waiting for none: on its own so that both the
//! runs (`RunGuard::publish`, `Releasing`) and the store's report (`store::report`) use it, with
//! no import between `tool_caches` and `store` both ways.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Runs letting go, and a signal when that count changes.
static RELEASING: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// A run began letting go.
pub fn began() {
    *RELEASING.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
}

/// A run has let go.
pub fn ended() {
    *RELEASING.0.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
    RELEASING.1.notify_all();
}

/// Wait (10 s at most) until this process's runs have let go of the store: what `toolCacheStore`
/// measures or cleans is then what they left, not a fold half done.
pub fn settle() {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = RELEASING.0.lock().unwrap_or_else(|e| e.into_inner());
    while *n > 0 {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else { return };
        n = RELEASING.1.wait_timeout(n, left).unwrap_or_else(|e| e.into_inner()).0;
    }
}
