//! A simulated agent that speaks for a whole fleet: each node has its own
//! token and registration, heartbeats at the server's interval with its
//! GPUs' metrics and the leases it runs, and carries out the assignments it
//! is given (start, stop, preempt) as a real agent would, instantly.

use super::*;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use uuid::Uuid;

/// One simulated node.
struct Node {
    id: Uuid,
    token: String,
    /// What it registers with, again when the server asks it to.
    registration: Value,
    /// The leases it already runs: a seeded node's, as an agent still
    /// running its workloads reports them to a server that restarted.
    running: Vec<Uuid>,
}

pub(super) struct Fleet {
    base: String,
    client: reqwest::Client,
    connections: usize,
    nodes: Vec<Node>,
}

/// The heartbeats running, and what they saw.
pub(super) struct Beating {
    pub(super) shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

pub(super) struct Beats {
    pub(super) errors: u64,
}

/// What the fleet's heartbeats cost the server over a window, against a
/// quiet window of the same server with them paused.
pub(super) struct HeartbeatCost {
    pub(super) per_s: f64,
    pub(super) quiet_cores: f64,
    pub(super) beating_cores: f64,
}

pub(super) fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg:>22} {bar:40} {pos}/{len} {per_sec} eta {eta}")
            .expect("a progress template"),
    );
    bar.set_message(what.to_owned());
    bar
}

/// What a node is: the fleet's 8-GPU H100 boxes, or the one GPU of the
/// model the standing bids wait for.
#[derive(Clone, Copy)]
struct Kind {
    model: &'static str,
    gpus: u32,
    mode: &'static str,
}

const FLEET_NODE: Kind = Kind {
    model: MODEL,
    gpus: 8,
    mode: "shared",
};
const STANDING_NODE: Kind = Kind {
    model: STANDING_MODEL,
    gpus: 1,
    mode: "whole",
};

fn registration(index: usize, kind: Kind) -> Value {
    registration_of(index, kind.model, kind.gpus)
}

fn registration_of(index: usize, model: &str, gpus: u32) -> Value {
    let gpus: Vec<Value> = (0..gpus)
        .map(|i| {
            json!({"index": i, "model": model, "product_name": model,
                   "uuid": format!("GPU-{index:08x}-{i:04x}-0000-0000-000000000000"),
                   "memory_mib": 81559, "mig_capable": false, "mig_mode": null,
                   "driver_version": "550.54.15", "cuda_version": "12.4"})
        })
        .collect();
    json!({"agent_version": "0.1.0", "backend": "simulated", "hostname": format!("sim-{index}"),
           "host": {"cpu_milli": 1_000_000, "memory_mib": 100_000_000}, "gpus": gpus})
}

/// Creates one node, marks it simulated and registers it.
async fn enroll(
    client: &reqwest::Client,
    base: &str,
    parties: &Parties,
    index: usize,
    kind: Kind,
) -> Node {
    use reqwest::Method;
    let gpus: Vec<Value> = (0..kind.gpus)
        .map(|i| json!({"index": i, "model": kind.model, "mode": kind.mode}))
        .collect();
    let body = json!({"name": format!("sim-{index}"), "region": REGION, "gpus": gpus,
                      "cpu_milli": 1_000_000, "memory_mib": 100_000_000});
    let created = send(
        client,
        Method::POST,
        &format!("{base}/v1/nodes"),
        Some(&parties.provider),
        &body,
    )
    .await;
    let id: Uuid = created["id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a node id");
    let token = created["token"].as_str().expect("a node token").to_owned();
    let mark = json!({"simulated": true});
    send(
        client,
        Method::PUT,
        &format!("{base}/v1/admin/nodes/{id}"),
        Some(&parties.admin),
        &mark,
    )
    .await;
    send(
        client,
        Method::POST,
        &format!("{base}/v1/agent/register"),
        Some(&token),
        &registration(index, kind),
    )
    .await;
    Node {
        id,
        token,
        registration: registration(index, kind),
        running: Vec::new(),
    }
}

/// A node already in the database (the seeded run's): its id, token, model,
/// GPU count and the leases it runs.
pub(super) struct Seeded {
    pub(super) id: Uuid,
    pub(super) token: String,
    pub(super) model: String,
    pub(super) gpus: u32,
    pub(super) running: Vec<Uuid>,
}

impl Fleet {
    pub(super) async fn create(
        base: &str,
        parties: &Parties,
        nodes: usize,
        connections: u64,
    ) -> Fleet {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(connections as usize)
            .timeout(Duration::from_secs(30))
            .build()
            .expect("an HTTP client");
        let bar = progress(nodes as u64 + 1, "nodes enrolled");
        // The fleet, and last the one node the standing bids wait for.
        let enrolled: Vec<Node> = futures::stream::iter(0..=nodes)
            .map(|i| {
                let (client, bar) = (&client, &bar);
                let kind = if i < nodes { FLEET_NODE } else { STANDING_NODE };
                async move {
                    let node = enroll(client, base, parties, i, kind).await;
                    bar.inc(1);
                    node
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        bar.finish();
        Fleet {
            base: base.to_owned(),
            client,
            connections: connections as usize,
            nodes: enrolled,
        }
    }

    /// A fleet of nodes already registered, enrolling none.
    pub(super) fn seeded(base: &str, nodes: Vec<Seeded>, connections: u64) -> Fleet {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(connections as usize)
            .timeout(Duration::from_secs(30))
            .build()
            .expect("an HTTP client");
        let nodes = nodes
            .into_iter()
            .enumerate()
            .map(|(i, n)| Node {
                id: n.id,
                token: n.token,
                registration: registration_of(i, &n.model, n.gpus),
                running: n.running,
            })
            .collect();
        Fleet {
            base: base.to_owned(),
            client,
            connections: connections as usize,
            nodes,
        }
    }

    /// One task per node, each beating every `interval` from a phase of its
    /// own, so the fleet's beats spread evenly as real agents' do.
    pub(super) fn start(self, interval: Duration) -> Beating {
        let shared = Arc::new(Shared {
            paused: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            sent: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            // As many beats in flight as the pool has connections: when the
            // server falls behind, beats wait here, not in ever more sockets.
            lanes: tokio::sync::Semaphore::new(self.connections),
        });
        let count = self.nodes.len().max(1) as u32;
        let base: Arc<str> = self.base.into();
        let tasks = self
            .nodes
            .into_iter()
            .enumerate()
            .map(|(i, node)| {
                let phase = interval / count * i as u32;
                let leases = node.running.iter().map(|id| (*id, "running")).collect();
                let agent = Agent {
                    node,
                    client: self.client.clone(),
                    url: format!("{base}/v1/agent/heartbeat"),
                    leases,
                };
                let shared = shared.clone();
                tokio::spawn(async move { agent.run(interval, phase, &shared).await })
            })
            .collect();
        Beating { shared, tasks }
    }
}

/// What every node's task shares: the switches and the counts.
pub(super) struct Shared {
    paused: AtomicBool,
    stop: AtomicBool,
    pub(super) sent: AtomicU64,
    errors: AtomicU64,
    lanes: tokio::sync::Semaphore,
}

struct Agent {
    node: Node,
    client: reqwest::Client,
    url: String,
    /// The leases it runs and the state it reports for each.
    leases: BTreeMap<Uuid, &'static str>,
}

impl Agent {
    async fn run(mut self, interval: Duration, phase: Duration, shared: &Shared) {
        let start = tokio::time::Instant::now() + phase;
        let mut ticker = tokio::time::interval_at(start, interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !shared.stop.load(Ordering::Relaxed) {
            ticker.tick().await;
            if shared.paused.load(Ordering::Relaxed) {
                continue;
            }
            let Ok(_lane) = shared.lanes.acquire().await else {
                return;
            };
            match self.beat().await {
                Ok(()) => shared.sent.fetch_add(1, Ordering::Relaxed),
                Err(e) => {
                    if shared.errors.fetch_add(1, Ordering::Relaxed) == 0 {
                        eprintln!("  a heartbeat failed: {e}");
                    }
                    0
                }
            };
        }
    }

    async fn beat(&mut self) -> Result<(), String> {
        let gpus: Vec<Value> = (0..8)
            .map(|i| {
                json!({"index": i, "uuid": format!("GPU-{}-{i}", self.node.id.simple()),
                       "fields": {"DCGM_FI_DEV_GPU_UTIL": 40.0 + i as f64, "DCGM_FI_DEV_GPU_TEMP": 45.0,
                                  "DCGM_FI_DEV_FB_USED": 20000.0, "DCGM_FI_DEV_POWER_USAGE": 350.0}})
            })
            .collect();
        let leases: Vec<Value> = self
            .leases
            .iter()
            .map(|(id, state)| json!({"lease_id": id, "state": state, "device": "0"}))
            .collect();
        let body = json!({"agent_id": self.node.id, "sent_at": chrono::Utc::now(),
                          "gpus": gpus, "leases": leases});
        let response = self
            .client
            .post(&self.url)
            .bearer_auth(&self.node.token)
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let answer: Value = response.json().await.map_err(|e| e.to_string())?;
        if status == reqwest::StatusCode::CONFLICT && answer["code"] == "register_again" {
            // Declared lost (the fleet's first nodes wait out the enrolment
            // of the rest): a real agent registers again and carries on.
            return self.register_again().await;
        }
        if !status.is_success() {
            return Err(format!("{status} {answer}"));
        }
        for assignment in answer["assignments"].as_array().into_iter().flatten() {
            let Some(lease) = assignment["lease_id"].as_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            // Like a real agent, instantly: a start is provisioned and
            // reported running; a stop or a preemption lets the lease go.
            if assignment["action"].as_str() == Some("start") {
                self.provisioned(lease).await?;
                self.leases.insert(lease, "running");
            } else {
                self.leases.remove(&lease);
            }
        }
        Ok(())
    }
}

impl Agent {
    async fn register_again(&mut self) -> Result<(), String> {
        let url = self.url.replace("/heartbeat", "/register");
        let response = self
            .client
            .post(url)
            .bearer_auth(&self.node.token)
            .json(&self.node.registration)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("register again: {}", response.status()));
        }
        // A lost node's leases ended; the server starts what it places anew.
        self.leases.clear();
        Ok(())
    }

    async fn provisioned(&self, lease: Uuid) -> Result<(), String> {
        let url = self
            .url
            .replace("/heartbeat", &format!("/assignments/{lease}/status"));
        let report = json!({"at": chrono::Utc::now(), "status": "provisioned",
                            "device": format!("GPU-{}-0", self.node.id.simple())});
        let response = self
            .client
            .post(url)
            .bearer_auth(&self.node.token)
            .json(&report)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        match response.status().as_u16() {
            // 409: the lease ended before its start was reported; nothing to run.
            204 | 409 => Ok(()),
            status => Err(format!("provisioned: {status}")),
        }
    }
}

impl Beating {
    pub(super) async fn stop(self) -> Beats {
        self.shared.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.abort();
        }
        Beats {
            errors: self.shared.errors.load(Ordering::Relaxed),
        }
    }
}

/// The server's CPU over a window with every node beating, then over a
/// quiet one with the beats paused (shorter than the node timeout). The
/// windows are whole spot intervals (10 s by default), so each holds its
/// share of clearings, and the beating one comes first, one interval after
/// the fill, when the fill's own work is over.
pub(super) async fn heartbeat_cost(beating: &Beating, pid: u32, heartbeat_s: u64) -> HeartbeatCost {
    let quiet = Duration::from_secs(knob("GPUEX_BENCH_QUIET_S", 10).min(heartbeat_s * 5));
    let window = Duration::from_secs(knob("GPUEX_BENCH_SECONDS", 20));
    let pid = pid.to_string();
    let cores_over = |over: Duration| {
        let pid = pid.clone();
        async move {
            let t0 = cpu::process_ticks(&pid).unwrap_or(0);
            let started = Instant::now();
            tokio::time::sleep(over).await;
            let ticks = cpu::process_ticks(&pid).unwrap_or(0) - t0;
            (
                ticks as f64 / cpu::TICKS_PER_S / started.elapsed().as_secs_f64(),
                started.elapsed(),
            )
        }
    };
    tokio::time::sleep(Duration::from_secs(heartbeat_s)).await;
    eprintln!(
        "  server CPU: {}s with every node beating",
        window.as_secs()
    );
    let sent0 = beating.shared.sent.load(Ordering::Relaxed);
    let (beating_cores, elapsed) = cores_over(window).await;
    let per_s =
        (beating.shared.sent.load(Ordering::Relaxed) - sent0) as f64 / elapsed.as_secs_f64();
    eprintln!(
        "  server CPU: {}s with the heartbeats paused",
        quiet.as_secs()
    );
    beating.shared.paused.store(true, Ordering::Relaxed);
    let (quiet_cores, _) = cores_over(quiet).await;
    beating.shared.paused.store(false, Ordering::Relaxed);
    // One interval for the paused beats to come round again.
    tokio::time::sleep(Duration::from_secs(heartbeat_s)).await;
    HeartbeatCost {
        per_s,
        quiet_cores,
        beating_cores,
    }
}
