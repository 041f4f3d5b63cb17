//! `POST /v1/agent/heartbeat`: GPU metrics named as DCGM names them, the leases
//! the agent runs, and the server's answer with the assignments to carry out.

use super::assignment::Assignment;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Body of a heartbeat, sent every `heartbeat_interval_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeartbeatRequest {
    pub agent_id: Uuid,
    /// The agent's clock when it sent this.
    pub sent_at: DateTime<Utc>,
    /// One entry per GPU, by index.
    pub gpus: Vec<GpuMetrics>,
    /// Every lease the agent holds a slice or a workload for.
    pub leases: Vec<LeaseReport>,
}

/// The server's answer to a heartbeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeartbeatResponse {
    pub server_time: DateTime<Utc>,
    /// Seconds until the next heartbeat.
    pub heartbeat_interval_s: u32,
    /// What to change, in order.
    #[serde(default)]
    pub assignments: Vec<Assignment>,
}

/// A lease as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaseReport {
    pub lease_id: Uuid,
    pub state: LeaseRunState,
    /// The `CUDA_VISIBLE_DEVICES` value, once provisioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

/// Where a lease's workload stands on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LeaseRunState {
    /// The slice is being created.
    Provisioning,
    /// Provisioned; the workload runs (or there is none).
    Running,
    /// SIGTERM sent (stop or preemption), waiting for the process to exit.
    Stopping,
    /// Over; the `ended` status may still be on its way.
    Ended,
}

/// `GpuFields` from a JSON object only: serde would also read a struct
/// whose fields are all optional from an array (`[null]`), which the
/// protocol does not allow.
fn fields_from_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<GpuFields, D::Error> {
    let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
    GpuFields::deserialize(serde_json::Value::Object(map)).map_err(serde::de::Error::custom)
}

/// One GPU's sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GpuMetrics {
    pub index: u32,
    pub uuid: String,
    /// Device-level fields; an absent field is one the GPU or driver does not support.
    #[serde(deserialize_with = "fields_from_object")]
    pub fields: GpuFields,
    /// Per MIG instance, when MIG is enabled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_instances: Vec<MigInstanceMetrics>,
    /// Per compute process, where the driver lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessMetrics>,
    /// The memory scrubs between tenants of this GPU since the agent started
    /// (ARCHITECTURE.md §13); absent until the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrub: Option<ScrubReport>,
}

/// How a whole or shared GPU's memory was cleared between tenants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScrubReport {
    /// Scrubs that cleared the GPU.
    pub done: u64,
    /// Scrubs that failed (the agent logs why).
    pub failed: u64,
    /// When the latest one ran.
    pub last_at: DateTime<Utc>,
    /// Whether the latest one cleared the GPU.
    pub last_ok: bool,
}

/// One MIG instance's sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MigInstanceMetrics {
    /// `MIG-…` UUID.
    pub uuid: String,
    /// Catalog profile name, when the backend knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// First memory slice, when the backend knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance_id: Option<u32>,
    /// `DCGM_FI_PROF_GR_ENGINE_ACTIVE`: the ratio (0–1) of time the graphics
    /// engine of the instance was active, where measurable (DCGM profiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gr_engine_active: Option<f64>,
    /// `DCGM_FI_DEV_FB_USED` of the instance, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fb_used_mib: Option<f64>,
    /// `DCGM_FI_DEV_FB_FREE` of the instance, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fb_free_mib: Option<f64>,
}

/// One compute process on a GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProcessMetrics {
    pub pid: u32,
    /// The lease whose workload this process belongs to, when the agent knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_id: Option<Uuid>,
    /// GPU memory the process uses, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_memory_mib: Option<f64>,
    /// SM utilization of the process, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_util: Option<f64>,
    /// The MIG GPU instance it runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance_id: Option<u32>,
}

/// Prometheus metric type of a DCGM field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Gauge,
    Counter,
}

/// Metadata of one DCGM field: its name, type and help text as dcgm-exporter writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcgmField {
    pub name: &'static str,
    pub kind: FieldKind,
    pub help: &'static str,
}

macro_rules! dcgm_fields {
    ($( $(#[$doc:meta])* $field:ident => $name:literal, $kind:ident, $help:literal; )*) => {
        /// Device-level metrics, each under its DCGM field name in JSON. Every field
        /// is optional: absent means "not supported here", never zero.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct GpuFields {
            $(
                $(#[$doc])*
                #[doc = concat!("\n\nJSON key `", $name, "`: ", $help)]
                #[serde(rename = $name, default, skip_serializing_if = "Option::is_none")]
                // utoipa does not see a `rename` that a macro spells.
                #[cfg_attr(feature = "openapi", schema(rename = $name))]
                pub $field: Option<f64>,
            )*
        }

        impl GpuFields {
            /// Every field gpuex knows, in a stable order.
            pub const ALL: &'static [DcgmField] = &[
                $( DcgmField { name: $name, kind: FieldKind::$kind, help: $help }, )*
            ];

            /// Each known field with its value (or `None`), in the order of [`Self::ALL`].
            pub fn values(&self) -> Vec<(&'static DcgmField, Option<f64>)> {
                let values = [$( self.$field, )*];
                Self::ALL.iter().zip(values).collect()
            }

            /// How many fields have a value.
            pub fn present(&self) -> usize {
                self.values().iter().filter(|(_, v)| v.is_some()).count()
            }
        }
    };
}

dcgm_fields! {
    gpu_util => "DCGM_FI_DEV_GPU_UTIL", Gauge, "GPU utilization (in %).";
    mem_copy_util => "DCGM_FI_DEV_MEM_COPY_UTIL", Gauge, "Memory utilization (in %).";
    enc_util => "DCGM_FI_DEV_ENC_UTIL", Gauge, "Encoder utilization (in %).";
    dec_util => "DCGM_FI_DEV_DEC_UTIL", Gauge, "Decoder utilization (in %).";
    fb_total => "DCGM_FI_DEV_FB_TOTAL", Gauge, "Total framebuffer memory (in MiB).";
    fb_used => "DCGM_FI_DEV_FB_USED", Gauge, "Framebuffer memory used (in MiB).";
    fb_free => "DCGM_FI_DEV_FB_FREE", Gauge, "Framebuffer memory free (in MiB).";
    fb_reserved => "DCGM_FI_DEV_FB_RESERVED", Gauge, "Framebuffer memory reserved (in MiB).";
    gpu_temp => "DCGM_FI_DEV_GPU_TEMP", Gauge, "GPU temperature (in C).";
    memory_temp => "DCGM_FI_DEV_MEMORY_TEMP", Gauge, "Memory temperature (in C).";
    power_usage => "DCGM_FI_DEV_POWER_USAGE", Gauge, "Power draw (in W).";
    power_limit => "DCGM_FI_DEV_POWER_MGMT_LIMIT", Gauge, "Power management limit (in W).";
    total_energy => "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Counter, "Total energy consumption since boot (in mJ).";
    sm_clock => "DCGM_FI_DEV_SM_CLOCK", Gauge, "SM clock frequency (in MHz).";
    mem_clock => "DCGM_FI_DEV_MEM_CLOCK", Gauge, "Memory clock frequency (in MHz).";
    fan_speed => "DCGM_FI_DEV_FAN_SPEED", Gauge, "Fan speed (in %).";
    pstate => "DCGM_FI_DEV_PSTATE", Gauge, "Performance state (P0 = 0).";
    pcie_tx => "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", Gauge, "PCIe transmit throughput (in KB/s).";
    pcie_rx => "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", Gauge, "PCIe receive throughput (in KB/s).";
    pcie_replay => "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Counter, "Total number of PCIe retries.";
    nvlink_tx => "DCGM_FI_DEV_NVLINK_TX_BANDWIDTH_TOTAL", Counter, "NVLink data transmitted, all links (in KiB).";
    nvlink_rx => "DCGM_FI_DEV_NVLINK_RX_BANDWIDTH_TOTAL", Counter, "NVLink data received, all links (in KiB).";
    nvlink_bandwidth => "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", Counter, "NVLink data transferred, all links, both directions (in KiB).";
    ecc_sbe_volatile => "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Counter, "Single-bit volatile ECC errors.";
    ecc_dbe_volatile => "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Counter, "Double-bit volatile ECC errors.";
    ecc_sbe_aggregate => "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", Counter, "Single-bit persistent ECC errors.";
    ecc_dbe_aggregate => "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", Counter, "Double-bit persistent ECC errors.";
    remapped_rows_correctable => "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", Counter, "Rows remapped for correctable errors.";
    remapped_rows_uncorrectable => "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Counter, "Rows remapped for uncorrectable errors.";
    clock_throttle_reasons => "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", Gauge, "Current clock throttle reasons (bitmask of NVML clocks-event reasons).";
    compute_processes => "DCGM_FI_DEV_COMPUTE_PIDS", Gauge, "Number of compute processes on the GPU.";
}
