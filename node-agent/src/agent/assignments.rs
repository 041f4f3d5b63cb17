//! Carrying out assignments: provisioning slices, starting, stopping and
//! finishing workloads, and the reports that go back to the server.

use super::metering::meter;
use super::*;

impl Agent {
    pub(super) fn apply(&mut self, assignment: Assignment) {
        let id = assignment.lease_id;
        match assignment.action {
            AssignmentAction::Start {
                placement,
                command,
                env,
                end_at,
                held,
            } => {
                if self.leases.contains_key(&id) || self.waiting.contains_key(&id) {
                    return;
                }
                if self.handover_pending(&placement) {
                    tracing::info!(lease_id = %id, "waiting for the slice's previous workload to stop");
                    let start = WaitingStart {
                        placement,
                        command,
                        env,
                        end_at,
                        held,
                    };
                    self.waiting.insert(id, start);
                } else {
                    self.start(id, placement, command, env, end_at, held);
                }
            }
            action @ (AssignmentAction::Stop | AssignmentAction::Preempt { .. })
                if self.waiting.remove(&id).is_some() =>
            {
                // Never started: nothing runs, so it is over at once.
                let reason = match action {
                    AssignmentAction::Preempt { .. } => EndReason::Preempted,
                    _ => EndReason::Stopped,
                };
                self.begin_stop(id, reason, Instant::now());
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

    pub(super) fn start(
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
            Some(cmd) => match Workload::spawn(
                cmd,
                &workload_env(&placement, &device, &env),
                Marks {
                    owner: self.owner.clone(),
                    lease: id,
                },
            ) {
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
        // Billing starts at `provisioned`; metering starts at the same instant.
        let provisioned_at = Utc::now();
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
                metered_until: provisioned_at,
                util_sum: 0.0,
                util_samples: 0,
                logs_sent_total: 0,
            },
        );
        self.persist_leftovers();
        self.report_at(id, AssignmentStatus::Provisioned { device }, provisioned_at);
    }

    /// Create the slice: the device handle, the MIG instance, the held units and
    /// the share of each GPU's compute.
    #[allow(clippy::type_complexity)]
    pub(super) fn provision(
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
    pub(super) fn begin_stop(&mut self, id: Uuid, reason: EndReason, kill_at: Instant) {
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

    /// Whether a lease on one of `placement`'s GPUs is still stopping. Its
    /// workload may hold the GPU (or the MIG instance that overlaps the new
    /// one) until its grace ends, so the next tenant starts only after it:
    /// two tenants never share a slice, and the next one's billing, which
    /// starts at `provisioned`, does not pay for the wait.
    pub(super) fn handover_pending(&self, placement: &Placement) -> bool {
        self.leases.values().any(|l| {
            l.state == LeaseRunState::Stopping
                && l.placement.gpus.iter().any(|g| placement.gpus.contains(g))
        })
    }

    /// Starts the waiting leases whose slices are free now.
    fn start_waiting(&mut self) {
        let ready: Vec<Uuid> = self
            .waiting
            .iter()
            .filter(|(_, w)| !self.handover_pending(&w.placement))
            .map(|(id, _)| *id)
            .collect();
        for id in ready {
            if let Some(w) = self.waiting.remove(&id) {
                self.start(id, w.placement, w.command, w.env, w.end_at, w.held);
            }
        }
    }

    /// Workload exits, lease ends, and the load the simulated GPUs see.
    pub(super) fn housekeeping(&mut self) {
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
        self.start_waiting();
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
    pub(super) fn finish(&mut self, id: Uuid, exit: Option<Exit>) {
        let now = Utc::now();
        let Some(lease) = self.leases.get_mut(&id) else {
            return;
        };
        lease.state = LeaseRunState::Ended;
        let record = meter(id, lease, now);
        let logs = lease.workload.as_ref().map(|w| {
            w.end_the_rest();
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
        // Spool the last stretch now and then checkpoint without the lease, so
        // a crash can neither lose nor repeat it.
        self.spool_records();
        self.persist_leftovers();
    }

    pub(super) fn tear_down(&mut self, mig: Option<&(u32, MigSlice)>) {
        if let Some((gpu, slice)) = mig {
            if let Err(e) = self.backend.destroy_mig(*gpu, slice) {
                tracing::warn!(gpu, uuid = %slice.uuid, "cannot destroy the MIG instance: {e}");
            }
        }
    }

    pub(super) fn report(&mut self, id: Uuid, status: AssignmentStatus) {
        self.report_at(id, status, Utc::now());
    }

    fn report_at(&mut self, id: Uuid, status: AssignmentStatus, at: DateTime<Utc>) {
        self.outbox
            .push_back(Outgoing::Status(id, StatusReport { at, status }));
    }

    /// Queue a log upload, replacing one for the same lease still waiting.
    pub(super) fn queue_logs(&mut self, id: Uuid, upload: LogsUpload) {
        self.outbox
            .retain(|o| !matches!(o, Outgoing::Logs(other, _) if *other == id));
        self.outbox.push_back(Outgoing::Logs(id, upload));
    }
}
