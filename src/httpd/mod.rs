//! The HTTP server under the router (ARCHITECTURE.md §19, HTTP server).
//!
//! `axum::serve` keeps every connection for as long as its client likes: a
//! client that opens connections and never finishes their headers
//! (slowloris) holds them, and their memory, for ever. Here an accept loop
//! caps connections per client address and in total, and each connection
//! ([`connection`]) has a watchdog that closes it when its request headers
//! take longer than the header timeout or it sits idle between requests
//! longer than the keep-alive. Graceful shutdown works as in `axum::serve`:
//! stop accepting, let each connection finish the request it serves, wait
//! for all of them.

mod connection;

use crate::config::Settings;
use axum::Router;
use ipnet::IpNet;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What one server allows its clients' connections.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// A request's headers must be complete this long after the connection
    /// opened, or after their first byte on a kept-alive connection.
    pub header_read_timeout: Duration,
    /// A kept-alive connection with no request in flight closes after this.
    pub keep_alive_idle: Duration,
    /// Open connections in all.
    pub max_connections: usize,
    /// Open connections per client address (an IPv6 client's /64).
    pub max_connections_per_address: usize,
    /// Addresses the per-address cap does not apply to: the trusted proxies,
    /// whose connections carry many clients.
    pub exempt: Vec<IpNet>,
}

impl ConnectionLimits {
    pub fn from_settings(settings: &Settings) -> ConnectionLimits {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(settings.header_read_timeout_s),
            keep_alive_idle: Duration::from_secs(settings.keep_alive_idle_s),
            max_connections: usize::try_from(settings.max_connections).unwrap_or(usize::MAX),
            max_connections_per_address: usize::try_from(settings.max_connections_per_address)
                .unwrap_or(usize::MAX),
            exempt: settings.trusted_proxies.clone(),
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then waits for
/// the open connections to finish what they serve.
pub async fn run(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
) {
    let limits = Arc::new(limits);
    let counts = Arc::new(Counts::default());
    let (stop_tx, stop_rx) = watch::channel(());
    // Every connection holds a receiver; all dropped = all finished.
    let (done_tx, done_rx) = watch::channel(());
    let mut shutdown = shutdown;
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        let Some(slot) = counts.take(peer.ip(), &limits) else {
            tracing::debug!(%peer, "connection refused: too many open");
            refuse(stream);
            continue;
        };
        // Small answers go out at once rather than waiting for more to send.
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection::serve(
            stream,
            peer,
            router.clone(),
            limits.clone(),
            stop_rx.clone(),
            (done_rx.clone(), slot),
        ));
    }
    drop(listener);
    tracing::debug!("stopped accepting; waiting for open connections to finish");
    let _ = stop_tx.send(());
    drop(done_rx);
    done_tx.closed().await;
}

/// An accept that failed: a connection the client gave up on is nothing;
/// anything else (out of file descriptors, most often) is waited out, as
/// hyper and axum do, rather than spinning.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed; retrying in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// The answer to a connection over a cap, written once if the socket takes
/// it at once; the connection is then closed without reading anything.
static REFUSAL: LazyLock<String> = LazyLock::new(|| {
    let body = r#"{"type":"https://gpuex.dev/problems/too-many-connections","title":"Service Unavailable","status":503,"detail":"too many open connections from this address or in all; retry later","code":"too_many_connections"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
});

fn refuse(stream: TcpStream) {
    let _ = stream.try_write(REFUSAL.as_bytes());
}

/// The address a per-address cap counts: IPv4 as it is (an IPv4-mapped
/// IPv6 address too), IPv6 by its /64, which one client usually holds whole.
fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

/// Open connections, in all and per address.
#[derive(Debug, Default)]
struct Counts {
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_address: HashMap<IpAddr, usize>,
}

impl Counts {
    /// A place for a connection from `ip`, or `None` over a cap.
    fn take(self: &Arc<Self>, ip: IpAddr, limits: &ConnectionLimits) -> Option<Slot> {
        let key = (!limits.exempt.iter().any(|net| net.contains(&ip))).then(|| address_key(ip));
        let mut open = self.lock();
        if open.total >= limits.max_connections {
            return None;
        }
        if let Some(key) = key {
            let n = open.per_address.entry(key).or_default();
            if *n >= limits.max_connections_per_address {
                return None;
            }
            *n += 1;
        }
        open.total += 1;
        Some(Slot {
            counts: self.clone(),
            key,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        // Counting cannot panic halfway; a poisoned lock still holds whole counts.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One connection's place in [`Counts`], given back when it closes.
#[derive(Debug)]
pub(crate) struct Slot {
    counts: Arc<Counts>,
    key: Option<IpAddr>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.counts.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(key) = self.key {
            if let Some(n) = open.per_address.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    // Forgotten, so a flood from many addresses leaves nothing behind.
                    open.per_address.remove(&key);
                }
            }
        }
    }
}

/// What a connection's task holds until it ends: the server waits for the
/// first, the second counts it.
pub(crate) type Held = (watch::Receiver<()>, Slot);

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_address: usize, exempt: &[&str]) -> ConnectionLimits {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            keep_alive_idle: Duration::from_secs(60),
            max_connections: total,
            max_connections_per_address: per_address,
            exempt: exempt.iter().map(|n| n.parse().expect("net")).collect(),
        }
    }

    #[test]
    fn an_address_over_its_cap_is_refused_and_its_places_come_back() {
        let counts = Arc::new(Counts::default());
        let limits = limits(10, 2, &[]);
        let a: IpAddr = "10.0.0.1".parse().expect("ip");
        let b: IpAddr = "10.0.0.2".parse().expect("ip");
        let first = counts.take(a, &limits).expect("first");
        let _second = counts.take(a, &limits).expect("second");
        assert!(counts.take(a, &limits).is_none());
        let _other = counts.take(b, &limits).expect("another address");
        drop(first);
        assert!(counts.take(a, &limits).is_some());
    }

    #[test]
    fn the_total_cap_holds_for_every_address_and_nothing_is_left_after() {
        let counts = Arc::new(Counts::default());
        let limits = limits(3, 100, &["192.168.0.0/16"]);
        let slots: Vec<Slot> = (1..=3)
            .map(|i| {
                counts
                    .take(IpAddr::from([10, 0, 0, i]), &limits)
                    .expect("room")
            })
            .collect();
        assert!(counts
            .take("10.0.0.9".parse().expect("ip"), &limits)
            .is_none());
        assert!(counts
            .take("192.168.1.1".parse().expect("ip"), &limits)
            .is_none());
        drop(slots);
        let open = counts.lock();
        assert_eq!(open.total, 0);
        assert!(open.per_address.is_empty());
    }

    #[test]
    fn trusted_proxies_are_not_held_to_the_per_address_cap() {
        let counts = Arc::new(Counts::default());
        let limits = limits(10, 1, &["10.1.0.0/16"]);
        let proxy: IpAddr = "10.1.2.3".parse().expect("ip");
        let _held: Vec<Slot> = (0..5)
            .map(|_| counts.take(proxy, &limits).expect("a proxy's connection"))
            .collect();
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().expect("ip");
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().expect("ip");
        let c: IpAddr = "2001:db8:1:3::1".parse().expect("ip");
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(c));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().expect("ip");
        assert_eq!(
            address_key(mapped),
            "10.0.0.1".parse::<IpAddr>().expect("ip")
        );
    }
}
