//! What following the journal costs a follower, measured on the three-replica
//! deployments: how long after the leader's commit each row is applied (from
//! the follower's own `gpuex_journal_row_lag_seconds`), and the CPU one read
//! costs on a follower against the leader.

use super::cpu::process_ticks;
use super::{Replica, METRICS_TOKEN, TICKS_PER_S};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A follower's row-lag histogram at one moment: (upper bound in seconds,
/// rows at or under it), cumulative, as Prometheus writes it.
pub struct RowLag(Vec<(f64, f64)>);

impl RowLag {
    /// Scrapes `replica`'s `/metrics`.
    pub async fn of(client: &reqwest::Client, replica: &Replica) -> RowLag {
        let text = client
            .get(format!("{}/metrics", replica.address))
            .bearer_auth(METRICS_TOKEN)
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text");
        let buckets = text
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("gpuex_journal_row_lag_seconds_bucket{le=\"")?;
                let (le, count) = rest.split_once("\"} ")?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((le, count.parse().ok()?))
            })
            .collect();
        RowLag(buckets)
    }

    /// The bucket bound at or under which the share `q` of the rows applied
    /// between `earlier` and this scrape fell, and how many rows that was.
    pub fn quantile_since(&self, earlier: &RowLag, q: f64) -> (f64, f64) {
        let rows = |lag: &RowLag, le: f64| {
            lag.0
                .iter()
                .find(|(bound, _)| *bound == le)
                .map_or(0.0, |(_, n)| *n)
        };
        let window: Vec<(f64, f64)> = self
            .0
            .iter()
            .map(|(le, n)| (*le, n - rows(earlier, *le)))
            .collect();
        let total = window.last().map_or(0.0, |(_, n)| *n);
        let bound = window
            .iter()
            .find(|(_, n)| *n >= q * total)
            .map_or(f64::INFINITY, |(le, _)| *le);
        (bound, total)
    }
}

/// What reads cost one replica: reads a second and CPU milliseconds each.
pub struct ReadCost {
    pub reads_per_s: f64,
    pub cpu_ms_per_read: f64,
}

/// Keeps `in_flight` reads of the order book (answered from the replica's
/// own engine) and of the buyer's orders (from the database) going against
/// `replica` alone for `wall`, and divides the CPU its process used by the
/// reads answered.
pub async fn read_cost(
    client: &reqwest::Client,
    replica: &Replica,
    buyer: &str,
    in_flight: usize,
    wall: Duration,
) -> ReadCost {
    let pid = replica.child.id().expect("a running replica").to_string();
    let before = process_ticks(&pid).expect("the replica's CPU time");
    let started = Instant::now();
    let answered = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..in_flight)
        .map(|worker| {
            let (client, answered) = (client.clone(), answered.clone());
            let paths = [
                format!("{}/v1/market/book?depth=10", replica.address),
                format!("{}/v1/orders?limit=20", replica.address),
            ];
            let buyer = buyer.to_owned();
            tokio::spawn(async move {
                let mut n = worker;
                while started.elapsed() < wall {
                    let r = client
                        .get(&paths[n % paths.len()])
                        .bearer_auth(&buyer)
                        .send()
                        .await
                        .expect("an answer");
                    assert!(r.status().is_success(), "a read answered {}", r.status());
                    let _ = r.bytes().await;
                    answered.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("read worker");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let after = process_ticks(&pid).expect("the replica's CPU time");
    #[allow(clippy::cast_precision_loss)]
    let reads = answered.load(Ordering::Relaxed) as f64;
    #[allow(clippy::cast_precision_loss)]
    let cpu_s = (after - before) as f64 / TICKS_PER_S;
    ReadCost {
        reads_per_s: reads / elapsed,
        cpu_ms_per_read: cpu_s * 1000.0 / reads.max(1.0),
    }
}
