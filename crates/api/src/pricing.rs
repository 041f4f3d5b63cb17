//! Quotes: what an order would cost, per option and for the slice it would get.

use crate::money_out;
use chrono::{DateTime, Utc};
use gpuex_engine::Mode;
use gpuex_wire::catalog::Unit;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Quote {
    pub mode: Mode,
    pub currency: String,
    pub start_at: DateTime<Utc>,
    pub duration_s: u64,
    /// How the price was derived.
    pub rule: String,
    /// Every adequate (model, region), cheapest first, priced on the units
    /// asked: an estimate for comparing models. A MIG profile or whole GPU
    /// holds more than asked, and is charged for it: `slice` prices that.
    pub options: Vec<QuoteOption>,
    /// The slice placement would choose now, priced on the units it holds
    /// (what the order is charged); absent when none is free.
    pub slice: Option<SliceQuote>,
    /// Why no slice is free now (a reject reason code), when `slice` is absent.
    pub slice_unavailable: Option<String>,
    /// For a quote of `count` units: how many free capacity holds now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitsQuote>,
}

/// What an order of `count` units would get if placed now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UnitsQuote {
    /// The units asked.
    pub count: u32,
    /// The units free capacity holds now (at most `count`): an order with
    /// `all_or_none` fills only when this equals `count`, one with
    /// `min_count` when this reaches it.
    pub placeable_now: u32,
    /// What those units would be charged per hour together.
    #[schema(value_type = String)]
    pub price_per_hour: Decimal,
}

/// What the request would cost on one model in one region.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QuoteOption {
    pub region: String,
    pub gpu_model: String,
    /// Standard (dense FP16) TFLOPS the request costs on this model.
    #[schema(value_type = String)]
    pub standard_tflops: Decimal,
    #[schema(value_type = String)]
    pub price_per_hour: Decimal,
    #[schema(schema_with = money_out)]
    pub total: Decimal,
    pub breakdown: Vec<QuoteLine>,
}

/// One line of a quote: one unit for the window.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QuoteLine {
    pub unit: Unit,
    /// Units held.
    #[schema(value_type = String)]
    pub quantity: Decimal,
    /// Price per unit-hour in this mode.
    #[schema(value_type = String)]
    pub unit_price: Decimal,
    #[schema(value_type = String)]
    pub list_unit_price: Decimal,
    #[schema(value_type = String)]
    pub hours: Decimal,
    /// quantity × unit_price × hours, rounded half-even to 6 decimals.
    #[schema(schema_with = money_out)]
    pub amount: Decimal,
}

/// The concrete slice the order would get if placed now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SliceQuote {
    pub node_id: uuid::Uuid,
    pub region: String,
    pub gpu_model: String,
    /// GPU indices with their slot: whole, MIG profile and start, or shared milli/memory.
    #[schema(value_type = Object)]
    pub placement: serde_json::Value,
    /// Units the slice holds (what is charged), and what was asked.
    #[schema(value_type = Object)]
    pub units: serde_json::Value,
    #[schema(value_type = Object)]
    pub unit_prices: serde_json::Value,
    /// What the lease would be charged per hour for the units it holds:
    /// exactly the fill's `price_per_hour` when nothing changes in between.
    #[schema(value_type = String)]
    pub price_per_hour: Decimal,
    /// `price_per_hour` over the window (`duration_s`, default 1 h), rounded
    /// half-even to 6 decimals.
    #[schema(schema_with = money_out)]
    pub total: Decimal,
    /// Funds the order would hold.
    #[schema(value_type = String)]
    pub hold: Decimal,
    /// Whether it would first wait on a preemption notice.
    pub needs_preemption: bool,
    /// `primary`, or `resale` when a listing is the cheaper source.
    pub source: String,
    /// Resale: the listing it would take.
    pub listing_id: Option<uuid::Uuid>,
    /// Resale: what primary capacity would charge per hour (`null`: none is free).
    #[schema(value_type = Option<String>)]
    pub primary_price_per_hour: Option<Decimal>,
    /// Resale: the primary price per hour less this one.
    #[schema(value_type = Option<String>)]
    pub saving_per_hour: Option<Decimal>,
    /// Whether the request's `max_price` is below `price_per_hour`: an order
    /// like it would be refused with `max_price_exceeded` (or wait, with
    /// `max_wait_s`). Never for spot, whose `max_price` is its bid.
    pub max_price_binds: bool,
}
