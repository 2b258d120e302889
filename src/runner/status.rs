//! bwrap's `--json-status-fd` stream: `{ "child-pid": N, "pid-namespace": I, ... }` once the
//! sandbox's init exists, then `{ "exit-code": N }` only if the command itself ran and exited.
//! A missing `exit-code` is how a setup failure is told apart from the command's own exit 1.

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BwrapStatus {
    pub child_pid: Option<i32>,
    pub pid_namespace: Option<u64>,
    pub exit_code: Option<i32>,
}

/// Incremental parser: feed bytes as they arrive; complete JSON documents are applied at once.
#[derive(Debug, Default)]
pub struct StatusParser {
    buf: Vec<u8>,
    pub status: BwrapStatus,
}

impl StatusParser {
    /// Returns true when this call learned the PID namespace.
    pub fn feed(&mut self, data: &[u8]) -> bool {
        self.buf.extend_from_slice(data);
        let had_ns = self.status.pid_namespace.is_some();
        let mut consumed = 0;
        {
            let mut stream = serde_json::Deserializer::from_slice(&self.buf).into_iter::<serde_json::Value>();
            while let Some(Ok(doc)) = stream.next() {
                consumed = stream.byte_offset();
                if let Some(n) = doc.get("child-pid").and_then(|v| v.as_i64()) {
                    self.status.child_pid = Some(n as i32);
                }
                if let Some(n) = doc.get("pid-namespace").and_then(|v| v.as_u64()) {
                    self.status.pid_namespace = Some(n);
                }
                if let Some(n) = doc.get("exit-code").and_then(|v| v.as_i64()) {
                    self.status.exit_code = Some(n as i32);
                }
            }
        }
        self.buf.drain(..consumed);
        !had_ns && self.status.pid_namespace.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_split_documents() {
        let text = b"{ \"child-pid\": 2059, \"mnt-namespace\": 4026532178, \"pid-namespace\": 4026532179 }\n{ \"exit-code\": 3 }";
        let mut p = StatusParser::default();
        assert!(!p.feed(&text[..20]));
        assert!(p.feed(&text[20..90]));
        p.feed(&text[90..]);
        assert_eq!(p.status, BwrapStatus { child_pid: Some(2059), pid_namespace: Some(4026532179), exit_code: Some(3) });
    }

    #[test]
    fn setup_failure_has_no_exit_code() {
        let mut p = StatusParser::default();
        p.feed(b"{ \"child-pid\": 7, \"pid-namespace\": 1 }\n");
        assert_eq!(p.status.exit_code, None);
    }
}
