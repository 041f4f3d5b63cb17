//! The thin layer between the NVML backend and the driver: one method per
//! question, plain data out, so a fake can stand in for the driver in tests.

/// What a driver call can answer instead of a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvmlErr {
    /// The GPU or driver does not support the call: the value is absent.
    #[error("not supported")]
    NotSupported,
    /// Any other failure (no permission, GPU lost, library missing …).
    #[error("{0}")]
    Failed(String),
}

pub type NvmlResult<T> = Result<T, NvmlErr>;

/// Framebuffer memory in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemInfo {
    pub total: u64,
    pub used: u64,
    pub free: u64,
    pub reserved: u64,
}

/// A compute process on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub used_bytes: Option<u64>,
    pub gpu_instance_id: Option<u32>,
}

/// A MIG device (compute instance) of a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigDevice {
    pub uuid: String,
    pub memory: Option<MemInfo>,
}

/// A MIG instance created by [`NvmlApi::create_mig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedMig {
    pub gpu_instance_id: u32,
    pub compute_instance_id: u32,
}

/// Which clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    Sm,
    Memory,
}

/// NVML field ids (nvml.h `NVML_FI_*`) the backend asks for.
pub mod field {
    pub const ECC_SBE_VOL_TOTAL: u32 = 3;
    pub const ECC_DBE_VOL_TOTAL: u32 = 4;
    pub const ECC_SBE_AGG_TOTAL: u32 = 5;
    pub const ECC_DBE_AGG_TOTAL: u32 = 6;
    pub const MEMORY_TEMP: u32 = 82;
    pub const NVLINK_THROUGHPUT_DATA_TX: u32 = 138;
    pub const NVLINK_THROUGHPUT_DATA_RX: u32 = 139;
    pub const REMAPPED_COR: u32 = 142;
    pub const REMAPPED_UNC: u32 = 143;
}

/// The driver, by GPU index. Read-only except `create_mig` / `destroy_mig`.
pub trait NvmlApi: Send + 'static {
    fn device_count(&self) -> NvmlResult<u32>;
    fn driver_version(&self) -> NvmlResult<String>;
    /// CUDA driver version as NVML encodes it, e.g. 12040 for 12.4.
    fn cuda_driver_version(&self) -> NvmlResult<i32>;
    fn name(&self, gpu: u32) -> NvmlResult<String>;
    fn uuid(&self, gpu: u32) -> NvmlResult<String>;
    fn pci_bus_id(&self, gpu: u32) -> NvmlResult<String>;
    fn memory_info(&self, gpu: u32) -> NvmlResult<MemInfo>;
    /// (current, pending) MIG mode, `true` = enabled.
    fn mig_mode(&self, gpu: u32) -> NvmlResult<(bool, bool)>;
    /// PCI bus ids at the far end of this GPU's active NVLinks.
    fn nvlink_remote_bus_ids(&self, gpu: u32) -> NvmlResult<Vec<String>>;
    /// (gpu, memory) utilization in percent.
    fn utilization(&self, gpu: u32) -> NvmlResult<(u32, u32)>;
    fn encoder_utilization(&self, gpu: u32) -> NvmlResult<u32>;
    fn decoder_utilization(&self, gpu: u32) -> NvmlResult<u32>;
    /// Core temperature, °C.
    fn temperature(&self, gpu: u32) -> NvmlResult<u32>;
    fn power_usage_mw(&self, gpu: u32) -> NvmlResult<u32>;
    fn power_limit_mw(&self, gpu: u32) -> NvmlResult<u32>;
    fn total_energy_mj(&self, gpu: u32) -> NvmlResult<u64>;
    fn clock_mhz(&self, gpu: u32, clock: ClockKind) -> NvmlResult<u32>;
    fn fan_speed(&self, gpu: u32) -> NvmlResult<u32>;
    /// P-state number (0 = P0).
    fn performance_state(&self, gpu: u32) -> NvmlResult<u32>;
    /// PCIe throughput in KB/s, transmit or receive.
    fn pcie_throughput(&self, gpu: u32, transmit: bool) -> NvmlResult<u32>;
    fn pcie_replay_counter(&self, gpu: u32) -> NvmlResult<u32>;
    /// Raw NVML clocks-event (throttle) reason bits.
    fn throttle_reasons(&self, gpu: u32) -> NvmlResult<u64>;
    /// Several NVML field values at once; each may fail on its own.
    fn field_values(&self, gpu: u32, ids: &[u32]) -> NvmlResult<Vec<NvmlResult<f64>>>;
    fn compute_processes(&self, gpu: u32) -> NvmlResult<Vec<ProcInfo>>;
    /// Recent SM utilization (percent) per process id.
    fn process_sm_utilization(&self, gpu: u32) -> NvmlResult<Vec<(u32, u32)>>;
    /// The MIG devices that exist on the GPU.
    fn mig_devices(&self, gpu: u32) -> NvmlResult<Vec<MigDevice>>;
    /// Create a GPU instance of `profile` at `start` and one compute instance filling it.
    fn create_mig(&mut self, gpu: u32, profile: &str, start: u8) -> NvmlResult<CreatedMig>;
    /// Destroy a compute instance and its GPU instance.
    fn destroy_mig(
        &mut self,
        gpu: u32,
        gpu_instance_id: u32,
        compute_instance_id: u32,
    ) -> NvmlResult<()>;
}
