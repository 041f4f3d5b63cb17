//! The NVML backend: real GPUs through the driver.
//!
//! Every value comes through the thin [`NvmlApi`] layer, so tests run this
//! backend against a fake driver. An unsupported call or a missing library
//! leaves the value absent; it never panics.

pub mod api;
#[cfg(test)]
mod fake;
mod real;
#[cfg(test)]
mod tests;

pub use api::{NvmlApi, NvmlErr};
pub use real::RealNvml;

use super::{host_resources, system_hostname, BackendError, GpuBackend, Inventory, MigSlice};
use api::{field, ClockKind, MemInfo};
use gpuex_wire::catalog;
use gpuex_wire::protocol::{
    BackendKind, GpuFields, GpuInventory, GpuMetrics, MigInstanceInventory, MigInstanceMetrics,
    MigMode, ProcessMetrics,
};

const MIB: f64 = 1_048_576.0;

/// GPUs through an [`NvmlApi`].
pub struct NvmlBackend<A: NvmlApi> {
    api: A,
    hostname: String,
}

impl NvmlBackend<RealNvml> {
    /// The backend on the machine's driver; without one it has no GPUs.
    pub fn open(hostname: Option<String>) -> Self {
        let api = RealNvml::load();
        if let Some(e) = api.load_error() {
            tracing::warn!("{e}; the nvml backend reports no GPUs");
        }
        NvmlBackend::with_api(api, hostname.unwrap_or_else(system_hostname))
    }
}

impl<A: NvmlApi> NvmlBackend<A> {
    pub fn with_api(api: A, hostname: String) -> Self {
        NvmlBackend { api, hostname }
    }

    fn gpu_count(&self) -> u32 {
        self.api.device_count().unwrap_or(0)
    }

    fn catalog_model(&self, gpu: u32) -> Option<&'static catalog::GpuModel> {
        let name = self.api.name(gpu).ok()?;
        let memory = self.api.memory_info(gpu).ok().map_or(0, |m| m.total);
        catalog_model_for(&name, memory / (1 << 20)).and_then(catalog::lookup)
    }

    fn gpu_inventory(&self, gpu: u32, bus_ids: &[(u32, String)]) -> Option<GpuInventory> {
        let uuid = self.api.uuid(gpu).ok()?;
        let product_name = self.api.name(gpu).unwrap_or_else(|_| "unknown".into());
        let memory_mib = self.api.memory_info(gpu).map_or(0, |m| m.total / (1 << 20));
        let mig = self.api.mig_mode(gpu).ok();
        let mode = |enabled: bool| {
            if enabled {
                MigMode::Enabled
            } else {
                MigMode::Disabled
            }
        };
        let nvlink_peers = self
            .api
            .nvlink_remote_bus_ids(gpu)
            .unwrap_or_default()
            .iter()
            .filter_map(|remote| {
                bus_ids
                    .iter()
                    .find(|(_, id)| same_bus_id(id, remote))
                    .map(|(i, _)| *i)
            })
            .filter(|&i| i != gpu)
            .collect::<std::collections::BTreeSet<u32>>()
            .into_iter()
            .collect();
        let mig_instances = match mig {
            Some((true, _)) => self
                .api
                .mig_devices(gpu)
                .unwrap_or_default()
                .into_iter()
                .map(|m| MigInstanceInventory {
                    profile: None,
                    start: None,
                    uuid: m.uuid,
                    gpu_instance_id: None,
                })
                .collect(),
            _ => Vec::new(),
        };
        Some(GpuInventory {
            index: gpu,
            model: catalog_model_for(&product_name, memory_mib).map(str::to_string),
            product_name,
            uuid,
            memory_mib,
            mig_capable: mig.is_some(),
            mig_mode: mig.map(|(current, _)| mode(current)),
            mig_mode_pending: mig
                .filter(|(current, pending)| current != pending)
                .map(|(_, pending)| mode(pending)),
            mig_instances,
            nvlink_peers,
            pci_bus_id: self.api.pci_bus_id(gpu).ok(),
            driver_version: self
                .api
                .driver_version()
                .unwrap_or_else(|_| "unknown".into()),
            cuda_version: self.api.cuda_driver_version().map_or_else(
                |_| "unknown".into(),
                |v| format!("{}.{}", v / 1000, v % 1000 / 10),
            ),
            calibration_ratio: None,
        })
    }

    fn gpu_sample(&self, gpu: u32) -> Option<GpuMetrics> {
        let uuid = self.api.uuid(gpu).ok()?;
        let a = &self.api;
        let memory = a.memory_info(gpu).ok();
        let mib = |f: fn(&MemInfo) -> u64| memory.as_ref().map(|m| (f(m) as f64 / MIB).round());
        let util = a.utilization(gpu).ok();
        let fv = a
            .field_values(
                gpu,
                &[
                    field::MEMORY_TEMP,
                    field::NVLINK_THROUGHPUT_DATA_TX,
                    field::NVLINK_THROUGHPUT_DATA_RX,
                    field::ECC_SBE_VOL_TOTAL,
                    field::ECC_DBE_VOL_TOTAL,
                    field::ECC_SBE_AGG_TOTAL,
                    field::ECC_DBE_AGG_TOTAL,
                    field::REMAPPED_COR,
                    field::REMAPPED_UNC,
                ],
            )
            .unwrap_or_default();
        let f = |i: usize| fv.get(i).and_then(|v| v.as_ref().ok().copied());
        let procs = a.compute_processes(gpu).ok();
        let fields = GpuFields {
            gpu_util: util.map(|u| f64::from(u.0)),
            mem_copy_util: util.map(|u| f64::from(u.1)),
            enc_util: a.encoder_utilization(gpu).ok().map(f64::from),
            dec_util: a.decoder_utilization(gpu).ok().map(f64::from),
            fb_total: mib(|m| m.total),
            fb_used: mib(|m| m.used),
            fb_free: mib(|m| m.free),
            fb_reserved: mib(|m| m.reserved),
            gpu_temp: a.temperature(gpu).ok().map(f64::from),
            memory_temp: f(0),
            power_usage: a.power_usage_mw(gpu).ok().map(|mw| f64::from(mw) / 1000.0),
            power_limit: a.power_limit_mw(gpu).ok().map(|mw| f64::from(mw) / 1000.0),
            total_energy: a.total_energy_mj(gpu).ok().map(|mj| mj as f64),
            sm_clock: a.clock_mhz(gpu, ClockKind::Sm).ok().map(f64::from),
            mem_clock: a.clock_mhz(gpu, ClockKind::Memory).ok().map(f64::from),
            fan_speed: a.fan_speed(gpu).ok().map(f64::from),
            pstate: a.performance_state(gpu).ok().map(f64::from),
            pcie_tx: a.pcie_throughput(gpu, true).ok().map(f64::from),
            pcie_rx: a.pcie_throughput(gpu, false).ok().map(f64::from),
            pcie_replay: a.pcie_replay_counter(gpu).ok().map(f64::from),
            nvlink_tx: f(1),
            nvlink_rx: f(2),
            nvlink_bandwidth: f(1).zip(f(2)).map(|(tx, rx)| tx + rx),
            ecc_sbe_volatile: f(3),
            ecc_dbe_volatile: f(4),
            ecc_sbe_aggregate: f(5),
            ecc_dbe_aggregate: f(6),
            remapped_rows_correctable: f(7),
            remapped_rows_uncorrectable: f(8),
            clock_throttle_reasons: a.throttle_reasons(gpu).ok().map(|b| b as f64),
            compute_processes: procs.as_ref().map(|p| p.len() as f64),
        };
        let mig_instances = match a.mig_mode(gpu) {
            Ok((true, _)) => a
                .mig_devices(gpu)
                .unwrap_or_default()
                .into_iter()
                .map(|m| MigInstanceMetrics {
                    uuid: m.uuid,
                    profile: None,
                    start: None,
                    gpu_instance_id: None,
                    gr_engine_active: None,
                    fb_used_mib: m.memory.map(|x| (x.used as f64 / MIB).round()),
                    fb_free_mib: m.memory.map(|x| (x.free as f64 / MIB).round()),
                })
                .collect(),
            _ => Vec::new(),
        };
        let sm_utils = a.process_sm_utilization(gpu).unwrap_or_default();
        let processes = procs
            .unwrap_or_default()
            .into_iter()
            .map(|p| ProcessMetrics {
                pid: p.pid,
                lease_id: None,
                used_memory_mib: p.used_bytes.map(|b| (b as f64 / MIB).round()),
                sm_util: sm_utils
                    .iter()
                    .find(|(pid, _)| *pid == p.pid)
                    .map(|(_, u)| f64::from(*u)),
                gpu_instance_id: p.gpu_instance_id,
            })
            .collect();
        Some(GpuMetrics {
            index: gpu,
            uuid,
            fields,
            mig_instances,
            processes,
            scrub: None,
        })
    }

    fn mig_uuids(&self, gpu: u32) -> Vec<String> {
        self.api
            .mig_devices(gpu)
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.uuid)
            .collect()
    }
}

impl<A: NvmlApi> GpuBackend for NvmlBackend<A> {
    fn kind(&self) -> BackendKind {
        BackendKind::Nvml
    }

    fn inventory(&mut self) -> Result<Inventory, BackendError> {
        let n = self.gpu_count();
        let bus_ids: Vec<(u32, String)> = (0..n)
            .filter_map(|i| self.api.pci_bus_id(i).ok().map(|b| (i, b)))
            .collect();
        Ok(Inventory {
            hostname: self.hostname.clone(),
            host: host_resources(),
            gpus: (0..n)
                .filter_map(|i| self.gpu_inventory(i, &bus_ids))
                .collect(),
        })
    }

    fn sample(&mut self) -> Vec<GpuMetrics> {
        (0..self.gpu_count())
            .filter_map(|i| self.gpu_sample(i))
            .collect()
    }

    fn create_mig(&mut self, gpu: u32, profile: &str, start: u8) -> Result<MigSlice, BackendError> {
        if gpu >= self.gpu_count() {
            return Err(BackendError::NoSuchGpu(gpu));
        }
        match self.api.mig_mode(gpu) {
            Err(_) => return Err(BackendError::NotMigCapable(gpu)),
            Ok((false, _)) => return Err(BackendError::MigDisabled(gpu)),
            Ok((true, _)) => {}
        }
        // Check against the catalog first: the driver's refusals are less specific.
        let model = self.catalog_model(gpu);
        if let Some(layout) = model.and_then(|m| m.mig) {
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
        }
        let before = self.mig_uuids(gpu);
        let created = self
            .api
            .create_mig(gpu, profile, start)
            .map_err(|e| match e {
                NvmlErr::NotSupported => BackendError::NotSupported("MIG instance creation".into()),
                NvmlErr::Failed(msg) => BackendError::Driver(msg),
            })?;
        let mut new: Vec<String> = self
            .mig_uuids(gpu)
            .into_iter()
            .filter(|u| !before.contains(u))
            .collect();
        match (new.pop(), new.is_empty()) {
            (Some(uuid), true) => Ok(MigSlice {
                uuid,
                gpu_instance_id: Some(created.gpu_instance_id),
                compute_instance_id: Some(created.compute_instance_id),
            }),
            _ => Err(BackendError::Driver(
                "cannot tell which MIG device the new instance is".into(),
            )),
        }
    }

    fn destroy_mig(&mut self, gpu: u32, slice: &MigSlice) -> Result<(), BackendError> {
        let (Some(gi), Some(ci)) = (slice.gpu_instance_id, slice.compute_instance_id) else {
            return Err(BackendError::NotSupported(
                "destroying a MIG instance without its instance ids".into(),
            ));
        };
        self.api.destroy_mig(gpu, gi, ci).map_err(|e| match e {
            NvmlErr::NotSupported => BackendError::NotSupported("MIG instance destruction".into()),
            NvmlErr::Failed(msg) => BackendError::Driver(msg),
        })
    }

    /// A GPU reset clears its framebuffer; `nvidia-smi --gpu-reset` does it
    /// once no process holds the GPU (the lease's tree is gone by now).
    fn scrub(&mut self, gpu: u32) -> Result<(), BackendError> {
        let smi = crate::launcher::find_program("nvidia-smi")
            .ok_or_else(|| BackendError::NotSupported("scrubbing without nvidia-smi".into()))?;
        let out = std::process::Command::new(smi)
            .args(["--gpu-reset", "-i", &gpu.to_string()])
            .output()
            .map_err(|e| BackendError::Driver(e.to_string()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(BackendError::Driver(
                String::from_utf8_lossy(&out.stdout).trim().to_string(),
            ))
        }
    }
}

/// The catalog name of a GPU from the name the driver reports and its memory.
pub fn catalog_model_for(product_name: &str, memory_mib: u64) -> Option<&'static str> {
    let n = product_name.to_ascii_uppercase();
    let has = |s: &str| {
        n.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == s)
    };
    let pcie_or_nvl = n.contains("PCIE") || has("NVL");
    if n.contains("H200") {
        Some("H200-SXM-141GB")
    } else if n.contains("H100") && !pcie_or_nvl {
        Some("H100-SXM5-80GB")
    } else if n.contains("B200") {
        Some("B200-SXM-180GB")
    } else if n.contains("A100") {
        Some(if memory_mib > 60_000 {
            "A100-SXM4-80GB"
        } else {
            "A100-SXM4-40GB"
        })
    } else if n.contains("L40S") {
        Some("L40S-48GB")
    } else if n.contains("V100") {
        Some(if memory_mib > 20_000 {
            "V100-SXM2-32GB"
        } else {
            "V100-SXM2-16GB"
        })
    } else if n.contains("P100") {
        Some("P100-SXM2-16GB")
    } else if has("T4") {
        Some("T4-16GB")
    } else if has("A10") {
        Some("A10-24GB")
    } else {
        None
    }
}

/// PCI bus ids compare by domain number and the rest, since NVML writes the
/// domain with 4 or 8 hex digits depending on the call.
fn same_bus_id(a: &str, b: &str) -> bool {
    fn parts(s: &str) -> Option<(u32, String)> {
        let (domain, rest) = s.split_once(':')?;
        Some((
            u32::from_str_radix(domain, 16).ok()?,
            rest.to_ascii_lowercase(),
        ))
    }
    match (parts(a), parts(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}
