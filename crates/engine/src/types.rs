//! The engine's vocabulary: ids, time, modes and the order's resource request.
//!
//! Time is plain unix seconds handed in with every command, so the engine never
//! reads a clock and replays give the same answers.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use gpuex_wire::catalog::RegionChoice;
use gpuex_wire::catalog::{text_names, CudaVersion, Precision};

/// Unix seconds (UTC). Every command carries its own `now`.
pub type Ts = i64;
/// An order id, chosen by the caller.
pub type OrderId = Uuid;
/// A lease id, derived deterministically from the order id and its fill number.
pub type LeaseId = Uuid;
/// A node id (also the agent id).
pub type NodeId = Uuid;
/// A buyer (user) id.
pub type BuyerId = Uuid;

/// A resale listing.
pub type ListingId = Uuid;

/// How an order buys capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Starts when its slice is free, never preempted: 1.8 × list.
    OnDemand,
    /// A fixed window booked at least an hour ahead, owed whole: 0.85 × list.
    Reserved,
    /// Idle capacity by auction, preemptible: 0.5–0.7 × list.
    Spot,
    /// A small share of a pooled GPU: 1.0 × list.
    Pooled,
}

impl Mode {
    /// The priority of this mode at the default qos.
    pub fn priority(self) -> Priority {
        Priority::of(self, Qos::Batch)
    }

    /// The priority of this mode at `qos`.
    pub fn priority_with(self, qos: Qos) -> Priority {
        Priority::of(self, qos)
    }
}

text_names!(Mode {
    OnDemand => "on_demand",
    Reserved => "reserved",
    Spot => "spot",
    Pooled => "pooled",
});

/// Quality of service of pooled and waiting orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Qos {
    /// Never waits for capacity.
    Realtime,
    #[default]
    Batch,
}

/// What kind of partition a request accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    #[default]
    Any,
    Mig,
    Whole,
    /// Only a soft share of a `shared` GPU: what pooled orders take.
    Shared,
}

/// Preemption priority, lowest first: capacity is only ever taken from the two lowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Spot,
    PooledBatch,
    PooledRealtime,
    OnDemand,
    Reserved,
}

impl Priority {
    /// The priority a lease of this mode and qos runs at.
    pub fn of(mode: Mode, qos: Qos) -> Priority {
        match (mode, qos) {
            (Mode::Spot, _) => Priority::Spot,
            (Mode::Pooled, Qos::Batch) => Priority::PooledBatch,
            (Mode::Pooled, Qos::Realtime) => Priority::PooledRealtime,
            (Mode::OnDemand, _) => Priority::OnDemand,
            (Mode::Reserved, _) => Priority::Reserved,
        }
    }

    /// Only pooled and spot leases may ever be preempted.
    pub fn preemptible(self) -> bool {
        self <= Priority::PooledRealtime
    }
}

/// `resources` of an order (ARCHITECTURE.md §4), as the API parsed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// TFLOPS at `precision` (total over all GPUs).
    pub tflops: Decimal,
    /// GPU memory in GB (total), a multiple of 4.
    pub vram_gb: u32,
    #[serde(default)]
    pub precision: Option<Precision>,
    /// A catalog model name; `None` lets the engine choose.
    #[serde(default)]
    pub gpu_model: Option<String>,
    /// Number of GPUs (default 1); more than one takes whole GPUs of one node.
    #[serde(default)]
    pub gpus: Option<u32>,
    /// Require NVLink between the GPUs of a multi-GPU lease.
    #[serde(default)]
    pub nvlink: bool,
    #[serde(default)]
    pub isolation: Isolation,
    #[serde(default)]
    pub cpu_milli: Option<u64>,
    #[serde(default)]
    pub memory_mib: Option<u64>,
    /// Only nodes whose driver supports at least this CUDA version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cuda: Option<CudaVersion>,
}

/// An order as the engine needs it (ARCHITECTURE.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderSpec {
    pub mode: Mode,
    pub resources: Resources,
    /// A region, or any (older journal rows wrote `any` as `null`).
    #[serde(default)]
    pub region: RegionChoice,
    /// Pin the order to one node (providers testing their own nodes).
    #[serde(default)]
    pub node: Option<NodeId>,
    #[serde(default)]
    pub start_at: Option<Ts>,
    #[serde(default)]
    pub duration_s: Option<i64>,
    /// Spot: the most the buyer pays per hour for the whole order.
    #[serde(default)]
    pub max_price: Option<Decimal>,
    #[serde(default)]
    pub max_wait_s: Option<i64>,
    #[serde(default)]
    pub qos: Qos,
    /// How long the server expects the lease to run, from the buyer's
    /// history (ARCHITECTURE.md §17); `duration_s`, when given, wins over it.
    /// Placement puts leases predicted to end together on the same GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_duration: Option<DurationPrediction>,
    /// `count` identical units placed together (ARCHITECTURE.md §22, "Order
    /// types"); `None` is one unit, as every order was before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gang: Option<Gang>,
}

/// Several identical units of one order, placed in one step: at least
/// `min_count` of `count` (all of them for all-or-none), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gang {
    pub count: u32,
    pub min_count: u32,
}

impl Gang {
    /// The most units one order may ask for.
    pub const MAX_COUNT: u32 = 64;

    /// The fill number of leg `leg` of a gang whose fills so far are
    /// `fills`. Legs are 2^16 apart, so the chain of replacements a lost
    /// leg gets (`fill_no + 1`, …) never meets its neighbour's lease id.
    pub fn fill_no(fills: u32, leg: u32) -> u32 {
        fills.saturating_add(leg << 16)
    }
}

impl OrderSpec {
    /// The prediction a fill of this order uses: its own `duration_s` if
    /// set, else the server's prediction, else none.
    pub fn duration_prediction(&self) -> DurationPrediction {
        match (self.duration_s, &self.predicted_duration) {
            (Some(d), _) => DurationPrediction {
                seconds: Some(d),
                basis: PredictionBasis::DurationS,
                samples: 0,
            },
            (None, Some(p)) => p.clone(),
            (None, None) => DurationPrediction::none(),
        }
    }
}

/// Where a predicted lease duration came from (ARCHITECTURE.md §17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PredictionBasis {
    /// The order's own `duration_s`: known, not predicted.
    DurationS,
    /// Ended leases of the same buyer with the same tags.
    Tags,
    /// Ended leases of the same buyer with the same command.
    Command,
    /// None matched: every ended lease of the buyer.
    Fallback,
    /// The buyer has no ended lease to learn from.
    #[default]
    None,
}

text_names!(PredictionBasis {
    DurationS => "duration_s",
    Tags => "tags",
    Command => "command",
    Fallback => "fallback",
    None => "none",
});

/// A lease's likely duration and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DurationPrediction {
    /// Seconds from the lease's start; `None` when there is nothing to go on.
    pub seconds: Option<i64>,
    pub basis: PredictionBasis,
    /// Ended leases the median was taken over (0 for `duration_s` and `none`).
    #[serde(default)]
    pub samples: u32,
}

impl DurationPrediction {
    /// No prediction.
    pub fn none() -> DurationPrediction {
        DurationPrediction::default()
    }
}
