//! Bounded output capture. Each of stdout, stderr and the interleaved aggregate keeps at most
//! `max_buffer` bytes: the first half and the last half, with the middle replaced by a one-line
//! marker. Memory stays bounded whatever the command prints.

use std::collections::VecDeque;

/// Which stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// Keeps the head and the tail of a byte stream within `limit` bytes in total.
#[derive(Debug, Clone)]
pub struct HeadTail {
    limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl HeadTail {
    pub fn new(limit: usize) -> Self {
        HeadTail { limit, head: Vec::new(), tail: VecDeque::new(), total: 0 }
    }

    fn head_cap(&self) -> usize {
        self.limit - self.limit / 2
    }

    fn tail_cap(&self) -> usize {
        self.limit / 2
    }

    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        let head_room = self.head_cap().saturating_sub(self.head.len());
        if head_room > 0 {
            let n = head_room.min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        let cap = self.tail_cap();
        if data.is_empty() || cap == 0 {
            return;
        }
        if data.len() >= cap {
            self.tail.clear();
            self.tail.extend(&data[data.len() - cap..]);
            return;
        }
        let overflow = (self.tail.len() + data.len()).saturating_sub(cap);
        self.tail.drain(..overflow);
        self.tail.extend(data);
    }

    /// Bytes received but not kept.
    pub fn omitted(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text: head, marker line (only if something was omitted), tail. Decoded as UTF-8
    /// with invalid sequences replaced; head and tail are decoded as whole byte runs so a character
    /// split across read chunks is never broken.
    pub fn to_text(&self) -> String {
        self.clone().into_text()
    }

    /// Like `to_text`, consuming the buffers (no copy of the head when nothing was omitted).
    pub fn into_text(self) -> String {
        let omitted = self.omitted();
        let HeadTail { mut head, tail, .. } = self;
        if omitted == 0 {
            head.extend(tail);
            return into_text(head);
        }
        let tail: Vec<u8> = tail.into();
        let head_text = String::from_utf8_lossy(trim_partial_end(&head));
        let tail_text = String::from_utf8_lossy(trim_partial_start(&tail));
        let sep_before = if head_text.ends_with('\n') || head_text.is_empty() { "" } else { "\n" };
        let sep_after = if tail_text.starts_with('\n') { "" } else { "\n" };
        format!("{head_text}{sep_before}[... {omitted} bytes omitted ...]{sep_after}{tail_text}")
    }

    /// Remove an incomplete UTF-8 sequence from the end of the kept bytes and return it (the
    /// total shrinks accordingly, as if those bytes had not arrived yet).
    fn split_partial_end(&mut self) -> Vec<u8> {
        let last: Vec<u8> = if self.tail.is_empty() {
            self.head[self.head.len().saturating_sub(3)..].to_vec()
        } else {
            let n = self.tail.len();
            self.tail.range(n.saturating_sub(3)..).copied().collect()
        };
        let cut = last.len() - trim_partial_end(&last).len();
        if cut == 0 {
            return Vec::new();
        }
        let removed: Vec<u8> = if self.tail.is_empty() {
            self.head.split_off(self.head.len() - cut)
        } else {
            let n = self.tail.len();
            self.tail.drain(n - cut..).collect()
        };
        self.total -= cut as u64;
        removed
    }
}

fn into_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Drop an incomplete UTF-8 sequence at the end (the cut point of the head), so the cut does not
/// show up as a replacement character.
fn trim_partial_end(bytes: &[u8]) -> &[u8] {
    let start = bytes.len().saturating_sub(3);
    for i in (start..bytes.len()).rev() {
        let b = bytes[i];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let need = if b >= 0xF0 { 4 } else if b >= 0xE0 { 3 } else if b >= 0xC0 { 2 } else { 1 };
        return if bytes.len() - i < need { &bytes[..i] } else { bytes };
    }
    bytes
}

/// Drop continuation bytes at the start (the cut point of the tail).
fn trim_partial_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take(3).take_while(|b| **b & 0b1100_0000 == 0b1000_0000).count();
    &bytes[skip..]
}

/// stdout, stderr and their interleaving in arrival order, each bounded.
///
/// While only one stream has written, the interleaving *is* that stream, so no separate copy is
/// kept (halving memory and copies for the common case); the aggregate is materialised from it when
/// the other stream first writes.
#[derive(Debug)]
pub struct Capture {
    pub stdout: HeadTail,
    pub stderr: HeadTail,
    aggregated: Option<HeadTail>,
    /// The only stream that has written so far, while `aggregated` is None.
    first: Option<Stream>,
    /// Per stream, the bytes of a character that is not complete yet. The aggregate only receives
    /// whole characters, so a character split inside one stream is not broken by a chunk of the
    /// other stream arriving in between.
    carry: [Vec<u8>; 2],
}

/// The three texts of a finished capture.
pub struct CapturedText {
    pub stdout: String,
    pub stderr: String,
    /// None when it equals `stdout` or `stderr` (only one stream wrote): see `same_as`.
    pub aggregated: Option<String>,
    /// Which stream the aggregate equals when `aggregated` is None.
    pub same_as: Stream,
}

fn slot(stream: Stream) -> usize {
    match stream {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}

impl Capture {
    pub fn new(max_buffer: usize) -> Self {
        Capture {
            stdout: HeadTail::new(max_buffer),
            stderr: HeadTail::new(max_buffer),
            aggregated: None,
            first: None,
            carry: [Vec::new(), Vec::new()],
        }
    }

    pub fn push(&mut self, stream: Stream, data: &[u8]) {
        match stream {
            Stream::Stdout => self.stdout.push(data),
            Stream::Stderr => self.stderr.push(data),
        }
        if self.aggregated.is_none() {
            match self.first {
                None => {
                    self.first = Some(stream);
                    return;
                }
                Some(first) if first == stream => return,
                Some(first) => {
                    // The other stream starts: the aggregate so far is the first stream, minus a
                    // character it has not completed yet (carried until it is).
                    let mut agg = match first {
                        Stream::Stdout => self.stdout.clone(),
                        Stream::Stderr => self.stderr.clone(),
                    };
                    self.carry[slot(first)] = agg.split_partial_end();
                    self.aggregated = Some(agg);
                }
            }
        }
        let s = slot(stream);
        let agg = self.aggregated.as_mut().expect("materialised above");
        if self.carry[s].is_empty() {
            let whole = trim_partial_end(data).len();
            agg.push(&data[..whole]);
            self.carry[s].extend_from_slice(&data[whole..]);
        } else {
            let mut joined = std::mem::take(&mut self.carry[s]);
            joined.extend_from_slice(data);
            let whole = trim_partial_end(&joined).len();
            agg.push(&joined[..whole]);
            self.carry[s] = joined[whole..].to_vec();
        }
    }

    pub fn truncated(&self) -> bool {
        self.stdout.omitted() > 0 || self.stderr.omitted() > 0 || self.aggregated.as_ref().is_some_and(|a| a.omitted() > 0)
    }

    /// End of output: decode everything. A character left incomplete by its stream goes into the
    /// aggregate as is (a replacement character there, as in the stream itself).
    pub fn finish(mut self) -> CapturedText {
        let aggregated = self.aggregated.take().map(|mut agg| {
            for rest in &self.carry {
                agg.push(rest);
            }
            agg.into_text()
        });
        CapturedText {
            stdout: self.stdout.into_text(),
            stderr: self.stderr.into_text(),
            aggregated,
            same_as: self.first.unwrap_or(Stream::Stdout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_limit() {
        let mut h = HeadTail::new(10);
        h.push(b"hello");
        h.push(b"world");
        assert_eq!(h.to_text(), "helloworld");
        assert_eq!(h.omitted(), 0);
    }

    #[test]
    fn keeps_head_and_tail_with_marker() {
        let mut h = HeadTail::new(10);
        for chunk in [b"abc".as_slice(), b"defgh", b"ijklmnop", b"qrstuvwxyz"] {
            h.push(chunk);
        }
        assert_eq!(h.omitted(), 16);
        assert_eq!(h.to_text(), "abcde\n[... 16 bytes omitted ...]\nvwxyz");
    }

    #[test]
    fn one_huge_chunk() {
        let mut h = HeadTail::new(4);
        h.push(&[b'x'; 1000]);
        assert_eq!(h.omitted(), 996);
        assert_eq!(h.to_text(), "xx\n[... 996 bytes omitted ...]\nxx");
    }

    #[test]
    fn multibyte_split_across_chunks_is_not_broken() {
        let text = "héllo wörld €";
        let bytes = text.as_bytes();
        let mut h = HeadTail::new(1024);
        for b in bytes {
            h.push(std::slice::from_ref(b));
        }
        assert_eq!(h.to_text(), text);
    }

    #[test]
    fn cut_points_do_not_produce_replacement_characters() {
        let mut h = HeadTail::new(8);
        h.push("€€€€€€€€€€".as_bytes()); // 30 bytes, cuts land inside characters
        let text = h.to_text();
        assert!(!text.contains('\u{FFFD}'), "{text}");
        assert!(text.starts_with("€"));
        assert!(text.ends_with("€"));
    }

    #[test]
    fn invalid_bytes_are_replaced() {
        let mut h = HeadTail::new(100);
        h.push(&[b'a', 0xff, b'b']);
        assert_eq!(h.to_text(), "a\u{FFFD}b");
    }

    fn agg(c: Capture) -> String {
        let t = c.finish();
        t.aggregated.unwrap_or(match t.same_as {
            Stream::Stdout => t.stdout,
            Stream::Stderr => t.stderr,
        })
    }

    #[test]
    fn capture_interleaves_in_arrival_order() {
        let mut c = Capture::new(100);
        c.push(Stream::Stdout, b"1");
        c.push(Stream::Stderr, b"2");
        c.push(Stream::Stdout, b"3");
        assert!(!c.truncated());
        assert_eq!(c.stdout.to_text(), "13");
        assert_eq!(c.stderr.to_text(), "2");
        assert_eq!(agg(c), "123");
    }

    #[test]
    fn one_stream_only_keeps_no_second_copy() {
        let mut c = Capture::new(100);
        c.push(Stream::Stderr, b"only err");
        let t = c.finish();
        assert!(t.aggregated.is_none());
        assert_eq!(t.same_as, Stream::Stderr);
        assert_eq!(t.stderr, "only err");
    }

    #[test]
    fn aggregate_materialised_late_keeps_truncation() {
        let mut c = Capture::new(10);
        c.push(Stream::Stdout, b"0123456789abcdef");
        c.push(Stream::Stderr, b"E");
        assert!(c.truncated());
        assert_eq!(agg(c), "01234\n[... 7 bytes omitted ...]\ncdefE");
    }

    #[test]
    fn aggregate_keeps_characters_split_inside_one_stream() {
        let mut c = Capture::new(100);
        c.push(Stream::Stdout, &[0xe2]);
        c.push(Stream::Stderr, &[0xe2]);
        c.push(Stream::Stdout, &[0x82, 0xac]);
        c.push(Stream::Stderr, &[0x82, 0xac]);
        assert_eq!(agg(c), "€€");
        let mut c = Capture::new(100);
        c.push(Stream::Stdout, b"a\xe2");
        c.push(Stream::Stderr, b"b");
        assert_eq!(agg(c), "ab\u{FFFD}");
    }

    #[test]
    fn memory_stays_bounded() {
        let mut h = HeadTail::new(1024);
        let chunk = vec![b'y'; 65536];
        for _ in 0..1000 {
            h.push(&chunk);
        }
        assert_eq!(h.head.len() + h.tail.len(), 1024);
        assert_eq!(h.omitted(), 65536 * 1000 - 1024);
    }
}
