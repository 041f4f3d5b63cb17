//! The TCO request and its answer, and how their decimals are bounded.

use crate::bounds::Bounds;
pub use gpuex_api::billing::{
    GpuexCost, LoadProfile, LoadShape, MixLine, ProfileSource, Tco, TcoAssumptions, TcoSaving,
    UnitPrices, WholeNodeCost,
};
use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::ToSchema;

/// Units held at once: below 10⁹, to the micro-unit, 0 allowed.
pub(super) const UNITS: Bounds = Bounds {
    integer_digits: 9,
    scale: 6,
    zero: true,
    money: false,
};

/// A decimal of units held at once.
pub struct UnitsInput;
impl utoipa::PartialSchema for UnitsInput {
    fn schema() -> RefOr<Schema> {
        UNITS.schema("400")
    }
}
impl ToSchema for UnitsInput {}

/// A share from 0 to 1, to 6 decimals.
pub struct ShareInput;
impl utoipa::PartialSchema for ShareInput {
    #[allow(
        clippy::float_arithmetic,
        reason = "the schema's bounds are JSON Schema numbers, never money"
    )]
    fn schema() -> RefOr<Schema> {
        let text = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .pattern(Some(
                r"^(0*(\.[0-9]{1,6}0*)?|0*1(\.0+)?|0*0\.[0-9]{1,6}0*)$",
            ));
        let number = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Number))
            .minimum(Some(0))
            .maximum(Some(1))
            .multiple_of(Some(0.000001));
        OneOfBuilder::new()
            .item(text)
            .item(number)
            .description(Some("A decimal from 0 to 1, with at most 6 decimals."))
            .into()
    }
}
impl ToSchema for ShareInput {}

pub(super) fn share_ok(v: Decimal) -> bool {
    v >= Decimal::ZERO && v <= Decimal::ONE && v.normalize().scale() <= 6
}

/// A load shape as a body gives it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadShapeInput {
    /// The most held at once.
    #[serde(deserialize_with = "crate::decimal::deserialize")]
    #[schema(value_type = UnitsInput)]
    pub peak: Decimal,
    /// The mean held (idle time included); at most `peak`.
    #[serde(deserialize_with = "crate::decimal::deserialize")]
    #[schema(value_type = UnitsInput)]
    pub mean: Decimal,
    /// The level held at least half the time (default 0: nothing reserved).
    #[serde(default, deserialize_with = "crate::decimal::deserialize_option")]
    #[schema(value_type = Option<UnitsInput>)]
    pub baseline: Option<Decimal>,
    /// The mean held above `baseline` (default `mean − baseline`: the load is
    /// never below the baseline).
    #[serde(default, deserialize_with = "crate::decimal::deserialize_option")]
    #[schema(value_type = Option<UnitsInput>)]
    pub mean_above_baseline: Option<Decimal>,
}

/// The work to price, as a body gives it (the fields of a capacity profile's `total`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadProfileInput {
    pub tflops_units: LoadShapeInput,
    pub vram_units: LoadShapeInput,
    /// The share of the work that tolerates preemption (default 0).
    #[serde(default, deserialize_with = "crate::decimal::deserialize_option")]
    #[schema(value_type = Option<ShareInput>)]
    pub spot_share: Option<Decimal>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TcoRequest {
    /// How long to compare, 1 to 120 months (default 36).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 120)]
    pub months: Option<u32>,
    /// What one whole 8-GPU node rents for per hour.
    #[serde(deserialize_with = "crate::decimal::money")]
    #[schema(value_type = crate::bounds::PricePerHour)]
    pub node_price_per_hour: Decimal,
    /// The GPU model of the node and of the units (default: the model the
    /// history used most, else H100-SXM5-80GB).
    #[schema(max_length = 64)]
    pub gpu_model: Option<String>,
    /// Whose list prices (default: of the regions where a node supplies the
    /// model, the one where one GPU of it lists cheapest; any priced region
    /// only when none supplies it).
    #[schema(max_length = 64)]
    pub region: Option<String>,
    /// The share of the rented nodes' hours doing the work (default: the
    /// nodes are sized to the peak, and the share follows from the mean).
    #[serde(default, deserialize_with = "crate::decimal::deserialize_option")]
    #[schema(value_type = Option<ShareInput>)]
    pub utilization: Option<Decimal>,
    /// The work to price (default: the caller's profile of the last 30 days).
    pub profile: Option<LoadProfileInput>,
    /// Price one of the caller's job-history imports (`POST
    /// /v1/profile/imports`) instead; not with `profile`.
    pub import_id: Option<uuid::Uuid>,
}
