//! Where a webhook may point: public addresses only, unless the server runs
//! with `--webhook-allow-private`. A URL is checked twice: when it is
//! registered (its host resolved then), and on every connection, through
//! [`PublicOnly`], the delivery client's resolver, so a name that later
//! resolves to a private address (DNS rebinding) still cannot reach one.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The longest URL a webhook may have.
pub const MAX_URL_LEN: usize = 2048;

/// Why a URL is refused, worded for the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("must be an http(s) URL of at most 2048 characters")]
    NotHttp,
    #[error("must name a host")]
    NoHost,
    #[error("host `{0}` does not resolve")]
    Unresolved(String),
    #[error("resolves to {0}, a loopback, private or reserved address")]
    Private(IpAddr),
}

/// Whether `ip` is somewhere a webhook must not reach: loopback, private,
/// link-local (with the cloud metadata address), CGNAT, unspecified,
/// broadcast, multicast, documentation and other reserved ranges, and
/// IPv6's equivalents, IPv4-mapped addresses included.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private_v4(v4),
            None => is_private_v6(v6),
        },
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // CGNAT, 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24.
        || (a == 192 && b == 0 && c == 0)
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b == 18 || b == 19))
        // Reserved, 240.0.0.0/4.
        || a >= 240
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique local, fc00::/7.
        || (first & 0xfe00) == 0xfc00
        // Link-local, fe80::/10.
        || (first & 0xffc0) == 0xfe80
        // Documentation, 2001:db8::/32.
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // IPv4-compatible (deprecated) and NAT64 of private IPv4 addresses.
        || ip.to_ipv4().is_some_and(|v4| first == 0 && is_private_v4(v4))
        || (first == 0x0064 && ip.segments()[1] == 0xff9b && {
            let [.., a, b] = ip.segments();
            is_private_v4(Ipv4Addr::from((u32::from(a) << 16) | u32::from(b)))
        })
}

/// Parses `raw` as an http(s) URL of at most [`MAX_URL_LEN`] characters.
pub fn parse(raw: &str) -> Result<Url, Refused> {
    if raw.len() > MAX_URL_LEN {
        return Err(Refused::NotHttp);
    }
    let url = Url::parse(raw).map_err(|_| Refused::NotHttp)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refused::NotHttp);
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Refused::NoHost);
    }
    Ok(url)
}

/// Parses `raw` and, unless `allow_private`, resolves its host and refuses
/// it when any of its addresses is private.
pub async fn check(raw: &str, allow_private: bool) -> Result<Url, Refused> {
    let url = parse(raw)?;
    if allow_private {
        return Ok(url);
    }
    let host = url.host_str().ok_or(Refused::NoHost)?;
    if let Some(ip) = literal_ip(&url) {
        return if is_private(ip) {
            Err(Refused::Private(ip))
        } else {
            Ok(url)
        };
    }
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| Refused::Unresolved(host.to_owned()))?
        .collect();
    if addrs.is_empty() {
        return Err(Refused::Unresolved(host.to_owned()));
    }
    match addrs.iter().find(|a| is_private(a.ip())) {
        Some(a) => Err(Refused::Private(a.ip())),
        None => Ok(url),
    }
}

/// The host of `url` when it is an IP address: the client connects to it
/// without asking its resolver, so deliveries check it themselves.
pub fn literal_ip(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    // An IPv6 host comes in brackets.
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// The delivery client's resolver: the system's answers without the private
/// addresses (all of them when private addresses are allowed).
#[derive(Debug, Clone, Copy)]
pub struct PublicOnly {
    pub allow_private: bool,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow_private || !is_private(a.ip()))
                .collect();
            if found.is_empty() {
                let refused: Box<dyn std::error::Error + Send + Sync> =
                    format!("`{host}` resolves to no public address").into();
                return Err(refused);
            }
            let addrs: Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_reserved_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "2001:db8::1",
            "64:ff9b::a00:1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} should be refused");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:93.184.216.34",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} should pass");
        }
    }

    #[tokio::test]
    async fn literal_and_named_loopback_urls_are_refused() {
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://localhost/hook",
            "http://[::1]/hook",
            "http://169.254.169.254/latest/meta-data",
        ] {
            assert!(
                matches!(check(url, false).await, Err(Refused::Private(_))),
                "{url}"
            );
        }
        assert!(check("http://127.0.0.1:8080/hook", true).await.is_ok());
        assert!(check("https://93.184.216.34/hook", false).await.is_ok());
        assert_eq!(
            check("ftp://example.com/", false).await,
            Err(Refused::NotHttp)
        );
    }

    #[tokio::test]
    async fn the_delivery_resolver_drops_private_answers() {
        // What a name resolves to at connect time, not at registration:
        // a name rebound to loopback reaches nothing.
        let name: Name = "localhost".parse().unwrap();
        assert!(PublicOnly {
            allow_private: false
        }
        .resolve(name)
        .await
        .is_err());
        let name: Name = "localhost".parse().unwrap();
        let found: Vec<SocketAddr> = PublicOnly {
            allow_private: true,
        }
        .resolve(name)
        .await
        .unwrap()
        .collect();
        assert!(!found.is_empty() && found.iter().all(|a| a.ip().is_loopback()));
    }
}
