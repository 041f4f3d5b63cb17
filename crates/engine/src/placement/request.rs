//! What placement is asked ([`PlacementRequest`]) and what it answers ([`Placement`]).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::view::{ModelIdx, PartitionMode, RegionIdx};
use crate::types::Isolation;
use gpuex_wire::catalog::{CudaVersion, GpuModel, Precision, COMPUTE_SLICES, UNIT_VRAM_GB};

/// Compute asked for, over all the request's GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compute {
    /// TFLOPS at a precision: converted per model through the catalog.
    Tflops {
        tflops: Decimal,
        precision: Precision,
    },
    /// A share in milli-GPU, whatever the model (the openb trace's `gpu_milli`).
    Milli(u32),
}

/// A set of catalog models, bit i = [`ModelIdx`] i.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ModelSet(pub u32);

impl ModelSet {
    /// Every model.
    pub const ANY: ModelSet = ModelSet(u32::MAX);

    /// Exactly one model.
    pub fn only(m: ModelIdx) -> ModelSet {
        ModelSet(1 << m)
    }

    pub fn contains(self, m: ModelIdx) -> bool {
        m < 32 && self.0 & (1 << m) != 0
    }
}

/// A request placement can answer; the engine builds it from an order, the
/// simulator from a trace row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementRequest {
    pub compute: Compute,
    /// GPU memory in MB, over all GPUs.
    pub memory_mb: u64,
    /// GPUs (at least 1); more than one takes idle GPUs of one node, whole.
    pub gpus: u8,
    pub models: ModelSet,
    /// Multi-GPU: the GPUs must form an NVLink-connected set.
    pub nvlink: bool,
    pub isolation: Isolation,
    /// `None`: any region.
    pub region: Option<RegionIdx>,
    /// Only this node.
    pub node: Option<Uuid>,
    /// Host CPU; `None` takes the node's share matching the GPU share held.
    pub cpu_milli: Option<u64>,
    pub memory_mib: Option<u64>,
    /// When the lease is predicted to end: placement then prefers GPUs
    /// whose other leases end near that time (`None`: no preference).
    #[serde(default)]
    pub ends: Option<EndHint>,
    /// Only nodes whose driver supports at least this CUDA version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cuda: Option<CudaVersion>,
}

/// A lease's predicted end, for placement's predicted-end term: `end` and
/// the `now` it is placed at, unix seconds (placement reads no clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndHint {
    pub now: i64,
    pub end: i64,
}

impl PlacementRequest {
    /// A single-GPU request for `milli` of compute and `memory_mb`, anywhere.
    pub fn milli(milli: u32, memory_mb: u64) -> PlacementRequest {
        PlacementRequest {
            compute: Compute::Milli(milli),
            memory_mb,
            gpus: 1,
            models: ModelSet::ANY,
            nvlink: false,
            isolation: Isolation::Any,
            region: None,
            node: None,
            cpu_milli: None,
            memory_mib: None,
            ends: None,
            min_cuda: None,
        }
    }

    /// Whether a node whose driver supports `cuda` is recent enough: one
    /// that did not say is not, when the request names a version.
    pub fn accepts_cuda(&self, cuda: Option<CudaVersion>) -> bool {
        self.min_cuda
            .is_none_or(|least| cuda.is_some_and(|have| have >= least))
    }

    /// Compute per GPU in milli-GPU on `model`, or `None` when the model lacks the precision.
    pub fn milli_per_gpu(&self, model: &GpuModel) -> Option<u32> {
        let n = u32::from(self.gpus.max(1));
        let total = match self.compute {
            Compute::Milli(m) => m,
            Compute::Tflops { tflops, precision } => {
                model.milli_for(model.standard_tflops(precision, tflops)?)
            }
        };
        Some(total.div_ceil(n))
    }

    /// Memory per GPU in MB.
    pub fn memory_per_gpu(&self) -> u64 {
        self.memory_mb.div_ceil(u64::from(self.gpus.max(1)))
    }

    /// Standard TFLOPS asked on `model` (what a shared slice is charged for).
    pub fn standard_tflops(&self, model: &GpuModel) -> Option<Decimal> {
        match self.compute {
            Compute::Milli(m) => Some(model.fp16 * Decimal::from(m) / Decimal::from(1000)),
            Compute::Tflops { tflops, precision } => model.standard_tflops(precision, tflops),
        }
    }
}

/// What one GPU of a placement holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Slot {
    /// The whole GPU.
    Whole,
    /// A MIG GPU instance.
    Mig {
        profile: String,
        start: u8,
        /// Memory slices held (bit i = slice i).
        mask: u8,
        /// Compute slices held.
        compute: u8,
    },
    /// A soft share of a `shared` GPU.
    Shared { milli: u32, memory_mb: u64 },
}

impl Slot {
    /// Compute held, milli-GPU.
    pub fn milli(&self) -> u32 {
        match self {
            Slot::Whole => 1000,
            Slot::Mig { compute, .. } => u32::from(*compute) * 1000 / u32::from(COMPUTE_SLICES),
            Slot::Shared { milli, .. } => *milli,
        }
    }
}

/// One GPU of a placement.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuSlot {
    pub index: u8,
    pub slot: Slot,
}

/// The units a placement holds: what the lease is charged for (ARCHITECTURE.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Units {
    pub tflops_h: Decimal,
    pub vram_h: Decimal,
}

impl Units {
    /// Units of `memory_mb` of GPU memory.
    pub fn vram_of(memory_mb: u64) -> Decimal {
        Decimal::from(memory_mb) / Decimal::from(u64::from(UNIT_VRAM_GB) * 1000)
    }
}

/// Why placement chose this slice: part of every fill report.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Why {
    /// (bucket, profile) options priced and tried.
    pub options_considered: u32,
    /// GPUs (or GPU sets) that could hold the request and were scored.
    pub candidates_scored: u32,
    /// Fragmentation added, in demand-weighted milli-GPU (lower is better).
    pub frag_delta: i64,
    /// Whether the GPU already held other work.
    pub partly_used: bool,
    /// NVLink links inside a multi-GPU set.
    pub nvlink_links: u32,
    /// Whether the region was off-peak.
    pub offpeak: bool,
    /// Follow-the-sun chose this off-peak slice over a cheaper one in a
    /// region at peak hours: that one's list value per hour (at most
    /// [`super::Policy::offpeak_band`] below this one's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offpeak_over: Option<Decimal>,
    /// With a predicted end: seconds the lease keeps its GPU from being
    /// wholly free beyond the predicted ends of the GPU's other leases
    /// (an idle GPU: the lease's whole predicted duration; 0: it ends
    /// before them). Lower is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_end_extends_s: Option<i64>,
}

/// A concrete slice for a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub node: Uuid,
    /// The region's index in the view it was placed on (the engine's leases also carry its name).
    pub region: RegionIdx,
    /// The model's index in the catalog ([`super::model_at`]).
    pub model: ModelIdx,
    pub mode: PartitionMode,
    pub gpus: Vec<GpuSlot>,
    /// Host CPU and memory taken.
    pub cpu_milli: u64,
    pub memory_mib: u64,
    /// Units held (charged).
    pub units: Units,
    /// Units asked (a shared slice holds exactly these).
    pub asked: Units,
    /// Compute asked, milli-GPU over all GPUs; held minus this is internal waste.
    pub asked_milli: u32,
    /// List value per hour of the units held (`None` when no list price was set).
    pub list_value: Option<Decimal>,
    pub why: Why,
}

impl Placement {
    /// Compute held, milli-GPU over all GPUs.
    pub fn held_milli(&self) -> u32 {
        self.gpus.iter().map(|g| g.slot.milli()).sum()
    }

    /// Compute held beyond what was asked (ARCHITECTURE.md §5 `internal_waste`), milli-GPU.
    pub fn internal_waste_milli(&self) -> u32 {
        self.held_milli().saturating_sub(self.asked_milli)
    }
}
