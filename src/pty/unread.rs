//! What `SandboxedProcess.read()` returns: terminal output not yet read, bounded like the capture
//! (past `limit` the oldest bytes are dropped and counted), and the "collect until a deadline" wait
//! that agents use (Codex's `exec_command` with `yield_time_ms`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct State {
    data: VecDeque<u8>,
    /// Bytes dropped since the last read because nobody read them in time.
    omitted: u64,
    /// The run has ended and every byte of output has been pushed.
    ended: bool,
}

/// One read's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadChunk {
    pub data: Vec<u8>,
    /// The process ended and nothing unread is left.
    pub exited: bool,
    /// Bytes dropped before this read because more than the limit was waiting.
    pub omitted: u64,
}

#[derive(Debug)]
pub struct Unread {
    limit: usize,
    state: Mutex<State>,
    changed: Notify,
}

impl Unread {
    pub fn new(limit: usize) -> Self {
        Unread { limit: limit.max(1), state: Mutex::new(State::default()), changed: Notify::new() }
    }

    pub fn push(&self, data: &[u8]) {
        {
            let mut s = self.state.lock().unwrap();
            s.data.extend(data);
            let over = s.data.len().saturating_sub(self.limit);
            if over > 0 {
                s.data.drain(..over);
                s.omitted += over as u64;
            }
        }
        self.changed.notify_waiters();
    }

    /// Every byte has been pushed: readers waiting for more get `exited` instead.
    pub fn end(&self) {
        self.state.lock().unwrap().ended = true;
        self.changed.notify_waiters();
    }

    /// Wait until there is output and `wait` has passed, or the run has ended; then take at most
    /// `max_bytes`. With nothing there at the deadline, the first output to arrive is returned.
    pub async fn read(&self, wait: Duration, max_bytes: usize) -> ReadChunk {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the state is checked, so a push in between is not missed.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let has_data = {
                let mut s = self.state.lock().unwrap();
                let past = tokio::time::Instant::now() >= deadline;
                if (!s.data.is_empty() && (past || s.ended)) || (s.data.is_empty() && s.ended) {
                    let n = s.data.len().min(max_bytes.max(1));
                    let data: Vec<u8> = s.data.drain(..n).collect();
                    let omitted = std::mem::take(&mut s.omitted);
                    return ReadChunk { data, exited: s.ended && s.data.is_empty(), omitted };
                }
                !s.data.is_empty()
            };
            if has_data {
                tokio::select! {
                    _ = &mut changed => {}
                    _ = tokio::time::sleep_until(deadline) => {}
                }
            } else {
                changed.await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn returns_output_after_the_wait_and_reports_the_end() {
        let u = Arc::new(Unread::new(1024));
        u.push(b"ab");
        let r = u.read(Duration::ZERO, 1).await;
        assert_eq!(r, ReadChunk { data: b"a".to_vec(), exited: false, omitted: 0 });
        // Output arriving during the wait is collected into one answer.
        let pusher = {
            let u = u.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                u.push(b"cd");
            })
        };
        let r = u.read(Duration::from_millis(200), 100).await;
        assert_eq!(r.data, b"bcd");
        pusher.await.unwrap();
        // Nothing there: the read waits for the end, however long the wait asked for.
        let ender = {
            let u = u.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                u.push(b"tail");
                u.end();
            })
        };
        let r = u.read(Duration::from_secs(3600), 100).await;
        ender.await.unwrap();
        assert_eq!(r.data, b"tail", "the end does not wait for the deadline");
        assert!(r.exited);
        assert_eq!(u.read(Duration::ZERO, 100).await, ReadChunk { data: vec![], exited: true, omitted: 0 });
    }

    #[tokio::test]
    async fn keeps_the_newest_bytes_within_the_limit() {
        let u = Unread::new(4);
        u.push(b"123456");
        u.end();
        assert_eq!(u.read(Duration::ZERO, 100).await, ReadChunk { data: b"3456".to_vec(), exited: true, omitted: 2 });
    }

    #[tokio::test]
    async fn no_output_waits_for_the_first_bytes() {
        let u = Arc::new(Unread::new(64));
        let reader = {
            let u = u.clone();
            tokio::spawn(async move { u.read(Duration::ZERO, 64).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!reader.is_finished());
        u.push(b"x");
        assert_eq!(reader.await.unwrap().data, b"x");
    }
}
