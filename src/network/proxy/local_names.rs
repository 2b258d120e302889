//! Names the host answers without asking a name server: `localhost` and `*.localhost` (RFC 6761:
//! always loopback) and the names in `/etc/hosts`. A name on neither list is asked about before any
//! lookup (`dial`), so no made-up name reaches a name server unless the caller allows it; but
//! these need no name server, so their addresses are checked first, and one the guard refuses is
//! never offered to the callback (it could not allow it anyway).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const HOSTS_FILE: &str = "/etc/hosts";

/// The addresses `name` has without a name server, or `None` when only one could answer.
pub fn addresses(name: &str) -> Option<Vec<IpAddr>> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return Some(vec![IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)]);
    }
    let text = std::fs::read_to_string(HOSTS_FILE).ok()?;
    let found = in_hosts_file(&text, &name);
    (!found.is_empty()).then_some(found)
}

/// The addresses `/etc/hosts` text gives `name` (lowercase, no trailing dot).
fn in_hosts_file(text: &str, name: &str) -> Vec<IpAddr> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let Some(Ok(addr)) = words.next().map(str::parse::<IpAddr>) else { continue };
        if words.any(|w| w.trim_end_matches('.').eq_ignore_ascii_case(name)) && !out.contains(&addr) {
            out.push(addr);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_and_hosts_file_entries_need_no_name_server() {
        assert!(addresses("localhost").unwrap().iter().all(IpAddr::is_loopback));
        assert!(addresses("Web.LocalHost.").unwrap().iter().all(IpAddr::is_loopback));
        let text = "127.0.0.1\tlocalhost\n# 10.0.0.9 commented.test\n10.0.0.2 db.corp.test db # the database\n::1 ip6-localhost\nbad line\n";
        assert_eq!(in_hosts_file(text, "db.corp.test"), ["10.0.0.2".parse::<IpAddr>().unwrap()]);
        assert_eq!(in_hosts_file(text, "db"), ["10.0.0.2".parse::<IpAddr>().unwrap()]);
        assert!(in_hosts_file(text, "commented.test").is_empty());
        assert!(in_hosts_file(text, "example.test").is_empty());
    }
}
