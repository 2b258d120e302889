//! The address guard: which addresses the proxy refuses to dial although the host name was allowed.
//!
//! An allowed name can resolve anywhere (DNS rebinding, a hostile `*.example.com` record), so the
//! proxy resolves once, drops every address below, and dials exactly the addresses that passed. The
//! IPv4 rules apply to IPv4 embedded in IPv6 too (mapped `::ffff:`, compatible, NAT64
//! `64:ff9b::/96`, 6to4 `2002::/16`, IPv4-translated `::ffff:0:0/96`, Teredo `2001::/32`): `[::ffff:127.0.0.1]` is loopback.
//!
//! The networks the host's interfaces are on are the host's LAN, refused as the private ranges are:
//! on an IPv6 LAN every device has a global address in the host's /64 (the router's admin page, a
//! NAS, printers), which neither RFC 1918 nor ULA covers (found by an attacker's review, net44).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

/// `true` when `addr` must not be dialled without an `allowPrivateAddresses` entry. `own` holds the
/// host's own interface addresses with their networks (a service bound to the host's LAN address
/// is the host too, and the rest of that network is its LAN).
pub fn refused(addr: IpAddr, own: &[IpNet]) -> bool {
    let on_own = |a: IpAddr| own.iter().any(|n| n.contains(&a));
    if on_own(addr) {
        return true;
    }
    match addr {
        IpAddr::V4(a) => refused_v4(a),
        IpAddr::V6(a) => match embedded_v4(a) {
            Some(v4) => refused_v4(v4) || on_own(IpAddr::V4(v4)),
            None => refused_v6(a),
        },
    }
}

fn in_v4(a: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
    (u32::from(a) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn refused_v4(a: Ipv4Addr) -> bool {
    const RANGES: &[([u8; 4], u32)] = &[
        ([0, 0, 0, 0], 8),         // "this network", unspecified
        ([10, 0, 0, 0], 8),        // RFC 1918
        ([100, 64, 0, 0], 10),     // CGNAT (Alibaba's metadata 100.100.100.200 is inside)
        ([127, 0, 0, 0], 8),       // loopback
        ([169, 254, 0, 0], 16),    // link-local (AWS/GCP/Azure metadata 169.254.169.254)
        ([172, 16, 0, 0], 12),     // RFC 1918
        ([192, 0, 0, 0], 24),      // IETF protocol assignments (Oracle metadata 192.0.0.192)
        ([192, 168, 0, 0], 16),    // RFC 1918
        ([198, 18, 0, 0], 15),     // benchmarking, used by some as internal space
        ([224, 0, 0, 0], 4),       // multicast
        ([240, 0, 0, 0], 4),       // reserved, broadcast
        ([168, 63, 129, 16], 32),  // Azure's wire server (metadata, public address)
    ];
    RANGES.iter().any(|(net, prefix)| in_v4(a, *net, *prefix))
}

/// The IPv4 address an IPv6 address carries, for the forms that route to it.
fn embedded_v4(a: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = a.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = a.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-compatible (deprecated) `::a.b.c.d`, but not `::` and `::1` themselves.
    if s[..6] == [0; 6] && u32::from(tail) > 1 {
        return Some(tail);
    }
    // NAT64 well-known prefix.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    // IPv4-translated `::ffff:0:a.b.c.d` (SIIT, RFC 2765): found by an attacker's review, it was
    // taken for a public address (`[::ffff:0:127.0.0.1]` asked about, then dialled).
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return Some(tail);
    }
    // Teredo `2001:0::/32`: the client's IPv4 address is the last 32 bits, inverted.
    if s[..2] == [0x2001, 0] {
        return Some(Ipv4Addr::from(!u32::from(tail)));
    }
    // 6to4: 2002:AABB:CCDD::/48 routes to AA.BB.CC.DD.
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}

fn refused_v6(a: Ipv6Addr) -> bool {
    let s0 = a.segments()[0];
    a.is_unspecified()
        || a.is_loopback()
        || (s0 & 0xffc0) == 0xfe80 // link-local
        || (s0 & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s0 & 0xfe00) == 0xfc00 // unique local (AWS metadata fd00:ec2::254 is inside)
        || (s0 & 0xff00) == 0xff00 // multicast
        || a.segments()[..2] == [0x64, 0xff9b] && a.segments()[2..6] != [0, 0, 0, 0] // local-use NAT64 64:ff9b:1::/48
}

/// The host's own interface addresses, each with the network its interface is on, and the
/// networks its routing table reaches on-link (`on_link`: a DHCPv6 /128's LAN); best effort: none
/// when they cannot be listed.
pub fn own_addresses() -> Vec<IpNet> {
    let mut out = super::on_link::networks();
    if let Ok(addrs) = nix::ifaddrs::getifaddrs() {
        out.extend(addrs.filter_map(|ifa| own_network(ip_of(ifa.address?)?, ifa.netmask.and_then(ip_of))));
    }
    out.sort();
    out.dedup();
    out
}

fn ip_of(a: nix::sys::socket::SockaddrStorage) -> Option<IpAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        Some(IpAddr::V4(v4.ip()))
    } else {
        a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
    }
}

/// The network of an interface address, from its netmask. A prefix shorter than /8 (IPv4) or /32
/// (IPv6) is no LAN but a configuration that would refuse much of the internet: the address alone.
fn own_network(addr: IpAddr, mask: Option<IpAddr>) -> Option<IpNet> {
    let prefix = match mask {
        Some(IpAddr::V4(m)) => u32::from(m).leading_ones() as u8,
        Some(IpAddr::V6(m)) => u128::from(m).leading_ones() as u8,
        None => 0,
    };
    let whole = if addr.is_ipv4() { 32 } else { 128 };
    IpNet::new(addr, if super::on_link::lan_prefix(addr, prefix) { prefix } else { whole }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> bool {
        refused(s.parse().unwrap(), &[])
    }

    fn net(s: &str) -> IpNet {
        s.parse().unwrap()
    }

    #[test]
    fn refuses_internal_ipv4() {
        for a in ["127.0.0.1", "127.255.0.9", "0.0.0.0", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "100.100.100.200", "224.0.0.1", "255.255.255.255", "192.0.0.192", "168.63.129.16"] {
            assert!(r(a), "{a}");
        }
        for a in ["1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "203.0.113.10", "192.0.2.1", "93.184.216.34"] {
            assert!(!r(a), "{a}");
        }
    }

    #[test]
    fn refuses_internal_ipv6_and_embedded_ipv4() {
        for a in ["::", "::1", "fe80::1", "fd00:ec2::254", "fc00::1", "ff02::1", "fec0::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", "2002:7f00:1::", "2002:a9fe:a9fe::1", "::ffff:0:127.0.0.1", "::ffff:0:a9fe:a9fe", "::ffff:0:c0a8:1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:4136:e378:8000:63bf:5601:5601"] {
            assert!(r(a), "{a}");
        }
        for a in ["2001:db8::10", "2606:4700::1111", "::ffff:1.1.1.1", "64:ff9b::101:101", "2002:101:101::1", "::ffff:0:101:101", "2001:0:4136:e378:8000:63bf:fefe:fefe"] {
            assert!(!r(a), "{a}");
        }
    }

    #[test]
    fn refuses_the_hosts_own_addresses() {
        let own = vec![net("203.0.113.7/32")];
        assert!(refused("203.0.113.7".parse().unwrap(), &own));
        assert!(refused("::ffff:203.0.113.7".parse().unwrap(), &own));
        assert!(!refused("203.0.113.8".parse().unwrap(), &own));
        assert!(own_addresses().iter().any(|n| n.addr().is_loopback()), "lo is listed");
    }

    #[test]
    fn refuses_the_networks_the_host_is_on() {
        // An IPv6 LAN: the host at 2001:db8:1::1/64, the router and a NAS beside it.
        let own = vec![net("2001:db8:1::1/64"), net("198.51.100.20/24")];
        for a in ["2001:db8:1::1", "2001:db8:1::2", "2001:db8:1:0:ffff::9", "198.51.100.1", "::ffff:198.51.100.9", "2002:c633:6409::1"] {
            assert!(refused(a.parse().unwrap(), &own), "{a}");
        }
        for a in ["2001:db8:2::1", "198.51.101.1"] {
            assert!(!refused(a.parse().unwrap(), &own), "{a}");
        }
    }

    #[test]
    fn an_interface_s_network_is_its_netmask_and_never_much_of_the_internet() {
        let v4 = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert_eq!(own_network("192.0.2.5".parse().unwrap(), v4("255.255.255.0")), Some(net("192.0.2.5/24")));
        assert_eq!(own_network("2001:db8::5".parse().unwrap(), v4("ffff:ffff:ffff:ffff::")), Some(net("2001:db8::5/64")));
        assert_eq!(own_network("192.0.2.5".parse().unwrap(), v4("128.0.0.0")), Some(net("192.0.2.5/32")));
        assert_eq!(own_network("2001:db8::5".parse().unwrap(), v4("ffff::")), Some(net("2001:db8::5/128")));
        assert_eq!(own_network("192.0.2.5".parse().unwrap(), None), Some(net("192.0.2.5/32")));
    }
}
