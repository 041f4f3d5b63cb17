//! The protocol loop: register, heartbeat, carry out assignments, report their
//! status, meter usage into the spool and send it, and stop everything when
//! the server has been out of reach for `node_timeout`.
//!
//! One task owns all state and wakes every [`TICK`]; the work it does per wake
//! is bounded by the client's timeout. SIGKILL deadlines run on their own
//! timers, so a slow server never delays a preemption.

mod assignments;
mod checkpoints;
mod ending;
mod launching;
mod metering;
mod outputs;
mod peak_memory;
mod recovery;
mod shutdown;

use crate::backend::{gpu_of, BackendError, GpuBackend, Inventory, MigSlice, SliceLoad};
use crate::client::{ApiClient, ClientError};
use crate::exporter::SharedSnapshot;
use crate::launcher::Launcher;
use crate::slice::{held_units, workload_env};
use crate::spool::{write_atomic, Spool};
use crate::workload::{signal_group, Exit, Marks, Workload};
use chrono::{DateTime, Utc};
use gpuex_wire::catalog;
use gpuex_wire::protocol::{
    paths, AgentPlacement, Artifact, Assignment, AssignmentAction, AssignmentStatus, BackendKind,
    CheckpointPlan, EndReason, GpuMetrics, HeartbeatRequest, HeartbeatResponse, HeldUnits,
    HostLimits, LeaseReport, LeaseRunState, LogsUpload, MigMode, Partition, RegisterRequest,
    RegisterResponse, ScrubReport, StatusReport, UsageAck, UsageRecord,
};
use nix::sys::signal::Signal;
use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// The folder that holds the leases' working folders: the agent's, and
/// traversable but not listable by the pool users (0711), so a workload
/// reaches its own folder and cannot see which others exist.
fn prepare_work_root(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))
}

/// The folder of the launch files (see [`crate::launcher::launch_file`]):
/// 0700 in the 0700 spool, emptied of what a killed agent left.
fn prepare_launch_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                tracing::warn!(file = %path.display(), "cannot remove a leftover launch file: {e}")
            }
            _ => {}
        }
    }
    Ok(())
}

/// The spool's folder of launch files.
const LAUNCH_DIR: &str = "launch";

/// How often the loop wakes.
const TICK: Duration = Duration::from_millis(200);
/// How often the checkpoint of running leases is rewritten: the most usage a
/// crash can lose.
const CHECKPOINT: Duration = Duration::from_secs(1);
/// Wait between registration attempts.
const REGISTER_RETRY: Duration = Duration::from_secs(2);

/// Timings and where state lives.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub heartbeat_interval: Duration,
    pub usage_interval: Duration,
    pub node_timeout: Duration,
    pub stop_grace: Duration,
    pub state_dir: PathBuf,
    /// Where the leases' working folders go.
    pub work_dir: PathBuf,
    /// The uids (and gids) workloads run as, inclusive.
    pub uid_pool: (u32, u32),
    /// Each lease's disk in MiB; 0: plain folders without a quota.
    pub disk_quota_mib: u64,
    /// How often running leases' changed outputs are sent.
    pub outputs_interval: Duration,
    pub artifact_max_bytes: u64,
    /// Whether artifacts may come from internal addresses (`--artifact-allow-private`).
    pub artifact_allow_private: bool,
}

/// A lease this node carries out.
struct Lease {
    placement: AgentPlacement,
    device: String,
    mig: Option<(u32, MigSlice)>,
    held: HeldUnits,
    compute_share: f64,
    workload: Option<Workload>,
    state: LeaseRunState,
    end_at: Option<DateTime<Utc>>,
    end_reason: Option<EndReason>,
    metered_until: DateTime<Utc>,
    util_sum: f64,
    util_samples: u32,
    /// The most memory its workload held this interval.
    peak_memory: peak_memory::PeakMemory,
    logs_sent_total: u64,
    /// The pool uid its workload runs as.
    uid: Option<u32>,
    /// Its working folder, removed when it ends.
    workdir: Option<PathBuf>,
    /// Its cgroups, removed when it ends.
    cgroups: Vec<PathBuf>,
    /// Its outputs' uploads.
    uploads: outputs::Uploads,
    /// Its checkpoint's, when its order has one.
    checkpointing: Option<checkpoints::Checkpointing>,
}

/// What a `start` asks for. Kept while the lease waits for its slice's
/// previous workload to stop (see [`Agent::handover_pending`]) or for its
/// artifacts.
struct WaitingStart {
    placement: AgentPlacement,
    command: Option<String>,
    env: BTreeMap<String, String>,
    end_at: Option<DateTime<Utc>>,
    held: Option<HeldUnits>,
    artifacts: Vec<Artifact>,
    image: Option<String>,
    network: bool,
    limits: Option<HostLimits>,
    checkpoint: Option<CheckpointPlan>,
    registry_auth: Option<gpuex_wire::protocol::RegistryAuth>,
}

/// A lease whose artifacts are being fetched: not provisioned, not billed.
struct Fetching {
    start: WaitingStart,
    user: (u32, u32),
    workdir: PathBuf,
    task: tokio::task::JoinHandle<()>,
    done: tokio::sync::oneshot::Receiver<FetchResult>,
}

type FetchResult = Result<crate::artifacts::Progress, (crate::artifacts::Progress, String)>;

/// A report waiting to reach the server, in order.
enum Outgoing {
    Status(Uuid, StatusReport),
    Logs(Uuid, LogsUpload),
}

/// Why [`Agent::run`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Asked to stop (SIGTERM, SIGINT).
    Stopped,
    /// The server answered 401: the node token was revoked or its node
    /// deleted. Every lease was stopped as at shutdown.
    TokenRefused,
}

/// The agent.
pub struct Agent {
    cfg: AgentConfig,
    client: ApiClient,
    backend: Box<dyn GpuBackend>,
    launcher: Box<dyn Launcher>,
    spool: Spool,
    snapshot: SharedSnapshot,
    /// The mark every workload of this agent carries (see [`crate::reaper`]).
    owner: String,
    agent_id: Option<Uuid>,
    registered: bool,
    /// The server answered 401 to the node token: stop and exit.
    token_refused: bool,
    inventory: Inventory,
    leases: BTreeMap<Uuid, Lease>,
    waiting: BTreeMap<Uuid, WaitingStart>,
    fetching: BTreeMap<Uuid, Fetching>,
    /// Cgroups of ended leases that still held a dying process.
    stale_cgroups: Vec<PathBuf>,
    /// Ended leases' last uploads, each removing its folder when done.
    retiring: Vec<tokio::task::JoinHandle<()>>,
    /// This agent's cgroups are under `gpuex-<tag>`.
    cgroup_tag: String,
    /// Memory scrubs per GPU index, reported in each heartbeat.
    scrubs: BTreeMap<u32, ScrubReport>,
    outbox: VecDeque<Outgoing>,
    records: Vec<UsageRecord>,
    heartbeat_interval: Duration,
    last_contact: Instant,
    next_register: Instant,
    next_heartbeat: Instant,
    next_usage: Instant,
    next_checkpoint: Instant,
    next_outputs: Instant,
}

impl Agent {
    pub fn new(
        mut cfg: AgentConfig,
        client: ApiClient,
        mut backend: Box<dyn GpuBackend>,
        launcher: Box<dyn Launcher>,
        snapshot: SharedSnapshot,
    ) -> anyhow::Result<Agent> {
        let spool = Spool::open(&cfg.state_dir)?;
        prepare_work_root(&cfg.work_dir)?;
        // Absolute: the helpers and bubblewrap run in the lease's folder.
        cfg.state_dir = std::fs::canonicalize(&cfg.state_dir)?;
        cfg.work_dir = std::fs::canonicalize(&cfg.work_dir)?;
        prepare_launch_dir(&cfg.state_dir.join(LAUNCH_DIR))?;
        prepare_launch_dir(&cfg.state_dir.join(checkpoints::SCRATCH_DIR))?;
        tracing::info!(
            last_seq = spool.last_seq(),
            waiting = spool.pending()?.len(),
            "usage spool opened"
        );
        let inventory = backend.inventory()?;
        let agent_id = std::fs::read_to_string(cfg.state_dir.join("agent_id"))
            .ok()
            .and_then(|s| Uuid::parse_str(s.trim()).ok());
        let now = Instant::now();
        let owner = crate::reaper::owner_of(&cfg.state_dir);
        let cgroup_tag = {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(owner.as_bytes());
            digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
        };
        Ok(Agent {
            launcher,
            fetching: BTreeMap::new(),
            stale_cgroups: Vec::new(),
            retiring: Vec::new(),
            cgroup_tag,
            scrubs: BTreeMap::new(),
            heartbeat_interval: cfg.heartbeat_interval,
            owner,
            next_usage: now + cfg.usage_interval,
            cfg,
            client,
            backend,
            spool,
            snapshot,
            agent_id,
            registered: false,
            token_refused: false,
            inventory,
            leases: BTreeMap::new(),
            waiting: BTreeMap::new(),
            outbox: VecDeque::new(),
            records: Vec::new(),
            last_contact: now,
            next_register: now,
            next_heartbeat: now,
            next_checkpoint: now,
            next_outputs: now,
        })
    }

    /// Run until `shutdown` resolves, or the server refuses the node token;
    /// then end every workload and meter and spool what is owed (see
    /// [`Self::stop_everything`]). What a killed process left running, the
    /// next one ends first (see [`Self::clean_up_leftovers`]).
    pub async fn run(mut self, shutdown: impl std::future::Future<Output = ()>) -> Outcome {
        self.clean_up_leftovers().await;
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = tokio::time::sleep(TICK) => {}
                _ = &mut shutdown => {
                    self.stop_everything().await;
                    return Outcome::Stopped;
                }
            }
            if self.token_refused {
                tracing::error!(
                    "the server refused this node's token (401): it was revoked or the node \
                     deleted; stopping every lease and exiting"
                );
                // Nothing more goes to the server: it takes nothing from us.
                self.registered = false;
                self.stop_everything().await;
                return Outcome::TokenRefused;
            }
            self.housekeeping();
            let now = Instant::now();
            if !self.registered && now >= self.next_register {
                self.register().await;
            }
            if now >= self.next_heartbeat {
                self.next_heartbeat = now + self.heartbeat_interval;
                self.heartbeat().await;
            }
            if now >= self.next_usage {
                self.next_usage = now + self.cfg.usage_interval;
                self.meter_running();
                // Spool, then checkpoint, then send: a batch is never acknowledged
                // before the checkpoint knows its interval is metered.
                self.spool_records();
                self.persist_leftovers();
                self.next_checkpoint = now + CHECKPOINT;
                if self.registered {
                    self.flush_usage().await;
                }
            }
            if now >= self.next_checkpoint {
                self.next_checkpoint = now + CHECKPOINT;
                if !self.leases.is_empty() {
                    self.persist_leftovers();
                }
            }
            if self.registered {
                self.send_checkpoints();
            }
            if self.registered && now >= self.next_outputs {
                self.next_outputs = now + self.cfg.outputs_interval;
                self.upload_outputs();
            }
            if self.registered {
                self.flush_outbox().await;
            }
            self.check_contact();
        }
    }

    /// Where the lease's launch file goes.
    fn launch_path(&self, id: Uuid) -> PathBuf {
        self.cfg.state_dir.join(LAUNCH_DIR).join(id.to_string())
    }

    // ---- server exchanges ------------------------------------------------

    async fn register(&mut self) {
        match self.backend.inventory() {
            Ok(inventory) => self.inventory = inventory,
            Err(e) => tracing::warn!("inventory failed, registering the last one: {e}"),
        }
        let request = RegisterRequest {
            agent_version: env!("CARGO_PKG_VERSION").to_string(),
            backend: self.backend.kind(),
            hostname: self.inventory.hostname.clone(),
            host: self.inventory.host,
            gpus: self.inventory.gpus.clone(),
        };
        let response: Result<RegisterResponse, _> =
            self.client.post(paths::REGISTER, &request).await;
        match response {
            Ok(r) => {
                tracing::info!(agent_id = %r.agent_id, gpus = request.gpus.len(), "registered");
                self.agent_id = Some(r.agent_id);
                let dir = &self.cfg.state_dir;
                if let Err(e) = write_atomic(
                    dir,
                    &dir.join("agent_id"),
                    r.agent_id.to_string().as_bytes(),
                ) {
                    tracing::warn!("cannot persist the agent id: {e}");
                }
                if let Some(seq) = r.last_usage_seq {
                    let done = self
                        .spool
                        .ack_through(seq)
                        .and(self.spool.advance_past(seq));
                    if let Err(e) = done {
                        tracing::warn!("spool: {e}");
                    }
                }
                if r.heartbeat_interval_s > 0 {
                    self.heartbeat_interval =
                        Duration::from_secs(u64::from(r.heartbeat_interval_s));
                }
                self.registered = true;
                self.last_contact = Instant::now();
                self.next_heartbeat = Instant::now();
            }
            Err(e) if e.is_unauthorized() => self.token_refused = true,
            Err(e) => {
                tracing::warn!("registration failed: {e}");
                self.next_register = Instant::now() + REGISTER_RETRY;
            }
        }
    }

    async fn heartbeat(&mut self) {
        let mut metrics = self.backend.sample();
        self.attribute_processes(&mut metrics);
        for gpu in &mut metrics {
            gpu.scrub = self.scrubs.get(&gpu.index).copied();
        }
        self.observe(&metrics);
        let Some(agent_id) = self.agent_id.filter(|_| self.registered) else {
            return;
        };
        let request = HeartbeatRequest {
            agent_id,
            sent_at: Utc::now(),
            gpus: metrics,
            leases: self
                .leases
                .iter()
                .map(|(id, l)| LeaseReport {
                    lease_id: *id,
                    state: l.state,
                    device: Some(l.device.clone()),
                })
                .collect(),
        };
        let response: Result<HeartbeatResponse, _> =
            self.client.post(paths::HEARTBEAT, &request).await;
        match response {
            Ok(r) => {
                self.last_contact = Instant::now();
                if r.heartbeat_interval_s > 0 {
                    self.heartbeat_interval =
                        Duration::from_secs(u64::from(r.heartbeat_interval_s));
                }
                // Stops first: a slice handed from one lease to the next in
                // the same answer is seen stopping before it is started.
                let mut assignments = r.assignments;
                assignments.sort_by_key(|a| matches!(a.action, AssignmentAction::Start { .. }));
                for assignment in assignments {
                    self.apply(assignment);
                }
            }
            Err(e) if e.is_unauthorized() => self.token_refused = true,
            Err(e) if e.is_permanent() => {
                tracing::warn!("heartbeat refused, registering again: {e}");
                self.registered = false;
            }
            Err(e) => tracing::warn!("heartbeat failed: {e}"),
        }
    }

    async fn flush_usage(&mut self) {
        let pending = match self.spool.pending() {
            Ok(p) => p,
            Err(e) => return tracing::warn!("spool: {e}"),
        };
        for seq in pending {
            let batch = match self.spool.load(seq) {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!("spooled batch {seq} is unreadable, dropping it: {e}");
                    let _ = self.spool.ack(seq);
                    continue;
                }
            };
            let answer: Result<UsageAck, ClientError> =
                self.client.post(paths::USAGE, &batch).await;
            match answer {
                Ok(ack) => {
                    self.last_contact = Instant::now();
                    if ack.duplicate {
                        tracing::info!(seq, "usage batch was applied before");
                    }
                    // The server stored the rest of the batch; a refused
                    // record would be refused again, so it is not resent.
                    for r in &ack.refused {
                        tracing::error!(seq, lease = %r.lease_id, field = %r.field, "usage record refused: {}", r.reason);
                    }
                    if let Err(e) = self.spool.ack(seq) {
                        tracing::warn!("spool: {e}");
                    }
                }
                Err(e) if e.is_unauthorized() => {
                    // Kept: the node's usage is owed whatever became of its token.
                    self.token_refused = true;
                    break;
                }
                Err(e) if e.is_permanent() => {
                    tracing::error!(seq, "usage batch refused, dropping it: {e}");
                    let _ = self.spool.ack(seq);
                }
                Err(e) => {
                    tracing::warn!(seq, "usage batch not sent, kept in the spool: {e}");
                    break;
                }
            }
        }
    }

    async fn flush_outbox(&mut self) {
        while let Some(item) = self.outbox.front() {
            let (lease_id, result) = match item {
                Outgoing::Status(id, report) => (
                    *id,
                    self.client
                        .post_no_content(&paths::assignment_status(*id), report)
                        .await,
                ),
                Outgoing::Logs(id, upload) => (
                    *id,
                    self.client
                        .post_no_content(&paths::assignment_logs(*id), upload)
                        .await,
                ),
            };
            match result {
                Ok(()) => self.last_contact = Instant::now(),
                Err(e) if e.is_unauthorized() => {
                    self.token_refused = true;
                    return;
                }
                Err(e) if e.is_permanent() => tracing::warn!(%lease_id, "report refused: {e}"),
                Err(e) => {
                    tracing::warn!(%lease_id, "report not sent, will retry: {e}");
                    return;
                }
            }
            let done = self.outbox.pop_front();
            // Once its `ended` is delivered the server knows; forget the lease.
            if let Some(Outgoing::Status(
                id,
                StatusReport {
                    status: AssignmentStatus::Ended { .. },
                    ..
                },
            )) = done
            {
                if self
                    .leases
                    .get(&id)
                    .is_some_and(|l| l.state == LeaseRunState::Ended)
                {
                    self.leases.remove(&id);
                }
            }
        }
    }

    fn check_contact(&mut self) {
        if self.last_contact.elapsed() <= self.cfg.node_timeout {
            return;
        }
        let live: Vec<Uuid> = self
            .leases
            .iter()
            .filter(|(_, l)| l.state == LeaseRunState::Running)
            .map(|(id, _)| *id)
            .collect();
        if self.registered || !live.is_empty() {
            tracing::warn!(
                leases = live.len(),
                "no contact with the server for {:?}: stopping workloads",
                self.cfg.node_timeout
            );
        }
        self.registered = false;
        let deadline = Instant::now() + self.cfg.stop_grace;
        for id in live {
            self.begin_stop(id, EndReason::NodeTimeout, deadline);
        }
    }
}
