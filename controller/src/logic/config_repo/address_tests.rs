//! Unit tests of `logic/config_repo/address.rs`.

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
