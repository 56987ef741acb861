//! Which IP addresses are inside the machine or its private network: the
//! one rule both plugins' outgoing HTTP and the host's own source fetches
//! apply before connecting.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Loopback, private, link-local (cloud metadata lives there), CGNAT,
/// unspecified, broadcast, reserved, multicast, benchmarking, site-local
/// and unique-local addresses — also when an IPv6 address carries one of
/// them inside: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
/// (`::ffff:0:a.b.c.d`, SIIT), IPv4-compatible (`::a.b.c.d`), NAT64
/// (`64:ff9b::/96` and the local `64:ff9b:1::/48`), 6to4
/// (`2002:AABB:CCDD::/48`) and Teredo (`2001::/32`, the client's address
/// inverted in the last 32 bits).
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_internal_v4(v4) || is_internal_v6(v6),
            None => is_internal_v6(v6),
        },
    }
}

/// Link-local (169.254.0.0/16, fe80::/10: where cloud metadata services
/// answer), also inside an IPv6 address that embeds an IPv4 one.
pub fn is_link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80
                || embedded_v4(v6).is_some_and(|v4| v4.is_link_local())
        }
    }
}

/// Loopback (127.0.0.0/8, ::1), also inside an IPv6 address that embeds
/// an IPv4 one.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || embedded_v4(v6).is_some_and(|v4| v4.is_loopback()),
    }
}

/// The IPv4 address an IPv6 address routes to, for the forms that embed one.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-translated (SIIT): `::ffff:0:a.b.c.d`
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return Some(low);
    }
    // IPv4-compatible (deprecated, still routed by some stacks); `::` and
    // `::1` are the unspecified and loopback addresses, not IPv4
    if s[..6] == [0; 6] && ip != Ipv6Addr::UNSPECIFIED && ip != Ipv6Addr::LOCALHOST {
        return Some(low);
    }
    // NAT64: well-known prefix and the local-use one
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return Some(low);
    }
    // Teredo: the client's IPv4 address, inverted, ends the address
    if s[..2] == [0x2001, 0] {
        return Some(Ipv4Addr::from(!u32::from(low)));
    }
    // 6to4: the IPv4 address follows the prefix
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        // "this network" (0/8), and the reserved 240/4 with broadcast
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, benchmarking networks
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        // site-local (deprecated, still routed inside some networks)
        || (first & 0xffc0) == 0xfec0
        || ip.is_multicast()
        || ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            // IPv4-compatible, NAT64 (well-known and local) and 6to4 forms
            "::127.0.0.1",
            "::169.254.169.254",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::10.0.0.1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "2002:c0a8:0101::5",
            // IPv4-translated, Teredo (client 127.0.0.1, 10.0.0.1), site-local,
            // multicast and the reserved IPv4 ranges
            "::ffff:0:7f00:1",
            "::ffff:0:10.0.0.1",
            "::ffff:0:169.254.169.254",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            "2001:0:4136:e378:8000:63bf:f5ff:fffe",
            "fec0::1",
            "ff02::1",
            "0.1.2.3",
            "198.18.0.1",
            "192.0.0.8",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "64:ff9b::5db8:d822",
            "2002:5db8:d822::1",
            "::5db8:d822",
            "::ffff:0:5db8:d822",
            "2001:0:4136:e378:8000:63bf:a247:2bdd",
            "2001:db9::1",
        ] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }
}
