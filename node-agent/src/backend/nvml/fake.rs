//! A fake driver for tests: GPUs described in plain data, with switches for
//! the calls a GPU does not support.

use super::api::*;

#[derive(Clone)]
pub struct FakeGpu {
    pub name: String,
    pub uuid: String,
    pub bus_id: String,
    pub memory: MemInfo,
    /// `None`: MIG not supported.
    pub mig: Option<(bool, bool)>,
    /// `None`: NVLink not supported.
    pub nvlinks: Option<Vec<String>>,
    pub mig_devices: Vec<MigDevice>,
    /// When false, every optional metric answers NotSupported (like a consumer card).
    pub full_telemetry: bool,
}

impl FakeGpu {
    pub fn h100(i: u32) -> FakeGpu {
        FakeGpu {
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: format!("GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd"),
            bus_id: format!("00000000:{:02X}:00.0", 0x18 + i),
            memory: MemInfo {
                total: 85_520_809_984,
                used: 2 << 30,
                free: 85_520_809_984 - (2 << 30) - (512 << 20),
                reserved: 512 << 20,
            },
            mig: Some((false, false)),
            nvlinks: Some(Vec::new()),
            mig_devices: Vec::new(),
            full_telemetry: true,
        }
    }
}

pub struct FakeNvml {
    pub gpus: Vec<FakeGpu>,
    pub driver: NvmlResult<String>,
    pub created: Vec<(u32, String, u8)>,
    pub destroyed: Vec<(u32, u32, u32)>,
}

impl FakeNvml {
    pub fn new(gpus: Vec<FakeGpu>) -> FakeNvml {
        FakeNvml {
            gpus,
            driver: Ok("550.54.15".into()),
            created: Vec::new(),
            destroyed: Vec::new(),
        }
    }

    /// A driver whose library could not be loaded.
    pub fn missing() -> FakeNvml {
        FakeNvml {
            driver: Err(NvmlErr::Failed("libnvidia-ml.so: not found".into())),
            ..FakeNvml::new(Vec::new())
        }
    }

    fn gpu(&self, i: u32) -> NvmlResult<&FakeGpu> {
        self.driver.as_ref().map_err(Clone::clone)?;
        self.gpus
            .get(i as usize)
            .ok_or_else(|| NvmlErr::Failed("invalid argument".into()))
    }

    fn telemetry<T>(&self, i: u32, value: T) -> NvmlResult<T> {
        if self.gpu(i)?.full_telemetry {
            Ok(value)
        } else {
            Err(NvmlErr::NotSupported)
        }
    }
}

impl NvmlApi for FakeNvml {
    fn device_count(&self) -> NvmlResult<u32> {
        self.driver.as_ref().map_err(Clone::clone)?;
        Ok(self.gpus.len() as u32)
    }
    fn driver_version(&self) -> NvmlResult<String> {
        self.driver.clone()
    }
    fn cuda_driver_version(&self) -> NvmlResult<i32> {
        Ok(12040)
    }
    fn name(&self, gpu: u32) -> NvmlResult<String> {
        Ok(self.gpu(gpu)?.name.clone())
    }
    fn uuid(&self, gpu: u32) -> NvmlResult<String> {
        Ok(self.gpu(gpu)?.uuid.clone())
    }
    fn pci_bus_id(&self, gpu: u32) -> NvmlResult<String> {
        Ok(self.gpu(gpu)?.bus_id.clone())
    }
    fn memory_info(&self, gpu: u32) -> NvmlResult<MemInfo> {
        Ok(self.gpu(gpu)?.memory)
    }
    fn mig_mode(&self, gpu: u32) -> NvmlResult<(bool, bool)> {
        self.gpu(gpu)?.mig.ok_or(NvmlErr::NotSupported)
    }
    fn nvlink_remote_bus_ids(&self, gpu: u32) -> NvmlResult<Vec<String>> {
        self.gpu(gpu)?.nvlinks.clone().ok_or(NvmlErr::NotSupported)
    }
    fn utilization(&self, gpu: u32) -> NvmlResult<(u32, u32)> {
        Ok((37, 12)).and_then(|v| self.gpu(gpu).map(|_| v))
    }
    fn encoder_utilization(&self, gpu: u32) -> NvmlResult<u32> {
        self.telemetry(gpu, 0)
    }
    fn decoder_utilization(&self, gpu: u32) -> NvmlResult<u32> {
        self.telemetry(gpu, 0)
    }
    fn temperature(&self, gpu: u32) -> NvmlResult<u32> {
        self.gpu(gpu).map(|_| 41)
    }
    fn power_usage_mw(&self, gpu: u32) -> NvmlResult<u32> {
        self.telemetry(gpu, 123_456)
    }
    fn power_limit_mw(&self, gpu: u32) -> NvmlResult<u32> {
        self.telemetry(gpu, 700_000)
    }
    fn total_energy_mj(&self, gpu: u32) -> NvmlResult<u64> {
        self.telemetry(gpu, 9_000_000)
    }
    fn clock_mhz(&self, gpu: u32, clock: ClockKind) -> NvmlResult<u32> {
        self.gpu(gpu).map(|_| match clock {
            ClockKind::Sm => 1980,
            ClockKind::Memory => 2619,
        })
    }
    fn fan_speed(&self, _gpu: u32) -> NvmlResult<u32> {
        Err(NvmlErr::NotSupported)
    }
    fn performance_state(&self, gpu: u32) -> NvmlResult<u32> {
        self.gpu(gpu).map(|_| 0)
    }
    fn pcie_throughput(&self, gpu: u32, transmit: bool) -> NvmlResult<u32> {
        self.telemetry(gpu, if transmit { 1000 } else { 2000 })
    }
    fn pcie_replay_counter(&self, gpu: u32) -> NvmlResult<u32> {
        self.telemetry(gpu, 0)
    }
    fn throttle_reasons(&self, gpu: u32) -> NvmlResult<u64> {
        self.telemetry(gpu, 0x4)
    }
    fn field_values(&self, gpu: u32, ids: &[u32]) -> NvmlResult<Vec<NvmlResult<f64>>> {
        let full = self.gpu(gpu)?.full_telemetry;
        Ok(ids
            .iter()
            .map(|&id| match id {
                _ if !full => Err(NvmlErr::NotSupported),
                field::MEMORY_TEMP => Ok(45.0),
                field::NVLINK_THROUGHPUT_DATA_TX => Ok(1000.0),
                field::NVLINK_THROUGHPUT_DATA_RX => Ok(3000.0),
                _ => Ok(0.0),
            })
            .collect())
    }
    fn compute_processes(&self, gpu: u32) -> NvmlResult<Vec<ProcInfo>> {
        self.telemetry(
            gpu,
            vec![ProcInfo {
                pid: 4242,
                used_bytes: Some(1 << 30),
                gpu_instance_id: None,
            }],
        )
    }
    fn process_sm_utilization(&self, gpu: u32) -> NvmlResult<Vec<(u32, u32)>> {
        self.telemetry(gpu, vec![(4242, 63)])
    }
    fn mig_devices(&self, gpu: u32) -> NvmlResult<Vec<MigDevice>> {
        Ok(self.gpu(gpu)?.mig_devices.clone())
    }
    fn create_mig(&mut self, gpu: u32, profile: &str, start: u8) -> NvmlResult<CreatedMig> {
        self.created.push((gpu, profile.to_string(), start));
        let gi = self.created.len() as u32;
        self.gpus[gpu as usize].mig_devices.push(MigDevice {
            uuid: format!("MIG-00000000-0000-0000-0000-00000000000{gi}"),
            memory: None,
        });
        Ok(CreatedMig {
            gpu_instance_id: gi,
            compute_instance_id: 0,
        })
    }
    fn destroy_mig(&mut self, gpu: u32, gi: u32, ci: u32) -> NvmlResult<()> {
        self.destroyed.push((gpu, gi, ci));
        Ok(())
    }
}
