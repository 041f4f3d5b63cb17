//! Who is calling, as far as limits are concerned: the client's address, read
//! from `X-Forwarded-For` only when the connection comes from a trusted proxy.

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Parses one `--trusted-proxies` entry: a CIDR block or a single address.
pub fn parse_proxy(s: &str) -> Result<IpNet, String> {
    let s = s.trim();
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("`{s}` is neither an IP address nor a CIDR block"))
}

/// The client address of a request whose TCP peer is `peer`.
///
/// Each proxy appends the address it received the request from, so the list
/// is read from the right: the first address that is not one of our proxies
/// is the client. Anything left of it was written by the client and proves
/// nothing. An untrusted peer's header is ignored, or anyone could pick the
/// address they are counted under.
pub fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut client = peer;
    let hops = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect::<Vec<_>>();
    for hop in hops.iter().rev() {
        match hop.trim().parse::<IpAddr>() {
            Ok(ip) => {
                client = ip;
                if !is_trusted(&ip) {
                    break;
                }
            }
            // A hop we cannot read: stop at the last proxy we could.
            Err(_) => break,
        }
    }
    client
}

/// The TCP peer of a request; unspecified when the server was started
/// without connection info (in-process routers in benches).
pub fn peer_of(parts: &Parts) -> IpAddr {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_str(xff).expect("header"),
        );
        h
    }

    #[test]
    fn the_forwarded_address_counts_only_behind_a_trusted_proxy() {
        let proxy: IpAddr = "10.0.0.5".parse().expect("ip");
        let trusted = vec![parse_proxy("10.0.0.0/8").expect("cidr")];
        let h = headers("1.2.3.4, 203.0.113.9");
        assert_eq!(
            client_addr(proxy, &h, &trusted),
            "203.0.113.9".parse::<IpAddr>().expect("ip")
        );
        assert_eq!(client_addr(proxy, &h, &[]), proxy);
        let stranger: IpAddr = "198.51.100.1".parse().expect("ip");
        assert_eq!(client_addr(stranger, &h, &trusted), stranger);
        // Two proxies deep: the inner proxy's own hop is skipped.
        let h = headers("203.0.113.9, 10.0.0.7");
        assert_eq!(
            client_addr(proxy, &h, &trusted),
            "203.0.113.9".parse::<IpAddr>().expect("ip")
        );
        assert_eq!(client_addr(proxy, &headers("garbage"), &trusted), proxy);
        assert!(parse_proxy("not-an-ip").is_err());
        assert!(parse_proxy("127.0.0.1").is_ok());
    }
}
