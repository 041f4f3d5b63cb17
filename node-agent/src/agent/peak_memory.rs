//! The most memory a lease's workload holds per usage interval (its records'
//! `peak_memory_mb`). On real GPUs: the GPU memory of the lease's processes
//! at each metrics sample. On the simulated backend: the host memory that
//! stands in for the slice's GPU memory (see the workload's RLIMIT_AS in
//! [`crate::launcher::exec`]): its memory cgroup's own peak where it has
//! one, else the resident memory of its process group at each sample.

use super::metering::process_group_of;
use crate::launcher::cgroup;
use gpuex_wire::protocol::GpuMetrics;
use std::path::PathBuf;
use uuid::Uuid;

/// One lease's peak over the interval being metered.
#[derive(Debug)]
pub(super) struct PeakMemory {
    /// The workload's memory is the host's (the simulated backend).
    host: bool,
    /// The slice's GPU memory in bytes, which the host's stands in for.
    slice_bytes: Option<u64>,
    /// The most seen this interval, bytes.
    seen: Option<u64>,
    /// A cgroup peak that cannot be reset (v2), as last read at a meter.
    lifetime_peak: Option<u64>,
}

impl PeakMemory {
    /// For a workload on the simulated backend, whose slice has `slice_bytes`.
    pub(super) fn host(slice_bytes: Option<u64>) -> PeakMemory {
        PeakMemory {
            host: true,
            slice_bytes,
            seen: None,
            lifetime_peak: None,
        }
    }

    /// For a workload on real GPUs.
    pub(super) fn gpu() -> PeakMemory {
        PeakMemory {
            host: false,
            ..PeakMemory::host(None)
        }
    }

    fn see(&mut self, bytes: Option<u64>) {
        if let Some(b) = bytes {
            self.seen = Some(self.seen.map_or(b, |s| s.max(b)));
        }
    }

    /// One metrics sample (its processes already attributed to leases).
    pub(super) fn sample(
        &mut self,
        lease: Uuid,
        cgroups: &[PathBuf],
        pgid: Option<i32>,
        metrics: &[GpuMetrics],
    ) {
        let now = if self.host {
            cgroup::memory_use(cgroups)
                .map(|m| m.current)
                .or_else(|| pgid.and_then(group_rss))
        } else {
            gpu_memory(lease, metrics)
        };
        self.see(now);
    }

    /// The interval's peak in MB (10⁶ bytes, rounded up), and the next
    /// interval starts; `None` when nothing was seen.
    pub(super) fn take(&mut self, cgroups: &[PathBuf], pgid: Option<i32>) -> Option<u64> {
        if self.host {
            match cgroup::memory_use(cgroups) {
                Some(m) => {
                    self.see(Some(m.current));
                    match m.peak {
                        Some(peak) if m.resettable => {
                            self.see(Some(peak));
                            cgroup::reset_peak(cgroups);
                        }
                        Some(peak) => {
                            // A peak since the cgroup was made that grew
                            // since the last meter was reached in this
                            // interval; one that did not says nothing of it.
                            if self.lifetime_peak.is_none_or(|last| peak > last) {
                                self.see(Some(peak));
                            }
                            self.lifetime_peak = Some(peak);
                        }
                        None => {}
                    }
                }
                None => self.see(pgid.and_then(group_rss)),
            }
        }
        let bytes = self.seen.take()?;
        // A cgroup also counts the workload's page cache and tmpfs, which a
        // GPU's memory would not hold: the stand-in is at most the slice.
        let bytes = match self.slice_bytes {
            Some(slice) if self.host => bytes.min(slice),
            _ => bytes,
        };
        Some(bytes.div_ceil(1_000_000))
    }
}

/// The GPU memory of the processes attributed to `lease`, bytes; `None`
/// when the backend reports none of them.
fn gpu_memory(lease: Uuid, metrics: &[GpuMetrics]) -> Option<u64> {
    let mib: Vec<f64> = metrics
        .iter()
        .flat_map(|m| &m.processes)
        .filter(|p| p.lease_id == Some(lease))
        .filter_map(|p| p.used_memory_mib)
        .filter(|m| m.is_finite() && *m >= 0.0)
        .collect();
    // A saturating cast: the figures are finite and not negative.
    (!mib.is_empty()).then(|| (mib.iter().sum::<f64>() * 1_048_576.0) as u64)
}

/// The resident memory of the processes in group `pgid`, bytes (pages
/// shared between them count once per process); `None` when none is left.
fn group_rss(pgid: i32) -> Option<u64> {
    let mut total = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if process_group_of(pid) != Some(pgid) {
            continue;
        }
        if let Some(kib) = rss_kib(pid) {
            total = Some(total.unwrap_or(0) + kib * 1024);
        }
    }
    total
}

/// `VmRSS` of `/proc/PID/status`, KiB (kernel threads and zombies have none).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuex_wire::protocol::ProcessMetrics;

    fn process(lease: Option<Uuid>, mib: f64) -> ProcessMetrics {
        ProcessMetrics {
            pid: 1,
            lease_id: lease,
            used_memory_mib: Some(mib),
            sm_util: None,
            gpu_instance_id: None,
        }
    }

    #[test]
    fn on_gpus_the_peak_is_the_largest_sum_of_the_leases_processes_memory() {
        let lease = Uuid::from_u128(1);
        let other = Uuid::from_u128(2);
        let mut gpu = GpuMetrics {
            index: 0,
            uuid: "GPU-a".into(),
            fields: Default::default(),
            mig_instances: Vec::new(),
            processes: Vec::new(),
            scrub: None,
        };
        let mut peak = PeakMemory::gpu();
        gpu.processes = vec![process(Some(lease), 1000.0), process(Some(other), 9000.0)];
        peak.sample(lease, &[], None, std::slice::from_ref(&gpu));
        gpu.processes = vec![process(Some(lease), 1000.0), process(Some(lease), 500.0)];
        peak.sample(lease, &[], None, std::slice::from_ref(&gpu));
        gpu.processes.clear();
        peak.sample(lease, &[], None, std::slice::from_ref(&gpu));
        // 1500 MiB = 1572.864 MB, rounded up.
        assert_eq!(peak.take(&[], None), Some(1573));
        assert_eq!(peak.take(&[], None), None, "each interval starts empty");
    }

    #[test]
    fn without_cgroups_the_host_peak_is_the_process_groups_resident_memory() {
        let own = nix::unistd::getpgrp().as_raw();
        let mut peak = PeakMemory::host(None);
        peak.sample(Uuid::nil(), &[], Some(own), &[]);
        let mb = peak.take(&[], Some(own)).unwrap();
        assert!(mb > 0, "this test's own group holds memory");
        let mut capped = PeakMemory::host(Some(1_000_000));
        assert_eq!(capped.take(&[], Some(own)), Some(1), "at most the slice");
    }

    #[test]
    fn a_v2_lifetime_peak_counts_only_in_the_interval_it_grew() {
        let dir = tempfile::tempdir().unwrap();
        let cg = vec![dir.path().to_path_buf()];
        let write = |current: u64, peak: u64| {
            std::fs::write(dir.path().join("memory.current"), current.to_string()).unwrap();
            std::fs::write(dir.path().join("memory.peak"), peak.to_string()).unwrap();
        };
        let mut peak = PeakMemory::host(None);
        write(1_000_000, 5_000_000);
        assert_eq!(peak.take(&cg, None), Some(5));
        write(2_000_000, 5_000_000);
        peak.sample(Uuid::nil(), &cg, None, &[]);
        write(1_000_000, 5_000_000);
        assert_eq!(
            peak.take(&cg, None),
            Some(2),
            "the old peak is not this one's"
        );
        write(1_000_000, 7_000_000);
        assert_eq!(peak.take(&cg, None), Some(7));
    }

    #[test]
    fn a_v1_peak_is_read_then_reset_for_the_next_interval() {
        let dir = tempfile::tempdir().unwrap();
        let cg = vec![dir.path().to_path_buf()];
        std::fs::write(dir.path().join("memory.usage_in_bytes"), "1000000").unwrap();
        std::fs::write(dir.path().join("memory.max_usage_in_bytes"), "3000000").unwrap();
        let mut peak = PeakMemory::host(None);
        assert_eq!(peak.take(&cg, None), Some(3));
        // The stand-in file took the reset as the kernel's would.
        let reset = std::fs::read_to_string(dir.path().join("memory.max_usage_in_bytes")).unwrap();
        assert_eq!(reset, "0");
        assert_eq!(peak.take(&cg, None), Some(1), "the current usage at least");
    }
}
