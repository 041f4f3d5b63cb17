//! Restart safety: what a crashed agent process left running is recorded on
//! disk, and the next process kills and tears it down.

use super::*;

/// How long the leftovers of a killed agent get to die.
const LEFTOVER_KILL: Duration = Duration::from_secs(5);

/// The checkpoint file `leases.json`: what this process runs, rewritten every
/// second, so the next process knows what to clean up and what usage is owed.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Checkpoint {
    /// The last time this process was known to be alive.
    alive_at: Option<DateTime<Utc>>,
    leases: Vec<Leftover>,
}

/// One lease a previous agent process was running.
#[derive(Debug, Serialize, Deserialize)]
struct Leftover {
    lease_id: Uuid,
    pgid: Option<i32>,
    gpu: u32,
    mig_uuid: Option<String>,
    gpu_instance_id: Option<u32>,
    compute_instance_id: Option<u32>,
    held: HeldUnits,
    /// Usage is in the spool up to here.
    metered_until: DateTime<Utc>,
    /// The pool uid its workload ran as.
    #[serde(default)]
    uid: Option<u32>,
    #[serde(default)]
    workdir: Option<PathBuf>,
    #[serde(default)]
    cgroups: Vec<PathBuf>,
}

impl Agent {
    /// Write the checkpoint. Called every second, after every batch is spooled
    /// and whenever a lease starts or ends.
    pub(super) fn persist_leftovers(&self) {
        let checkpoint = Checkpoint {
            alive_at: Some(Utc::now()),
            leases: self
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
                    held: l.held,
                    metered_until: l.metered_until,
                    uid: l.uid,
                    workdir: l.workdir.clone(),
                    cgroups: l.cgroups.clone(),
                })
                .collect(),
        };
        let dir = &self.cfg.state_dir;
        let json = serde_json::to_vec(&checkpoint).unwrap_or_default();
        if let Err(e) = write_atomic(dir, &dir.join("leases.json"), &json) {
            tracing::warn!("cannot persist the running leases: {e}");
        }
    }

    /// After a crash: kill every process a previous agent process on this
    /// state directory left running (found by their marks, whether or not the
    /// checkpoint knew of them), meter what its leases held up to its last
    /// sign of life, and destroy their MIG instances; the server's next
    /// assignments start them anew.
    pub(super) async fn clean_up_leftovers(&mut self) {
        let strays = crate::reaper::marked(&self.owner, None).len();
        if strays > 0 {
            tracing::warn!(
                processes = strays,
                "ending what a previous agent process left running"
            );
            if !crate::reaper::kill_marked(&self.owner, None, LEFTOVER_KILL).await {
                tracing::error!("some processes of a previous agent process would not die");
            }
        }
        let path = self.cfg.state_dir.join("leases.json");
        let checkpoint: Checkpoint = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        // Every lease's processes run as its pool user: whatever cleared its
        // marks and left its group dies with the uid.
        for l in &checkpoint.leases {
            if let Some(uid) = l.uid {
                let left = crate::reaper::owned_by(uid).len();
                if left > 0 {
                    tracing::warn!(lease_id = %l.lease_id, uid, processes = left,
                        "ending the processes a previous agent process left running for this lease");
                }
                if !crate::reaper::kill_uid(uid, LEFTOVER_KILL).await {
                    tracing::error!(uid, "some processes of uid {uid} would not die");
                }
            }
            self.launcher.end(l.lease_id);
            if let Some(dir) = &l.workdir {
                super::ending::remove_workdir(dir);
            }
            self.stale_cgroups
                .extend(crate::launcher::cgroup::remove(&l.cgroups));
        }
        self.sweep_work_root().await;
        crate::disk::sweep_strays(&self.cfg.work_dir);
        if checkpoint.leases.is_empty() && checkpoint.alive_at.is_none() {
            return;
        }
        let spooled_until = self.spooled_until();
        for l in &checkpoint.leases {
            tracing::warn!(lease_id = %l.lease_id, "cleaning up after a previous agent process");
            // Workloads of an agent from before the marks: their group, if
            // its leader is still there (a pid number alone may have been
            // reused since: a reboot keeps the state directory).
            if let Some(pgid) = l.pgid.filter(|&g| leads_its_group(g)) {
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
            // A batch spooled just before the crash may be newer than the
            // checkpoint: never meter the same stretch twice.
            let from = spooled_until
                .get(&l.lease_id)
                .map_or(l.metered_until, |&t| t.max(l.metered_until));
            if let Some(alive_at) = checkpoint.alive_at.filter(|&a| a > from) {
                let seconds = Decimal::new((alive_at - from).num_milliseconds(), 3);
                self.records.push(UsageRecord {
                    lease_id: l.lease_id,
                    interval_start: from,
                    interval_end: alive_at,
                    tflops_s: l.held.tflops * seconds,
                    vram_gb_s: l.held.vram_gb * seconds,
                    mean_utilization: None,
                    peak_memory_mb: None,
                });
            }
        }
        self.spool_records();
        self.persist_leftovers();
    }

    /// Working folders no checkpoint knew of (a lease that was fetching, or
    /// started just before the crash): end their owners' processes when the
    /// owner is a pool uid, and remove them.
    async fn sweep_work_root(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let Ok(entries) = std::fs::read_dir(&self.cfg.work_dir) else {
            return;
        };
        let (first, last) = self.cfg.uid_pool;
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_dir() {
                continue;
            }
            let uid = meta.uid();
            if (first..=last).contains(&uid) {
                crate::reaper::kill_uid(uid, LEFTOVER_KILL).await;
            }
            tracing::warn!(dir = %entry.path().display(), "removing a working folder a previous agent process left");
            super::ending::remove_workdir(&entry.path());
        }
    }

    /// The latest interval end per lease among the batches still in the spool.
    fn spooled_until(&self) -> BTreeMap<Uuid, DateTime<Utc>> {
        let mut until = BTreeMap::new();
        for seq in self.spool.pending().unwrap_or_default() {
            for r in self.spool.load(seq).map(|b| b.records).unwrap_or_default() {
                let t = until.entry(r.lease_id).or_insert(r.interval_end);
                *t = (*t).max(r.interval_end);
            }
        }
        until
    }
}

/// Whether a live process `pgid` leads its own process group: a group
/// recorded by an agent from before the marks, not a pid number reused by
/// some process since.
fn leads_its_group(pgid: i32) -> bool {
    crate::reaper::stat_of(pgid).is_some_and(|(state, group)| state != 'Z' && group == pgid)
}
