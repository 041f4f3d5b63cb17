//! The market at fleet scale, end to end (issue 38): one `gpuex serve` on
//! PostgreSQL, a simulated fleet heartbeating at the real interval, standing
//! spot bids, and buyers placing mixed orders over HTTP. The same run at a
//! small fleet and a large one gives the ratio the issue asks for.
//!
//! ```text
//! GPUEX_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench --bench market_scale
//! ```
//!
//! For each fleet size (`GPUEX_BENCH_FLEETS`, GPUs, default `1000,100000`;
//! nodes of 8 shared H100s):
//! 1. the nodes are created, marked simulated and registered, each with its
//!    own token (`market_scale/agents.rs`: one process speaks for every
//!    node, over a shared pool of connections);
//! 2. every node heartbeats every `GPUEX_BENCH_HEARTBEAT_S` (5, the server's
//!    default), carrying its 8 GPUs' metrics and the leases it runs, and
//!    carries out the assignments it gets back;
//! 3. the fleet is filled with `GPUEX_BENCH_LEASES_PER_GPU` (1.5) long
//!    on-demand leases, and `GPUEX_BENCH_SPOT_BIDS` (10,000) spot bids are
//!    queued for the fleet's one A100, held whole, so they stand;
//! 4. the server's CPU is read over `GPUEX_BENCH_SECONDS` (20) with every
//!    node beating, then over `GPUEX_BENCH_QUIET_S` (10) with the beats
//!    paused: the difference is what the fleet's heartbeats cost;
//! 5. buyers keep `GPUEX_BENCH_IN_FLIGHT` (32) mixed orders in flight
//!    (on-demand, reserved an hour ahead, spot) for `GPUEX_BENCH_SECONDS`;
//! 6. the server's resident memory is read, with the live leases counted.
//!
//! With `GPUEX_BENCH_SEEDED=1` it measures memory at fleet scale instead
//! (`market_scale/seeded.rs`): the restore bench's filled fleet written as
//! rows, restored by the server, heartbeating and taking orders.
//!
//! Progress shows in the terminal; a table of every fleet and the ratios
//! against the first close the run. `GPUEX_TEST_POSTGRES_URL` serves too;
//! with neither, the bench says so and measures nothing. Open files: the
//! agents share `GPUEX_BENCH_AGENT_CONNECTIONS` (256) connections, far
//! under the 20,000 a process may hold here.

use futures::StreamExt;
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

const ADMIN_EMAIL: &str = "admin@bench.test";
const ADMIN_PASSWORD: &str = "bench-password-1";
const JWT_SECRET: &str = "bench-secret-known-to-the-bench";
const METRICS_TOKEN: &str = "bench-metrics-token";
const MODEL: &str = "H100-SXM5-80GB";
/// The first region of the restore bench's fleet, which the seeded run
/// serves (`crates/engine/benches/common/fleet.rs`).
const REGION: &str = "eu";
/// What the standing spot bids ask for: one node has one, held whole.
const STANDING_MODEL: &str = "A100-SXM4-80GB";

#[path = "market_scale/agents.rs"]
mod agents;
#[path = "market_scale/buyers.rs"]
mod buyers;
// Shared with the scale-out bench, which uses the rest of it.
#[allow(dead_code)]
#[path = "scale_out/cpu.rs"]
mod cpu;
#[path = "scale_out/deploy.rs"]
mod deploy;
#[path = "market_scale/report.rs"]
mod report;
// The restore bench's fleet and rows, for the seeded run.
#[path = "../crates/engine/benches/common/fleet.rs"]
mod fleet;
#[path = "restore/rows.rs"]
mod rows;
#[path = "market_scale/seeded.rs"]
mod seeded;

use deploy::{knob, postgres_base_url, Database, Replica};

#[derive(Clone, Copy, PartialEq)]
enum Backend {
    Postgres,
    #[allow(dead_code)] // deploy.rs serves the scale-out bench's SQLite run too
    Sqlite,
}

/// Sends `body` with `method`, asserting a 2xx answer; returns its JSON.
async fn send(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    token: Option<&str>,
    body: &Value,
) -> Value {
    let mut req = client.request(method.clone(), url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let response = req.send().await.expect("an answer");
    let status = response.status();
    let body = response.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{method} {url}: {status} {body}");
    body
}

async fn login(client: &reqwest::Client, base: &str, email: &str) -> String {
    let body = json!({"email": email, "password": ADMIN_PASSWORD});
    let r = send(
        client,
        reqwest::Method::POST,
        &format!("{base}/v1/auth/login"),
        None,
        &body,
    )
    .await;
    r["access_token"].as_str().expect("a token").to_owned()
}

async fn wait_ready(client: &reqwest::Client, replica: &Replica) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while replica.role(client).await.is_none() {
        assert!(Instant::now() < deadline, "the server did not answer ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The parties: an admin, a provider and a credited buyer, with the region
/// and list prices set.
struct Parties {
    admin: String,
    provider: String,
    buyer: String,
}

async fn parties(client: &reqwest::Client, base: &str) -> Parties {
    use reqwest::Method;
    let admin = login(client, base, ADMIN_EMAIL).await;
    let region = json!({"timezone": "UTC"});
    send(
        client,
        Method::PUT,
        &format!("{base}/v1/admin/regions/{REGION}"),
        Some(&admin),
        &region,
    )
    .await;
    let prices = json!([
        {"region": REGION, "gpu_model": MODEL, "unit": "tflops_h", "list_price": "0.002"},
        {"region": REGION, "gpu_model": MODEL, "unit": "vram_h", "list_price": "0.05"},
        {"region": REGION, "gpu_model": STANDING_MODEL, "unit": "tflops_h", "list_price": "0.002"},
        {"region": REGION, "gpu_model": STANDING_MODEL, "unit": "vram_h", "list_price": "0.05"}
    ]);
    send(
        client,
        Method::PUT,
        &format!("{base}/v1/admin/prices"),
        Some(&admin),
        &prices,
    )
    .await;
    for (email, role) in [("p@bench.test", "provider"), ("b@bench.test", "buyer")] {
        let body = json!({"email": email, "password": ADMIN_PASSWORD, "name": "b", "role": role});
        send(
            client,
            Method::POST,
            &format!("{base}/v1/auth/register"),
            None,
            &body,
        )
        .await;
    }
    let provider = login(client, base, "p@bench.test").await;
    let buyer = login(client, base, "b@bench.test").await;
    let me = client
        .get(format!("{base}/v1/me"))
        .bearer_auth(&buyer)
        .send()
        .await
        .expect("me");
    let me: Value = me.json().await.expect("json");
    let credit = json!({"user_id": me["id"], "amount": "999999999"});
    send(
        client,
        Method::POST,
        &format!("{base}/v1/admin/credits"),
        Some(&admin),
        &credit,
    )
    .await;
    Parties {
        admin,
        provider,
        buyer,
    }
}

/// Resident and peak memory of a process, in MiB, from `/proc/<pid>/status`.
fn memory_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Live leases and queued spot bids, read from the database.
async fn census(database_url: &str) -> (i64, i64) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(database_url)
        .await
        .expect("connect to the bench database");
    let leases: i64 =
        sqlx::query_scalar("SELECT count(*) FROM leases WHERE state NOT IN ('ended', 'failed')")
            .fetch_one(&mut conn)
            .await
            .unwrap_or(-1);
    let bids: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM orders WHERE mode = 'spot' AND state IN ('open', 'queued')",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap_or(-1);
    (leases, bids)
}

/// A server for a simulated fleet beating every `heartbeat_s` over
/// `connections` shared connections.
fn fleet_server(database_url: &str, heartbeat_s: u64, connections: u64) -> Replica {
    Replica::start(
        database_url,
        &[
            ("GPUEX_HEARTBEAT_INTERVAL_S", heartbeat_s.to_string()),
            // The simulated agents share one pool from one address.
            ("GPUEX_MAX_CONNECTIONS", (connections + 1024).to_string()),
            (
                "GPUEX_NODE_TIMEOUT_S",
                (heartbeat_s * 6).max(30).to_string(),
            ),
        ],
    )
}

/// One fleet's run, start to end.
async fn run_fleet(client: &reqwest::Client, postgres_base: &str, gpus: u64) -> report::Figures {
    let nodes = gpus.div_ceil(8) as usize;
    let heartbeat_s = knob("GPUEX_BENCH_HEARTBEAT_S", 5);
    let connections = knob("GPUEX_BENCH_AGENT_CONNECTIONS", 256);
    let database = Database::create(Backend::Postgres, postgres_base).await;
    let mut server = fleet_server(&database.url, heartbeat_s, connections);
    wait_ready(client, &server).await;
    let base = server.address.clone();
    let pid = server.child.id().expect("the server's pid");
    let parties = parties(client, &base).await;

    let phase = Instant::now();
    let fleet = agents::Fleet::create(&base, &parties, nodes, connections).await;
    eprintln!(
        "  {nodes} nodes enrolled in {:.1}s",
        phase.elapsed().as_secs_f64()
    );
    let beating = fleet.start(Duration::from_secs(heartbeat_s));
    let leases_wanted = (gpus as f64 * knob("GPUEX_BENCH_LEASES_PER_GPU", 1.5)) as usize;
    let phase = Instant::now();
    let buyer = &parties.buyer;
    let filled = buyers::place_many(
        client,
        &base,
        buyer,
        leases_wanted,
        "fill leases",
        buyers::fill_order,
    )
    .await
    .filled;
    eprintln!(
        "  {filled} of {leases_wanted} fill orders filled in {:.1}s",
        phase.elapsed().as_secs_f64()
    );
    let phase = Instant::now();
    buyers::occupy_standing_model(client, &base, &parties.buyer).await;
    let bids_wanted = knob("GPUEX_BENCH_SPOT_BIDS", 10_000) as usize;
    let bids = buyers::place_many(
        client,
        &base,
        buyer,
        bids_wanted,
        "spot bids",
        buyers::standing_bid,
    )
    .await
    .accepted;

    eprintln!(
        "  {bids} spot bids placed in {:.1}s",
        phase.elapsed().as_secs_f64()
    );
    let heartbeats = agents::heartbeat_cost(&beating, pid, heartbeat_s).await;
    let wall = Duration::from_secs(knob("GPUEX_BENCH_SECONDS", 20));
    let in_flight = knob("GPUEX_BENCH_IN_FLIGHT", 32) as usize;
    let orders = buyers::load(client, &base, &parties.buyer, in_flight, wall).await;
    let (rss, peak) = memory_mib(pid);
    let (live, queued) = census(&database.url).await;
    let beats = beating.stop().await;

    let _ = server.child.kill().await;
    database.drop_now().await;
    report::Figures {
        gpus,
        nodes,
        filled,
        bids_placed: bids,
        live_leases: live,
        queued_bids: queued,
        orders,
        heartbeats,
        heartbeat_errors: beats.errors,
        rss_mib: rss,
        peak_mib: peak,
    }
}

#[tokio::main]
async fn main() {
    let Some(postgres_base) = postgres_base_url() else {
        eprintln!(
            "market_scale: set GPUEX_BENCH_POSTGRES_URL (or GPUEX_TEST_POSTGRES_URL) to a \
             PostgreSQL server; nothing measured"
        );
        return;
    };
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .expect("an HTTP client");
    if std::env::var("GPUEX_BENCH_SEEDED").is_ok_and(|v| v == "1") {
        let figures = seeded::run(&client, &postgres_base).await;
        println!("{}", seeded::report(&figures));
        return;
    }
    let fleets: Vec<u64> = std::env::var("GPUEX_BENCH_FLEETS")
        .unwrap_or_else(|_| "1000,100000".into())
        .split(',')
        .filter_map(|g| g.trim().parse().ok())
        .collect();
    let mut figures = Vec::new();
    for gpus in fleets {
        eprintln!("\n== {gpus} GPUs ==");
        figures.push(run_fleet(&client, &postgres_base, gpus).await);
        // Every fleet so far, so a long run that is stopped still tells.
        println!("{}", report::table(&figures));
    }
}
