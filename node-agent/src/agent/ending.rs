//! The end of a lease: metering its last stretch, its final logs, and what
//! it leaves outside its slice (processes, folder, launch file, cgroups,
//! the launcher's containers); GPU memory scrubbed before the next tenant.

use super::metering::meter;
use super::*;

impl Agent {
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
        // A workload that stopped on its own with its disk full most likely
        // died of it (ENOSPC): the buyer is told so.
        let full = self.cfg.disk_quota_mib > 0
            && lease.workdir.as_deref().is_some_and(crate::disk::is_full);
        let reason = match lease.end_reason {
            Some(reason) => reason,
            None if full => EndReason::DiskQuota,
            None => EndReason::Exited,
        };
        let mig = lease.mig.take();
        let (uid, workdir) = (lease.uid.take(), lease.workdir.take());
        let cgroups = std::mem::take(&mut lease.cgroups);
        let scrub: Vec<u32> = match lease.placement.partition {
            Partition::Mig { .. } => Vec::new(),
            _ => lease.placement.gpus.clone(),
        };
        self.records.extend(record);
        self.tear_down(mig.as_ref());
        self.end_lease_files(id, uid, workdir, &cgroups);
        self.scrub_freed(&scrub);
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

    /// What a lease leaves outside its slice: its pool user's processes
    /// (whatever escaped its group and marks), its working folder, its
    /// cgroups, and what its launcher made.
    pub(super) fn end_lease_files(
        &mut self,
        id: Uuid,
        uid: Option<u32>,
        workdir: Option<PathBuf>,
        cgroups: &[PathBuf],
    ) {
        if let Some(uid) = uid {
            crate::reaper::signal_uid(uid, Signal::SIGKILL);
        }
        for pid in crate::launcher::cgroup::pids(cgroups) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
        self.launcher.end(id);
        remove_launch_file(&self.launch_path(id));
        if let Some(dir) = workdir {
            self.retire_workdir(id, dir);
        }
        self.stale_cgroups
            .extend(crate::launcher::cgroup::remove(cgroups));
    }

    /// Clear the memory of the whole or shared GPUs no live lease holds any
    /// more, before their next tenant (a MIG instance is destroyed instead).
    fn scrub_freed(&mut self, gpus: &[u32]) {
        for &gpu in gpus {
            let held = self
                .leases
                .values()
                .any(|l| l.state != LeaseRunState::Ended && l.placement.gpus.contains(&gpu));
            if held {
                continue;
            }
            let cleared = match self.backend.scrub(gpu) {
                Ok(()) => {
                    tracing::info!(gpu, "scrubbed GPU memory before its next lease");
                    if let Ok(mut s) = self.snapshot.lock() {
                        *s.scrubs.entry(gpu).or_insert(0) += 1;
                    }
                    true
                }
                Err(e) => {
                    tracing::error!(gpu, "cannot scrub GPU memory: {e}");
                    false
                }
            };
            // The provider sees each GPU's scrubs in the node's heartbeat.
            let report = self.scrubs.entry(gpu).or_insert(ScrubReport {
                done: 0,
                failed: 0,
                last_at: Utc::now(),
                last_ok: cleared,
            });
            if cleared {
                report.done += 1;
            } else {
                report.failed += 1;
            }
            report.last_at = Utc::now();
            report.last_ok = cleared;
        }
    }

    /// Whether `lease`'s disk has filled up.
    pub(super) fn disk_full(&self, lease: &Lease) -> bool {
        self.cfg.disk_quota_mib > 0 && lease.workdir.as_deref().is_some_and(crate::disk::is_full)
    }

    pub(super) fn tear_down(&mut self, mig: Option<&(u32, MigSlice)>) {
        if let Some((gpu, slice)) = mig {
            if let Err(e) = self.backend.destroy_mig(*gpu, slice) {
                tracing::warn!(gpu, uuid = %slice.uuid, "cannot destroy the MIG instance: {e}");
            }
        }
    }
}

/// Remove a lease's launch file if its helper did not consume it (the
/// container's stays for the container's life).
pub(super) fn remove_launch_file(path: &std::path::Path) {
    if let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(file = %path.display(), "cannot remove the launch file: {e}");
        }
    }
}

/// Remove a lease's working folder and everything in it (its disk first).
pub(super) fn remove_workdir(dir: &std::path::Path) {
    crate::disk::remove(dir);
    if let Err(e) = std::fs::remove_dir_all(dir) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(dir = %dir.display(), "cannot remove the working folder: {e}");
        }
    }
}
