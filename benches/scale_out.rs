//! Scale-out throughput (ARCHITECTURE.md §12, issue 20): order placement
//! (`POST /v1/orders`) through real `gpuex serve` processes, in one run:
//!
//! 1. one replica on PostgreSQL (the baseline),
//! 2. three replicas on one PostgreSQL database, the load spread
//!    round-robin over them, so two orders in three reach a follower and
//!    are forwarded to the leader (`POST /internal/market/command`),
//! 3. the same three replicas with every order sent to the leader (what
//!    the followers cost by merely following: applying the journal),
//! 4. one replica on SQLite.
//!
//! Each deployment gets a fresh database, the same market (nodes of
//! 8 shared H100s, a credited buyer), the same order and the same number of
//! requests in flight (each one that finishes starts the next). After a
//! warm-up, the load runs for a fixed wall time; the bench prints orders per
//! second, p50 and p99 latency, and the ratios against the one-replica
//! PostgreSQL figure of the same run.
//!
//! ```text
//! GPUEX_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench --bench scale_out
//! ```
//!
//! `GPUEX_TEST_POSTGRES_URL` serves too; with neither the bench says so and
//! measures nothing. Knobs: `GPUEX_BENCH_IN_FLIGHT` (32),
//! `GPUEX_BENCH_SECONDS` (20, measured per deployment),
//! `GPUEX_BENCH_WARMUP_SECONDS` (5), `GPUEX_BENCH_NODES` (600: each takes 160 orders),
//! `GPUEX_BENCH_ROUNDS` (1: each round runs all three deployments again),
//! `GPUEX_BENCH_READ_SECONDS` (8, for each replica's reads).
//!
//! The three-replica deployments also give what following costs
//! (`scale_out/follower.rs`): the followers' row lag p50 and p99 over the
//! measured window, and after the round-robin one, reads against the leader
//! alone and a follower alone, as CPU per read.

use futures::StreamExt;
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

const ADMIN_EMAIL: &str = "admin@bench.test";
const ADMIN_PASSWORD: &str = "bench-password-1";
const JWT_SECRET: &str = "bench-secret-known-to-the-bench";
const METRICS_TOKEN: &str = "bench-metrics-token";

#[path = "scale_out/cpu.rs"]
mod cpu;
#[path = "scale_out/deploy.rs"]
mod deploy;
#[path = "scale_out/follower.rs"]
mod follower;

use cpu::{ticks, Cores, TICKS_PER_S};
use deploy::{knob, postgres_base_url, Database, Replica};

/// The order every deployment places: the one `benches/http.rs` places.
fn order() -> Value {
    json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 2, "vram_gb": 4}})
}

#[derive(Clone, Copy, PartialEq)]
enum Backend {
    Postgres,
    Sqlite,
}

/// One deployment to measure.
struct Deployment {
    name: &'static str,
    backend: Backend,
    replicas: usize,
    /// Every order to the leader: what the followers' mere presence costs.
    leader_only: bool,
}

const DEPLOYMENTS: [Deployment; 4] = [
    Deployment {
        name: "PostgreSQL, 1 replica",
        backend: Backend::Postgres,
        replicas: 1,
        leader_only: false,
    },
    Deployment {
        name: "PostgreSQL, 3 replicas, round-robin",
        backend: Backend::Postgres,
        replicas: 3,
        leader_only: false,
    },
    Deployment {
        name: "PostgreSQL, 3 replicas, all to the leader",
        backend: Backend::Postgres,
        replicas: 3,
        leader_only: true,
    },
    Deployment {
        name: "SQLite, 1 replica",
        backend: Backend::Sqlite,
        replicas: 1,
        leader_only: false,
    },
];

async fn post(client: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> Value {
    let mut req = client.post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let response = req.send().await.expect("request");
    let status = response.status();
    let body = response.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "POST {url}: {status} {body}");
    body
}

async fn login(client: &reqwest::Client, base: &str, email: &str) -> String {
    let password = if email == ADMIN_EMAIL {
        ADMIN_PASSWORD
    } else {
        "bench-password-1"
    };
    let r = post(
        client,
        &format!("{base}/v1/auth/login"),
        None,
        &json!({"email": email, "password": password}),
    )
    .await;
    r["access_token"].as_str().expect("token").to_owned()
}

/// Waits for every replica to answer ready, and for exactly one to lead.
async fn wait_ready(client: &reqwest::Client, replicas: &[Replica]) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let roles: Vec<Option<String>> =
            futures::future::join_all(replicas.iter().map(|r| r.role(client))).await;
        let leaders = roles
            .iter()
            .filter(|r| r.as_deref() == Some("leader"))
            .count();
        if roles.iter().all(Option::is_some) && leaders == 1 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the replicas are not ready with one leader: {roles:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The market of `benches/http.rs`: a region, list prices, a provider's
/// nodes and a buyer with funds, set up through the first replica.
async fn market(client: &reqwest::Client, base: &str, nodes: usize) -> String {
    let admin = login(client, base, ADMIN_EMAIL).await;
    let r = client
        .put(format!("{base}/v1/admin/regions/eu-west"))
        .bearer_auth(&admin)
        .json(&json!({"timezone": "UTC"}))
        .send()
        .await
        .expect("region");
    assert!(r.status().is_success(), "region: {}", r.status());
    let r = client
        .put(format!("{base}/v1/admin/prices"))
        .bearer_auth(&admin)
        .json(&json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "0.002"},
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.05"}
        ]))
        .send()
        .await
        .expect("prices");
    assert!(r.status().is_success(), "prices: {}", r.status());
    for (email, role) in [("p@bench.test", "provider"), ("b@bench.test", "buyer")] {
        post(
            client,
            &format!("{base}/v1/auth/register"),
            None,
            &json!({"email": email, "password": "bench-password-1", "name": "b", "role": role}),
        )
        .await;
    }
    let provider = login(client, base, "p@bench.test").await;
    let buyer = login(client, base, "b@bench.test").await;
    let gpus: Vec<Value> = (0..8)
        .map(|i| json!({"index": i, "model": "H100-SXM5-80GB", "mode": "shared"}))
        .collect();
    futures::stream::iter(0..nodes)
        .map(|n| {
            let body = json!({"name": format!("n{n}"), "region": "eu-west", "gpus": gpus,
                              "cpu_milli": 1_000_000, "memory_mib": 100_000_000});
            let (provider, url) = (provider.clone(), format!("{base}/v1/nodes"));
            async move { post(client, &url, Some(&provider), &body).await }
        })
        .buffer_unordered(8)
        .for_each(|_| async {})
        .await;
    let me: Value = client
        .get(format!("{base}/v1/me"))
        .bearer_auth(&buyer)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    post(
        client,
        &format!("{base}/v1/admin/credits"),
        Some(&admin),
        &json!({"user_id": me["id"], "amount": "100000000"}),
    )
    .await;
    buyer
}

/// One answered request.
struct Sample {
    replica: usize,
    took: Duration,
    status: u16,
    filled: bool,
}

/// Keeps `in_flight` orders in flight, round-robin over `addresses`, for
/// `wall`; each worker starts no new order after it. Returns the answers
/// and the time until the last one came back.
async fn load(
    client: &reqwest::Client,
    addresses: &Arc<Vec<String>>,
    buyer: &Arc<str>,
    in_flight: usize,
    wall: Duration,
) -> (Vec<Sample>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let until = started + wall;
    let workers: Vec<_> = (0..in_flight)
        .map(|_| {
            let (client, addresses, buyer, next) = (
                client.clone(),
                addresses.clone(),
                buyer.clone(),
                next.clone(),
            );
            tokio::spawn(async move {
                let mut samples = Vec::new();
                while Instant::now() < until {
                    let replica = next.fetch_add(1, Ordering::Relaxed) % addresses.len();
                    let sent = Instant::now();
                    let response = client
                        .post(format!("{}/v1/orders", addresses[replica]))
                        .bearer_auth(&*buyer)
                        .json(&order())
                        .send()
                        .await
                        .expect("an answer");
                    let status = response.status().as_u16();
                    let body: Value = response.json().await.unwrap_or(Value::Null);
                    samples.push(Sample {
                        replica,
                        took: sent.elapsed(),
                        status,
                        filled: body["lease_id"].is_string(),
                    });
                    if status >= 500 && samples.iter().filter(|s| s.status >= 500).count() == 1 {
                        eprintln!("  a {status} answer: {body}");
                    }
                }
                samples
            })
        })
        .collect();
    let mut samples = Vec::new();
    for worker in workers {
        samples.extend(worker.await.expect("load worker"));
    }
    (samples, started.elapsed())
}

/// What one deployment measured.
struct Figures {
    orders_per_s: f64,
    p50: Duration,
    p99: Duration,
    /// p50 and p99 of the orders sent to the leader, and to followers.
    by_role: Option<[(Duration, Duration); 2]>,
    /// Cores busy over the measured window: each replica (the leader
    /// first), this bench's client, and the whole machine.
    cores: Option<Cores>,
    /// One restore (`restore::load`) of the database the run left, and the
    /// leases in it: what a follower does once at start, or on a digest
    /// mismatch (before the journal, every 250 ms under steady commits).
    rebuild: Option<(Duration, usize)>,
    /// Several replicas: the followers' row lag p50 and p99 (bucket bounds,
    /// seconds) over the measured window, and the rows they cover.
    row_lag: Option<(f64, f64, f64)>,
    /// Round-robin only: reads against the leader alone, then a follower alone.
    reads: Option<[follower::ReadCost; 2]>,
}

fn percentiles(mut took: Vec<Duration>) -> (Duration, Duration) {
    if took.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    took.sort_unstable();
    let at = |p: usize| took[(took.len() * p / 100).min(took.len() - 1)];
    (at(50), at(99))
}

async fn measure(
    client: &reqwest::Client,
    deployment: &Deployment,
    postgres_base: &str,
) -> Figures {
    let in_flight = knob("GPUEX_BENCH_IN_FLIGHT", 32) as usize;
    let wall = Duration::from_secs(knob("GPUEX_BENCH_SECONDS", 20));
    let warm_up = Duration::from_secs(knob("GPUEX_BENCH_WARMUP_SECONDS", 5));
    let nodes = knob("GPUEX_BENCH_NODES", 600) as usize;

    let database = Database::create(deployment.backend, postgres_base).await;
    // Started at once: they take turns on migrations and the bootstrap.
    let mut replicas: Vec<Replica> = (0..deployment.replicas)
        .map(|_| Replica::start(&database.url, &[]))
        .collect();
    wait_ready(client, &replicas).await;
    let mut leader = None;
    for (i, r) in replicas.iter().enumerate() {
        if r.role(client).await.as_deref() == Some("leader") {
            leader = Some(i);
        }
    }
    let buyer: Arc<str> = market(client, &replicas[0].address, nodes).await.into();
    let addresses: Arc<Vec<String>> = Arc::new(
        replicas
            .iter()
            .enumerate()
            .filter(|(i, _)| !deployment.leader_only || Some(*i) == leader)
            .map(|(_, r)| r.address.clone())
            .collect(),
    );

    load(client, &addresses, &buyer, in_flight, warm_up).await;
    let round_robin = deployment.replicas > 1 && !deployment.leader_only;
    let followers: Vec<&Replica> = replicas
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != leader)
        .map(|(_, r)| r)
        .collect();
    let mut lag_before = Vec::new();
    for f in &followers {
        lag_before.push(follower::RowLag::of(client, f).await);
    }
    let before = ticks(&replicas);
    let (samples, elapsed) = load(client, &addresses, &buyer, in_flight, wall).await;
    let after = ticks(&replicas);
    // The worse follower's quantiles, and the rows both applied.
    let mut row_lag: Option<(f64, f64, f64)> = None;
    for (f, earlier) in followers.iter().zip(&lag_before) {
        let now = follower::RowLag::of(client, f).await;
        let (p50, rows) = now.quantile_since(earlier, 0.5);
        let (p99, _) = now.quantile_since(earlier, 0.99);
        let (w50, w99, before) = row_lag.unwrap_or((0.0, 0.0, 0.0));
        row_lag = Some((p50.max(w50), p99.max(w99), before + rows));
    }
    let reads = match (leader, followers.first()) {
        (Some(leader), Some(follower)) if round_robin => {
            let read_wall = Duration::from_secs(knob("GPUEX_BENCH_READ_SECONDS", 8));
            let on_leader =
                follower::read_cost(client, &replicas[leader], &buyer, in_flight, read_wall).await;
            let on_follower =
                follower::read_cost(client, follower, &buyer, in_flight, read_wall).await;
            Some([on_leader, on_follower])
        }
        _ => None,
    };
    let busy = |from: u64, to: u64| (to - from) as f64 / TICKS_PER_S / elapsed.as_secs_f64();
    let cores = before.zip(after).map(|((r0, c0, m0), (r1, c1, m1))| {
        let mut replicas: Vec<(usize, f64)> = r0
            .iter()
            .zip(&r1)
            .map(|(a, b)| busy(*a, *b))
            .enumerate()
            .collect();
        // The leader first.
        replicas.sort_by_key(|(i, _)| Some(*i) != leader);
        Cores {
            replicas: replicas.into_iter().map(|(_, c)| c).collect(),
            client: busy(c0, c1),
            machine: busy(m0, m1),
        }
    });

    for replica in &mut replicas {
        let _ = replica.child.kill().await;
    }
    // What a follower does once at start (it follows the journal after):
    // before the journal, every 250 ms under steady commits.
    let rebuild = if deployment.replicas > 1 {
        let db = gpuex::db::Db::connect(&database.url)
            .await
            .expect("connect to the bench database");
        let started = Instant::now();
        let engine = gpuex::market::restore::load(&db, gpuex::engine::EngineConfig::default())
            .await
            .expect("the engine restores");
        let took = started.elapsed();
        let leases = engine.leases().count();
        db.close().await;
        Some((took, leases))
    } else {
        None
    };
    database.drop_now().await;

    let created = samples.iter().filter(|s| s.status == 201).count();
    let unfilled = samples
        .iter()
        .filter(|s| s.status == 201 && !s.filled)
        .count();
    let refused = samples.len() - created;
    if refused > 0 || unfilled > 0 {
        eprintln!(
            "  {}: {refused} of {} orders not answered 201, {unfilled} accepted but not filled",
            deployment.name,
            samples.len()
        );
    }
    let by_role = (addresses.len() > 1).then(|| {
        let leader = leader.expect("a leader");
        let of = |to_leader: bool| {
            percentiles(
                samples
                    .iter()
                    .filter(|s| (s.replica == leader) == to_leader)
                    .map(|s| s.took)
                    .collect(),
            )
        };
        [of(true), of(false)]
    });
    let (p50, p99) = percentiles(samples.iter().map(|s| s.took).collect());
    Figures {
        orders_per_s: created as f64 / elapsed.as_secs_f64(),
        p50,
        p99,
        by_role,
        cores,
        rebuild,
        row_lag,
        reads,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo test --benches` runs this without `--bench`: minutes of load
    // have no place in a test run.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("scale_out is a benchmark: run it with `cargo bench --bench scale_out`");
        return;
    }
    let Some(postgres_base) = postgres_base_url() else {
        eprintln!(
            "SKIPPED: the scale-out bench needs PostgreSQL; set GPUEX_BENCH_POSTGRES_URL \
             (or GPUEX_TEST_POSTGRES_URL), e.g. postgres://postgres@127.0.0.1:5432/test"
        );
        return;
    };
    let rounds = knob("GPUEX_BENCH_ROUNDS", 1).max(1);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client");
    println!(
        "scale_out: {} in flight, {} s measured per deployment after {} s warm-up, {} nodes",
        knob("GPUEX_BENCH_IN_FLIGHT", 32),
        knob("GPUEX_BENCH_SECONDS", 20),
        knob("GPUEX_BENCH_WARMUP_SECONDS", 5),
        knob("GPUEX_BENCH_NODES", 600)
    );
    for round in 1..=rounds {
        let figures: Vec<Figures> = DEPLOYMENTS
            .iter()
            .map(|d| rt.block_on(measure(&client, d, &postgres_base)))
            .collect();
        let baseline = figures[0].orders_per_s;
        println!("\nround {round}");
        println!("| deployment | orders/s | p50 | p99 | orders/s against PostgreSQL, 1 replica |");
        println!("| --- | --- | --- | --- | --- |");
        for (d, f) in DEPLOYMENTS.iter().zip(&figures) {
            println!(
                "| {} | {:.0} | {} | {} | {:.2} |",
                d.name,
                f.orders_per_s,
                ms(f.p50),
                ms(f.p99),
                f.orders_per_s / baseline
            );
        }
        if let Some([(leader_p50, leader_p99), (follower_p50, follower_p99)]) = figures[1].by_role {
            println!(
                "3 replicas, sent to the leader: p50 {} p99 {}; sent to a follower (forwarded): p50 {} p99 {}",
                ms(leader_p50),
                ms(leader_p99),
                ms(follower_p50),
                ms(follower_p99)
            );
        }
        for (d, f) in DEPLOYMENTS.iter().zip(&figures) {
            if let Some((took, leases)) = f.rebuild {
                println!(
                    "{}: one restore of the final database ({leases} leases), what a follower does once at start: {}",
                    d.name,
                    ms(took)
                );
            }
        }
        for (d, f) in DEPLOYMENTS.iter().zip(&figures) {
            if let Some(cores) = &f.cores {
                let each: Vec<String> = cores.replicas.iter().map(|c| format!("{c:.2}")).collect();
                println!(
                    "{}: cores busy: replicas (leader first) {}, bench client {:.2}, whole machine {:.2}",
                    d.name,
                    each.join(" + "),
                    cores.client,
                    cores.machine
                );
            }
        }
        for (d, f) in DEPLOYMENTS.iter().zip(&figures) {
            if let Some((p50, p99, rows)) = f.row_lag {
                println!(
                    "{}: follower row lag (the leader's commit to the follower's engine) p50 <= {:.0} ms, p99 <= {:.0} ms, over {rows:.0} rows applied",
                    d.name,
                    p50 * 1000.0,
                    p99 * 1000.0
                );
            }
        }
        if let Some([leader, follower]) = &figures[1].reads {
            println!(
                "reads (book and order list, alone on one replica): leader {:.0}/s at {:.3} CPU ms each; follower {:.0}/s at {:.3} CPU ms each; follower / leader CPU per read {:.2}",
                leader.reads_per_s,
                leader.cpu_ms_per_read,
                follower.reads_per_s,
                follower.cpu_ms_per_read,
                follower.cpu_ms_per_read / leader.cpu_ms_per_read
            );
        }
        let ratio = |a: &Figures, b: &Figures| {
            format!(
                "orders/s {:.2}, p50 {:.2}, p99 {:.2}",
                a.orders_per_s / b.orders_per_s,
                a.p50.as_secs_f64() / b.p50.as_secs_f64(),
                a.p99.as_secs_f64() / b.p99.as_secs_f64()
            )
        };
        println!(
            "3 replicas round-robin / 1 replica (PostgreSQL): {}",
            ratio(&figures[1], &figures[0])
        );
        println!(
            "3 replicas all to the leader / 1 replica:       {}",
            ratio(&figures[2], &figures[0])
        );
        println!(
            "PostgreSQL / SQLite (1 replica each):          {}",
            ratio(&figures[0], &figures[3])
        );
    }
}
