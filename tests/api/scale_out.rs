//! Scale-out on PostgreSQL (ARCHITECTURE.md §12): three `gpuex serve` processes on
//! one database, real agents connected to different replicas, orders sent
//! round-robin to all three, and the leader killed with kill -9 ten times
//! next leader. Nothing acknowledged is lost, the ledger balances, no slice
//! is promised twice, leases keep running and being billed, and no replica,
//! not even one started during the load, answers 500.
//!
//! PostgreSQL only: on SQLite one process always leads.

use crate::agent_process::{agent_binary, uid_pool_of};
use crate::fleet::{self, create_node, eventually, lease, market, node_view};
use crate::helpers::{
    fresh_postgres_database, postgres_base_url, TestApp, ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET,
    METRICS_TOKEN,
};
use crate::sse::SseStream;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};
use uuid::Uuid;

/// How many times the load's leader is killed.
const KILLS: usize = 10;

/// One `gpuex serve` process.
pub(crate) struct Replica {
    pub(crate) address: String,
    listen: String,
    pub(crate) child: Option<Child>,
}

impl Replica {
    pub(crate) fn start(database_url: &str) -> Replica {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let listen = format!("127.0.0.1:{port}");
        let mut replica = Replica {
            address: format!("http://{listen}"),
            listen,
            child: None,
        };
        replica.spawn(database_url);
        replica
    }

    /// Starts (or starts again, on the same port) the process.
    fn spawn(&mut self, database_url: &str) {
        let child = Command::new(env!("CARGO_BIN_EXE_gpuex"))
            .args(["serve", "--listen", &self.listen])
            .env("DATABASE_URL", database_url)
            .env("GPUEX_JWT_SECRET", JWT_SECRET)
            .env("GPUEX_ADMIN_EMAIL", ADMIN_EMAIL)
            .env("GPUEX_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("GPUEX_METRICS_TOKEN", METRICS_TOKEN)
            .env("GPUEX_WEBHOOK_ALLOW_PRIVATE", "true")
            .env("GPUEX_RATE_LIMIT_RPS", "1000000")
            .env("GPUEX_RATE_LIMIT_BURST", "1000000")
            .env("GPUEX_RATE_LIMIT_ADDRESS_RPS", "1000000")
            .env("GPUEX_RATE_LIMIT_ADDRESS_BURST", "1000000")
            .env("GPUEX_REGISTER_PER_HOUR", "1000000")
            .env("GPUEX_BILLING_INTERVAL_S", "2")
            // Warnings and the market's role changes, for a failure's story.
            .env("RUST_LOG", "warn,gpuex::cluster=info,gpuex::market=info")
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn gpuex serve");
        self.child = Some(child);
    }

    /// kill -9.
    pub(crate) async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("kill -9 the replica");
        }
    }

    /// `/readyz`'s role, or `None` while it does not answer ready.
    pub(crate) async fn role(&self, client: &reqwest::Client) -> Option<String> {
        let r = client
            .get(format!("{}/readyz", self.address))
            .send()
            .await
            .ok()?;
        if !r.status().is_success() {
            return None;
        }
        let body: Value = r.json().await.ok()?;
        body["role"].as_str().map(str::to_owned)
    }
}

/// An order some replica acknowledged (201).
#[derive(Debug, Clone)]
struct Ack {
    order: Uuid,
    lease: Option<Uuid>,
    at: Instant,
}

/// What the load saw.
#[derive(Default)]
struct Seen {
    acks: Mutex<Vec<Ack>>,
    server_errors: Mutex<Vec<String>>,
    unavailable: AtomicUsize,
}

/// Places one order, trying the replicas round-robin from `first` with the
/// same `Idempotency-Key` on 503 or a refused connection.
async fn place_one(
    client: &reqwest::Client,
    addresses: &[String],
    first: usize,
    buyer: &str,
    seen: &Seen,
) {
    let key = Uuid::new_v4().to_string();
    // Waiting up to two minutes for a slice, it is accepted (open) even
    // while the agents' reports of ended leases, delayed by the failover,
    // have not freed capacity yet.
    let body = json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 4},
                      "region": "eu-west", "duration_s": 60, "max_wait_s": 120,
                      "command": "echo hi"});
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut target = first;
    while Instant::now() < deadline {
        let sent = client
            .post(format!("{}/v1/orders", addresses[target % addresses.len()]))
            .bearer_auth(buyer)
            .header("idempotency-key", &key)
            .json(&body)
            .send()
            .await;
        target += 1;
        let Ok(response) = sent else {
            // A killed replica: the next one, with the same key.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        if status == StatusCode::CREATED {
            seen.acks.lock().unwrap().push(Ack {
                order: answer["id"].as_str().unwrap().parse().unwrap(),
                lease: answer["lease_id"].as_str().map(|l| l.parse().unwrap()),
                at: Instant::now(),
            });
            return;
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            seen.unavailable.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        if status.is_server_error() {
            seen.server_errors
                .lock()
                .unwrap()
                .push(format!("{status}: {answer}"));
        }
        // Refused (no capacity left, …): not acknowledged, not lost.
        return;
    }
}

/// A real agent (simulated GPUs) talking to one replica.
fn start_agent(server: &str, token: &str, spool: &std::path::Path) -> Child {
    let fleet: PathBuf = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/node-agent/fleets/h100-mig.toml"
    )
    .into();
    Command::new(agent_binary())
        .args(["--server", server])
        .env("GPUEX_AGENT_TOKEN", token)
        .args(["--backend", "simulated", "--hostname", "scale-out-agent"])
        .arg("--fleet")
        .arg(fleet)
        .arg("--spool")
        .arg(spool)
        .args(["--heartbeat-interval", "1s", "--usage-interval", "1s"])
        .args(["--node-timeout", "20s", "--stop-grace", "1s"])
        .args(["--uid-pool", &uid_pool_of(spool)])
        .env("GPUEX_AGENT_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn gpuex-agent")
}

/// `count` replicas on `database_url`, each answering `/readyz`. Started at
/// once: they take turns on migrations and the bootstrap.
pub(crate) async fn ready_replicas(
    client: &reqwest::Client,
    database_url: &str,
    count: usize,
) -> Vec<Replica> {
    let replicas: Vec<Replica> = (0..count).map(|_| Replica::start(database_url)).collect();
    for r in &replicas {
        eventually(60, "every replica to be ready", || async {
            r.role(client).await.is_some()
        })
        .await;
    }
    replicas
}

/// `count` ready replicas on a fresh PostgreSQL database, and a client for
/// them: `None` where no PostgreSQL is configured (outside CI; under CI its
/// absence fails the test).
pub(crate) async fn replicas_on_a_fresh_database(
    count: usize,
) -> Option<(reqwest::Client, String, Vec<Replica>)> {
    postgres_base_url()?;
    let database_url = fresh_postgres_database().await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let replicas = ready_replicas(&client, &database_url, count).await;
    Some((client, database_url, replicas))
}

/// The replica that leads now, waiting up to `secs` for one.
pub(crate) async fn leader(client: &reqwest::Client, replicas: &[Replica], secs: u64) -> usize {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        for (i, r) in replicas.iter().enumerate() {
            if r.child.is_some() && r.role(client).await.as_deref() == Some("leader") {
                return i;
            }
        }
        assert!(Instant::now() < deadline, "no replica leads");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long after `killed` the first order was acknowledged.
async fn first_ack_after(seen: &Seen, killed: Instant) -> Duration {
    let deadline = killed + Duration::from_secs(60);
    loop {
        if let Some(at) = seen
            .acks
            .lock()
            .unwrap()
            .iter()
            .map(|a| a.at)
            .filter(|at| *at > killed)
            .min()
        {
            return at - killed;
        }
        assert!(
            Instant::now() < deadline,
            "no order accepted after the kill"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What the buyer was charged for `lease` so far.
async fn charged(db: &gpuex::db::Db, lease: Uuid) -> rust_decimal::Decimal {
    let amounts: Vec<gpuex::db::Money> = gpuex::db::dispatch!(db, pool => {
        sqlx::query_scalar("SELECT amount FROM charges WHERE lease_id = $1")
            .bind(lease)
            .fetch_all(pool)
            .await
    })
    .unwrap();
    amounts.into_iter().map(|m| m.0).sum()
}

const WORKLOAD: &str = "while true; do echo tick; sleep 0.5; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_lose_nothing_when_the_leader_is_killed_ten_times() {
    let Some((client, database_url, mut replicas)) = replicas_on_a_fresh_database(3).await else {
        return;
    };
    let first_leader = leader(&client, &replicas, 10).await;
    let roles: Vec<Option<String>> =
        futures::future::join_all(replicas.iter().map(|r| r.role(&client))).await;
    assert_eq!(
        roles
            .iter()
            .filter(|r| r.as_deref() == Some("leader"))
            .count(),
        1,
        "one leader: {roles:?}"
    );
    let apps: Vec<TestApp> = replicas
        .iter()
        .map(|r| TestApp::external(&r.address, &database_url))
        .collect();
    let (follower_a, follower_b) = ((first_leader + 1) % 3, (first_leader + 2) % 3);
    // Set up through a follower: prices and credit reach the leader.
    let m = market(&apps[follower_a]).await;
    let (buyer, buyer_id) = apps[follower_b].user("buyer").await;
    let r = apps[follower_b].credit(&m.admin, buyer_id, "1000000").await;
    assert!(r.status.is_success(), "{}", r.body);
    // An agent on each follower.
    let spools = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut agents = Vec::new();
    for (i, on) in [follower_a, follower_b].into_iter().enumerate() {
        let node = create_node(
            &apps[on],
            &m.provider,
            json!({"name": format!("sim-{i}"), "region": "eu-west"}),
        )
        .await;
        agents.push(start_agent(
            &replicas[on].address,
            &node.token,
            spools[i].path(),
        ));
        eventually(30, "the agent to register", || async {
            node_view(&apps[on], &m.provider, node.id).await["status"] == "online"
        })
        .await;
    }
    // The buyer's event streams on a follower and on the leader hear the
    // leader's commits alike.
    let mut streams = Vec::new();
    for on in [follower_b, first_leader] {
        let url = format!("{}/v1/events/stream", replicas[on].address);
        streams.push(SseStream::open(&client, &url, Some(&m.buyer), None).await);
    }
    // Two leases that run through every failover.
    let mut long = Vec::new();
    for app in [&apps[follower_a], &apps[first_leader]] {
        let mut body = fleet::order("on_demand");
        body["command"] = json!(WORKLOAD);
        long.push(fleet::place(app, &m.buyer, body).await);
    }
    for id in &long {
        eventually(30, "the long lease to run", || async {
            lease(&apps[follower_a], &m.buyer, *id).await["state"] == "running"
        })
        .await;
    }
    for (stream, on) in streams.iter_mut().zip(["a follower", "the leader"]) {
        let mut running = Vec::new();
        while running.len() < long.len() {
            let event = stream
                .next(Duration::from_secs(10))
                .await
                .unwrap_or_else(|| panic!("the stream on {on} heard {running:?} only"));
            if event.event.as_deref() == Some("lease.running") {
                running.push(event.data["lease_id"].clone());
            }
        }
        for id in &long {
            assert!(
                running.contains(&json!(id)),
                "{on} missed {id}: {running:?}"
            );
        }
    }
    drop(streams);

    // The load: three senders, each one order at a time, round-robin.
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    let addresses: Vec<String> = replicas.iter().map(|r| r.address.clone()).collect();
    let senders: Vec<_> = (0..3)
        .map(|worker| {
            let (client, addresses, seen, stop, buyer) = (
                client.clone(),
                addresses.clone(),
                seen.clone(),
                stop.clone(),
                buyer.clone(),
            );
            tokio::spawn(async move {
                let mut n = worker;
                while !stop.load(Ordering::Relaxed) {
                    place_one(&client, &addresses, n, &buyer, &seen).await;
                    n += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(3)).await;

    let db = gpuex::db::Db::connect(&database_url).await.unwrap();
    let mut failovers = Vec::new();
    let mut killed_leader = first_leader;
    for round in 1..=KILLS {
        let killed = Instant::now();
        replicas[killed_leader].kill().await;
        let took = first_ack_after(&seen, killed).await;
        let next = leader(&client, &replicas, 30).await;
        assert_ne!(next, killed_leader);
        eprintln!(
            "failover {round}: kill -9 of the leader to the first order accepted: {:.2} s",
            took.as_secs_f64()
        );
        failovers.push(took);
        // Started again during the load, as a follower; it never answers 500.
        replicas[killed_leader].spawn(&database_url);
        tokio::time::sleep(Duration::from_secs(3)).await;
        killed_leader = next;
    }
    let billed_before: Vec<_> =
        futures::future::join_all(long.iter().map(|l| charged(&db, *l))).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    for sender in senders {
        sender.await.unwrap();
    }

    let server_errors = seen.server_errors.lock().unwrap().clone();
    assert!(server_errors.is_empty(), "answered 5xx: {server_errors:?}");
    let acks = seen.acks.lock().unwrap().clone();
    eprintln!(
        "{} orders acknowledged, {} answers were 503 and retried",
        acks.len(),
        seen.unavailable.load(Ordering::Relaxed)
    );
    assert!(acks.len() > 10, "the load placed orders: {}", acks.len());
    let mut sorted = failovers.clone();
    sorted.sort();
    let at = |q: f64| {
        // Nearest rank.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1].as_secs_f64()
    };
    eprintln!(
        "failover over {KILLS} kills: p50 {:.2} s, p99 {:.2} s, each {:?}",
        at(0.5),
        at(0.99),
        failovers
            .iter()
            .map(|t| (t.as_secs_f64() * 100.0).round() / 100.0)
            .collect::<Vec<_>>()
    );
    for took in &failovers {
        // Target 10 s; a loose bound, as timing on a small shared VM varies.
        assert!(*took <= Duration::from_secs(30), "failover took {took:?}");
    }
    // Every acknowledged order and lease is found, on any replica.
    for (i, ack) in acks.iter().enumerate() {
        let app = &apps[i % 3];
        let r = app
            .get(&format!("/v1/orders/{}", ack.order), Some(&buyer))
            .await;
        assert_eq!(
            r.status,
            StatusCode::OK,
            "order {} is lost: {}",
            ack.order,
            r.body
        );
        if let Some(lease_id) = ack.lease {
            let r = app
                .get(&format!("/v1/leases/{lease_id}"), Some(&buyer))
                .await;
            assert_eq!(
                r.status,
                StatusCode::OK,
                "lease {lease_id} is lost: {}",
                r.body
            );
        }
    }
    // The ledger balances; no slice is promised twice.
    assert_eq!(
        gpuex::billing::ledger::trial_balance(&db).await.unwrap(),
        rust_decimal::Decimal::ZERO,
        "accounts sum to zero"
    );
    let engine = gpuex::market::restore::load(&db, gpuex::engine::EngineConfig::default())
        .await
        .expect("the engine restores from what the leaders committed");
    engine.validate().expect("no slice is promised twice");
    // The long leases still run, and billing goes on under the last leader.
    for (id, before) in long.iter().zip(billed_before) {
        assert_eq!(lease(&apps[0], &m.buyer, *id).await["state"], "running");
        eventually(30, "the long lease to be billed again", || async {
            charged(&db, *id).await > before
        })
        .await;
    }
    db.close().await;
    for mut agent in agents {
        let _ = agent.kill().await;
    }
    for r in &mut replicas {
        r.kill().await;
    }
}

/// The fence under the advisory lock: a leader whose epoch was replaced
/// commits nothing more, and the new leader's epoch update waits for the
/// old leader's batch in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_leader_can_commit_nothing_more() {
    if postgres_base_url().is_none() {
        return;
    }
    let url = fresh_postgres_database().await;
    let db = gpuex::db::Db::connect(&url).await.unwrap();
    db.migrate().await.unwrap();
    let elect = |epoch: i64| {
        let db = db.clone();
        async move {
            gpuex::db::dispatch!(db, pool => {
                sqlx::query(
                    "INSERT INTO market_leader (shard, epoch, leader_url, since) \
                     VALUES (0, $1, 'http://a', now()) \
                     ON CONFLICT (shard) DO UPDATE SET epoch = EXCLUDED.epoch",
                )
                .bind(epoch)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
            })
            .unwrap();
        }
    };
    elect(1).await;
    // The first leader's batch, in flight: its fence holds the row.
    let mut batch = db.begin().await.unwrap();
    gpuex::cluster::fence(&mut batch, 1)
        .await
        .expect("epoch 1 leads");
    let successor = tokio::spawn(elect(2));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !successor.is_finished(),
        "the new epoch waits for the batch in flight"
    );
    batch.commit().await.unwrap();
    successor.await.unwrap();
    // Every batch of the old leader after that is refused.
    let mut late = db.begin().await.unwrap();
    let refused = gpuex::cluster::fence(&mut late, 1)
        .await
        .expect_err("epoch 1 no longer leads");
    assert!(
        refused.downcast_ref::<gpuex::cluster::Fenced>().is_some(),
        "{refused:?}"
    );
    drop(late);
    let mut next = db.begin().await.unwrap();
    gpuex::cluster::fence(&mut next, 2)
        .await
        .expect("epoch 2 leads");
    drop(next);
    db.close().await;
}

/// A leader whose election connection is cut (here by the database
/// itself) stops leading, takes the lock again on a new connection, with a
/// new epoch, and serves engine commands as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_loses_its_election_connection_leads_again_under_a_new_epoch() {
    if postgres_base_url().is_none() {
        return;
    }
    let app = TestApp::spawn(crate::helpers::Backend::Postgres).await;
    let epoch = "SELECT epoch FROM market_leader WHERE shard = 0";
    assert_eq!(fleet::scalar(&app, epoch).await, 1);
    let cut = fleet::scalar(
        &app,
        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = 'gpuex-leader-election' AND datname = current_database()) t",
    )
    .await;
    assert_eq!(cut, 1, "the leader's election connection");
    eventually(15, "the leader to take the lock again", || async {
        fleet::scalar(&app, epoch).await == 2
    })
    .await;
    eventually(15, "the replica to lead again", || async {
        app.get("/readyz", None).await.body["role"] == "leader"
    })
    .await;
    // Engine commands go through: the admin's prices reach the engine.
    let admin = app.admin().await;
    app.seed_prices(&admin).await;
    let (buyer, buyer_id) = app.user("buyer").await;
    assert!(app
        .credit(&admin, buyer_id, "100")
        .await
        .status
        .is_success());
    let quote = app
        .post(
            "/v1/quotes",
            Some(&buyer),
            json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 4}, "region": "eu-west"}),
        )
        .await;
    assert_ne!(quote.status.as_u16(), 503, "{}", quote.body);
    assert!(quote.status.as_u16() < 500, "{}", quote.body);
}
