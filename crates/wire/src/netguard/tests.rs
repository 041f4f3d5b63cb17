//! The classifier against a table of addresses: each refused one with the
//! range it lies in (and the IPv4 address it carries), each allowed one
//! public.

use super::*;

fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

/// Refused IPv4 addresses and their ranges.
const REFUSED_V4: &[(&str, Range)] = &[
    ("0.0.0.0", Range::Unspecified),
    ("0.1.2.3", Range::Unspecified),
    ("127.0.0.1", Range::Loopback),
    ("127.255.255.254", Range::Loopback),
    ("10.0.0.1", Range::Private),
    ("10.255.255.255", Range::Private),
    ("172.16.0.1", Range::Private),
    ("172.31.255.255", Range::Private),
    ("192.168.1.1", Range::Private),
    ("169.254.169.254", Range::Metadata),
    ("169.254.0.1", Range::LinkLocal),
    ("169.254.170.2", Range::LinkLocal),
    ("100.64.0.1", Range::SharedCgnat),
    ("100.100.100.200", Range::SharedCgnat),
    ("100.127.255.255", Range::SharedCgnat),
    ("192.0.0.1", Range::ProtocolAssignments),
    ("192.0.0.192", Range::ProtocolAssignments),
    ("192.0.2.1", Range::Documentation),
    ("198.51.100.7", Range::Documentation),
    ("203.0.113.9", Range::Documentation),
    ("198.18.0.1", Range::Benchmarking),
    ("198.19.255.255", Range::Benchmarking),
    ("192.88.99.1", Range::Reserved),
    ("224.0.0.1", Range::Multicast),
    ("239.255.255.250", Range::Multicast),
    ("240.0.0.1", Range::Reserved),
    ("254.1.2.3", Range::Reserved),
    ("255.255.255.255", Range::Broadcast),
];

/// Refused IPv6 addresses that carry no IPv4 address to judge them by.
const REFUSED_V6: &[(&str, Range)] = &[
    ("::", Range::Unspecified),
    ("::1", Range::Loopback),
    ("fc00::1", Range::UniqueLocal),
    ("fd12:3456::1", Range::UniqueLocal),
    ("fd00:ec2::254", Range::Metadata),
    ("fe80::1", Range::LinkLocal),
    ("febf:ffff::1", Range::LinkLocal),
    ("fec0::1", Range::SiteLocal),
    ("ff02::1", Range::Multicast),
    ("ff0e::1", Range::Multicast),
    ("2001:db8::1", Range::Documentation),
    ("3fff::1", Range::Documentation),
    ("3fff:fff::1", Range::Documentation),
    ("2001:2::1", Range::Benchmarking),
    ("2001:10::1", Range::ProtocolAssignments),
    ("2001:1ff::1", Range::ProtocolAssignments),
    ("100::1", Range::Reserved),
    ("5f00::1", Range::Reserved),
    ("4000::1", Range::Reserved),
    ("1::1", Range::Reserved),
    ("64:ff9b:1::a00:1", Range::LocalNat64),
    ("64:ff9b:1:5db8:d8:2200::", Range::LocalNat64),
    // Teredo, refused whatever it carries: server 65.54.227.120, client
    // 127.0.0.1 (stored inverted, 80ff:fffe) ...
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", Range::Teredo),
    // ... and client 8.8.8.8 (f7f7:f7f7), both public.
    ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", Range::Teredo),
];

/// Refused IPv6 addresses judged by the IPv4 address inside them.
#[rustfmt::skip]
const REFUSED_EMBEDDED: &[(&str, Range, Embedding, &str)] = &[
    // The examples: 6to4 and IPv4-translated spellings of loopback.
    ("2002:7f00:1::", Range::Loopback, Embedding::SixToFour, "127.0.0.1"),
    ("::ffff:0:7f00:1", Range::Loopback, Embedding::Translated, "127.0.0.1"),
    ("::ffff:127.0.0.1", Range::Loopback, Embedding::Mapped, "127.0.0.1"),
    ("::ffff:10.0.0.1", Range::Private, Embedding::Mapped, "10.0.0.1"),
    ("::ffff:169.254.169.254", Range::Metadata, Embedding::Mapped, "169.254.169.254"),
    ("::ffff:0.0.0.0", Range::Unspecified, Embedding::Mapped, "0.0.0.0"),
    ("::127.0.0.1", Range::Loopback, Embedding::Compatible, "127.0.0.1"),
    ("::192.168.0.1", Range::Private, Embedding::Compatible, "192.168.0.1"),
    ("::2", Range::Unspecified, Embedding::Compatible, "0.0.0.2"),
    ("::ffff:0:a9fe:a9fe", Range::Metadata, Embedding::Translated, "169.254.169.254"),
    ("64:ff9b::7f00:1", Range::Loopback, Embedding::Nat64, "127.0.0.1"),
    ("64:ff9b::a00:1", Range::Private, Embedding::Nat64, "10.0.0.1"),
    ("64:ff9b::100.64.0.1", Range::SharedCgnat, Embedding::Nat64, "100.64.0.1"),
    ("2002:a9fe:a9fe::1", Range::Metadata, Embedding::SixToFour, "169.254.169.254"),
    ("2002:c0a8:101:1::1", Range::Private, Embedding::SixToFour, "192.168.1.1"),
    ("2002:e000:1::", Range::Multicast, Embedding::SixToFour, "224.0.0.1"),
];

/// Public addresses, some of them inside IPv6 forms that carry a public IPv4 address.
const ALLOWED: &[&str] = &[
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "9.255.255.255",
    "11.0.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "169.253.0.1",
    "192.0.1.1",
    "192.169.0.1",
    "198.17.255.255",
    "198.20.0.1",
    "223.255.255.255",
    "2606:4700::1111",
    "2a00:1450:4001:81c::200e",
    "2001:200::1",
    "2001:db9::1",
    "3fff:1000::1",
    "::ffff:93.184.216.34",
    "::ffff:0:808:808",
    "::8.8.8.8",
    "64:ff9b::808:808",
    "2002:5db8:d822::1",
];

#[test]
fn refused_ipv4_addresses_name_their_range() {
    for &(ip, range) in REFUSED_V4 {
        let addr: IpAddr = ip.parse().unwrap();
        assert_eq!(
            forbidden(addr),
            Some(Forbidden { range, via: None }),
            "{ip}"
        );
        assert!(!is_allowed(addr), "{ip}");
    }
}

#[test]
fn refused_ipv6_addresses_name_their_range() {
    for &(ip, range) in REFUSED_V6 {
        let addr: IpAddr = ip.parse().unwrap();
        assert_eq!(
            forbidden(addr),
            Some(Forbidden { range, via: None }),
            "{ip}"
        );
        assert!(!is_allowed(addr), "{ip}");
    }
}

#[test]
fn ipv6_spellings_of_forbidden_ipv4_addresses_are_refused_by_what_they_carry() {
    for &(ip, range, how, inner) in REFUSED_EMBEDDED {
        let addr: IpAddr = ip.parse().unwrap();
        let via = Some((how, v4(inner)));
        assert_eq!(forbidden(addr), Some(Forbidden { range, via }), "{ip}");
        // And the IPv4 address on its own is refused for the same reason.
        assert_eq!(
            forbidden(IpAddr::V4(v4(inner))).map(|f| f.range),
            Some(range),
            "{inner}"
        );
    }
}

#[test]
fn public_addresses_and_their_ipv6_spellings_are_allowed() {
    for &ip in ALLOWED {
        let addr: IpAddr = ip.parse().unwrap();
        assert_eq!(forbidden(addr), None, "{ip}");
        assert!(is_allowed(addr), "{ip}");
    }
}

#[test]
fn the_embedded_ipv4_address_is_read_from_where_each_form_keeps_it() {
    let cases = [
        ("::ffff:1.2.3.4", Some((Embedding::Mapped, "1.2.3.4"))),
        ("::1.2.3.4", Some((Embedding::Compatible, "1.2.3.4"))),
        ("::ffff:0:102:304", Some((Embedding::Translated, "1.2.3.4"))),
        ("64:ff9b::102:304", Some((Embedding::Nat64, "1.2.3.4"))),
        (
            "2002:102:304:ffff::9",
            Some((Embedding::SixToFour, "1.2.3.4")),
        ),
        ("64:ff9b:0:0:1::102:304", None),
        ("2001:0:102:304::", None),
        ("2606:4700::1111", None),
    ];
    for (ip, expected) in cases {
        let expected = expected.map(|(how, inner)| (how, v4(inner)));
        assert_eq!(embedded_v4(ip.parse().unwrap()), expected, "{ip}");
    }
}

#[test]
fn a_name_is_refused_when_any_of_its_addresses_is() {
    let public: IpAddr = "93.184.216.34".parse().unwrap();
    let rebound: IpAddr = "::ffff:0:7f00:1".parse().unwrap();
    assert_eq!(first_forbidden([public]), None);
    let (ip, why) = first_forbidden([public, rebound]).unwrap();
    assert_eq!(ip, rebound);
    assert_eq!(why.range, Range::Loopback);
    assert_eq!(
        why.to_string(),
        "loopback address (127.0.0.1 inside an IPv4-translated IPv6 address)"
    );
}
