//! Event streams under load (issue 24), a load script rather than a
//! criterion bench, since what it reports are distributions and ratios of
//! whole phases. The real `gpuex` binary runs on SQLite in its own process;
//! this process places orders (32 in flight) and holds the stream clients.
//!
//! 1. Memory: the server's resident memory before and after opening the
//!    streams on accounts that stay quiet, divided by their number.
//! 2. Throughput: orders per second in alternating phases with no stream
//!    open and with every stream open and receiving, the same buyers
//!    ordering in both; the ratio is taken between neighbouring phases.
//! 3. Delay: for each event a stream receives, its arrival less the reply
//!    to the order that caused it. The commit happened between the request
//!    and the reply, so the true commit-to-client delay lies between this
//!    figure and arrival less request; both are given.
//!
//! `cargo bench --bench streams` (`GPUEX_BENCH_STREAMS` streams, default
//! 1,000, over `GPUEX_BENCH_BUYERS` buyers, default 1,000;
//! `GPUEX_BENCH_PHASE_S` seconds a phase, default 5).

use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 32;
/// Nodes of 8 shared H100s, 160 of the bench's orders each.
const NODES: usize = 700;
const PASSWORD: &str = "bench-password-1";

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Server {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Server {
    /// CPU seconds the server process has used (user and system).
    fn cpu_s(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace()
            .collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        // utime and stime are fields 14 and 15 of the line, in clock ticks of 1/100 s.
        (ticks(11) + ticks(12)) / 100.0
    }

    /// Resident memory of the server process, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

async fn start() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--database-url")
        .arg(format!("sqlite://{}/bench.db", dir.path().display()))
        .env("GPUEX_ADMIN_EMAIL", "admin@bench.test")
        .env("GPUEX_ADMIN_PASSWORD", PASSWORD)
        .env("GPUEX_RATE_LIMIT_RPS", "1000000")
        .env("GPUEX_RATE_LIMIT_BURST", "1000000")
        .env("GPUEX_RATE_LIMIT_ADDRESS_RPS", "1000000")
        .env("GPUEX_RATE_LIMIT_ADDRESS_BURST", "1000000")
        .env("GPUEX_REGISTER_PER_HOUR", "1000000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start gpuex");
    let server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let client = reqwest::Client::new();
    for _ in 0..300 {
        let ready = client.get(format!("{}/readyz", server.base)).send().await;
        if ready.is_ok_and(|r| r.status().is_success()) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("gpuex did not start");
}

async fn post(client: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> Value {
    let mut req = client.post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("request");
    r.json().await.unwrap_or(Value::Null)
}

/// Registers and logs in a user; its token and id.
async fn user(client: &reqwest::Client, base: &str, email: &str, role: &str) -> (String, Value) {
    let r = post(
        client,
        &format!("{base}/v1/auth/register"),
        None,
        &json!({"email": email, "password": PASSWORD, "name": "bench", "role": role}),
    )
    .await;
    let login = post(
        client,
        &format!("{base}/v1/auth/login"),
        None,
        &json!({"email": email, "password": PASSWORD}),
    )
    .await;
    let token = login["access_token"].as_str().expect("token").to_owned();
    (token, r["id"].clone())
}

struct Market {
    buyers: Vec<String>,
    quiet: Vec<String>,
}

async fn market(client: &reqwest::Client, base: &str, buyers: usize) -> Market {
    let login = post(
        client,
        &format!("{base}/v1/auth/login"),
        None,
        &json!({"email": "admin@bench.test", "password": PASSWORD}),
    )
    .await;
    let admin = login["access_token"]
        .as_str()
        .expect("admin token")
        .to_owned();
    client
        .put(format!("{base}/v1/admin/regions/eu-west"))
        .bearer_auth(&admin)
        .json(&json!({"timezone": "UTC"}))
        .send()
        .await
        .expect("region");
    client.put(format!("{base}/v1/admin/prices")).bearer_auth(&admin)
        .json(&json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "0.002"},
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.05"}
        ])).send().await.expect("prices");
    let (provider, _) = user(client, base, "p@bench.test", "provider").await;
    let gpus: Vec<Value> = (0..8)
        .map(|i| json!({"index": i, "model": "H100-SXM5-80GB", "mode": "shared"}))
        .collect();
    for n in 0..NODES {
        post(
            client,
            &format!("{base}/v1/nodes"),
            Some(&provider),
            &json!({"name": format!("n{n}"), "region": "eu-west", "gpus": gpus,
                    "cpu_milli": 1_000_000, "memory_mib": 100_000_000}),
        )
        .await;
    }
    let made = futures::stream::iter(0..buyers * 2)
        .map(|i| {
            let (client, admin) = (client.clone(), admin.clone());
            async move {
                let (token, id) = user(&client, base, &format!("b{i}@bench.test"), "buyer").await;
                post(
                    &client,
                    &format!("{base}/v1/admin/credits"),
                    Some(&admin),
                    &json!({"user_id": id, "amount": "100000000"}),
                )
                .await;
                token
            }
        })
        .buffered(4)
        .collect::<Vec<_>>()
        .await;
    let (buyers, quiet) = made.split_at(buyers);
    Market {
        buyers: buyers.to_vec(),
        quiet: quiet.to_vec(),
    }
}

/// When each order was sent and answered.
type Sent = Arc<Mutex<HashMap<String, (Instant, Instant)>>>;
/// Each event's order and when a stream got it.
type Arrivals = Arc<Mutex<Vec<(String, Instant)>>>;

/// Places orders for `length`, round-robin over `buyers`; returns how many.
async fn place_for(
    client: &reqwest::Client,
    base: &str,
    buyers: &[String],
    length: Duration,
    sent: &Sent,
) -> usize {
    let until = Instant::now() + length;
    let order =
        json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 2, "vram_gb": 4}});
    let placed = futures::stream::iter(0..)
        .take_while(|_| futures::future::ready(Instant::now() < until))
        .map(|i: usize| {
            let (client, buyer, order, sent) = (
                client.clone(),
                buyers[i % buyers.len()].clone(),
                order.clone(),
                sent.clone(),
            );
            async move {
                let at = Instant::now();
                let r = post(&client, &format!("{base}/v1/orders"), Some(&buyer), &order).await;
                let Some(id) = r["id"].as_str().map(str::to_owned) else {
                    panic!("an order was refused: {r}");
                };
                sent.lock().expect("lock").insert(id, (at, Instant::now()));
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .count()
        .await;
    placed
}

/// Opens a stream and records, for each event, its order and arrival.
async fn open_stream(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    arrivals: Arrivals,
) -> tokio::task::JoinHandle<()> {
    let response = client
        .get(format!("{base}/v1/events/stream"))
        .bearer_auth(token)
        .send()
        .await
        .expect("stream");
    assert_eq!(response.status(), 200);
    tokio::spawn(async move {
        let mut response = response;
        let mut buffer = String::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            let now = Instant::now();
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                // The order id alone, without parsing the whole event, so the
                // clients take as little as they can of the shared CPU.
                const KEY: &str = "\"order_id\":\"";
                let Some(at) = block.find(KEY) else {
                    continue;
                };
                let order = &block[at + KEY.len()..];
                if let Some(order) = order.get(..36) {
                    arrivals.lock().expect("lock").push((order.to_owned(), now));
                }
            }
        }
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() {
    // `cargo bench` passes `--bench`; this script takes no arguments.
    let streams = setting("GPUEX_BENCH_STREAMS", 1000);
    let buyers = setting("GPUEX_BENCH_BUYERS", 1000);
    let phase = Duration::from_secs(setting("GPUEX_BENCH_PHASE_S", 5) as u64);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let server = start().await;
        let base = server.base.clone();
        let client = reqwest::Client::builder().pool_max_idle_per_host(usize::MAX).build().expect("client");
        let market = market(&client, &base, buyers).await;
        println!("streams: {streams} over {buyers} buyers; {IN_FLIGHT} orders in flight; {} s phases", phase.as_secs());

        // 1. Memory per idle stream, on accounts nothing happens to.
        let sent: Sent = Arc::default();
        place_for(&client, &base, &market.buyers, Duration::from_secs(2), &sent).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let before = server.rss_kib();
        let idle: Arrivals = Arc::default();
        let mut idle_streams = Vec::new();
        for i in 0..streams {
            idle_streams.push(open_stream(&client, &base, &market.quiet[i % market.quiet.len()], idle.clone()).await);
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let after = server.rss_kib();
        let per_stream = (after.saturating_sub(before)) as f64 / streams as f64;
        println!("memory: {before} KiB before, {after} KiB with {streams} idle streams: {per_stream:.1} KiB a stream");
        for s in idle_streams {
            s.abort();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;

        // 2 and 3. Alternating phases.
        let arrivals: Arrivals = Arc::default();
        let mut rates = Vec::new();
        for round in 0..6 {
            let with_streams = round % 2 == 1;
            let mut open = Vec::new();
            if with_streams {
                for i in 0..streams {
                    open.push(open_stream(&client, &base, &market.buyers[i % buyers], arrivals.clone()).await);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            let (started, cpu) = (Instant::now(), server.cpu_s());
            let placed = place_for(&client, &base, &market.buyers, phase, &sent).await;
            let rate = placed as f64 / started.elapsed().as_secs_f64();
            let cpu_ms = (server.cpu_s() - cpu) * 1000.0 / placed as f64;
            println!("phase {round}: {} streams open, {placed} orders, {rate:.0} orders/s, server CPU {cpu_ms:.3} ms an order",
                if with_streams { streams } else { 0 });
            rates.push((with_streams, rate, cpu_ms));
            // Let the last events arrive before the streams close.
            tokio::time::sleep(Duration::from_millis(500)).await;
            for s in open {
                s.abort();
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        // Each phase with streams against the mean of the phases either
        // side of it, since throughput drifts down as the database grows.
        let neighbours = |i: usize, field: fn(&(bool, f64, f64)) -> f64| {
            let around: Vec<f64> = [i.checked_sub(1), Some(i + 1)].into_iter().flatten()
                .filter_map(|j| rates.get(j)).map(field).collect();
            field(&rates[i]) / mean(&around)
        };
        let with: Vec<usize> = (0..rates.len()).filter(|&i| rates[i].0).collect();
        let speed: Vec<f64> = with.iter().map(|&i| neighbours(i, |r| r.1)).collect();
        let cost: Vec<f64> = with.iter().map(|&i| neighbours(i, |r| r.2)).collect();
        println!("with {streams} streams against the phases beside: orders/s ratio {:.3} ({speed:.3?}), server CPU per order ratio {:.3} ({cost:.3?})",
            mean(&speed), mean(&cost));

        let sent = sent.lock().expect("lock");
        let arrivals = arrivals.lock().expect("lock");
        let (mut after_reply, mut after_request) = (Vec::new(), Vec::new());
        for (order, at) in arrivals.iter() {
            if let Some((requested, replied)) = sent.get(order) {
                after_reply.push(at.saturating_duration_since(*replied).as_secs_f64() * 1000.0);
                after_request.push(at.duration_since(*requested).as_secs_f64() * 1000.0);
            }
        }
        after_reply.sort_by(f64::total_cmp);
        after_request.sort_by(f64::total_cmp);
        println!("delay, ms, over {} events received: after the reply p50 {:.2} p99 {:.2}; after the request p50 {:.2} p99 {:.2}",
            after_reply.len(), percentile(&after_reply, 0.5), percentile(&after_reply, 0.99),
            percentile(&after_request, 0.5), percentile(&after_request, 0.99));
    });
}
