//! Where a webhook may point: public addresses only, unless the server runs
//! with `--webhook-allow-private` (ARCHITECTURE.md §19). Addresses are judged by
//! [`crate::netguard`], the classifier the node agent's artifact fetches use
//! too. A URL is checked twice: when it is registered (its host resolved
//! then), and on every connection, through [`PublicOnly`], the delivery
//! client's resolver: it resolves the name once, refuses it when any of its
//! addresses is forbidden, and hands the client only those checked
//! addresses to connect to, so a name that later resolves to a private
//! address (DNS rebinding) still cannot reach one. The reasons a buyer sees
//! never name the addresses a name resolved to: they could be the
//! provider's internal ones.

use crate::netguard;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;
use std::net::{IpAddr, SocketAddr};

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
    /// The address stays out of the message: it is what the server's
    /// resolver answered, maybe an address of the provider's own network.
    #[error("resolves to a loopback, private or reserved address")]
    Private,
}

/// Whether `ip` is somewhere a webhook must not reach (see [`netguard`]).
pub fn is_private(ip: IpAddr) -> bool {
    !netguard::is_allowed(ip)
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
            Err(Refused::Private)
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
    match netguard::first_forbidden(addrs.iter().map(SocketAddr::ip)) {
        Some((ip, why)) => {
            tracing::info!(%host, %ip, "a webhook URL was refused: {why}");
            Err(Refused::Private)
        }
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

/// The delivery client's resolver: the system's answers, each of them
/// checked, and the name refused when any is forbidden (none is, when
/// private addresses are allowed). The client connects only to the
/// addresses it returns: the name is never resolved a second time.
#[derive(Debug, Clone, Copy)]
pub struct PublicOnly {
    pub allow_private: bool,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let refused =
                |message: String| -> Box<dyn std::error::Error + Send + Sync> { message.into() };
            if found.is_empty() {
                return Err(refused(format!("`{host}` does not resolve")));
            }
            if !allow_private {
                if let Some((ip, why)) = netguard::first_forbidden(found.iter().map(|a| a.ip())) {
                    tracing::info!(%host, %ip, "a webhook delivery was refused: {why}");
                    return Err(refused(format!("`{host}` {}", Refused::Private)));
                }
            }
            let addrs: Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn literal_and_named_loopback_urls_are_refused_in_every_spelling() {
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://localhost/hook",
            "http://[::1]/hook",
            "http://169.254.169.254/latest/meta-data",
            // The examples: 6to4 and IPv4-translated loopback.
            "http://[2002:7f00:1::]/",
            "http://[::ffff:0:7f00:1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
            // WHATWG spellings of 127.0.0.1, which the URL parser normalizes.
            "http://2130706433/",
            "http://0x7f.1/",
        ] {
            assert_eq!(check(url, false).await, Err(Refused::Private), "{url}");
        }
        assert!(check("http://127.0.0.1:8080/hook", true).await.is_ok());
        assert!(check("http://[2002:7f00:1::]/", true).await.is_ok());
        assert!(check("https://93.184.216.34/hook", false).await.is_ok());
        assert!(check("https://[2002:5db8:d822::1]/hook", false)
            .await
            .is_ok());
        assert_eq!(
            check("ftp://example.com/", false).await,
            Err(Refused::NotHttp)
        );
    }

    #[tokio::test]
    async fn the_refusal_names_no_address() {
        let reason = check("http://localhost:9000/hook", false)
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            reason,
            "resolves to a loopback, private or reserved address"
        );
    }

    #[tokio::test]
    async fn the_delivery_resolver_refuses_a_name_with_a_private_answer() {
        // What a name resolves to at connect time, not at registration:
        // a name rebound to loopback reaches nothing.
        let name: Name = "localhost".parse().unwrap();
        let refused = PublicOnly {
            allow_private: false,
        }
        .resolve(name)
        .await
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            refused.as_deref(),
            Some("`localhost` resolves to a loopback, private or reserved address")
        );
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
