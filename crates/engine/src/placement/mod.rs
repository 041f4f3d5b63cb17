//! Placement: which concrete slice serves a request (ARCHITECTURE.md §5).
//!
//! # API
//!
//! Placement is a pure function over a plain capacity view, so the engine and
//! `gpuex simulate` run the very same code:
//!
//! ```text
//! let mut view = CapacityView::new();
//! let r = view.region("eu-west");
//! view.set_price(r, model_idx("H100-SXM5-80GB")?, UnitPrices { tflops_h, vram_h });
//! view.upsert_node(NodeView::new(id, r, cpu_milli, memory_mib)
//!     .with_gpu(model, PartitionMode::Shared, nvlink_peers_mask) /* … */);
//! let req = PlacementRequest::milli(250, 8_000);          // or Compute::Tflops
//! let mut mix = DemandMix::default();                     // recent demand
//! if let Some(p) = place(&view, &req, &mix, &Policy::default()) {
//!     view.allocate(&p)?;                                 // … later view.release(&p)
//!     mix.record(DemandClass::quantized(250, 8_000, 1));
//! }
//! let frag = frag_ratio(&view, &mix);                     // FGD's measure, 0..=1
//! let waste = internal_waste(&placements);                // milli-GPU held beyond asked
//! ```
//!
//! - [`CapacityView`]: per-node ([`NodeView`]: region, cordoned, host CPU and
//!   memory free) and per-GPU ([`GpuView`]: model, [`PartitionMode`], NVLink
//!   peers, [`GpuFree`]) free state, indexed by (region, model, mode) buckets
//!   and a per-node free summary, plus list prices per (region, model).
//!   Within a bucket, uncordoned nodes are filed by state (region, hardware,
//!   free host and free GPUs): interchangeable nodes are scored once, at
//!   their lowest id, and a request visits only the states with room for
//!   it (for a share: a GPU with both the compute and the memory), so a
//!   scan costs the number of distinct free shapes, not of GPUs. A state
//!   whose lower bound on the ranking key is behind the best candidate
//!   found is counted from its card, not scored ([`Walk::EveryNode`] is
//!   the reference walk that must agree).
//! - [`PlacementRequest`]: compute (TFLOPS at a precision, or milli-GPU),
//!   memory, GPU count, allowed models, NVLink, isolation, region, node, host CPU/memory.
//! - [`Policy`]: the hard rules and the ranking ([`ScoreKind`]); the simulator
//!   compares policies, the engine uses the default.
//! - [`Placement`]: node, GPUs with their [`Slot`] (whole, MIG profile and start,
//!   or shared milli/memory), host CPU/memory taken, units held and asked, list
//!   value per hour, and [`Why`] it was chosen.
//!
//! # Order of preference
//!
//! 1. Adequate slices only: the model has the precision, enough compute and
//!    memory, the isolation asked, the region, host CPU and memory; a
//!    multi-GPU request takes idle GPUs of one (model, mode) on one node.
//! 2. The cheapest for the buyer: a MIG profile or a whole GPU costs the units
//!    it holds, a shared slice exactly what was asked.
//! 3. Among equal prices, off-peak regions first. Follow-the-sun (ARCHITECTURE.md
//!    §6): when the cheapest free slice of a `region: any` request is in a
//!    region at peak hours, an off-peak region's slice at most
//!    [`Policy::offpeak_band`] dearer is taken instead (the cheapest such).
//! 4. Then the least fragmentation ([`score`]): smallest increase of the GPU's
//!    expected fragmentation under the demand mix; then, for a request with
//!    a predicted end ([`EndHint`]), the GPU whose other leases are predicted
//!    to end nearest it ([`end_term`]: least extension of the GPU's busy
//!    time, then least slack), so whole GPUs free up together; then partly
//!    used GPUs first and the best fit; MIG instances go to high starts to
//!    keep large contiguous placements free; multi-GPU sets with the most
//!    NVLink links, on the node left with the fewest idle GPUs.
//! 5. Node id and GPU index, so the choice is deterministic.

mod bound;
mod fast;
mod host;
pub mod naive;
mod node_view;
mod nvlink;
mod request;
mod scan;
pub mod score;
mod shares;
mod states;
mod view;

#[cfg(test)]
mod bound_tests;
#[cfg(test)]
mod tests;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

pub use fast::{adequacy, place, servable, Adequacy};
pub use request::{
    Compute, EndHint, GpuSlot, ModelSet, Placement, PlacementRequest, Slot, Units, Why,
};
pub use score::{
    end_term, frag_ratio, internal_waste, DemandClass, DemandMix, ForecastClass, ScoreKind,
};
pub use view::{
    give, model_at, model_idx, take, Bucket, CapacityView, GpuFree, GpuView, ModelIdx, NodeSummary,
    NodeView, PartitionMode, RegionIdx, RegionView, UnitPrices, ViewError, ViewMark,
};

/// The rules placement follows; the engine uses [`Policy::default`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// How candidates are ranked after price.
    pub score: ScoreKind,
    /// Cheapest option for the buyer first (off: every option competes on score alone).
    pub cheapest_first: bool,
    /// Skip (region, model) pairs without a list price: they are not for sale.
    pub require_price: bool,
    /// Prefer multi-GPU sets with more NVLink links.
    pub prefer_nvlink: bool,
    /// A lease may ask at most this many times its GPU share of host CPU and memory.
    pub host_cap_factor: Option<u64>,
    /// Follow-the-sun: how much dearer than the cheapest free slice (a
    /// fraction of its price) an off-peak region's slice may be and still be
    /// preferred by a `region: any` request; `None`: off-peak only breaks
    /// exact price ties.
    #[serde(default)]
    pub offpeak_band: Option<Decimal>,
    /// How candidates are found; every walk chooses the same placement.
    #[serde(default)]
    pub walk: Walk,
}

/// How placement finds the nodes worth scoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Walk {
    /// Each distinct node state with room for the request, once (the
    /// view's state index): the cost follows the free shapes, not the fleet.
    #[default]
    States,
    /// Every node of each bucket: the reference the index must agree with,
    /// and the benchmarks' baseline.
    EveryNode,
}

/// ARCHITECTURE.md §6: off-peak capacity within 5 % of the cheapest goes first.
pub const OFFPEAK_BAND: Decimal = Decimal::from_parts(5, 0, 0, false, 2);

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            score: ScoreKind::Fgd,
            cheapest_first: true,
            require_price: true,
            prefer_nvlink: true,
            host_cap_factor: Some(4),
            offpeak_band: Some(OFFPEAK_BAND),
            walk: Walk::States,
        }
    }
}

impl Policy {
    /// The simulator's starting point: no prices, no host cap, FGD scoring.
    pub fn simulation(score: ScoreKind) -> Policy {
        Policy {
            score,
            cheapest_first: false,
            require_price: false,
            prefer_nvlink: true,
            host_cap_factor: None,
            offpeak_band: None,
            walk: Walk::States,
        }
    }
}
