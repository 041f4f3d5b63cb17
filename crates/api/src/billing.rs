//! What billing answers: usage, earnings, capacity profiles and the TCO comparison.

use crate::money_out;
use chrono::{DateTime, Utc};
use gpuex_engine::Mode;
use gpuex_wire::catalog::Unit;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Earnings {
    pub currency: String,
    pub groups: Vec<EarningsGroup>,
    #[schema(schema_with = money_out)]
    pub gross: Decimal,
    #[schema(schema_with = money_out)]
    pub platform_fee: Decimal,
    #[schema(schema_with = money_out)]
    pub net: Decimal,
    /// The provider's payable account now: earned and not paid out.
    #[schema(schema_with = money_out)]
    pub payable_balance: Decimal,
}

/// Earnings of one (node, GPU model, mode, period).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EarningsGroup {
    pub node_id: Option<Uuid>,
    pub gpu_model: Option<String>,
    pub mode: Option<String>,
    /// `YYYY-MM` or `YYYY-MM-DD`.
    pub period: String,
    /// What buyers paid.
    #[schema(schema_with = money_out)]
    pub gross: Decimal,
    /// The platform's fee out of it.
    #[schema(schema_with = money_out)]
    pub platform_fee: Decimal,
    /// What the provider earns: gross − fee.
    #[schema(schema_with = money_out)]
    pub net: Decimal,
    pub lines: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UsageReport {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub group_by: String,
    pub currency: String,
    pub groups: Vec<UsageGroup>,
    #[schema(schema_with = money_out)]
    pub total: Decimal,
}

/// Cost and units of one group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UsageGroup {
    pub key: String,
    /// What the lines cost (credits net it).
    #[schema(schema_with = money_out)]
    pub cost: Decimal,
    /// Unit-hours per unit (`tflops_h`, `vram_h`).
    #[schema(value_type = BTreeMap<String, String>)]
    pub units: BTreeMap<String, Decimal>,
    pub lines: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CapacityProfile {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// The part of the window already passed, over which means are taken.
    pub elapsed_s: i64,
    /// Share of the TFLOPS-hours held that ran as spot, to 6 decimals.
    #[schema(value_type = String, example = "0.25")]
    pub spot_share: Decimal,
    pub total: GroupProfile,
    pub by_mode: Vec<GroupProfile>,
    pub by_gpu_model: Vec<GroupProfile>,
    /// One group per tag key and value; a lease with two tags is in two groups.
    pub by_tag: Vec<GroupProfile>,
}

/// The profile of one group (or of everything, in `total`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GroupProfile {
    /// A mode, a GPU model, `KEY=VALUE` of a tag, `(untagged)`, or `all`.
    pub key: String,
    pub tflops_units: Concurrency,
    pub vram_units: Concurrency,
    pub durations: LeaseDurations,
    pub utilization: HeldUtilization,
}

/// How many units of one kind were held at once. Means are over the elapsed
/// part of the window (`elapsed_s`), idle time included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Concurrency {
    /// The most held at any second.
    #[schema(value_type = String, example = "400")]
    pub peak: Decimal,
    /// Unit-seconds held ÷ elapsed seconds, to 6 decimals.
    #[schema(value_type = String, example = "150.5")]
    pub mean: Decimal,
    /// The highest level held for at least half of the elapsed time: what a
    /// reservation would keep busy at least half the time.
    #[schema(value_type = String, example = "100")]
    pub baseline: Decimal,
    /// The mean of what was held above `baseline` (0 when below it), to 6
    /// decimals: the work a reservation at `baseline` leaves to other modes.
    #[schema(value_type = String, example = "60.5")]
    pub mean_above_baseline: Decimal,
    /// Unit-hours held, to 6 decimals.
    #[schema(value_type = String, example = "3612")]
    pub unit_hours: Decimal,
}

/// How long leases ran in the window, in seconds (nearest-rank percentiles).
/// A lease cut by the window's edges counts the part inside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LeaseDurations {
    pub leases: u64,
    /// To 3 decimals; absent with no lease.
    #[schema(value_type = Option<String>, example = "5400")]
    pub mean_s: Option<Decimal>,
    pub p50_s: Option<i64>,
    pub p90_s: Option<i64>,
    pub p99_s: Option<i64>,
    pub max_s: Option<i64>,
}

/// What was used of what was held, from the agents' usage reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeldUtilization {
    /// TFLOPS-hours held over the intervals whose utilization an agent
    /// measured, to 6 decimals.
    #[schema(value_type = String, example = "200")]
    pub measured_tflops_h: Decimal,
    /// Of those, the TFLOPS-hours used (held × mean utilization), to 6 decimals.
    #[schema(value_type = String, example = "150")]
    pub used_tflops_h: Decimal,
    /// `used_tflops_h ÷ measured_tflops_h`, to 6 decimals; null when no
    /// agent reported a utilization.
    #[schema(value_type = Option<String>, example = "0.75")]
    pub fraction: Option<Decimal>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Tco {
    pub currency: String,
    pub whole_node: WholeNodeCost,
    pub gpuex: GpuexCost,
    pub saving: TcoSaving,
    pub assumptions: TcoAssumptions,
}

/// Everything the figures were computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TcoAssumptions {
    pub gpu_model: String,
    pub region: String,
    pub months: u32,
    pub hours_per_month: u32,
    pub profile_source: ProfileSource,
    /// The history window (sources `history` and `import`).
    pub history_from: Option<DateTime<Utc>>,
    pub history_to: Option<DateTime<Utc>>,
    /// The import priced (source `import`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_id: Option<Uuid>,
    pub profile: LoadProfile,
    pub prices: Vec<UnitPrices>,
    #[schema(value_type = String)]
    pub reserved_factor: Decimal,
    #[schema(value_type = String)]
    pub on_demand_factor: Decimal,
    /// Spot price ÷ list.
    #[schema(value_type = String)]
    pub spot_index: Decimal,
    /// `market_clearing` (the auction's current index) or `default_discount`.
    pub spot_index_source: String,
    /// Extra spot work for preemptions, as a share of it.
    #[schema(value_type = String)]
    pub spot_preemption_overhead: Decimal,
    pub node_gpus: u32,
    #[schema(value_type = String)]
    pub node_price_per_hour: Decimal,
    /// The share of the nodes' hours doing the work, to 6 decimals.
    #[schema(value_type = String)]
    pub utilization: Decimal,
    /// `given`, or `sized_to_peak` (nodes for the peak; utilization = mean ÷ capacity).
    pub utilization_source: String,
    /// What one GPU of the model holds.
    #[schema(value_type = String)]
    pub gpu_tflops_units: Decimal,
    #[schema(value_type = String)]
    pub gpu_vram_units: Decimal,
    /// How the mix was chosen, in words.
    pub mix_rule: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TcoSaving {
    /// `whole_node.total − gpuex.total`; negative when whole nodes cost less.
    #[schema(value_type = String)]
    pub amount: Decimal,
    /// `amount ÷ whole_node.total`, to 4 decimals.
    #[schema(value_type = String)]
    pub fraction: Decimal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GpuexCost {
    #[schema(value_type = String)]
    pub per_hour: Decimal,
    #[schema(value_type = String)]
    pub per_month: Decimal,
    #[schema(value_type = String)]
    pub total: Decimal,
    pub mix: Vec<MixLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WholeNodeCost {
    pub nodes: u64,
    #[schema(value_type = String)]
    pub per_hour: Decimal,
    #[schema(value_type = String)]
    pub per_month: Decimal,
    #[schema(value_type = String)]
    pub total: Decimal,
}

/// One part of the gpuex mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MixLine {
    pub unit: Unit,
    pub mode: Mode,
    /// Units bought on average each hour (unit-hours per hour).
    #[schema(value_type = String)]
    pub units: Decimal,
    #[schema(value_type = String)]
    pub price_per_unit_hour: Decimal,
    /// `units × price_per_unit_hour`, to 6 decimals.
    #[schema(value_type = String)]
    pub per_hour: Decimal,
}

/// A unit's prices per unit-hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UnitPrices {
    pub unit: Unit,
    #[schema(value_type = String)]
    pub list: Decimal,
    #[schema(value_type = String)]
    pub reserved: Decimal,
    #[schema(value_type = String)]
    pub on_demand: Decimal,
    /// `spot_index` × list.
    #[schema(value_type = String)]
    pub spot: Decimal,
}

/// Where the priced work came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProfileSource {
    /// The caller's capacity profile over `history_from`–`history_to`.
    History,
    /// The request's `profile`.
    Body,
    /// An imported job history (`import_id`), over `history_from`–`history_to`.
    Import,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LoadProfile {
    pub tflops_units: LoadShape,
    pub vram_units: LoadShape,
    #[schema(value_type = String)]
    pub spot_share: Decimal,
}

/// A load shape as priced.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LoadShape {
    #[schema(value_type = String)]
    pub peak: Decimal,
    #[schema(value_type = String)]
    pub mean: Decimal,
    #[schema(value_type = String)]
    pub baseline: Decimal,
    #[schema(value_type = String)]
    pub mean_above_baseline: Decimal,
}
