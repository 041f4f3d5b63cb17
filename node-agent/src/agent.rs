//! The protocol loop: register, heartbeat, carry out assignments, report their
//! status, meter usage into the spool and send it, and stop everything when
//! the server has been out of reach for `node_timeout`.
//!
//! One task owns all state and wakes every [`TICK`]; the work it does per wake
//! is bounded by the client's timeout. SIGKILL deadlines run on their own
//! timers, so a slow server never delays a preemption.

use crate::backend::{gpu_of, BackendError, GpuBackend, Inventory, MigSlice, SliceLoad};
use crate::client::{ApiClient, ClientError};
use crate::exporter::SharedSnapshot;
use crate::slice::{held_units, workload_env};
use crate::spool::{write_atomic, Spool};
use crate::workload::{signal_group, Exit, Workload};
use chrono::{DateTime, Utc};
use gpuex::catalog;
use gpuex::protocol::{
    paths, Assignment, AssignmentAction, AssignmentStatus, EndReason, GpuMetrics, HeartbeatRequest,
    HeartbeatResponse, HeldUnits, LeaseReport, LeaseRunState, LogsUpload, MigMode, Partition,
    Placement, RegisterRequest, RegisterResponse, StatusReport, UsageAck, UsageRecord,
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

/// How often the loop wakes.
const TICK: Duration = Duration::from_millis(200);
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
}

/// A lease this node carries out.
struct Lease {
    placement: Placement,
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
    logs_sent_total: u64,
}

/// A report waiting to reach the server, in order.
enum Outgoing {
    Status(Uuid, StatusReport),
    Logs(Uuid, LogsUpload),
}

/// What a previous agent process left running, so a restart can clean up.
#[derive(Debug, Serialize, Deserialize)]
struct Leftover {
    lease_id: Uuid,
    pgid: Option<i32>,
    gpu: u32,
    mig_uuid: Option<String>,
    gpu_instance_id: Option<u32>,
    compute_instance_id: Option<u32>,
}

/// The agent.
pub struct Agent {
    cfg: AgentConfig,
    client: ApiClient,
    backend: Box<dyn GpuBackend>,
    spool: Spool,
    snapshot: SharedSnapshot,
    agent_id: Option<Uuid>,
    registered: bool,
    inventory: Inventory,
    leases: BTreeMap<Uuid, Lease>,
    outbox: VecDeque<Outgoing>,
    records: Vec<UsageRecord>,
    heartbeat_interval: Duration,
    last_contact: Instant,
    next_register: Instant,
    next_heartbeat: Instant,
    next_usage: Instant,
}

impl Agent {
    pub fn new(
        cfg: AgentConfig,
        client: ApiClient,
        mut backend: Box<dyn GpuBackend>,
        snapshot: SharedSnapshot,
    ) -> anyhow::Result<Agent> {
        let spool = Spool::open(&cfg.state_dir)?;
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
        Ok(Agent {
            heartbeat_interval: cfg.heartbeat_interval,
            next_usage: now + cfg.usage_interval,
            cfg,
            client,
            backend,
            spool,
            snapshot,
            agent_id,
            registered: false,
            inventory,
            leases: BTreeMap::new(),
            outbox: VecDeque::new(),
            records: Vec::new(),
            last_contact: now,
            next_register: now,
            next_heartbeat: now,
        })
    }

    /// Run until `shutdown` resolves; then meter and spool what is owed, so a
    /// restart loses no usage. Workloads keep running; the next agent process
    /// cleans them up (see [`Self::clean_up_leftovers`]).
    pub async fn run(mut self, shutdown: impl std::future::Future<Output = ()>) {
        self.clean_up_leftovers();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = tokio::time::sleep(TICK) => {}
                _ = &mut shutdown => {
                    self.meter_running();
                    self.spool_records();
                    tracing::info!("shutting down; unsent usage stays in the spool");
                    return;
                }
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
                self.spool_records();
                if self.registered {
                    self.flush_usage().await;
                }
            }
            if self.registered {
                self.flush_outbox().await;
            }
            self.check_contact();
        }
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
            Err(e) => {
                tracing::warn!("registration failed: {e}");
                self.next_register = Instant::now() + REGISTER_RETRY;
            }
        }
    }

    async fn heartbeat(&mut self) {
        let mut metrics = self.backend.sample();
        self.attribute_processes(&mut metrics);
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
                for assignment in r.assignments {
                    self.apply(assignment);
                }
            }
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
                    if let Err(e) = self.spool.ack(seq) {
                        tracing::warn!("spool: {e}");
                    }
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

    // ---- assignments -----------------------------------------------------

    fn apply(&mut self, assignment: Assignment) {
        let id = assignment.lease_id;
        match assignment.action {
            AssignmentAction::Start {
                placement,
                command,
                env,
                end_at,
                held,
            } => {
                if !self.leases.contains_key(&id) {
                    self.start(id, placement, command, env, end_at, held);
                }
            }
            AssignmentAction::Stop => {
                let deadline = Instant::now() + self.cfg.stop_grace;
                self.begin_stop(id, EndReason::Stopped, deadline);
            }
            AssignmentAction::Preempt { preempt_at } => {
                let left = (preempt_at - Utc::now()).to_std().unwrap_or_default();
                self.begin_stop(id, EndReason::Preempted, Instant::now() + left);
            }
        }
    }

    fn start(
        &mut self,
        id: Uuid,
        placement: Placement,
        command: Option<String>,
        env: BTreeMap<String, String>,
        end_at: Option<DateTime<Utc>>,
        held: Option<HeldUnits>,
    ) {
        let (device, mig, held, compute_share) = match self.provision(&placement, held) {
            Ok(p) => p,
            Err(reason) => {
                tracing::warn!(lease_id = %id, "cannot provision: {reason}");
                return self.report(id, AssignmentStatus::Failed { reason });
            }
        };
        let workload = match command.as_deref() {
            Some(cmd) => match Workload::spawn(cmd, &workload_env(&placement, &device, &env)) {
                Ok(w) => Some(w),
                Err(e) => {
                    self.tear_down(mig.as_ref());
                    let reason = format!("cannot start the command: {e}");
                    return self.report(id, AssignmentStatus::Failed { reason });
                }
            },
            None => None,
        };
        tracing::info!(lease_id = %id, %device, "provisioned");
        self.leases.insert(
            id,
            Lease {
                placement,
                device: device.clone(),
                mig,
                held,
                compute_share,
                workload,
                state: LeaseRunState::Running,
                end_at,
                end_reason: None,
                metered_until: Utc::now(),
                util_sum: 0.0,
                util_samples: 0,
                logs_sent_total: 0,
            },
        );
        self.persist_leftovers();
        self.report(id, AssignmentStatus::Provisioned { device });
    }

    /// Create the slice: the device handle, the MIG instance, the held units and
    /// the share of each GPU's compute.
    #[allow(clippy::type_complexity)]
    fn provision(
        &mut self,
        placement: &Placement,
        held: Option<HeldUnits>,
    ) -> Result<(String, Option<(u32, MigSlice)>, HeldUnits, f64), String> {
        let gpus = placement
            .gpus
            .iter()
            .map(|&i| gpu_of(&self.inventory, i).cloned())
            .collect::<Result<Vec<_>, BackendError>>()
            .map_err(|e| e.to_string())?;
        let first = gpus.first().ok_or("the placement names no GPU")?;
        let model = first
            .model
            .as_deref()
            .and_then(catalog::lookup)
            .ok_or_else(|| format!("GPU {} is not a catalog model", first.index))?;
        let single = || {
            if gpus.len() == 1 {
                Ok(())
            } else {
                Err(format!(
                    "a {:?} placement takes exactly one GPU",
                    placement.partition
                ))
            }
        };
        let held = match held {
            Some(h) => h,
            None => held_units(model, placement)?,
        };
        let whole_fp16 = model.fp16 * Decimal::from(gpus.len());
        let share = if whole_fp16.is_zero() {
            0.0
        } else {
            rust_decimal::prelude::ToPrimitive::to_f64(&(held.tflops / whole_fp16)).unwrap_or(0.0)
        };
        match &placement.partition {
            Partition::Mig { profile, start } => {
                single()?;
                let slice = self
                    .backend
                    .create_mig(first.index, profile, *start)
                    .map_err(|e| e.to_string())?;
                Ok((slice.uuid.clone(), Some((first.index, slice)), held, share))
            }
            Partition::Shared { .. } | Partition::Whole => {
                if matches!(placement.partition, Partition::Shared { .. }) {
                    single()?;
                }
                if let Some(g) = gpus.iter().find(|g| g.mig_mode == Some(MigMode::Enabled)) {
                    return Err(BackendError::MigEnabled(g.index).to_string());
                }
                let device = gpus
                    .iter()
                    .map(|g| g.uuid.as_str())
                    .collect::<Vec<_>>()
                    .join(",");
                Ok((device, None, held, share.min(1.0)))
            }
        }
    }

    /// Stop a lease's workload: SIGTERM now, SIGKILL at `kill_at`.
    fn begin_stop(&mut self, id: Uuid, reason: EndReason, kill_at: Instant) {
        let Some(lease) = self.leases.get_mut(&id) else {
            // Nothing of it runs here (never started, or lost in a restart):
            // tell the server it is over so it can close the lease.
            return self.report(
                id,
                AssignmentStatus::Ended {
                    exit_code: None,
                    signal: None,
                    reason,
                },
            );
        };
        if lease.state != LeaseRunState::Running {
            return;
        }
        lease.end_reason = Some(reason);
        match &lease.workload {
            Some(w) if w.exit().is_none() => {
                tracing::info!(lease_id = %id, ?reason, "stopping the workload");
                w.signal(Signal::SIGTERM);
                w.kill_at(kill_at);
                lease.state = LeaseRunState::Stopping;
            }
            _ => self.finish(id, None),
        }
    }

    /// Workload exits, lease ends, and the load the simulated GPUs see.
    fn housekeeping(&mut self) {
        let now = Utc::now();
        let ids: Vec<Uuid> = self.leases.keys().copied().collect();
        for id in ids {
            let Some(lease) = self.leases.get(&id) else {
                continue;
            };
            if lease.state == LeaseRunState::Ended {
                continue;
            }
            if let Some(exit) = lease.workload.as_ref().and_then(Workload::exit) {
                self.finish(id, Some(exit));
            } else if lease.state == LeaseRunState::Running
                && lease.end_at.is_some_and(|end| end <= now)
            {
                let deadline = Instant::now() + self.cfg.stop_grace;
                self.begin_stop(id, EndReason::LeaseEnd, deadline);
            }
        }
        let loads: Vec<SliceLoad> = self
            .leases
            .iter()
            .filter(|(_, l)| l.state != LeaseRunState::Ended)
            .flat_map(|(id, l)| {
                let busy = l.workload.as_ref().is_some_and(|w| w.exit().is_none());
                let per_gpu_mib = rust_decimal::prelude::ToPrimitive::to_f64(&l.held.vram_gb)
                    .unwrap_or(0.0)
                    * 1e9
                    / 1_048_576.0
                    / l.placement.gpus.len().max(1) as f64;
                let pid = l
                    .workload
                    .as_ref()
                    .filter(|_| busy)
                    .and_then(|w| u32::try_from(w.pgid()).ok());
                l.placement.gpus.iter().map(move |&gpu| SliceLoad {
                    lease_id: *id,
                    pid,
                    gpu,
                    mig_uuid: l.mig.as_ref().map(|(_, m)| m.uuid.clone()),
                    compute_share: l.compute_share,
                    memory_mib: per_gpu_mib,
                    busy,
                })
            })
            .collect();
        self.backend.set_load(&loads);
    }

    /// The lease is over: meter its last stretch, upload the final log tail,
    /// tear the slice down and report `ended`.
    fn finish(&mut self, id: Uuid, exit: Option<Exit>) {
        let now = Utc::now();
        let Some(lease) = self.leases.get_mut(&id) else {
            return;
        };
        lease.state = LeaseRunState::Ended;
        let record = meter(id, lease, now);
        let logs = lease.workload.as_ref().map(|w| {
            let (tail, total_bytes) = w.tail();
            LogsUpload {
                at: now,
                tail,
                total_bytes,
                complete: true,
            }
        });
        let reason = lease.end_reason.unwrap_or(EndReason::Exited);
        let mig = lease.mig.take();
        self.records.extend(record);
        self.tear_down(mig.as_ref());
        if let Some(upload) = logs {
            self.queue_logs(id, upload);
        }
        tracing::info!(lease_id = %id, ?exit, ?reason, "ended");
        self.report(
            id,
            AssignmentStatus::Ended {
                exit_code: exit.and_then(|e| e.code),
                signal: exit.and_then(|e| e.signal),
                reason,
            },
        );
        self.persist_leftovers();
    }

    fn tear_down(&mut self, mig: Option<&(u32, MigSlice)>) {
        if let Some((gpu, slice)) = mig {
            if let Err(e) = self.backend.destroy_mig(*gpu, slice) {
                tracing::warn!(gpu, uuid = %slice.uuid, "cannot destroy the MIG instance: {e}");
            }
        }
    }

    fn report(&mut self, id: Uuid, status: AssignmentStatus) {
        self.outbox.push_back(Outgoing::Status(
            id,
            StatusReport {
                at: Utc::now(),
                status,
            },
        ));
    }

    /// Queue a log upload, replacing one for the same lease still waiting.
    fn queue_logs(&mut self, id: Uuid, upload: LogsUpload) {
        self.outbox
            .retain(|o| !matches!(o, Outgoing::Logs(other, _) if *other == id));
        self.outbox.push_back(Outgoing::Logs(id, upload));
    }

    // ---- metering ----------------------------------------------------------

    /// Name the lease of each GPU process whose process group is a workload's.
    fn attribute_processes(&self, metrics: &mut [GpuMetrics]) {
        let groups: BTreeMap<i32, Uuid> = self
            .leases
            .iter()
            .filter_map(|(id, l)| Some((l.workload.as_ref()?.pgid(), *id)))
            .collect();
        for process in metrics.iter_mut().flat_map(|m| m.processes.iter_mut()) {
            if process.lease_id.is_none() {
                process.lease_id =
                    process_group_of(process.pid).and_then(|g| groups.get(&g).copied());
            }
        }
    }

    /// Utilization of each lease's slice in this sample; also the /metrics snapshot.
    fn observe(&mut self, metrics: &[GpuMetrics]) {
        for lease in self.leases.values_mut() {
            let util = match &lease.mig {
                Some((gpu, slice)) => metrics
                    .iter()
                    .find(|m| m.index == *gpu)
                    .and_then(|m| m.mig_instances.iter().find(|i| i.uuid == slice.uuid))
                    .and_then(|i| i.gr_engine_active.map(|ratio| ratio * 100.0)),
                None => {
                    let utils: Vec<f64> = lease
                        .placement
                        .gpus
                        .iter()
                        .filter_map(|g| metrics.iter().find(|m| m.index == *g))
                        .filter_map(|m| m.fields.gpu_util)
                        .collect();
                    (!utils.is_empty()).then(|| utils.iter().sum::<f64>() / utils.len() as f64)
                }
            };
            if let Some(u) = util {
                lease.util_sum += u / 100.0;
                lease.util_samples += 1;
            }
        }
        if let Ok(mut s) = self.snapshot.lock() {
            s.hostname = self.inventory.hostname.clone();
            s.gpus = self.inventory.gpus.clone();
            s.metrics = metrics.to_vec();
        }
    }

    /// Meter every live lease up to now, and queue fresh log tails.
    fn meter_running(&mut self) {
        let now = Utc::now();
        let mut uploads = Vec::new();
        for (id, lease) in self.leases.iter_mut() {
            if lease.state == LeaseRunState::Ended {
                continue;
            }
            self.records.extend(meter(*id, lease, now));
            if let Some(w) = &lease.workload {
                let (tail, total_bytes) = w.tail();
                if total_bytes != lease.logs_sent_total {
                    lease.logs_sent_total = total_bytes;
                    uploads.push((
                        *id,
                        LogsUpload {
                            at: now,
                            tail,
                            total_bytes,
                            complete: false,
                        },
                    ));
                }
            }
        }
        for (id, upload) in uploads {
            self.queue_logs(id, upload);
        }
    }

    /// Put the metered records into the spool as one numbered batch.
    fn spool_records(&mut self) {
        if self.records.is_empty() {
            return;
        }
        let Some(agent_id) = self.agent_id else {
            return;
        };
        let records = std::mem::take(&mut self.records);
        match self.spool.push(agent_id, records.clone()) {
            Ok(batch) => tracing::debug!(seq = batch.seq, n = batch.records.len(), "usage spooled"),
            Err(e) => {
                tracing::error!("cannot write the usage spool, keeping records in memory: {e}");
                self.records = records;
            }
        }
    }

    // ---- restart safety ----------------------------------------------------

    fn persist_leftovers(&self) {
        let list: Vec<Leftover> = self
            .leases
            .iter()
            .filter(|(_, l)| l.state != LeaseRunState::Ended)
            .map(|(id, l)| Leftover {
                lease_id: *id,
                pgid: l.workload.as_ref().map(Workload::pgid),
                gpu: l.placement.gpus.first().copied().unwrap_or(0),
                mig_uuid: l.mig.as_ref().map(|(_, m)| m.uuid.clone()),
                gpu_instance_id: l.mig.as_ref().and_then(|(_, m)| m.gpu_instance_id),
                compute_instance_id: l.mig.as_ref().and_then(|(_, m)| m.compute_instance_id),
            })
            .collect();
        let dir = &self.cfg.state_dir;
        let json = serde_json::to_vec(&list).unwrap_or_default();
        if let Err(e) = write_atomic(dir, &dir.join("leases.json"), &json) {
            tracing::warn!("cannot persist the running leases: {e}");
        }
    }

    /// After a crash: kill the workloads and destroy the MIG instances a previous
    /// agent process left behind; the server's next assignments start them anew.
    fn clean_up_leftovers(&mut self) {
        let path = self.cfg.state_dir.join("leases.json");
        let Ok(bytes) = std::fs::read(&path) else {
            return;
        };
        let leftovers: Vec<Leftover> = serde_json::from_slice(&bytes).unwrap_or_default();
        for l in &leftovers {
            tracing::warn!(lease_id = %l.lease_id, "cleaning up after a previous agent process");
            if let Some(pgid) = l.pgid {
                signal_group(pgid, Signal::SIGKILL);
            }
            if let Some(uuid) = &l.mig_uuid {
                let slice = MigSlice {
                    uuid: uuid.clone(),
                    gpu_instance_id: l.gpu_instance_id,
                    compute_instance_id: l.compute_instance_id,
                };
                let _ = self.backend.destroy_mig(l.gpu, &slice);
            }
        }
        self.persist_leftovers();
    }
}

/// The process group of `pid`, from `/proc/PID/stat` (fields after the name:
/// state, ppid, pgrp).
fn process_group_of(pid: u32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
}

/// The usage record of `lease` from where it was last metered up to `until`.
fn meter(id: Uuid, lease: &mut Lease, until: DateTime<Utc>) -> Option<UsageRecord> {
    let start = lease.metered_until;
    let millis = (until - start).num_milliseconds();
    if millis <= 0 {
        return None;
    }
    let seconds = Decimal::new(millis, 3);
    lease.metered_until = until;
    let mean = (lease.util_samples > 0)
        .then(|| Decimal::from_f64(lease.util_sum / f64::from(lease.util_samples)))
        .flatten()
        .map(|d| d.round_dp(4));
    lease.util_sum = 0.0;
    lease.util_samples = 0;
    Some(UsageRecord {
        lease_id: id,
        interval_start: start,
        interval_end: until,
        tflops_s: lease.held.tflops * seconds,
        vram_gb_s: lease.held.vram_gb * seconds,
        mean_utilization: mean,
    })
}
