//! The simulated backend: a fleet from a TOML file, with MIG bookkeeping that
//! follows the hardware's placement rules and metrics that follow the work the
//! leases put on each GPU.

mod fleet;
#[cfg(test)]
mod tests;

pub use fleet::{Fleet, FleetGpu};

use super::{BackendError, GpuBackend, Inventory, MigSlice, SliceLoad};
use gpuex_wire::catalog::{MigProfile, COMPUTE_SLICES};
use gpuex_wire::protocol::{
    BackendKind, GpuFields, GpuInventory, GpuMetrics, MigInstanceInventory, MigInstanceMetrics,
    MigMode, ProcessMetrics,
};
use std::time::Instant;
use uuid::Uuid;

/// Bytes in a MiB and in a catalog GB, for the MiB figures NVML reports.
const MIB: f64 = 1_048_576.0;
const GB: f64 = 1e9;

/// A pretend node.
pub struct SimulatedBackend {
    fleet: Fleet,
    hostname: String,
    gpus: Vec<SimGpu>,
    loads: Vec<SliceLoad>,
    last_sample: Option<Instant>,
    noise: u64,
    /// The GPUs scrubbed so far, in order.
    scrubs: Vec<u32>,
}

struct SimGpu {
    spec: FleetGpu,
    uuid: String,
    instances: Vec<SimMig>,
    next_gi: u32,
    energy_mj: f64,
    nvlink_kib: f64,
}

struct SimMig {
    profile: &'static MigProfile,
    start: u8,
    uuid: String,
    gpu_instance_id: u32,
}

impl SimulatedBackend {
    /// A backend for `fleet`; GPU UUIDs derive from `hostname` and the index, so
    /// a restarted agent registers the same GPUs.
    pub fn new(fleet: Fleet, hostname: String) -> Self {
        let gpus = fleet
            .gpus
            .iter()
            .enumerate()
            .map(|(i, spec)| SimGpu {
                spec: *spec,
                uuid: format!("GPU-{}", stable_uuid(&format!("{hostname}/{i}"))),
                instances: Vec::new(),
                next_gi: 1,
                energy_mj: 0.0,
                nvlink_kib: 0.0,
            })
            .collect();
        let noise = fnv(hostname.as_bytes());
        SimulatedBackend {
            fleet,
            hostname,
            gpus,
            loads: Vec::new(),
            last_sample: None,
            noise,
            scrubs: Vec::new(),
        }
    }

    fn gpu_mut(&mut self, index: u32) -> Result<&mut SimGpu, BackendError> {
        self.gpus
            .get_mut(index as usize)
            .ok_or(BackendError::NoSuchGpu(index))
    }

    fn peers(&self, index: u32) -> Vec<u32> {
        let mut peers: Vec<u32> = self
            .fleet
            .nvlink
            .iter()
            .filter_map(|&(a, b)| match (a == index, b == index) {
                (true, _) => Some(b),
                (_, true) => Some(a),
                _ => None,
            })
            .collect();
        peers.sort_unstable();
        peers
    }

    /// A deterministic jitter in [-1, 1] (xorshift), so metrics look alive.
    fn jitter(&mut self) -> f64 {
        let mut x = self.noise | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.noise = x;
        (x % 2001) as f64 / 1000.0 - 1.0
    }
}

/// Board power (W) and max SM / memory clocks (MHz) by architecture.
fn power_and_clocks(architecture: &str) -> (f64, f64, f64) {
    match architecture {
        "Hopper" => (700.0, 1980.0, 2619.0),
        "Blackwell" => (1000.0, 1965.0, 3996.0),
        "Ampere" => (400.0, 1410.0, 1593.0),
        "Ada Lovelace" => (350.0, 2520.0, 9001.0),
        "Volta" => (300.0, 1530.0, 877.0),
        _ => (250.0, 1500.0, 1000.0),
    }
}

impl GpuBackend for SimulatedBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Simulated
    }

    fn inventory(&mut self) -> Result<Inventory, BackendError> {
        let gpus = (0..self.gpus.len() as u32)
            .map(|i| {
                let gpu = &self.gpus[i as usize];
                let model = gpu.spec.model;
                GpuInventory {
                    index: i,
                    model: Some(model.name.to_string()),
                    product_name: format!("NVIDIA {} (simulated)", model.name),
                    uuid: gpu.uuid.clone(),
                    memory_mib: (f64::from(model.memory_gb) * GB / MIB) as u64,
                    mig_capable: model.mig_capable(),
                    mig_mode: model.mig_capable().then_some(if gpu.spec.mig_enabled {
                        MigMode::Enabled
                    } else {
                        MigMode::Disabled
                    }),
                    mig_mode_pending: None,
                    mig_instances: gpu
                        .instances
                        .iter()
                        .map(|m| MigInstanceInventory {
                            profile: Some(m.profile.name.to_string()),
                            start: Some(m.start),
                            uuid: m.uuid.clone(),
                            gpu_instance_id: Some(m.gpu_instance_id),
                        })
                        .collect(),
                    nvlink_peers: self.peers(i),
                    pci_bus_id: Some(format!("00000000:{:02X}:00.0", 0x18 + i * 0x10)),
                    driver_version: self.fleet.driver_version.clone(),
                    cuda_version: self.fleet.cuda_version.clone(),
                    calibration_ratio: None,
                }
            })
            .collect();
        Ok(Inventory {
            hostname: self.hostname.clone(),
            host: self.fleet.host,
            gpus,
        })
    }

    fn sample(&mut self) -> Vec<GpuMetrics> {
        let now = Instant::now();
        let dt = self
            .last_sample
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        self.last_sample = Some(now);
        let mut out = Vec::with_capacity(self.gpus.len());
        for i in 0..self.gpus.len() {
            let index = i as u32;
            let loads: Vec<SliceLoad> = self
                .loads
                .iter()
                .filter(|l| l.gpu == index)
                .cloned()
                .collect();
            let busy_share: f64 = loads
                .iter()
                .filter(|l| l.busy)
                .map(|l| l.compute_share)
                .sum::<f64>()
                .min(1.0);
            let busy_mem: f64 = loads
                .iter()
                .filter(|l| l.busy)
                .map(|l| l.memory_mib * 0.85)
                .sum();
            let jitter = self.jitter();
            let has_nvlink = !self.peers(index).is_empty();
            let gpu = &mut self.gpus[i];
            let model = gpu.spec.model;
            let (tdp, max_sm, mem_clock) = power_and_clocks(model.architecture);
            let u = if busy_share > 0.0 {
                (busy_share * (0.93 + 0.04 * jitter)).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let total = f64::from(model.memory_gb) * GB / MIB;
            let reserved = (total * 0.005).round();
            let used = (420.0 + busy_mem).min(total - reserved).round();
            let power = tdp * 0.12 + tdp * 0.8 * u + 3.0 * jitter.abs();
            gpu.energy_mj += power * dt * 1000.0;
            if has_nvlink {
                gpu.nvlink_kib += u * 40.0e6 * dt;
            }
            let fields = GpuFields {
                gpu_util: Some((u * 100.0).round()),
                mem_copy_util: Some((u * 55.0).round()),
                enc_util: Some(0.0),
                dec_util: Some(0.0),
                fb_total: Some(total.round()),
                fb_used: Some(used),
                fb_free: Some((total - used - reserved).round()),
                fb_reserved: Some(reserved),
                gpu_temp: Some((31.0 + 45.0 * u).round()),
                memory_temp: (model.architecture != "Volta").then(|| (35.0 + 40.0 * u).round()),
                power_usage: Some((power * 1000.0).round() / 1000.0),
                power_limit: Some(tdp),
                total_energy: Some(gpu.energy_mj.round()),
                sm_clock: Some(if u > 0.0 { max_sm } else { 345.0 }),
                mem_clock: Some(mem_clock),
                fan_speed: None,
                pstate: Some(if u > 0.0 { 0.0 } else { 8.0 }),
                pcie_tx: Some((u * 1.8e6 * (1.0 + 0.1 * jitter)).round()),
                pcie_rx: Some((u * 2.4e6 * (1.0 + 0.1 * jitter)).round()),
                pcie_replay: Some(0.0),
                nvlink_tx: has_nvlink.then(|| (gpu.nvlink_kib / 2.0).round()),
                nvlink_rx: has_nvlink.then(|| (gpu.nvlink_kib / 2.0).round()),
                nvlink_bandwidth: has_nvlink.then(|| gpu.nvlink_kib.round()),
                ecc_sbe_volatile: Some(0.0),
                ecc_dbe_volatile: Some(0.0),
                ecc_sbe_aggregate: Some(0.0),
                ecc_dbe_aggregate: Some(0.0),
                remapped_rows_correctable: (model.architecture != "Volta").then_some(0.0),
                remapped_rows_uncorrectable: (model.architecture != "Volta").then_some(0.0),
                clock_throttle_reasons: Some(if u > 0.0 { 0.0 } else { 1.0 }),
                compute_processes: Some(loads.iter().filter(|l| l.busy).count() as f64),
            };
            let mig_instances = gpu
                .instances
                .iter()
                .map(|m| {
                    let load = loads
                        .iter()
                        .find(|l| l.mig_uuid.as_deref() == Some(m.uuid.as_str()) && l.busy);
                    let size = m.profile.memory_gb as f64 * GB / MIB;
                    let used = load.map_or(12.0, |l| 12.0 + l.memory_mib * 0.85).min(size);
                    MigInstanceMetrics {
                        uuid: m.uuid.clone(),
                        profile: Some(m.profile.name.to_string()),
                        start: Some(m.start),
                        gpu_instance_id: Some(m.gpu_instance_id),
                        gr_engine_active: Some(if load.is_some() { 0.92 } else { 0.0 }),
                        fb_used_mib: Some(used.round()),
                        fb_free_mib: Some((size - used).round()),
                    }
                })
                .collect();
            let processes = loads
                .iter()
                .filter(|l| l.busy)
                .filter_map(|l| {
                    Some(ProcessMetrics {
                        pid: l.pid?,
                        lease_id: Some(l.lease_id),
                        used_memory_mib: Some((l.memory_mib * 0.85).round()),
                        sm_util: Some((l.compute_share * 92.0).round()),
                        gpu_instance_id: gpu
                            .instances
                            .iter()
                            .find(|m| l.mig_uuid.as_deref() == Some(m.uuid.as_str()))
                            .map(|m| m.gpu_instance_id),
                    })
                })
                .collect();
            out.push(GpuMetrics {
                index,
                uuid: gpu.uuid.clone(),
                fields,
                mig_instances,
                processes,
                scrub: None,
            });
        }
        out
    }

    fn set_load(&mut self, loads: &[SliceLoad]) {
        self.loads = loads.to_vec();
    }

    fn create_mig(&mut self, gpu: u32, profile: &str, start: u8) -> Result<MigSlice, BackendError> {
        let g = self.gpu_mut(gpu)?;
        let layout = g.spec.model.mig.ok_or(BackendError::NotMigCapable(gpu))?;
        if !g.spec.mig_enabled {
            return Err(BackendError::MigDisabled(gpu));
        }
        let p = layout
            .profile(profile)
            .ok_or_else(|| BackendError::UnknownProfile {
                gpu,
                profile: profile.to_string(),
            })?;
        if !p.starts.contains(&start) {
            return Err(BackendError::IllegalPlacement {
                gpu,
                profile: profile.to_string(),
                start,
            });
        }
        let used_mask = g
            .instances
            .iter()
            .fold(0u8, |m, i| m | i.profile.slice_mask(i.start));
        let used_compute: u8 = g.instances.iter().map(|i| i.profile.compute_slices).sum();
        if used_mask & p.slice_mask(start) != 0 || used_compute + p.compute_slices > COMPUTE_SLICES
        {
            return Err(BackendError::Overlap {
                gpu,
                profile: profile.to_string(),
                start,
            });
        }
        let uuid = format!("MIG-{}", Uuid::new_v4());
        let gpu_instance_id = g.next_gi;
        g.next_gi += 1;
        g.instances.push(SimMig {
            profile: p,
            start,
            uuid: uuid.clone(),
            gpu_instance_id,
        });
        Ok(MigSlice {
            uuid,
            gpu_instance_id: Some(gpu_instance_id),
            compute_instance_id: Some(0),
        })
    }

    fn destroy_mig(&mut self, gpu: u32, slice: &MigSlice) -> Result<(), BackendError> {
        let g = self.gpu_mut(gpu)?;
        let before = g.instances.len();
        g.instances.retain(|m| m.uuid != slice.uuid);
        if g.instances.len() == before {
            return Err(BackendError::NoSuchInstance {
                gpu,
                uuid: slice.uuid.clone(),
            });
        }
        Ok(())
    }

    /// Nothing to clear on simulated memory: the scrub is recorded (the
    /// agent counts it in `/metrics` as `gpuex_agent_gpu_scrubs_total`).
    fn scrub(&mut self, gpu: u32) -> Result<(), BackendError> {
        self.gpu_mut(gpu)?;
        self.scrubs.push(gpu);
        Ok(())
    }
}

/// FNV-1a, for stable synthetic identifiers.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// splitmix64's finalizer: nearby seeds give unrelated bits.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A UUID that depends only on `seed`.
fn stable_uuid(seed: &str) -> Uuid {
    let hi = mix(fnv(seed.as_bytes()));
    let lo = mix(fnv(format!("{seed}#").as_bytes()));
    uuid::Builder::from_u128((u128::from(hi) << 64) | u128::from(lo))
        .with_variant(uuid::Variant::RFC4122)
        .with_version(uuid::Version::Random)
        .into_uuid()
}
