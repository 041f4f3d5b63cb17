//! Usage metering: per-lease utilization from the samples, usage records per
//! interval, and the batches that go into the spool.

use super::*;

impl Agent {
    /// Name the lease of each GPU process whose process group is a workload's.
    pub(super) fn attribute_processes(&self, metrics: &mut [GpuMetrics]) {
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

    /// Utilization and memory of each lease's slice in this sample; also the
    /// /metrics snapshot.
    pub(super) fn observe(&mut self, metrics: &[GpuMetrics]) {
        for (id, lease) in self.leases.iter_mut() {
            if lease.state != LeaseRunState::Ended {
                let pgid = lease.workload.as_ref().map(|w| w.pgid());
                lease.peak_memory.sample(*id, &lease.cgroups, pgid, metrics);
            }
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
    pub(super) fn meter_running(&mut self) {
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
    pub(super) fn spool_records(&mut self) {
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
}

/// The process group of `pid`, from `/proc/PID/stat` (fields after the name:
/// state, ppid, pgrp).
pub(super) fn process_group_of(pid: u32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
}

/// The usage record of `lease` from where it was last metered up to `until`.
pub(super) fn meter(id: Uuid, lease: &mut Lease, until: DateTime<Utc>) -> Option<UsageRecord> {
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
    let pgid = lease.workload.as_ref().map(|w| w.pgid());
    let peak_memory_mb = lease.peak_memory.take(&lease.cgroups, pgid);
    Some(UsageRecord {
        lease_id: id,
        interval_start: start,
        interval_end: until,
        tflops_s: lease.held.tflops * seconds,
        vram_gb_s: lease.held.vram_gb * seconds,
        mean_utilization: mean,
        peak_memory_mb,
    })
}
