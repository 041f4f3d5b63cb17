//! [`NvmlApi`] on the real driver: nvml-wrapper (which loads `libnvidia-ml.so`
//! at run time) for reading, and `nvidia-smi mig` for creating and destroying
//! MIG instances, which nvml-wrapper does not wrap (and the workspace forbids
//! `unsafe` FFI of our own).

use super::api::*;
use nvml_wrapper::enum_wrappers::device::{Clock, ClockId, PcieUtilCounter, TemperatureSensor};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::FieldValueSample;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};
use std::process::Command;

/// NVLink links NVML may report per GPU (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;

/// The driver, or the reason it could not be loaded (then every call fails).
pub struct RealNvml {
    nvml: Result<Nvml, String>,
}

impl RealNvml {
    /// Load NVML. Never fails: a missing library leaves a driver with no GPUs.
    pub fn load() -> RealNvml {
        RealNvml {
            nvml: Nvml::init().map_err(|e| format!("NVML is not available: {e}")),
        }
    }

    /// Why NVML could not be loaded, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.nvml.as_ref().err().map(String::as_str)
    }

    fn nvml(&self) -> NvmlResult<&Nvml> {
        self.nvml.as_ref().map_err(|e| NvmlErr::Failed(e.clone()))
    }

    fn device(&self, gpu: u32) -> NvmlResult<Device<'_>> {
        self.nvml()?.device_by_index(gpu).map_err(err)
    }
}

fn err(e: NvmlError) -> NvmlErr {
    match e {
        NvmlError::NotSupported
        | NvmlError::FunctionNotFound
        | NvmlError::FailedToLoadSymbol(_) => NvmlErr::NotSupported,
        other => NvmlErr::Failed(other.to_string()),
    }
}

fn mem(m: nvml_wrapper::struct_wrappers::device::MemoryInfo) -> MemInfo {
    MemInfo {
        total: m.total,
        used: m.used,
        free: m.free,
        reserved: m.reserved,
    }
}

fn sample_value(sample: Result<FieldValueSample, NvmlError>) -> NvmlResult<f64> {
    match sample.map_err(err)?.value.map_err(err)? {
        SampleValue::F64(v) => Ok(v),
        SampleValue::U32(v) => Ok(f64::from(v)),
        SampleValue::U64(v) => Ok(v as f64),
        SampleValue::I64(v) => Ok(v as f64),
    }
}

impl NvmlApi for RealNvml {
    fn device_count(&self) -> NvmlResult<u32> {
        self.nvml()?.device_count().map_err(err)
    }
    fn driver_version(&self) -> NvmlResult<String> {
        self.nvml()?.sys_driver_version().map_err(err)
    }
    fn cuda_driver_version(&self) -> NvmlResult<i32> {
        self.nvml()?.sys_cuda_driver_version().map_err(err)
    }
    fn name(&self, gpu: u32) -> NvmlResult<String> {
        self.device(gpu)?.name().map_err(err)
    }
    fn uuid(&self, gpu: u32) -> NvmlResult<String> {
        self.device(gpu)?.uuid().map_err(err)
    }
    fn pci_bus_id(&self, gpu: u32) -> NvmlResult<String> {
        Ok(self.device(gpu)?.pci_info().map_err(err)?.bus_id)
    }
    fn memory_info(&self, gpu: u32) -> NvmlResult<MemInfo> {
        self.device(gpu)?.memory_info().map(mem).map_err(err)
    }
    fn mig_mode(&self, gpu: u32) -> NvmlResult<(bool, bool)> {
        let m = self.device(gpu)?.mig_mode().map_err(err)?;
        Ok((m.current == 1, m.pending == 1))
    }
    fn nvlink_remote_bus_ids(&self, gpu: u32) -> NvmlResult<Vec<String>> {
        let device = self.device(gpu)?;
        let mut ids = Vec::new();
        let mut any_supported = false;
        for link in 0..MAX_NVLINKS {
            let l = device.link_wrapper_for(link);
            match l.is_active() {
                Ok(true) => {
                    any_supported = true;
                    if let Ok(pci) = l.remote_pci_info() {
                        ids.push(pci.bus_id);
                    }
                }
                Ok(false) => any_supported = true,
                Err(_) => {}
            }
        }
        if any_supported {
            Ok(ids)
        } else {
            Err(NvmlErr::NotSupported)
        }
    }
    fn utilization(&self, gpu: u32) -> NvmlResult<(u32, u32)> {
        let u = self.device(gpu)?.utilization_rates().map_err(err)?;
        Ok((u.gpu, u.memory))
    }
    fn encoder_utilization(&self, gpu: u32) -> NvmlResult<u32> {
        Ok(self
            .device(gpu)?
            .encoder_utilization()
            .map_err(err)?
            .utilization)
    }
    fn decoder_utilization(&self, gpu: u32) -> NvmlResult<u32> {
        Ok(self
            .device(gpu)?
            .decoder_utilization()
            .map_err(err)?
            .utilization)
    }
    fn temperature(&self, gpu: u32) -> NvmlResult<u32> {
        self.device(gpu)?
            .temperature(TemperatureSensor::Gpu)
            .map_err(err)
    }
    fn power_usage_mw(&self, gpu: u32) -> NvmlResult<u32> {
        self.device(gpu)?.power_usage().map_err(err)
    }
    fn power_limit_mw(&self, gpu: u32) -> NvmlResult<u32> {
        self.device(gpu)?.power_management_limit().map_err(err)
    }
    fn total_energy_mj(&self, gpu: u32) -> NvmlResult<u64> {
        self.device(gpu)?.total_energy_consumption().map_err(err)
    }
    fn clock_mhz(&self, gpu: u32, clock: ClockKind) -> NvmlResult<u32> {
        let c = match clock {
            ClockKind::Sm => Clock::SM,
            ClockKind::Memory => Clock::Memory,
        };
        self.device(gpu)?.clock(c, ClockId::Current).map_err(err)
    }
    fn fan_speed(&self, gpu: u32) -> NvmlResult<u32> {
        self.device(gpu)?.fan_speed(0).map_err(err)
    }
    fn performance_state(&self, gpu: u32) -> NvmlResult<u32> {
        let p = self.device(gpu)?.performance_state().map_err(err)?;
        Ok(p.as_c())
    }
    fn pcie_throughput(&self, gpu: u32, transmit: bool) -> NvmlResult<u32> {
        let counter = if transmit {
            PcieUtilCounter::Send
        } else {
            PcieUtilCounter::Receive
        };
        self.device(gpu)?.pcie_throughput(counter).map_err(err)
    }
    fn pcie_replay_counter(&self, gpu: u32) -> NvmlResult<u32> {
        self.device(gpu)?.pcie_replay_counter().map_err(err)
    }
    fn throttle_reasons(&self, gpu: u32) -> NvmlResult<u64> {
        Ok(self
            .device(gpu)?
            .current_throttle_reasons()
            .map_err(err)?
            .bits())
    }
    fn field_values(&self, gpu: u32, ids: &[u32]) -> NvmlResult<Vec<NvmlResult<f64>>> {
        let ids: Vec<FieldId> = ids.iter().map(|&i| FieldId(i)).collect();
        let samples = self.device(gpu)?.field_values_for(&ids).map_err(err)?;
        Ok(samples.into_iter().map(sample_value).collect())
    }
    fn compute_processes(&self, gpu: u32) -> NvmlResult<Vec<ProcInfo>> {
        let procs = self.device(gpu)?.running_compute_processes().map_err(err)?;
        Ok(procs
            .into_iter()
            .map(|p| ProcInfo {
                pid: p.pid,
                used_bytes: match p.used_gpu_memory {
                    UsedGpuMemory::Used(b) => Some(b),
                    UsedGpuMemory::Unavailable => None,
                },
                gpu_instance_id: p.gpu_instance_id,
            })
            .collect())
    }
    fn process_sm_utilization(&self, gpu: u32) -> NvmlResult<Vec<(u32, u32)>> {
        let samples = self
            .device(gpu)?
            .process_utilization_stats(None)
            .map_err(err)?;
        Ok(samples.into_iter().map(|s| (s.pid, s.sm_util)).collect())
    }
    fn mig_devices(&self, gpu: u32) -> NvmlResult<Vec<MigDevice>> {
        let device = self.device(gpu)?;
        let max = device.mig_device_count().map_err(err)?;
        let mut out = Vec::new();
        for i in 0..max {
            // Unpopulated slots answer NotFound; skip them.
            if let Ok(mig) = device.mig_device_by_index(i) {
                if let Ok(uuid) = mig.uuid() {
                    out.push(MigDevice {
                        uuid,
                        memory: mig.memory_info().ok().map(mem),
                    });
                }
            }
        }
        Ok(out)
    }
    fn create_mig(&mut self, gpu: u32, profile: &str, start: u8) -> NvmlResult<CreatedMig> {
        let out = nvidia_smi(&[
            "mig",
            "-i",
            &gpu.to_string(),
            "-cgi",
            &format!("{profile}:{start}"),
            "-C",
        ])?;
        let gi = number_after(&out, "GPU instance ID");
        let ci = number_after(&out, "compute instance ID");
        match (gi, ci) {
            (Some(gpu_instance_id), Some(compute_instance_id)) => Ok(CreatedMig {
                gpu_instance_id,
                compute_instance_id,
            }),
            _ => Err(NvmlErr::Failed(format!(
                "nvidia-smi did not report the new instance: {out}"
            ))),
        }
    }
    fn destroy_mig(&mut self, gpu: u32, gi: u32, ci: u32) -> NvmlResult<()> {
        let (gpu, gi, ci) = (gpu.to_string(), gi.to_string(), ci.to_string());
        nvidia_smi(&["mig", "-i", &gpu, "-gi", &gi, "-ci", &ci, "-dci"])?;
        nvidia_smi(&["mig", "-i", &gpu, "-gi", &gi, "-dgi"])?;
        Ok(())
    }
}

fn nvidia_smi(args: &[&str]) -> NvmlResult<String> {
    let out = Command::new("nvidia-smi")
        .args(args)
        .output()
        .map_err(|e| NvmlErr::Failed(format!("cannot run nvidia-smi: {e}")))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else if text.contains("Not Supported") || text.contains("not supported") {
        Err(NvmlErr::NotSupported)
    } else {
        Err(NvmlErr::Failed(format!(
            "nvidia-smi {}: {}",
            args.join(" "),
            text.trim()
        )))
    }
}

/// The first number after `label` in nvidia-smi's output, e.g.
/// "Successfully created GPU instance ID  5 on GPU  0 …".
pub(super) fn number_after(text: &str, label: &str) -> Option<u32> {
    let rest = &text[text.find(label)? + label.len()..];
    rest.split_whitespace().next()?.parse().ok()
}
