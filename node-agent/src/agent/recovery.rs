//! Restart safety: what a crashed agent process left running is recorded on
//! disk, and the next process kills and tears it down.

use super::*;

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

impl Agent {
    pub(super) fn persist_leftovers(&self) {
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
    pub(super) fn clean_up_leftovers(&mut self) {
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
