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
#[path = "address_tests.rs"]
mod tests;
