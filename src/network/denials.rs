//! What a run's proxy refused: `SpawnResult.networkDenials`, aggregated per (host, port, via,
//! reason) with a count, in the order first seen. Bounded: a command that hammers thousands of
//! distinct hosts cannot grow the host process's memory without limit: at most `MAX_ENTRIES`
//! entries, and a count of the refusals past them (`SpawnResult.networkDenialsOmitted`).

use std::sync::Mutex;

use serde::Serialize;

use super::policy::Refusal;

/// How the command asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// Plain HTTP, absolute-form request.
    Http,
    /// HTTP CONNECT tunnel.
    Connect,
    Socks5,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Http => "http",
            Via::Connect => "connect",
            Via::Socks5 => "socks5",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkDenial {
    pub host: String,
    pub port: u16,
    pub via: Via,
    pub reason: Refusal,
    pub count: u64,
}

/// Distinct entries kept per run; later distinct refusals are still refused, only not listed.
pub const MAX_ENTRIES: usize = 256;

#[derive(Debug, Default)]
pub struct DenialLog {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    listed: Vec<NetworkDenial>,
    /// Refused requests that no listed entry counts (their entry would have been past `MAX_ENTRIES`).
    omitted: u64,
}

impl DenialLog {
    pub fn record(&self, host: &str, port: u16, via: Via, reason: Refusal) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(e) = entries.listed.iter_mut().find(|e| e.host == host && e.port == port && e.via == via && e.reason == reason) {
            e.count += 1;
        } else if entries.listed.len() < MAX_ENTRIES {
            entries.listed.push(NetworkDenial { host: host.to_string(), port, via, reason, count: 1 });
        } else {
            entries.omitted += 1;
        }
    }

    /// The entries, and how many refused requests they leave out.
    pub fn snapshot(&self) -> (Vec<NetworkDenial>, u64) {
        let entries = self.entries.lock().unwrap();
        (entries.listed.clone(), entries.omitted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates_and_bounds() {
        let log = DenialLog::default();
        log.record("evil.test", 443, Via::Connect, Refusal::NotAllowed);
        log.record("evil.test", 443, Via::Connect, Refusal::NotAllowed);
        log.record("evil.test", 80, Via::Http, Refusal::NotAllowed);
        let (s, omitted) = log.snapshot();
        assert_eq!((s.len(), omitted), (2, 0));
        assert_eq!(s[0].count, 2);
        assert_eq!(serde_json::to_value(&s[1]).unwrap(), serde_json::json!({"host": "evil.test", "port": 80, "via": "http", "reason": "not_allowed", "count": 1}));
        for i in 0..1000 {
            log.record(&format!("h{i}.test"), 1, Via::Socks5, Refusal::Denied);
        }
        let (s, omitted) = log.snapshot();
        assert_eq!((s.len(), omitted), (MAX_ENTRIES, (1000 + 2 - MAX_ENTRIES) as u64));
    }
}
