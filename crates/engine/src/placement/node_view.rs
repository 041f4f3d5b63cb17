//! One node and its GPUs as placement sees them: each GPU's free state, and
//! what taking or giving back a slot leaves of it.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::request::Slot;
use gpuex_wire::catalog::{self, CudaVersion, GpuModel, COMPUTE_SLICES};

/// How a GPU is sold (ARCHITECTURE.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionMode {
    Mig,
    Shared,
    Whole,
}

/// Index of a model in [`catalog::all_models`].
pub type ModelIdx = u8;
/// Index of a region in [`CapacityView::regions`].
pub type RegionIdx = u16;

/// The catalog index of a model name.
pub fn model_idx(name: &str) -> Option<ModelIdx> {
    catalog::all_models()
        .iter()
        .position(|m| m.name == name)
        .and_then(|i| ModelIdx::try_from(i).ok())
}

/// The catalog model at an index. Indices come from [`model_idx`], so they are in range.
pub fn model_at(idx: ModelIdx) -> &'static GpuModel {
    let all = catalog::all_models();
    &all[usize::from(idx).min(all.len() - 1)]
}

/// Free capacity of one GPU. Which fields count depends on the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuFree {
    /// Shared/whole: free compute in milli-GPU (whole GPUs: 1000 or 0).
    pub milli: u32,
    /// Shared/whole: free memory in MB.
    pub memory_mb: u64,
    /// MIG: free memory slices, bit i = slice i.
    pub mig_mask: u8,
    /// MIG: free compute slices (of 7).
    pub mig_compute: u8,
}

impl GpuFree {
    /// The free state of an idle GPU.
    pub fn idle(model: &GpuModel) -> GpuFree {
        GpuFree {
            milli: 1000,
            memory_mb: model.memory_mb(),
            mig_mask: 0xff,
            mig_compute: COMPUTE_SLICES,
        }
    }

    /// Free compute in milli-GPU, whatever the mode.
    pub fn free_milli(&self, mode: PartitionMode) -> u32 {
        match mode {
            PartitionMode::Mig => u32::from(self.mig_compute) * 1000 / u32::from(COMPUTE_SLICES),
            _ => self.milli,
        }
    }

    /// Whether nothing on the GPU is taken.
    pub fn is_idle(&self, model: &GpuModel, mode: PartitionMode) -> bool {
        match mode {
            PartitionMode::Mig => self.mig_mask == 0xff && self.mig_compute == COMPUTE_SLICES,
            _ => self.milli == 1000 && self.memory_mb == model.memory_mb(),
        }
    }
}

/// One GPU in the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuView {
    /// The GPU's index on its node.
    pub index: u8,
    pub model: ModelIdx,
    pub mode: PartitionMode,
    /// NVLink peers as a bit mask of GPU indices on the same node.
    pub nvlink: u32,
    pub free: GpuFree,
    /// Predicted ends (unix seconds) of the leases on the GPU, `None` for a
    /// lease with no end known or predicted. Empty when none is tracked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ends: Vec<Option<i64>>,
}

impl GpuView {
    /// Whether two GPUs offer a request the same candidates: equal hardware
    /// and free state, and with `ends`, equal predicted ends.
    pub fn same_state(&self, other: &GpuView, ends: bool) -> bool {
        self.index == other.index
            && self.model == other.model
            && self.mode == other.mode
            && self.nvlink == other.nvlink
            && self.free == other.free
            && (!ends || self.ends == other.ends)
    }
}

/// One node in the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeView {
    pub id: Uuid,
    pub region: RegionIdx,
    pub cordoned: bool,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub cpu_free: u64,
    pub memory_free: u64,
    pub gpus: Vec<GpuView>,
    /// The CUDA version its driver supports (`None`: not reported). Part of
    /// its interned hardware, so the nodes of one state agree on it.
    pub cuda: Option<CudaVersion>,
    /// The best single GPU on the node, so a node that cannot help is skipped in O(1).
    #[serde(skip)]
    pub summary: NodeSummary,
    /// The node's GPU hardware (index, model, mode, NVLink of each), interned
    /// by the view: equal ids mean equal hardware, so two idle nodes are known
    /// to be twins without reading their GPUs. 0 until the view holds the node.
    #[serde(skip)]
    pub hardware: u32,
}

/// Per-node free summary kept by the view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeSummary {
    /// The most free compute on any one GPU, milli-GPU.
    pub max_free_milli: u32,
    /// The most free memory on any one GPU, MB (shared and whole GPUs: a
    /// share needs compute and memory on one GPU, and a full fleet runs out
    /// of memory first).
    pub max_free_memory_mb: u64,
    /// GPUs with nothing taken.
    pub idle_gpus: u8,
    /// Every GPU exactly as free as a new one.
    pub all_idle: bool,
}

impl NodeView {
    /// A node with every GPU idle.
    pub fn new(id: Uuid, region: RegionIdx, cpu_milli: u64, memory_mib: u64) -> NodeView {
        NodeView {
            id,
            region,
            cordoned: false,
            cpu_milli,
            memory_mib,
            cpu_free: cpu_milli,
            memory_free: memory_mib,
            gpus: Vec::new(),
            cuda: None,
            summary: NodeSummary::default(),
            hardware: 0,
        }
    }

    /// Adds an idle GPU with the next index.
    pub fn with_gpu(mut self, model: ModelIdx, mode: PartitionMode, nvlink: u32) -> NodeView {
        let index = u8::try_from(self.gpus.len()).unwrap_or(u8::MAX);
        self.gpus.push(GpuView {
            index,
            model,
            mode,
            nvlink,
            free: GpuFree::idle(model_at(model)),
            ends: Vec::new(),
        });
        self.refresh_summary();
        self
    }

    /// Recomputes the summary after a GPU's free state changed.
    pub fn refresh_summary(&mut self) {
        let mut s = NodeSummary {
            all_idle: true,
            ..NodeSummary::default()
        };
        for g in &self.gpus {
            let model = model_at(g.model);
            s.max_free_milli = s.max_free_milli.max(g.free.free_milli(g.mode));
            s.max_free_memory_mb = s.max_free_memory_mb.max(g.free.memory_mb);
            if g.free.is_idle(model, g.mode) {
                s.idle_gpus += 1;
            }
            s.all_idle &= g.free == GpuFree::idle(model);
        }
        self.summary = s;
    }

    /// Whether both nodes have every GPU exactly idle on the same hardware,
    /// and so equal GPUs, known from the summaries alone.
    pub fn idle_twin_of(&self, other: &NodeView) -> bool {
        self.summary.all_idle
            && other.summary.all_idle
            && self.hardware != 0
            && self.hardware == other.hardware
    }

    /// NVLink peers of GPU `index` as a mask, symmetric (a link either side
    /// lists counts) and without the GPU itself.
    pub fn nvlink_peers(&self, index: u32) -> u32 {
        let mut peers = 0u32;
        for g in &self.gpus {
            let gi = u32::from(g.index);
            if gi == index {
                peers |= g.nvlink;
            } else if index < 32 && g.nvlink & (1 << index) != 0 && gi < 32 {
                peers |= 1 << gi;
            }
        }
        if index < 32 {
            peers &= !(1 << index);
        }
        peers
    }

    /// The position of the GPU with this index.
    pub fn gpu_pos(&self, index: u8) -> Option<usize> {
        self.gpus.iter().position(|g| g.index == index)
    }
}

/// The free state after taking `slot`, or `None` when it does not fit.
pub fn take(free: GpuFree, mode: PartitionMode, slot: &Slot, model: &GpuModel) -> Option<GpuFree> {
    let mut f = free;
    match slot {
        Slot::Whole => {
            if !free.is_idle(model, mode) {
                return None;
            }
            f.milli = 0;
            f.memory_mb = 0;
            f.mig_mask = 0;
            f.mig_compute = 0;
        }
        Slot::Mig { mask, compute, .. } => {
            if free.mig_mask & mask != *mask || free.mig_compute < *compute {
                return None;
            }
            f.mig_mask &= !mask;
            f.mig_compute -= compute;
        }
        Slot::Shared { milli, memory_mb } => {
            f.milli = free.milli.checked_sub(*milli)?;
            f.memory_mb = free.memory_mb.checked_sub(*memory_mb)?;
        }
    }
    Some(f)
}

/// The free state after giving `slot` back.
pub fn give(free: GpuFree, slot: &Slot, model: &GpuModel) -> GpuFree {
    match slot {
        Slot::Whole => GpuFree::idle(model),
        Slot::Mig { mask, compute, .. } => GpuFree {
            mig_mask: free.mig_mask | mask,
            mig_compute: (free.mig_compute + compute).min(COMPUTE_SLICES),
            ..free
        },
        Slot::Shared { milli, memory_mb } => GpuFree {
            milli: (free.milli + milli).min(1000),
            memory_mb: (free.memory_mb + memory_mb).min(model.memory_mb()),
            ..free
        },
    }
}
