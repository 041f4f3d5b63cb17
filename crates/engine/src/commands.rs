//! Commands into the engine. Each carries no time of its own: `now` is passed
//! beside it to [`super::Engine::apply`], so a replay gives the same events.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::placement::PartitionMode;
use super::resale::ListResale;
use super::types::{BuyerId, LeaseId, ListingId, NodeId, OrderId, OrderSpec, Ts};
use gpuex_wire::catalog::{CudaVersion, Unit};

/// One GPU of a node's inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuSpec {
    /// The GPU's index on the node (below 32).
    pub index: u8,
    /// Catalog model name.
    pub model: String,
    pub mode: PartitionMode,
    /// Indices of GPUs joined to this one by NVLink.
    #[serde(default)]
    pub nvlink: Vec<u8>,
}

/// A node's inventory and host capacity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub id: NodeId,
    pub region: String,
    /// The failure domain within the region (a rack, a building, a power
    /// feed): a lost node's leases are placed in another zone first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub gpus: Vec<GpuSpec>,
    /// The highest CUDA version the node's driver supports (the lowest its
    /// GPUs report); `None` until its agent says, and no order asking
    /// `min_cuda` is placed on such a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<CudaVersion>,
}

/// One list price: per unit-hour for (region, model, unit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListPrice {
    pub region: String,
    pub gpu_model: String,
    pub unit: Unit,
    pub list_price: Decimal,
}

/// A new order, with the buyer's available funds at the time of the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceOrder {
    pub order_id: OrderId,
    pub buyer: BuyerId,
    /// What the buyer's wallet can hold now; the order is refused if its hold exceeds it.
    pub funds_available: Decimal,
    pub spec: OrderSpec,
}

/// What an agent reports about an assignment (ARCHITECTURE.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentReport {
    Provisioned,
    Ended,
    Failed,
    /// The workload filled its disk quota and the agent ended it.
    DiskQuota,
}

/// A command into the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "command")]
pub enum Command {
    /// Add a node, or replace its inventory (leases on GPUs that changed end).
    UpsertNode(NodeSpec),
    /// Stop (or resume) new placements on a node.
    Cordon {
        node: NodeId,
        cordoned: bool,
    },
    /// The node stopped heartbeating: its leases end; on-demand and reserved are re-placed where possible.
    NodeLost {
        node: NodeId,
    },
    SetPrices(Vec<ListPrice>),
    /// A region and its IANA time zone (its local off-peak hours, ARCHITECTURE.md §6).
    SetRegion {
        name: String,
        timezone: String,
    },
    Place(PlaceOrder),
    Cancel {
        order_id: OrderId,
    },
    Release {
        lease_id: LeaseId,
    },
    AgentStatus {
        lease_id: LeaseId,
        status: AgentReport,
    },
    /// A hold renewal failed: notice starts now (reserved: the lease ends at `funded_until`).
    FundsExhausted {
        lease_id: LeaseId,
        funded_until: Option<Ts>,
    },
    /// List the tail of a reserved lease for resale.
    ListResale(ListResale),
    /// Cancel an open listing of `seller`'s.
    CancelListing {
        listing_id: ListingId,
        seller: BuyerId,
    },
    /// Change a live lease's mode in place (ARCHITECTURE.md §3 "Mode changes"), with
    /// what the buyer's wallet can add to the lease's hold.
    Convert {
        lease_id: LeaseId,
        to: super::convert::ConvertTo,
        funds_available: Decimal,
    },
    /// The demand forecast's expected primary demand per market within the
    /// notice period (ARCHITECTURE.md §17); replaces the previous one.
    SetForecast(Vec<super::forecast::DemandForecast>),
    /// Time passed: process every end and notice due, retry waiting orders, clear spot.
    Tick,
}
