//! Carrying out assignments: provisioning slices, starting and stopping
//! workloads (their end is in `ending.rs`), and the reports that go back to
//! the server.

use super::ending::remove_workdir;
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
                artifacts,
                image,
                network,
                limits,
                checkpoint,
                registry_auth,
            } => {
                if self.leases.contains_key(&id)
                    || self.waiting.contains_key(&id)
                    || self.fetching.contains_key(&id)
                {
                    return;
                }
                // An image names the code the order runs: a launcher
                // without images would run the command on the host instead.
                if image.is_some() && self.launcher.images().is_none() {
                    let reason = format!(
                        "this node runs no images (its launcher is {:?}): the order's image cannot run here",
                        self.launcher.kind()
                    );
                    tracing::warn!(lease_id = %id, "{reason}");
                    return self.report(id, AssignmentStatus::Failed { reason });
                }
                // An order without an image runs in the provider's own.
                let image = image.or_else(|| {
                    command.as_ref()?;
                    self.launcher.default_image().map(str::to_owned)
                });
                let start = WaitingStart {
                    placement,
                    command,
                    env,
                    end_at,
                    held,
                    artifacts,
                    image,
                    network,
                    limits,
                    checkpoint,
                    registry_auth,
                };
                if self.handover_pending(&start.placement) {
                    tracing::info!(lease_id = %id, "waiting for the slice's previous workload to stop");
                    self.waiting.insert(id, start);
                } else {
                    self.start(id, start);
                }
            }
            action @ (AssignmentAction::Stop | AssignmentAction::Preempt { .. })
                if self.waiting.remove(&id).is_some() || self.cancel_fetch(id) =>
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

    /// Give the lease a pool user and a working folder, then fetch its
    /// artifacts (in the background) or launch it at once.
    pub(super) fn start(&mut self, id: Uuid, start: WaitingStart) {
        // Past the server or not, a loader or runtime hook never starts
        // anything (ARCHITECTURE.md §19): the lease fails, unbilled, with the reason.
        let checked = crate::launcher::launch_file::check_lease_env(
            &start.env,
            start.command.as_deref().unwrap_or(""),
        );
        if let Err(reason) = checked {
            let reason = format!("refused: {reason}");
            tracing::warn!(lease_id = %id, "{reason}");
            return self.report(id, AssignmentStatus::Failed { reason });
        }
        let Some(user) = self.pick_user() else {
            let reason = "no free uid in the agent's --uid-pool".to_string();
            tracing::warn!(lease_id = %id, "{reason}");
            return self.report(id, AssignmentStatus::Failed { reason });
        };
        // A container's user namespace maps the pool uid to another host uid.
        let owner = self.launcher.host_owner(user, start.network);
        let workdir = match self.make_workdir(id, owner) {
            Ok(w) => w,
            Err(e) => {
                let reason = format!("cannot create the working folder: {e}");
                tracing::warn!(lease_id = %id, "{reason}");
                return self.report(id, AssignmentStatus::Failed { reason });
            }
        };
        // A container's image is pulled (when the host lacks it) beside the
        // artifacts, off the agent's loop: a pull can take minutes.
        let image = start.image.clone().zip(self.launcher.images());
        let auth = start.registry_auth.clone();
        let restore = start.checkpoint.as_ref().is_some_and(|c| c.restore);
        if start.artifacts.is_empty() && image.is_none() && !restore {
            return self.launch(id, start, user, workdir, String::new());
        }
        // A resumed order's last checkpoint is put in place with them.
        let restoring = restore.then(|| {
            (
                self.client.clone(),
                self.cfg.state_dir.clone(),
                workdir.join("checkpoint"),
            )
        });
        let (tx, done) = tokio::sync::oneshot::channel();
        let (artifacts, dir) = (start.artifacts.clone(), workdir.clone());
        let policy = crate::artifacts::Policy {
            max_bytes: self.cfg.artifact_max_bytes,
            allow_private: self.cfg.artifact_allow_private,
        };
        let task = tokio::spawn(async move {
            let mut result =
                crate::artifacts::fetch_all(&artifacts, &dir, Some(owner), policy).await;
            if let (Ok(_), Some((client, state_dir, into))) = (&result, restoring) {
                let restored =
                    super::checkpoints::restore(&client, id, &state_dir, into, owner).await;
                if let Err(reason) = restored {
                    result = Err((result.unwrap_or_default(), reason));
                }
            }
            if let (Ok(_), Some((name, images))) = (&result, image) {
                let readied =
                    tokio::task::spawn_blocking(move || images.ready(&name, auth.as_ref(), id))
                        .await
                        .unwrap_or_else(|e| Err(format!("the image pull died: {e}")));
                if let Err(reason) = readied {
                    result = Err((result.unwrap_or_default(), reason));
                }
            }
            let _ = tx.send(result);
        });
        tracing::info!(lease_id = %id, artifacts = start.artifacts.len(), "fetching artifacts and the image");
        self.fetching.insert(
            id,
            Fetching {
                start,
                user,
                workdir,
                task,
                done,
            },
        );
    }

    /// A stop for a lease still fetching: abandon the fetch. Whether it was.
    fn cancel_fetch(&mut self, id: Uuid) -> bool {
        let Some(f) = self.fetching.remove(&id) else {
            return false;
        };
        f.task.abort();
        remove_workdir(&f.workdir);
        true
    }

    /// Fetches that finished: launch their leases, or fail them (unbilled:
    /// they never reported `provisioned`) with the reason in their logs.
    fn poll_fetches(&mut self) {
        let mut finished = Vec::new();
        for (id, f) in self.fetching.iter_mut() {
            match f.done.try_recv() {
                Ok(result) => finished.push((*id, Some(result))),
                Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {
                    finished.push((*id, None))
                }
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
            }
        }
        for (id, result) in finished {
            let Some(f) = self.fetching.remove(&id) else {
                continue;
            };
            match result {
                Some(Ok(progress)) => self.launch(id, f.start, f.user, f.workdir, progress.lines),
                failed => {
                    let (lines, reason) = match failed {
                        Some(Err((p, reason))) => (p.lines, reason),
                        _ => (String::new(), "the artifact fetch died".to_string()),
                    };
                    tracing::warn!(lease_id = %id, "artifacts: {reason}");
                    remove_workdir(&f.workdir);
                    let total_bytes = lines.len() as u64;
                    self.queue_logs(
                        id,
                        LogsUpload {
                            at: Utc::now(),
                            tail: lines,
                            total_bytes,
                            complete: true,
                        },
                    );
                    self.report(id, AssignmentStatus::Failed { reason });
                }
            }
        }
    }

    /// Create the slice: the device handle, the MIG instance, the held units and
    /// the share of each GPU's compute.
    #[allow(clippy::type_complexity)]
    pub(super) fn provision(
        &mut self,
        placement: &AgentPlacement,
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
    pub(super) fn handover_pending(&self, placement: &AgentPlacement) -> bool {
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
                self.start(id, w);
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
            } else if lease.state == LeaseRunState::Running && self.disk_full(lease) {
                tracing::warn!(lease_id = %id, "the lease's disk is full: ending it");
                let deadline = Instant::now() + self.cfg.stop_grace;
                self.begin_stop(id, EndReason::DiskQuota, deadline);
            } else if lease.state == LeaseRunState::Running
                && lease.end_at.is_some_and(|end| end <= now)
            {
                let deadline = Instant::now() + self.cfg.stop_grace;
                self.begin_stop(id, EndReason::LeaseEnd, deadline);
            }
        }
        self.start_waiting();
        self.poll_fetches();
        if !self.stale_cgroups.is_empty() {
            self.stale_cgroups = crate::launcher::cgroup::remove(&self.stale_cgroups);
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

    pub(super) fn report(&mut self, id: Uuid, status: AssignmentStatus) {
        self.report_at(id, status, Utc::now());
    }

    pub(super) fn report_at(&mut self, id: Uuid, status: AssignmentStatus, at: DateTime<Utc>) {
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
