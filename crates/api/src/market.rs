//! Orders, leases and resale listings as the API shows them.

use crate::money_out;
use chrono::{DateTime, Utc};
pub use gpuex_engine::{LeaseState, Mode};
use gpuex_wire::catalog::text_names;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

/// Where an order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[schema(
    description = "Where an order stands. Rows keep the name as text; this names the values\nfor the API's schema."
)]
#[serde(rename_all = "snake_case")]
pub enum OrderState {
    /// Waiting for capacity, or in the spot auction.
    Open,
    Filled,
    Cancelled,
    Rejected,
    Expired,
}

text_names!(OrderState {
    Open => "open",
    Filled => "filled",
    Cancelled => "cancelled",
    Rejected => "rejected",
    Expired => "expired",
});

/// An order and where it stands.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrderView {
    pub id: Uuid,
    pub client_order_id: Option<String>,
    /// `on_demand`, `reserved`, `spot` or `pooled`.
    pub mode: Mode,
    /// `open` (waiting or in the spot auction), `filled`, `cancelled`, `rejected` or `expired`.
    pub state: OrderState,
    /// The region asked for (`any` lets the engine choose).
    pub region: String,
    /// The order as placed.
    #[schema(value_type = Object)]
    pub request: Box<RawValue>,
    #[schema(value_type = Object)]
    pub tags: Box<RawValue>,
    /// The reason code of a rejection, e.g. `no_capacity`.
    pub reject_reason: Option<String>,
    pub reject_message: Option<String>,
    /// The order's current lease, once filled.
    pub lease_id: Option<Uuid>,
    /// The leases the order holds now, oldest first: several for an order
    /// of `count` units. Once all have ended, those of its last fill.
    pub lease_ids: Vec<Uuid>,
    /// Every lease the order has had, oldest first: more than one when a
    /// lease was preempted or its node lost and the order placed again.
    pub attempts: Vec<Uuid>,
    /// The checkpoint its latest resumed lease started from
    /// (`on_interrupt: resume`); absent when none resumed.
    pub resumed_from: Option<ResumedFrom>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Where a resumed lease started from.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ResumedFrom {
    /// The lease that resumed.
    pub lease_id: Uuid,
    /// The checkpoint's number within the order.
    pub seq: i64,
    /// When that checkpoint was stored.
    pub stored_at: DateTime<Utc>,
}

/// Units a lease holds.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UnitsView {
    #[schema(value_type = String)]
    pub tflops_h: Decimal,
    #[schema(value_type = String)]
    pub vram_h: Decimal,
}

/// What a lease has used and been charged so far.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UsageView {
    /// Charged so far.
    #[schema(schema_with = money_out)]
    pub charged: Decimal,
    /// Charged up to here.
    pub billed_until: Option<DateTime<Utc>>,
    /// Metered by the agent (standard TFLOPS × seconds, GB × seconds).
    #[schema(value_type = String)]
    pub tflops_s: Decimal,
    #[schema(value_type = String)]
    pub vram_gb_s: Decimal,
}

/// A lease: a slice of one node's GPUs for a window, at a price.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LeaseView {
    pub id: Uuid,
    pub order_id: Uuid,
    /// `pending`, `provisioning`, `running`, `preempting`, `ended` or `failed`.
    pub state: LeaseState,
    pub mode: Mode,
    pub node_id: Uuid,
    pub region: String,
    pub gpu_model: String,
    /// GPU indices with their slot: whole, MIG profile and start, or shared milli/memory.
    #[schema(value_type = Object)]
    pub placement: serde_json::Value,
    /// Units held (charged for).
    pub units: UnitsView,
    #[schema(value_type = String)]
    pub price_per_hour: Decimal,
    /// Price per unit-hour.
    pub unit_prices: UnitsView,
    pub starts_at: DateTime<Utc>,
    pub ends_at: Option<DateTime<Utc>>,
    /// Listed for resale: the lease gives its slice up here (the listing's
    /// `from`) and its workload is stopped then, whether or not the listing
    /// sells (ARCHITECTURE.md §6); `ends_at` stays the end of the window it still
    /// owes. Set from the moment it is listed; cleared when the listing is
    /// cancelled and the lease runs on to `ends_at` again.
    pub vacate_at: Option<DateTime<Utc>>,
    /// A pending lease waiting on a preemption notice starts here.
    pub ready_at: Option<DateTime<Utc>>,
    /// A preempting lease ends here.
    pub preempt_at: Option<DateTime<Utc>>,
    /// Spot: when the clearing index came within 10 % of this lease's own
    /// index (the `lease.rebalance` warning; a moment to convert or move).
    /// Cleared when the index moves away again.
    pub rebalance_at: Option<DateTime<Utc>>,
    /// The device handle the agent reported (e.g. a MIG UUID).
    pub device: Option<String>,
    /// The order's image by the ID the agent resolved it to when the lease
    /// started (`sha256:` and 64 hex digits): what ran, even after its tag
    /// moves. `null` for a lease without an image.
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub image_id: Option<String>,
    pub end_reason: Option<String>,
    pub exit_code: Option<i32>,
    /// Why the agent could not run the lease (`end_reason` `agent_failed`),
    /// as it reported: a bad artifact hash, a failed fetch, a slice it could
    /// not make. At most 1,000 characters; the logs have the rest.
    #[schema(max_length = 1000)]
    pub failure: Option<String>,
    pub usage: UsageView,
    /// Mode conversions, oldest first (`POST /v1/leases/{id}/convert`).
    pub conversions: Vec<ConversionView>,
}

/// One mode conversion of a lease (ARCHITECTURE.md §3 "Mode changes").
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ConversionView {
    /// When the buyer converted.
    pub at: DateTime<Utc>,
    /// When the new price applies: `at`, or a reserved window's `from`.
    pub effective_at: DateTime<Utc>,
    pub from_mode: Mode,
    pub to_mode: Mode,
    #[schema(value_type = String)]
    pub price_per_hour_before: Decimal,
    #[schema(value_type = String)]
    pub price_per_hour_after: Decimal,
}

/// A listing as its seller sees it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ListingView {
    pub id: Uuid,
    pub lease_id: Uuid,
    /// The listing a sale left this one of.
    pub parent_id: Option<Uuid>,
    /// `open`, `sold`, `cancelled`, `expired` or `withdrawn` (its node left the market).
    pub state: String,
    pub gpu_model: String,
    pub region: String,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    #[schema(value_type = String)]
    pub ask_per_hour: Decimal,
    /// Sold: the part sold.
    pub sold_from: Option<DateTime<Utc>>,
    pub sold_until: Option<DateTime<Utc>>,
    /// Sold: the ask for that part (each charge pays it, less the platform fee).
    #[schema(value_type = Option<String>)]
    pub sold_amount: Option<Decimal>,
    pub created_at: DateTime<Utc>,
}

/// An open listing as the market shows it: the slice, never the seller.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ResaleOffer {
    pub id: Uuid,
    pub gpu_model: String,
    pub region: String,
    /// What each GPU holds: `{"kind": "whole"}`, a MIG instance or a share.
    #[schema(value_type = Vec<Object>)]
    pub slots: Vec<serde_json::Value>,
    pub gpus: u32,
    #[schema(value_type = String)]
    pub tflops_h: Decimal,
    #[schema(value_type = String)]
    pub vram_h: Decimal,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    #[schema(value_type = String)]
    pub ask_per_hour: Decimal,
    /// What the seller pays per hour for the slice: the ask saves at least 10 % on it.
    #[schema(value_type = String)]
    pub reserved_price_per_hour: Decimal,
}
