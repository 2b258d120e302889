//! The networks the host reaches on-link by a route, beside its interfaces' own netmasks
//! (`guard::own_addresses`). A host given its address by DHCPv6 holds it as a /128
//! (NetworkManager, systemd-networkd), and the /64 its neighbours are on is on-link by the route
//! the router's advertised prefix makes: the netmask names no LAN there, and a run allowed a
//! neighbour's global address reached it (found by an attacker's review, rev45). A route without
//! a gateway is such a network. Linux: `/proc/net/ipv6_route` (every table) and `/proc/net/route`
//! (the main table); none elsewhere, or where they cannot be read.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

/// `RTF_GATEWAY`: the route goes through a router, past the LAN.
const RTF_GATEWAY: u32 = 0x2;

/// The on-link networks of the host's routing table, as wide as `lan_prefix` lets a LAN be.
pub fn networks() -> Vec<IpNet> {
    // Read whole: a host's table is a few lines (a router's full table would be its own cost).
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let mut out = of_ipv6_routes(&read("/proc/net/ipv6_route"));
    out.extend(of_ipv4_routes(&read("/proc/net/route")));
    out
}

/// `dest prefix src src_prefix next_hop metric refcnt use flags iface`, all hex, per line.
fn of_ipv6_routes(table: &str) -> Vec<IpNet> {
    let on_link = |line: &str| -> Option<IpNet> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (dest, prefix, next_hop, flags) = (f.first()?, f.get(1)?, f.get(4)?, f.get(8)?);
        if u32::from_str_radix(flags, 16).ok()? & RTF_GATEWAY != 0 || u128::from_str_radix(next_hop, 16).ok()? != 0 {
            return None;
        }
        network(IpAddr::V6(Ipv6Addr::from(u128::from_str_radix(dest, 16).ok()?)), u8::from_str_radix(prefix, 16).ok()?)
    };
    table.lines().filter_map(on_link).collect()
}

/// `Iface Destination Gateway Flags RefCnt Use Metric Mask ...` after a header line; addresses
/// are the kernel's network-order words printed as host-order hex.
fn of_ipv4_routes(table: &str) -> Vec<IpNet> {
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(|v| Ipv4Addr::from(v.to_ne_bytes()));
    let on_link = |line: &str| -> Option<IpNet> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (dest, gateway, flags, mask) = (word(f.get(1)?)?, word(f.get(2)?)?, f.get(3)?, word(f.get(7)?)?);
        if u32::from_str_radix(flags, 16).ok()? & RTF_GATEWAY != 0 || !gateway.is_unspecified() {
            return None;
        }
        network(IpAddr::V4(dest), u32::from(mask).leading_ones() as u8)
    };
    table.lines().skip(1).filter_map(on_link).collect()
}

/// Whether a network of `prefix` bits at `addr` may be a LAN: no wider than /8 (IPv4) or /32
/// (IPv6), as an on-link route or an interface's netmask (`guard::own_addresses`) names one.
pub(super) fn lan_prefix(addr: IpAddr, prefix: u8) -> bool {
    let (shortest, whole) = if addr.is_ipv4() { (8, 32) } else { (32, 128) };
    (shortest..=whole).contains(&prefix)
}

/// A route's network, where it is no wider than a LAN (a default route, `::/1` of a VPN, the
/// multicast `ff00::/8` are not).
fn network(dest: IpAddr, prefix: u8) -> Option<IpNet> {
    lan_prefix(dest, prefix).then(|| IpNet::new(dest, prefix).ok()).flatten().map(|n| n.trunc())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(v: &[&str]) -> Vec<IpNet> {
        v.iter().map(|s| s.parse().unwrap()).collect()
    }

    /// A DHCPv6 host's table (as a namespace printed it): its /128, the on-link /64, loopback, the
    /// default route through a router, multicast, and a reject default of lo.
    #[test]
    fn on_link_ipv6_routes_are_networks_and_routes_through_a_router_are_not() {
        let table = "\
20010db8000100000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
20010db8000200000000000000000000 40 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
20010db8000100000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001     eth0
ff000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000003 00000000 00000001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
garbage line
";
        assert_eq!(of_ipv6_routes(table), nets(&["2001:db8:1::/64", "fe80::/64", "::1/128", "2001:db8:1::1/128"]));
    }

    #[test]
    fn on_link_ipv4_routes_are_networks_and_routes_through_a_router_are_not() {
        let word = |a: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(a));
        let line = |dest: [u8; 4], gw: [u8; 4], flags: &str, mask: [u8; 4]| format!("eth0\t{}\t{}\t{flags}\t0\t0\t0\t{}\t0\t0\t0\n", word(dest), word(gw), word(mask));
        let table = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n".to_string()
            + &line([0, 0, 0, 0], [198, 51, 100, 1], "0003", [0, 0, 0, 0])
            + &line([198, 51, 100, 0], [0, 0, 0, 0], "0001", [255, 255, 255, 0])
            + &line([203, 0, 113, 0], [198, 51, 100, 1], "0003", [255, 255, 255, 0])
            + &line([0, 0, 0, 0], [0, 0, 0, 0], "0001", [128, 0, 0, 0]);
        assert_eq!(of_ipv4_routes(&table), nets(&["198.51.100.0/24"]));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_host_s_table_is_read() {
        assert!(networks().iter().any(|n| n.contains(&"::1".parse::<IpAddr>().unwrap())) || !std::path::Path::new("/proc/net/if_inet6").exists(), "{:?}", networks());
    }
}
