//! With the network off, name lookups must fail at once with an answer tools treat as final.
//!
//! Inside `--unshare-net` the resolver configured in `/etc/resolv.conf` is unreachable, so glibc's
//! `getaddrinfo` answers `EAI_AGAIN` ("temporary failure"), which npm, pip and others retry with
//! back-off for 15 to 70 seconds. The plan therefore shows the command an `/etc/nsswitch.conf`
//! whose `hosts:` line consults `/etc/hosts` only: every other name is then "not found"
//! (`EAI_NONAME`, Node's `ENOTFOUND`) without any packet sent, which no tool retries. Go's own
//! resolver reads the same line. The rest of the host's file (users, groups) is kept as it is.

/// The host's `nsswitch.conf` text with its `hosts:` line reduced to local sources.
pub fn offline_nsswitch(host: &str) -> String {
    let mut out = String::from("# sandspawn: the network is off here; names resolve from /etc/hosts only.\n");
    let mut saw_hosts = false;
    for line in host.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("hosts:") {
            saw_hosts = true;
            // `files` (and `myhostname`, which answers for the machine's own name) never use the
            // network; every other source (dns, mdns, resolve, wins, ...) is dropped, and so are
            // `[NOTFOUND=return]`-style actions, which only made sense between them.
            let mut sources: Vec<&str> = rest.split_whitespace().filter(|s| *s == "files" || *s == "myhostname").collect();
            if !sources.contains(&"files") {
                sources.insert(0, "files");
            }
            out.push_str(&format!("hosts: {}\n", sources.join(" ")));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !saw_hosts {
        out.push_str("hosts: files\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_but_network_sources() {
        let host = "passwd: files systemd\n# hosts: dns\nhosts:   files mdns4_minimal [NOTFOUND=return] dns myhostname\nnetworks: files\n";
        let out = offline_nsswitch(host);
        assert!(out.contains("passwd: files systemd\n"));
        assert!(out.contains("# hosts: dns\n"), "comments stay comments");
        assert!(out.contains("\nhosts: files myhostname\n"), "{out}");
        assert!(out.contains("networks: files\n"));
        assert!(!out.contains("dns\n") || out.contains("# hosts: dns"));
    }

    #[test]
    fn always_names_files() {
        assert!(offline_nsswitch("hosts: dns\n").contains("\nhosts: files\n"));
        assert!(offline_nsswitch("passwd: files\n").ends_with("hosts: files\n"));
        assert!(offline_nsswitch("").ends_with("hosts: files\n"));
    }
}
