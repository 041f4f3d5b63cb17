//! Where an artifact is fetched from (ARCHITECTURE.md §19): the URL's host is
//! resolved once, by the agent's own resolver at fetch time, every address
//! it resolves to is checked with [`gpuex_wire::netguard`], and the fetch
//! connects only to those checked addresses. A name that resolves to a
//! private address, or to a public one now and a private one a moment later
//! (DNS rebinding), never reaches the provider's network. Unless the agent
//! runs with `--artifact-allow-private` (the demo and the tests, whose
//! artifacts are on 127.0.0.1).

use super::Failure;
use std::net::SocketAddr;
use std::time::Duration;

/// How long resolving a host may take.
const RESOLVE: Duration = Duration::from_secs(30);

/// `http://` or `https://`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scheme {
    Http,
    Https,
}

/// An artifact URL taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub scheme: Scheme,
    /// The host as the resolver takes it: an IPv6 address without brackets.
    pub host: String,
    pub port: u16,
    /// `host[:port]` as the URL spells it, for the `Host` header.
    pub authority: String,
    /// The path and query, `/` at least.
    pub path: String,
}

/// Takes `url` apart; only `http://` and `https://` URLs with a host.
pub(super) fn parse(url: &str) -> Result<Target, Failure> {
    let bad = |why: &str| Failure::BadUrl(why.to_owned());
    let uri: hyper::Uri = url.parse().map_err(|e| Failure::BadUrl(format!("{e}")))?;
    let scheme = match uri.scheme_str() {
        Some("http") => Scheme::Http,
        Some("https") => Scheme::Https,
        _ => return Err(bad("only http:// and https:// URLs")),
    };
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    let host = authority.host();
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let port = authority.port_u16().unwrap_or(match scheme {
        Scheme::Http => 80,
        Scheme::Https => 443,
    });
    // Without any user info: it is not sent as a header.
    let authority = match authority.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    Ok(Target {
        scheme,
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port,
        authority,
        path: if path.is_empty() { "/".into() } else { path },
    })
}

/// The addresses to connect to for `target`, resolved once and each of
/// them checked unless `allow_private`. A host any of whose addresses is
/// refused is refused as a whole.
pub(super) async fn resolve(
    target: &Target,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, Failure> {
    let unresolved = |error: String| Failure::Unresolved {
        host: target.host.clone(),
        error,
    };
    // The system's resolver; an address in the URL (in any spelling
    // getaddrinfo reads, `2130706433` included) comes back as itself.
    let found: Vec<SocketAddr> = tokio::time::timeout(
        RESOLVE,
        tokio::net::lookup_host((target.host.as_str(), target.port)),
    )
    .await
    .map_err(|_| unresolved("timed out".into()))?
    .map_err(|e| unresolved(e.to_string()))?
    .collect();
    if found.is_empty() {
        return Err(unresolved("no addresses".into()));
    }
    if !allow_private {
        if let Some((ip, why)) = gpuex_wire::netguard::first_forbidden(found.iter().map(|a| a.ip()))
        {
            return Err(Failure::NotAllowed {
                host: target.host.clone(),
                ip,
                why,
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_taken_apart_with_default_ports_and_bare_ipv6_hosts() {
        let t = parse("http://[::ffff:0:7f00:1]:8080/a/b?c=d").unwrap();
        assert_eq!(
            t,
            Target {
                scheme: Scheme::Http,
                host: "::ffff:0:7f00:1".into(),
                port: 8080,
                authority: "[::ffff:0:7f00:1]:8080".into(),
                path: "/a/b?c=d".into(),
            }
        );
        let t = parse("https://user:secret@example.com/x.tar").unwrap();
        assert_eq!((t.port, t.authority.as_str()), (443, "example.com"));
        let t = parse("http://example.com").unwrap();
        assert_eq!((t.port, t.path.as_str()), (80, "/"));
        for bad in [
            "ftp://example.com/x",
            "example.com/x",
            "http:///x",
            "not a url",
        ] {
            assert!(matches!(parse(bad), Err(Failure::BadUrl(_))), "{bad}");
        }
    }

    #[tokio::test]
    async fn loopback_in_any_spelling_is_refused_unless_allowed() {
        for url in [
            "http://127.0.0.1:9/x",
            "http://localhost:9/x",
            "http://[::1]:9/x",
            "http://[::ffff:127.0.0.1]:9/x",
            "http://[::ffff:0:7f00:1]:9/x",
            "http://[2002:7f00:1::]:9/x",
            "http://2130706433:9/x",
            "https://169.254.169.254/latest/meta-data/",
        ] {
            let target = parse(url).unwrap();
            assert!(
                matches!(
                    resolve(&target, false).await,
                    Err(Failure::NotAllowed { .. })
                ),
                "{url}"
            );
        }
        let target = parse("http://127.0.0.1:9/x").unwrap();
        assert_eq!(
            resolve(&target, true).await.unwrap(),
            vec!["127.0.0.1:9".parse::<SocketAddr>().unwrap()]
        );
    }
}
