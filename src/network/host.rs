//! Host names as the command sends them (CONNECT authority, absolute URI, SOCKS5 DOMAINNAME) and as
//! the user writes them in a policy, brought to one canonical form before any matching.
//!
//! Why so strict: a name like `evil.com\0.allowed.com` passes a suffix match but is truncated by the
//! C resolver, and `127.1` or `2130706433` are loopback in every resolver although they look like
//! names. So: only letters, digits, `-`, `_` and dots; lowercase; one trailing dot dropped; a name
//! whose last label is numeric is parsed as an IPv4 address the way `inet_aton` does (or refused).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A validated, canonical target host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// Lowercase, no trailing dot, LDH labels (underscores allowed: some real hosts have them).
    Name(String),
    /// An address literal; IPv4-mapped IPv6 is stored as the IPv4 address it maps.
    Ip(IpAddr),
}

impl Host {
    /// Parse a host from the wire (no port). `None` when it is not a valid host.
    pub fn parse(raw: &str) -> Option<Host> {
        if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            return inner.parse::<Ipv6Addr>().ok().map(|a| Host::Ip(canonical_ip(IpAddr::V6(a))));
        }
        // A bare IPv6 literal (SOCKS5 and the policy never bracket it the same way).
        if raw.contains(':') {
            return raw.parse::<Ipv6Addr>().ok().map(|a| Host::Ip(canonical_ip(IpAddr::V6(a))));
        }
        let name = raw.strip_suffix('.').unwrap_or(raw).to_ascii_lowercase();
        if name.is_empty() || name.len() > 253 {
            return None;
        }
        let labels: Vec<&str> = name.split('.').collect();
        if !labels.iter().all(|l| valid_label(l)) {
            return None;
        }
        if labels.last().is_some_and(|l| numeric_part(l).is_some()) {
            // WHATWG URL rule: a numeric last label makes the whole host an IPv4 address.
            return inet_aton(&name).map(|a| Host::Ip(IpAddr::V4(a)));
        }
        Some(Host::Name(name))
    }

    /// How the host is reported (denials, 403 bodies).
    pub fn display(&self) -> String {
        match self {
            Host::Name(n) => n.clone(),
            Host::Ip(IpAddr::V6(a)) => format!("[{a}]"),
            Host::Ip(a) => a.to_string(),
        }
    }
}

/// 1..=63 letters, digits, `-` and `_`, not starting or ending with `-`.
pub fn valid_label(l: &str) -> bool {
    !l.is_empty()
        && l.len() <= 63
        && !l.starts_with('-')
        && !l.ends_with('-')
        && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is the IPv4 address for matching and guarding.
pub fn canonical_ip(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(a),
        v4 => v4,
    }
}

/// A label as `inet_aton` reads it: decimal, `0x` hex or leading-zero octal.
fn numeric_part(label: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = label.strip_prefix("0x").or_else(|| label.strip_prefix("0X")) {
        (h, 16)
    } else if label.len() > 1 && label.starts_with('0') {
        (&label[1..], 8)
    } else {
        (label, 10)
    };
    if digits.is_empty() {
        return if radix == 16 { Some(0) } else { None };
    }
    if digits.len() > 12 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// `a`, `a.b`, `a.b.c` and `a.b.c.d` forms, each part decimal, hex or octal; the last part fills the
/// remaining bytes.
fn inet_aton(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = s.split('.').map(numeric_part).collect::<Option<_>>()?;
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let (head, last) = parts.split_at(parts.len() - 1);
    if head.iter().any(|&p| p > 255) {
        return None;
    }
    let last_bits = 8 * (4 - head.len() as u32);
    if last[0] >= 1u64 << last_bits {
        return None;
    }
    let mut value: u64 = 0;
    for (i, &p) in head.iter().enumerate() {
        value |= p << (24 - 8 * i as u32);
    }
    Some(Ipv4Addr::from((value | last[0]) as u32))
}

/// Text from the wire made safe to report: anything but printable ASCII replaced (controls, and
/// bidi or format characters that would reorder the name in a caller's UI), at most 253 characters.
pub fn sanitize(raw: &str) -> String {
    raw.chars().take(253).map(|c| if c.is_ascii_graphic() { c } else { '?' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<Host> {
        Some(Host::Ip(s.parse().unwrap()))
    }

    #[test]
    fn names_are_canonical() {
        assert_eq!(Host::parse("Registry.NPMJS.org."), Some(Host::Name("registry.npmjs.org".into())));
        assert_eq!(Host::parse("_dmarc.example.com"), Some(Host::Name("_dmarc.example.com".into())));
        assert_eq!(Host::parse("localhost"), Some(Host::Name("localhost".into())));
    }

    #[test]
    fn hostile_names_are_refused() {
        for bad in ["", ".", "a..b", "evil.com\0.allowed.com", "a b", "a\r\nb", "a%2fb", "ex ample.com", "bücher.de", "a/b", "x.-", &"a".repeat(64), &format!("{}.com", "a.".repeat(130))] {
            assert_eq!(Host::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn numeric_spellings_are_ipv4() {
        assert_eq!(Host::parse("127.1"), ip("127.0.0.1"));
        assert_eq!(Host::parse("2130706433"), ip("127.0.0.1"));
        assert_eq!(Host::parse("0x7f.1"), ip("127.0.0.1"));
        assert_eq!(Host::parse("0177.0.0.1"), ip("127.0.0.1"));
        assert_eq!(Host::parse("169.254.169.254"), ip("169.254.169.254"));
        assert_eq!(Host::parse("1.2.3.4."), ip("1.2.3.4"));
        assert_eq!(Host::parse("256.1.1.1"), None);
        assert_eq!(Host::parse("1.2.3.4.5"), None);
        assert_eq!(Host::parse("4294967296"), None);
        assert_eq!(Host::parse("09.1.1.1"), None, "not octal");
        assert_eq!(Host::parse("1.2.3"), ip("1.2.0.3"));
    }

    #[test]
    fn ipv6_literals() {
        assert_eq!(Host::parse("[2001:db8::1]"), ip("2001:db8::1"));
        assert_eq!(Host::parse("2001:DB8::1"), ip("2001:db8::1"));
        assert_eq!(Host::parse("[::ffff:127.0.0.1]"), ip("127.0.0.1"), "mapped is the IPv4 address");
        assert_eq!(Host::parse("[fe80::1%eth0]"), None, "zone ids refused");
        assert_eq!(Host::parse("[::1"), None);
        assert_eq!(Host::parse("[2001:db8::1]").unwrap().display(), "[2001:db8::1]");
    }

    #[test]
    fn sanitized_for_reports() {
        assert_eq!(sanitize("a\0b c\n"), "a?b?c?");
        // Bidi and other format characters would let a name reorder itself in a caller's UI;
        // host names are ASCII (IDN travels as punycode).
        assert_eq!(sanitize("evil\u{202e}moc.test\u{200b}é"), "evil?moc.test??");
        assert_eq!(sanitize(&"x".repeat(1000)).len(), 253);
    }
}
