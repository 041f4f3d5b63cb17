//! `POST /v1/agent/register`: the node's inventory, sent at start and after every outage.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What the agent has to offer. It replaces any inventory declared with
/// `POST /v1/nodes`; a node whose GPUs changed under live leases is quarantined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AgentRegisterRequest))]
pub struct RegisterRequest {
    /// Version of `gpuex-agent`, e.g. `0.1.0`.
    pub agent_version: String,
    /// Which backend answers for the GPUs.
    pub backend: BackendKind,
    /// The node's host name.
    pub hostname: String,
    /// Host CPU and memory, shared out to leases with the GPUs.
    pub host: HostInventory,
    /// Every GPU the agent sees, by index.
    pub gpus: Vec<GpuInventory>,
}

/// Which backend the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// Real GPUs through NVML.
    Nvml,
    /// A synthetic fleet from a TOML file.
    Simulated,
}

/// Host resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostInventory {
    /// Logical CPUs × 1000.
    pub cpu_milli: u32,
    /// Host memory in MiB, at most 2⁴⁰ (an exbibyte).
    #[cfg_attr(feature = "openapi", schema(maximum = 1_099_511_627_776_u64))]
    pub memory_mib: u64,
}

/// The most memory a host or a GPU may report, in MiB: beyond any machine,
/// and exact in every JSON reader (below 2⁵³) and in a signed 64-bit column.
pub const MAX_MEMORY_MIB: u64 = 1 << 40;

impl RegisterRequest {
    /// The fields beyond their bounds, by their path in the request.
    pub fn out_of_bounds(&self) -> Vec<String> {
        let mut fields = Vec::new();
        if self.host.memory_mib > MAX_MEMORY_MIB {
            fields.push("host.memory_mib".to_owned());
        }
        for (i, gpu) in self.gpus.iter().enumerate() {
            if gpu.memory_mib > MAX_MEMORY_MIB {
                fields.push(format!("gpus[{i}].memory_mib"));
            }
        }
        fields
    }
}

/// One physical GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GpuInventory {
    /// NVML / `nvidia-smi` index on this node; placements name GPUs by it.
    pub index: u32,
    /// The catalog name (`H100-SXM5-80GB`), or `None` when the product is not in
    /// the catalog: such a GPU is reported but must not be sold.
    pub model: Option<String>,
    /// The name the driver reports, e.g. `NVIDIA H100 80GB HBM3`.
    pub product_name: String,
    /// `GPU-…` UUID, stable across reboots.
    pub uuid: String,
    /// Memory the driver reports, in MiB, at most 2⁴⁰.
    #[cfg_attr(feature = "openapi", schema(maximum = 1_099_511_627_776_u64))]
    pub memory_mib: u64,
    /// Whether the GPU can be partitioned with MIG.
    pub mig_capable: bool,
    /// The current MIG mode, `None` when the GPU cannot report one.
    pub mig_mode: Option<MigMode>,
    /// The MIG mode after the next GPU reset, when it differs from `mig_mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_mode_pending: Option<MigMode>,
    /// MIG GPU instances that exist now (after an agent restart, some may belong
    /// to live leases).
    #[serde(default)]
    pub mig_instances: Vec<MigInstanceInventory>,
    /// Indices of the GPUs on this node joined to this one by an active NVLink.
    #[serde(default)]
    pub nvlink_peers: Vec<u32>,
    /// PCI bus id, e.g. `00000000:19:00.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// Kernel driver version, e.g. `550.54.15`.
    pub driver_version: String,
    /// Highest CUDA version the driver supports, e.g. `12.4`.
    pub cuda_version: String,
    /// Measured / peak dense FP16 throughput from a GEMM calibration, e.g. `0.93`;
    /// `None` when the GPU was not calibrated (sell at catalog peak).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::decimal::DecimalInput>))]
    pub calibration_ratio: Option<Decimal>,
}

/// MIG mode of a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MigMode {
    Disabled,
    Enabled,
}

/// One MIG GPU instance that exists on a GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MigInstanceInventory {
    /// Catalog profile name, e.g. `1g.10gb`, when the backend knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// First memory slice of the placement, when the backend knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u8>,
    /// `MIG-…` UUID of its compute instance, the handle CUDA accepts.
    pub uuid: String,
    /// NVML GPU-instance id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance_id: Option<u32>,
}

/// The server's answer to a registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AgentRegisterResponse))]
pub struct RegisterResponse {
    /// The node id, which is the agent id in every later request.
    pub agent_id: Uuid,
    /// The server's clock, so the agent can notice a skew.
    pub server_time: DateTime<Utc>,
    /// Seconds between heartbeats the server expects (default 5).
    pub heartbeat_interval_s: u32,
    /// Seconds without a heartbeat after which the server declares the node lost
    /// (default 30). Informational: the agent stops its workloads after its own
    /// `--node-timeout`, which the operator keeps equal to this.
    pub node_timeout_s: u32,
    /// The highest usage `seq` the server has applied for this agent, if any: the
    /// agent continues above it and drops spooled batches at or below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_usage_seq: Option<u64>,
    /// Present when the node is quarantined (its GPUs changed under live
    /// leases): why. The node takes no new leases until its provider uncordons it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<String>,
}
