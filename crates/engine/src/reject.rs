//! Why an order was rejected: one code and one message per reason, mapped to
//! HTTP once, at the edge.

use serde::{Deserialize, Serialize};

/// A reason an order is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    #[error("the hold this order needs exceeds the available funds")]
    InsufficientFunds,
    #[error("no adequate capacity is free")]
    NoCapacity,
    #[error("the bid is below the spot floor of 0.5 × list")]
    BelowFloor,
    #[error("a reserved window must start at least one hour ahead")]
    ReservedTooSoon,
    #[error("the GPU model is not in the catalog")]
    UnknownModel,
    #[error("no allowed GPU model supports this precision")]
    UnknownPrecision,
    #[error("no GPU can hold these resources (or no node's driver supports the `min_cuda` asked)")]
    UnsatisfiableResources,
    #[error("the node (or all capacity that could serve the order) is cordoned")]
    NodeCordoned,
    #[error("the region is not known")]
    UnknownRegion,
    #[error("the node is not known")]
    UnknownNode,
    #[error("the resources are invalid (tflops and vram_gb ≥ 0, not both 0; vram_gb a multiple of 4; 1–32 GPUs)")]
    InvalidResources,
    #[error("the window is invalid: reserved needs start_at and a positive duration_s")]
    InvalidWindow,
    #[error("spot orders need a positive max_price")]
    MissingMaxPrice,
    #[error("an order with this id already exists")]
    DuplicateOrder,
    #[error("a price, quantity or window is beyond what the market accepts")]
    OutOfRange,
    #[error("the price per hour is above the order's max_price")]
    MaxPriceExceeded,
}

impl RejectReason {
    /// The stable machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            RejectReason::InsufficientFunds => "insufficient_funds",
            RejectReason::NoCapacity => "no_capacity",
            RejectReason::BelowFloor => "below_floor",
            RejectReason::ReservedTooSoon => "reserved_too_soon",
            RejectReason::UnknownModel => "unknown_model",
            RejectReason::UnknownPrecision => "unknown_precision",
            RejectReason::UnsatisfiableResources => "unsatisfiable_resources",
            RejectReason::NodeCordoned => "node_cordoned",
            RejectReason::UnknownRegion => "unknown_region",
            RejectReason::UnknownNode => "unknown_node",
            RejectReason::InvalidResources => "invalid_resources",
            RejectReason::InvalidWindow => "invalid_window",
            RejectReason::MissingMaxPrice => "missing_max_price",
            RejectReason::DuplicateOrder => "duplicate_order",
            RejectReason::OutOfRange => "out_of_range",
            RejectReason::MaxPriceExceeded => "max_price_exceeded",
        }
    }

    /// The human message (the same text as `Display`).
    pub fn message(self) -> String {
        self.to_string()
    }
}
