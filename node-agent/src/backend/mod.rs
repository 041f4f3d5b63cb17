//! The agent's access to GPUs: a [`GpuBackend`] trait with an NVML
//! implementation for real hardware and a simulated one for a TOML fleet.
//!
//! Backends are synchronous (NVML calls are short and blocking); the agent owns
//! one behind a mutex. A call the hardware cannot answer yields "absent", never
//! a panic.

pub mod nvml;
pub mod simulated;

use gpuex_wire::protocol::{BackendKind, GpuInventory, GpuMetrics, HostInventory};

/// Everything the agent registers.
#[derive(Debug, Clone, PartialEq)]
pub struct Inventory {
    pub hostname: String,
    pub host: HostInventory,
    pub gpus: Vec<GpuInventory>,
}

/// A MIG instance the backend created for a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigSlice {
    /// `MIG-…` UUID: what `CUDA_VISIBLE_DEVICES` gets.
    pub uuid: String,
    /// NVML GPU-instance id, when known (needed to destroy it on real hardware).
    pub gpu_instance_id: Option<u32>,
    /// NVML compute-instance id, when known.
    pub compute_instance_id: Option<u32>,
}

/// What a lease puts on one GPU, so a simulated GPU's metrics follow its work.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceLoad {
    pub lease_id: uuid::Uuid,
    /// The workload's process id, while it runs.
    pub pid: Option<u32>,
    pub gpu: u32,
    /// The MIG instance, for MIG slices.
    pub mig_uuid: Option<String>,
    /// Share of the GPU's compute the slice holds, 0–1.
    pub compute_share: f64,
    /// Memory the slice holds, MiB.
    pub memory_mib: f64,
    /// Whether a workload is running on it now.
    pub busy: bool,
}

/// Why the backend refused or failed an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("GPU {0} does not exist")]
    NoSuchGpu(u32),
    #[error("GPU {0} cannot do MIG")]
    NotMigCapable(u32),
    #[error("GPU {0} is not in MIG mode")]
    MigDisabled(u32),
    #[error("GPU {0} is in MIG mode and cannot be used whole or shared")]
    MigEnabled(u32),
    #[error("MIG profile `{profile}` does not exist on GPU {gpu}")]
    UnknownProfile { gpu: u32, profile: String },
    #[error("MIG placement {profile}@{start} is not legal on GPU {gpu}")]
    IllegalPlacement {
        gpu: u32,
        profile: String,
        start: u8,
    },
    #[error("MIG placement {profile}@{start} overlaps an instance on GPU {gpu}")]
    Overlap {
        gpu: u32,
        profile: String,
        start: u8,
    },
    #[error("no MIG instance {uuid} on GPU {gpu}")]
    NoSuchInstance { gpu: u32, uuid: String },
    #[error("the driver does not support this: {0}")]
    NotSupported(String),
    #[error("{0}")]
    Driver(String),
}

/// The agent's view of the GPUs of one node.
pub trait GpuBackend: Send + 'static {
    /// Which implementation this is.
    fn kind(&self) -> BackendKind;

    /// The node's host and GPUs.
    fn inventory(&mut self) -> Result<Inventory, BackendError>;

    /// One metrics sample per GPU.
    fn sample(&mut self) -> Vec<GpuMetrics>;

    /// What the leases put on the GPUs now. Real GPUs measure this themselves,
    /// so only the simulated backend listens.
    fn set_load(&mut self, _loads: &[SliceLoad]) {}

    /// Create a MIG GPU instance (and one compute instance filling it) of
    /// `profile` at memory slice `start` on GPU `gpu`.
    fn create_mig(&mut self, gpu: u32, profile: &str, start: u8) -> Result<MigSlice, BackendError>;

    /// Destroy a MIG instance this backend created.
    fn destroy_mig(&mut self, gpu: u32, slice: &MigSlice) -> Result<(), BackendError>;

    /// Clear a whole GPU's memory before its next tenant (ARCHITECTURE.md §13).
    fn scrub(&mut self, gpu: u32) -> Result<(), BackendError>;
}

/// The GPU's catalog model and whether it is in MIG mode, for placement checks.
pub fn gpu_of(inventory: &Inventory, index: u32) -> Result<&GpuInventory, BackendError> {
    inventory
        .gpus
        .iter()
        .find(|g| g.index == index)
        .ok_or(BackendError::NoSuchGpu(index))
}

/// Host CPU (milli) and memory (MiB) of this machine, from the OS.
pub fn host_resources() -> HostInventory {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let memory_mib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024);
    HostInventory {
        cpu_milli: u32::try_from(cpus * 1000).unwrap_or(u32::MAX),
        memory_mib,
    }
}

/// The machine's host name.
pub fn system_hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}
