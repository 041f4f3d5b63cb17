//! The buyers: the fill that makes a fleet busy, the spot bids that stand,
//! and the measured load of mixed orders.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the measured order load gave.
pub(super) struct OrderFigures {
    pub(super) per_s: f64,
    pub(super) p50: Duration,
    pub(super) p99: Duration,
    pub(super) p999: Duration,
    pub(super) sent: usize,
    pub(super) filled: usize,
    /// Answers of 4xx: refused orders (below the floor, no funds, ...).
    pub(super) refused: usize,
    /// Answers of 5xx, or no answer at all.
    pub(super) failed: usize,
}

/// A long-running lease of a fifth of an H100 (50 TFLOPS, 16 GB): at 1.5 a
/// GPU the fleet keeps room for the measured load.
pub(super) fn fill_order() -> Value {
    json!({"mode": "on_demand", "region": REGION, "resources": {"tflops": 50, "vram_gb": 16}})
}

/// A spot bid for a whole A100 at about 0.68 of list (between the spot
/// floor and cap): the fleet's one A100 is held by
/// [`occupy_standing_model`], so the bid stands in the auction at every
/// clearing and never wins, and the H100s stay the load's.
pub(super) fn standing_bid() -> Value {
    json!({"mode": "spot", "region": REGION, "max_price": "1.1",
           "resources": {"tflops": 100, "vram_gb": 80, "gpu_model": STANDING_MODEL,
                         "isolation": "whole"}})
}

/// Takes the fleet's one A100 whole, for as long as the run lasts.
pub(super) async fn occupy_standing_model(client: &reqwest::Client, base: &str, buyer: &str) {
    let body = json!({"mode": "on_demand", "region": REGION,
                      "resources": {"tflops": 100, "vram_gb": 80, "gpu_model": STANDING_MODEL,
                                    "isolation": "whole"}});
    let r = send(
        client,
        reqwest::Method::POST,
        &format!("{base}/v1/orders"),
        Some(buyer),
        &body,
    )
    .await;
    assert!(r["lease_id"].is_string(), "the A100 was not taken: {r}");
}

/// The measured mix: 7 in 10 on-demand for ten minutes, 2 spot, 1 reserved
/// an hour ahead.
fn mixed_order(n: usize) -> Value {
    let resources = json!({"tflops": 20, "vram_gb": 4});
    match n % 10 {
        0 => {
            // Reserved windows start on a whole hour, at least an hour ahead.
            let hour = chrono::Utc::now().timestamp() / 3600 + 2;
            let start = chrono::DateTime::from_timestamp(hour * 3600, 0).unwrap_or_default();
            json!({"mode": "reserved", "region": REGION, "resources": resources,
                   "start_at": start, "duration_s": 3600})
        }
        1 | 2 => {
            json!({"mode": "spot", "region": REGION, "resources": resources, "max_price": "0.063"})
        }
        _ => {
            json!({"mode": "on_demand", "region": REGION, "resources": resources, "duration_s": 600})
        }
    }
}

/// What [`place_many`] placed.
pub(super) struct Placed {
    pub(super) accepted: usize,
    pub(super) filled: usize,
}

/// Places `count` orders made by `body`, 32 at a time. A refused or failed
/// one is counted out and the first is printed: at scale they are a
/// finding, not the end of the run.
pub(super) async fn place_many(
    client: &reqwest::Client,
    base: &str,
    buyer: &str,
    count: usize,
    what: &str,
    body: fn() -> Value,
) -> Placed {
    let bar = agents::progress(count as u64, what);
    let url = format!("{base}/v1/orders");
    let (accepted, filled) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let told = std::sync::atomic::AtomicBool::new(false);
    futures::stream::iter(0..count)
        .for_each_concurrent(32, |_| {
            let (url, bar, accepted, filled, told) = (&url, &bar, &accepted, &filled, &told);
            async move {
                let answer = client
                    .post(url)
                    .bearer_auth(buyer)
                    .json(&body())
                    .send()
                    .await;
                let problem = match answer {
                    Ok(r) if r.status().is_success() => {
                        accepted.fetch_add(1, Ordering::Relaxed);
                        let r: Value = r.json().await.unwrap_or(Value::Null);
                        if r["lease_id"].is_string() {
                            filled.fetch_add(1, Ordering::Relaxed);
                        }
                        None
                    }
                    Ok(r) => Some(format!(
                        "refused: {} {}",
                        r.status(),
                        r.text().await.unwrap_or_default()
                    )),
                    Err(e) => Some(format!("failed: {e}")),
                };
                if let Some(problem) = problem.filter(|_| !told.swap(true, Ordering::Relaxed)) {
                    eprintln!("  an order was {problem}");
                }
                bar.inc(1);
            }
        })
        .await;
    bar.finish();
    Placed {
        accepted: accepted.into_inner(),
        filled: filled.into_inner(),
    }
}

/// Keeps `in_flight` mixed orders in flight for `wall`.
pub(super) async fn load(
    client: &reqwest::Client,
    base: &str,
    buyer: &str,
    in_flight: usize,
    wall: Duration,
) -> OrderFigures {
    eprintln!("  orders: {in_flight} in flight for {}s", wall.as_secs());
    let next = Arc::new(AtomicUsize::new(0));
    let told = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = Instant::now();
    let until = started + wall;
    let url: Arc<str> = format!("{base}/v1/orders").into();
    let buyer: Arc<str> = buyer.into();
    let workers: Vec<_> = (0..in_flight)
        .map(|_| {
            let (client, url, buyer, next, told) = (
                client.clone(),
                url.clone(),
                buyer.clone(),
                next.clone(),
                told.clone(),
            );
            tokio::spawn(async move {
                let mut samples: Vec<(Duration, u16, bool)> = Vec::new();
                while Instant::now() < until {
                    let body = mixed_order(next.fetch_add(1, Ordering::Relaxed));
                    let sent = Instant::now();
                    let answer = client
                        .post(&*url)
                        .bearer_auth(&*buyer)
                        .json(&body)
                        .send()
                        .await;
                    let (status, filled) = match answer {
                        Ok(r) => {
                            let status = r.status().as_u16();
                            let body: Value = r.json().await.unwrap_or(Value::Null);
                            if status >= 400 && !told.swap(true, Ordering::Relaxed) {
                                eprintln!("  an order was refused: {status} {body}");
                            }
                            (status, body["lease_id"].is_string())
                        }
                        Err(_) => (0, false),
                    };
                    samples.push((sent.elapsed(), status, filled));
                }
                samples
            })
        })
        .collect();
    let mut samples = Vec::new();
    for worker in workers {
        samples.extend(worker.await.expect("a load worker"));
    }
    let elapsed = started.elapsed();
    let mut took: Vec<Duration> = samples.iter().map(|s| s.0).collect();
    took.sort_unstable();
    let at = |per_mille: usize| {
        took.get((took.len() * per_mille / 1000).min(took.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    OrderFigures {
        per_s: samples.len() as f64 / elapsed.as_secs_f64(),
        p50: at(500),
        p99: at(990),
        p999: at(999),
        sent: samples.len(),
        filled: samples.iter().filter(|s| s.2).count(),
        refused: samples.iter().filter(|s| (400..500).contains(&s.1)).count(),
        failed: samples.iter().filter(|s| s.1 == 0 || s.1 >= 500).count(),
    }
}
