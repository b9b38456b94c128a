//! Which addresses count as the public internet: a ConfigRepo that may reach only public hosts
//! must not be pointed (by its URL, or by a DNS name) at the controller's own network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is a public unicast address: not loopback, private, link-local, shared (CGNAT),
/// unspecified, multicast, broadcast, reserved, benchmarking or documentation, nor an IPv6
/// address that carries such an IPv4 address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = a == 0 // "this network", 0.0.0.0 among it
        || ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a, b, c) == (192, 0, 0) // IETF protocol assignments
        || ip.is_documentation()
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || ip.is_multicast()
        || a >= 240; // reserved, and the broadcast address
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // Addresses that stand for an IPv4 address are as public as it is: mapped (::ffff:a.b.c.d),
    // NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::).
    let embedded = match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some((hi, lo)),
        [0x2002, hi, lo, ..] => Some((hi, lo)),
        _ => None,
    };
    if let Some((hi, lo)) = embedded {
        return is_public_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    }
    let special = s[..6] == [0; 6] // unspecified, loopback, and the deprecated IPv4-compatible
        || ip.is_unicast_link_local()
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || ip.is_unique_local()
        || ip.is_multicast()
        || (s[0], s[1]) == (0x2001, 0x0db8) // documentation
        || (s[0] & 0xfff0) == 0x3ff0 // documentation (RFC 9637)
        || (s[0], s[1] & 0xfe00) == (0x2001, 0) // IETF protocol assignments, Teredo
        || s[..4] == [0x0100, 0, 0, 0]; // discard-only
    !special
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&str, bool)] = &[
            // Public.
            ("1.1.1.1", true),
            ("8.8.8.8", true),
            ("93.184.215.14", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("172.15.255.255", true),
            ("172.32.0.0", true),
            ("192.167.255.255", true),
            ("192.169.0.0", true),
            ("198.17.255.255", true),
            ("198.20.0.0", true),
            ("223.255.255.255", true),
            ("2606:4700:4700::1111", true),
            ("2a00:1450:4001:80b::200e", true),
            ("::ffff:8.8.8.8", true),
            ("64:ff9b::808:808", true),
            ("2002:808:808::1", true),
            ("2001:200::1", true),
            // This network, unspecified.
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("::", false),
            // Loopback.
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            ("::1", false),
            // Private (RFC 1918).
            ("10.0.0.1", false),
            ("10.255.255.255", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("192.168.0.1", false),
            // Shared address space (CGNAT).
            ("100.64.0.1", false),
            ("100.127.255.255", false),
            // Link-local, cloud metadata among it.
            ("169.254.169.254", false),
            ("169.254.0.1", false),
            ("fe80::1", false),
            ("febf:ffff::1", false),
            ("fec0::1", false),
            // Unique local.
            ("fc00::1", false),
            ("fd12:3456:789a::1", false),
            // Multicast, broadcast, reserved.
            ("224.0.0.1", false),
            ("239.255.255.250", false),
            ("255.255.255.255", false),
            ("240.0.0.1", false),
            ("ff02::1", false),
            ("ff0e::1", false),
            // Documentation, benchmarking, protocol assignments.
            ("192.0.2.1", false),
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("192.0.0.8", false),
            ("2001:db8::1", false),
            ("3fff::1", false),
            ("2001::1", false),
            ("100::1", false),
            // IPv6 standing for a non-public IPv4 address.
            ("::ffff:127.0.0.1", false),
            ("::ffff:10.0.0.1", false),
            ("::ffff:169.254.169.254", false),
            ("::ffff:100.64.0.1", false),
            ("::ffff:0.0.0.0", false),
            ("::ffff:255.255.255.255", false),
            ("::127.0.0.1", false),
            ("64:ff9b::a9fe:a9fe", false),
            ("2002:a00:1::1", false),
            ("2002:7f00:1::", false),
        ];
        for (text, public) in cases {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(is_public(ip), *public, "{text}");
        }
    }
}
