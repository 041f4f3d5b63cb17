//! Where the exchange's outgoing connections may go (ARCHITECTURE.md §19): the one
//! classifier of destination addresses, shared by the server's webhook
//! deliveries and the node agent's artifact fetches. Pure `std::net`, so it
//! builds without the `server` feature.
//!
//! A destination is refused when it is loopback, private, link-local (the
//! cloud metadata address among them), CGNAT, multicast, broadcast,
//! unspecified, documentation, benchmarking or otherwise reserved, in IPv4
//! or IPv6. An IPv6 address that carries an IPv4 address is judged by that
//! IPv4 address, because that is where its packets end up:
//! - IPv4-mapped `::ffff:a.b.c.d` (the kernel connects over IPv4),
//! - IPv4-compatible `::a.b.c.d` (deprecated; tunnelled to the IPv4 address),
//! - IPv4-translated `::ffff:0:a.b.c.d` (SIIT),
//! - NAT64's well-known prefix `64:ff9b::/96` (a translator forwards it),
//! - 6to4 `2002:AABB:CCDD::/48` (a relay forwards it to `AA.BB.CC.DD`).
//!
//! Two forms are refused whatever they carry, by decision:
//! - **Teredo** `2001::/32`: the client address in it is its NAT's outside
//!   address, the host itself sits behind that NAT, and the packets go
//!   through relays, so the address says nothing checkable about where they
//!   land; IANA marks the whole of `2001::/23` not globally reachable.
//! - **Local-use NAT64** `64:ff9b:1::/48` (RFC 8215): where the IPv4 address
//!   sits in it is each network's own choice, so it cannot be read out.
//!
//! Callers resolve a name once, check every address it resolves to, and
//! connect only to the checked addresses: a second resolution could answer
//! differently (DNS rebinding).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[cfg(test)]
mod tests;

/// The kind of range a refused address lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// `0.0.0.0/8`, `::`: "this host", which the kernel takes as loopback.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// A cloud's instance metadata service (`169.254.169.254`,
    /// `fd00:ec2::254`): credentials of the host itself.
    Metadata,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64/10`.
    SharedCgnat,
    /// IETF protocol assignments, `192.0.0.0/24` and `2001::/23`.
    ProtocolAssignments,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18/15`, `2001:2::/48`.
    Benchmarking,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Unique local IPv6, `fc00::/7`.
    UniqueLocal,
    /// Deprecated site-local IPv6, `fec0::/10`.
    SiteLocal,
    /// Teredo, `2001::/32` (refused as a whole; see the module's docs).
    Teredo,
    /// Local-use NAT64, `64:ff9b:1::/48` (refused as a whole).
    LocalNat64,
    /// Everything else not globally routed: `240/4`, the deprecated 6to4
    /// relay anycast `192.88.99/24`, IPv6 outside global unicast `2000::/3`
    /// (the discard prefix `100::/64` among them).
    Reserved,
}

/// How an IPv6 address carries an IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Mapped,
    /// `::a.b.c.d`.
    Compatible,
    /// `::ffff:0:a.b.c.d`.
    Translated,
    /// `64:ff9b::a.b.c.d`.
    Nat64,
    /// `2002:AABB:CCDD::/48`.
    SixToFour,
}

/// Why an address is refused: its range, and, for an IPv6 address judged by
/// the IPv4 address inside it, how that one was carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forbidden {
    pub range: Range,
    pub via: Option<(Embedding, Ipv4Addr)>,
}

impl fmt::Display for Forbidden {
    /// For the operator's logs: it names the embedded IPv4 address.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let range = match self.range {
            Range::Unspecified => "unspecified",
            Range::Loopback => "loopback",
            Range::Private => "private",
            Range::Metadata => "cloud metadata",
            Range::LinkLocal => "link-local",
            Range::SharedCgnat => "shared CGNAT",
            Range::ProtocolAssignments => "IETF protocol assignment",
            Range::Documentation => "documentation",
            Range::Benchmarking => "benchmarking",
            Range::Multicast => "multicast",
            Range::Broadcast => "broadcast",
            Range::UniqueLocal => "unique local",
            Range::SiteLocal => "site-local",
            Range::Teredo => "Teredo",
            Range::LocalNat64 => "local-use NAT64",
            Range::Reserved => "reserved",
        };
        write!(f, "{range} address")?;
        if let Some((how, v4)) = self.via {
            let how = match how {
                Embedding::Mapped => "an IPv4-mapped",
                Embedding::Compatible => "an IPv4-compatible",
                Embedding::Translated => "an IPv4-translated",
                Embedding::Nat64 => "a NAT64",
                Embedding::SixToFour => "a 6to4",
            };
            write!(f, " ({v4} inside {how} IPv6 address)")?;
        }
        Ok(())
    }
}

/// Why an outgoing connection must not go to `ip`, or `None` when it may.
pub fn forbidden(ip: IpAddr) -> Option<Forbidden> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4).map(|range| Forbidden { range, via: None }),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// Whether an outgoing connection may go to `ip`.
pub fn is_allowed(ip: IpAddr) -> bool {
    forbidden(ip).is_none()
}

/// The first of `ips` that is refused, and why; `None` when all may be
/// reached. A name is refused when any of its addresses is.
pub fn first_forbidden(ips: impl IntoIterator<Item = IpAddr>) -> Option<(IpAddr, Forbidden)> {
    ips.into_iter()
        .find_map(|ip| forbidden(ip).map(|why| (ip, why)))
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<Range> {
    let [a, b, c, d] = ip.octets();
    let range = match (a, b, c, d) {
        (0, ..) => Range::Unspecified,
        (127, ..) => Range::Loopback,
        (10, ..) | (192, 168, ..) => Range::Private,
        (172, b, ..) if (16..32).contains(&b) => Range::Private,
        (169, 254, 169, 254) => Range::Metadata,
        (169, 254, ..) => Range::LinkLocal,
        (100, b, ..) if (64..128).contains(&b) => Range::SharedCgnat,
        (192, 0, 0, _) => Range::ProtocolAssignments,
        (192, 0, 2, _) | (198, 51, 100, _) | (203, 0, 113, _) => Range::Documentation,
        (198, 18 | 19, ..) => Range::Benchmarking,
        (192, 88, 99, _) => Range::Reserved,
        (255, 255, 255, 255) => Range::Broadcast,
        (224..=239, ..) => Range::Multicast,
        (240.., ..) => Range::Reserved,
        _ => return None,
    };
    Some(range)
}

/// The IPv4 address an IPv6 address carries, and how, for the forms whose
/// packets go to that IPv4 address.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<(Embedding, Ipv4Addr)> {
    let s = ip.segments();
    let low = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        [0, 0, 0, 0, 0, 0xffff, ..] => Some((Embedding::Mapped, low)),
        [0, 0, 0, 0, 0, 0, ..] => Some((Embedding::Compatible, low)),
        [0, 0, 0, 0, 0xffff, 0, ..] => Some((Embedding::Translated, low)),
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => Some((Embedding::Nat64, low)),
        [0x2002, hi, lo, ..] => Some((
            Embedding::SixToFour,
            Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)),
        )),
        _ => None,
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<Forbidden> {
    let bare = |range| Some(Forbidden { range, via: None });
    // Named before the IPv4-compatible form, which would read them as 0.0.0.0/8.
    if ip.is_unspecified() {
        return bare(Range::Unspecified);
    }
    if ip.is_loopback() {
        return bare(Range::Loopback);
    }
    if let Some((how, v4)) = embedded_v4(ip) {
        return forbidden_v4(v4).map(|range| Forbidden {
            range,
            via: Some((how, v4)),
        });
    }
    let s = ip.segments();
    let range = match s {
        [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] => Range::Metadata,
        [0x2001, 0x0db8, ..] => Range::Documentation,
        [0x2001, 0x0000, ..] => Range::Teredo,
        [0x2001, 0x0002, 0x0000, ..] => Range::Benchmarking,
        // The few globally reachable exceptions in it (anycast services,
        // ORCHID identifiers) serve no webhooks or artifacts.
        [0x2001, second, ..] if second < 0x0200 => Range::ProtocolAssignments,
        [0x3fff, second, ..] if second < 0x1000 => Range::Documentation,
        [0x0064, 0xff9b, 0x0001, ..] => Range::LocalNat64,
        [first, ..] if first & 0xfe00 == 0xfc00 => Range::UniqueLocal,
        [first, ..] if first & 0xffc0 == 0xfe80 => Range::LinkLocal,
        [first, ..] if first & 0xffc0 == 0xfec0 => Range::SiteLocal,
        [first, ..] if first & 0xff00 == 0xff00 => Range::Multicast,
        // Only 2000::/3 is allocated for global unicast.
        [first, ..] if first & 0xe000 != 0x2000 => Range::Reserved,
        _ => return None,
    };
    bare(range)
}
