//! The replicas, each a `gpuex serve` in its own namespace, and the buyers'
//! load: orders sent round-robin, each retried on the next replica with the
//! same `Idempotency-Key` until one acknowledges or refuses it.

use super::topology::Topology;
use crate::helpers::{ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET, METRICS_TOKEN};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use uuid::Uuid;

/// One `gpuex serve`, in namespace `r<i>`.
pub struct Replica {
    pub address: String,
    child: Option<Child>,
}

impl Replica {
    /// `ip netns exec` execs the server, so the child is gpuex itself and
    /// killing it (on drop too) kills the server.
    pub fn start(topology: &Topology, i: usize) -> Replica {
        let listen = topology.replica_listen(i);
        let mut child = Command::new("ip")
            .args(["netns", "exec", &topology.replica_ns(i)])
            .arg(env!("CARGO_BIN_EXE_gpuex"))
            .args(["serve", "--listen", &listen])
            .env("DATABASE_URL", topology.database_url())
            .env("GPUEX_JWT_SECRET", JWT_SECRET)
            .env("GPUEX_ADMIN_EMAIL", ADMIN_EMAIL)
            .env("GPUEX_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("GPUEX_METRICS_TOKEN", METRICS_TOKEN)
            .env("GPUEX_RATE_LIMIT_RPS", "1000000")
            .env("GPUEX_RATE_LIMIT_BURST", "1000000")
            .env("GPUEX_RATE_LIMIT_ADDRESS_RPS", "1000000")
            .env("GPUEX_RATE_LIMIT_ADDRESS_BURST", "1000000")
            .env("GPUEX_REGISTER_PER_HOUR", "1000000")
            .env("GPUEX_BILLING_INTERVAL_S", "2")
            // Warnings and the market's role changes, for a failure's story.
            .env("RUST_LOG", "warn,gpuex::cluster=info,gpuex::market=info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn gpuex serve in its namespace");
        // Three servers' logs interleave: each line says whose it is.
        let tag = format!("[r{i}]");
        tokio::spawn(relay(child.stdout.take().expect("stdout"), tag.clone()));
        tokio::spawn(relay(child.stderr.take().expect("stderr"), tag));
        Replica {
            address: format!("http://{listen}"),
            child: Some(child),
        }
    }

    /// `/readyz`'s answer: its status and body, or `None` without one
    /// within `within`.
    pub async fn readiness(
        &self,
        client: &reqwest::Client,
        within: Duration,
    ) -> Option<(StatusCode, Value)> {
        let r = client
            .get(format!("{}/readyz", self.address))
            .timeout(within)
            .send()
            .await
            .ok()?;
        let status = r.status();
        Some((status, r.json().await.unwrap_or(Value::Null)))
    }

    /// `/readyz`'s role, or `None` while it does not answer ready.
    pub async fn role(&self, client: &reqwest::Client) -> Option<String> {
        let (status, body) = self.readiness(client, Duration::from_secs(5)).await?;
        if !status.is_success() {
            return None;
        }
        body["role"].as_str().map(str::to_owned)
    }

    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

async fn relay(from: impl AsyncRead + Unpin, tag: String) {
    let mut lines = BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        eprintln!("{tag} {line}");
    }
}

/// The replica that says it leads, other than `except`, asking until
/// `within` has passed.
pub async fn leader(
    client: &reqwest::Client,
    replicas: &[Replica],
    except: Option<usize>,
    within: Duration,
) -> Option<usize> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        for (i, r) in replicas.iter().enumerate() {
            if Some(i) != except && r.role(client).await.as_deref() == Some("leader") {
                return Some(i);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// An order some replica acknowledged (201).
#[derive(Debug, Clone)]
pub struct Ack {
    pub order: Uuid,
    /// The replica that answered 201.
    pub by: usize,
    /// When the request it answered was sent, and when the answer came.
    pub sent: Instant,
    pub at: Instant,
}

/// An answer other than 201.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub by: usize,
    pub status: StatusCode,
    pub sent: Instant,
    pub at: Instant,
    pub body: Value,
}

/// What the load saw.
#[derive(Default)]
pub struct Seen {
    pub acks: Mutex<Vec<Ack>>,
    pub refusals: Mutex<Vec<Refusal>>,
    /// Orders neither acknowledged nor refused before their deadline.
    pub undecided: AtomicUsize,
    pub retries: AtomicUsize,
}

impl Seen {
    /// How long after `since` a replica other than `not_by` first
    /// acknowledged an order sent after `since`, waiting up to `secs`.
    pub async fn first_ack_after(&self, since: Instant, not_by: usize, secs: u64) -> Duration {
        let deadline = since + Duration::from_secs(secs);
        loop {
            let first = self
                .acks
                .lock()
                .unwrap()
                .iter()
                .filter(|a| a.by != not_by && a.sent > since)
                .map(|a| a.at)
                .min();
            if let Some(at) = first {
                return at - since;
            }
            assert!(Instant::now() < deadline, "no order accepted after the cut");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A client whose requests give up soon: a request to the cut leader may
/// hang on the database, and the buyer then tries the next replica.
pub fn impatient_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(1))
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client")
}

/// The order of the load: on demand, small enough that a few nodes fill
/// hundreds, waiting for capacity rather than refused once they are full.
/// The tag carries the key, so an order placed twice shows in the table.
pub fn order_body(key: &str) -> Value {
    json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 4},
           "region": "eu-west", "duration_s": 3600, "max_wait_s": 600,
           "tags": {"load_key": key}})
}

/// Sends order `key` to `address` (replica `by`) once and records the
/// answer; `None` when none came in time.
async fn send(
    client: &reqwest::Client,
    address: &str,
    by: usize,
    buyer: &str,
    key: &str,
    seen: &Seen,
) -> Option<StatusCode> {
    let sent = Instant::now();
    let response = client
        .post(format!("{address}/v1/orders"))
        .bearer_auth(buyer)
        .header("idempotency-key", key)
        .json(&order_body(key))
        .send()
        .await
        .ok()?;
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if status == StatusCode::CREATED {
        seen.acks.lock().unwrap().push(Ack {
            order: answer["id"].as_str().unwrap().parse().unwrap(),
            by,
            sent,
            at: Instant::now(),
        });
    } else {
        seen.refusals.lock().unwrap().push(Refusal {
            by,
            status,
            sent,
            at: Instant::now(),
            body: answer,
        });
    }
    Some(status)
}

/// Places one order, trying the replicas round-robin from `first` with the
/// same `Idempotency-Key` on 503, a failed connection or no answer in time.
async fn place_one(
    client: &reqwest::Client,
    addresses: &[String],
    first: usize,
    buyer: &str,
    seen: &Seen,
) {
    let key = Uuid::new_v4().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut target = first;
    while Instant::now() < deadline {
        let by = target % addresses.len();
        target += 1;
        match send(client, &addresses[by], by, buyer, &key, seen).await {
            Some(StatusCode::CREATED) => return,
            // A 503 says to retry. Any other 5xx is a failure the test
            // reports at its end; retrying it too (the same key makes it
            // safe) keeps the load going so that everything else is
            // checked as well.
            Some(status) if status.is_server_error() => {}
            // Refused: not acknowledged, so not something that can be lost.
            Some(_) => return,
            None => {}
        }
        seen.retries.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen.undecided.fetch_add(1, Ordering::Relaxed);
}

/// Writes straight to replica `by` every 250 ms until `stop`, each waiting
/// for its answer however long it takes (the load's senders give up after
/// 5 s and go elsewhere): how the cut leader answers writes, and when.
pub fn write_to(
    address: String,
    by: usize,
    buyer: String,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    tokio::spawn(async move {
        let mut writes = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let (client, address, buyer, seen) =
                (client.clone(), address.clone(), buyer.clone(), seen.clone());
            writes.push(tokio::spawn(async move {
                let key = Uuid::new_v4().to_string();
                send(&client, &address, by, &buyer, &key, &seen).await
            }));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        for write in writes {
            let _ = write.await;
        }
    })
}

/// `senders` buyers' tasks, each placing one order at a time until `stop`.
pub fn start_load(
    senders: usize,
    addresses: Vec<String>,
    buyer: String,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let client = impatient_client();
    (0..senders)
        .map(|worker| {
            let (client, addresses, buyer, seen, stop) = (
                client.clone(),
                addresses.clone(),
                buyer.clone(),
                seen.clone(),
                stop.clone(),
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
        .collect()
}
