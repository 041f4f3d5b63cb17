//! Quotes: what a request would cost, per model and region, before committing.

use super::rules::{round_money, DerivedPrices, Mode};
use super::store::ListPrice;
use crate::catalog::RegionChoice;
use crate::catalog::{self, CudaVersion, GpuModel, Precision, Unit, UNIT_VRAM_GB};
use crate::error::{ApiError, FieldError};
use chrono::{DateTime, Duration, Utc};
pub use gpuex_api::pricing::{Quote, QuoteLine, QuoteOption, SliceQuote};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use utoipa::ToSchema;

/// How isolated the slice must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// A soft share, a MIG instance or a whole GPU: the cheapest adequate slice.
    #[default]
    Any,
    /// A hardware MIG instance or a whole GPU.
    Mig,
    /// Whole GPUs only.
    Whole,
}

/// What an order asks for (ARCHITECTURE.md §4).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    /// Total TFLOPS at `precision` across all GPUs.
    #[serde(deserialize_with = "crate::decimal::deserialize")]
    #[schema(value_type = crate::bounds::Tflops)]
    pub tflops: Decimal,
    /// Total GPU memory in GB, a multiple of 4.
    #[schema(minimum = 4, multiple_of = 4)]
    pub vram_gb: u32,
    #[serde(default)]
    pub precision: Option<Precision>,
    /// Restrict to one catalog model.
    #[serde(default)]
    pub gpu_model: Option<String>,
    /// Number of GPUs (1–8, default 1); more than one takes whole GPUs of one node.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 8)]
    pub gpus: Option<u32>,
    /// `nvlink` to require NVLink between the GPUs.
    #[serde(default)]
    #[schema(pattern = "^nvlink$")]
    pub interconnect: Option<String>,
    #[serde(default)]
    pub isolation: Option<Isolation>,
    /// Only nodes whose driver supports at least this CUDA version, e.g. `12.2`
    /// (compared as numbers: `12.10` is above `12.4`).
    #[serde(default)]
    #[schema(pattern = r"^[0-9]{1,4}(\.[0-9]{1,4}){0,2}$")]
    pub min_cuda: Option<String>,
    /// Host CPU in milli-cores (default: the share matching the GPU share).
    #[serde(default)]
    #[schema(minimum = 1)]
    pub cpu_milli: Option<u32>,
    /// Host memory in MiB (default: the share matching the GPU share).
    #[serde(default)]
    #[schema(minimum = 1)]
    pub memory_mib: Option<u64>,
}

pub const MAX_GPUS: u32 = 8;

impl Resources {
    /// What the engine needs of these resources, once [`Resources::validate_shape`] passed.
    pub fn to_engine(&self) -> crate::engine::Resources {
        crate::engine::Resources {
            tflops: self.tflops,
            vram_gb: self.vram_gb,
            precision: self.precision,
            gpu_model: self.gpu_model.clone(),
            gpus: self.gpus,
            nvlink: self.interconnect.as_deref() == Some("nvlink"),
            isolation: match self.isolation.unwrap_or_default() {
                Isolation::Any => crate::engine::Isolation::Any,
                Isolation::Mig => crate::engine::Isolation::Mig,
                Isolation::Whole => crate::engine::Isolation::Whole,
            },
            cpu_milli: self.cpu_milli.map(u64::from),
            memory_mib: self.memory_mib,
            // Checked by `validate_shape`.
            min_cuda: self.min_cuda.as_deref().and_then(|v| v.parse().ok()),
        }
    }

    /// Checks every field, naming each bad one under `prefix` (e.g. `resources`).
    pub fn validate(&self, prefix: &str) -> Vec<FieldError> {
        let mut errors = self.validate_shape(prefix);
        if let Some(model) = &self.gpu_model {
            if catalog::lookup(model).is_none() {
                errors.push(FieldError::new(
                    format!("{prefix}.gpu_model"),
                    format!("unknown GPU model `{model}`"),
                ));
            }
        }
        errors
    }

    /// Every check but the model's existence, which orders leave to the
    /// engine so it is refused with the `unknown_model` reason.
    pub fn validate_shape(&self, prefix: &str) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let field = |name: &str| format!("{prefix}.{name}");
        errors.extend(crate::bounds::TFLOPS.check(field("tflops"), self.tflops));
        if self.vram_gb == 0 || self.vram_gb % UNIT_VRAM_GB != 0 {
            errors.push(FieldError::new(
                field("vram_gb"),
                "must be a positive multiple of 4",
            ));
        }
        if let Some(gpus) = self.gpus {
            if !(1..=MAX_GPUS).contains(&gpus) {
                errors.push(FieldError::new(field("gpus"), "must be between 1 and 8"));
            }
        }
        if let Some(ic) = &self.interconnect {
            if ic != "nvlink" {
                errors.push(FieldError::new(field("interconnect"), "must be `nvlink`"));
            }
        }
        if let Some(Err(why)) = self.min_cuda.as_deref().map(str::parse::<CudaVersion>) {
            errors.push(FieldError::new(field("min_cuda"), why.to_string()));
        }
        if self.cpu_milli == Some(0) {
            errors.push(FieldError::new(field("cpu_milli"), "must be positive"));
        }
        if self.memory_mib == Some(0) {
            errors.push(FieldError::new(field("memory_mib"), "must be positive"));
        }
        errors
    }

    pub fn gpu_count(&self) -> u32 {
        self.gpus.unwrap_or(1)
    }

    pub fn precision(&self) -> Precision {
        self.precision.unwrap_or_default()
    }

    /// Standard TFLOPS on `model`, or `None` when it lacks the precision or a
    /// GPU of it cannot hold its share of the request.
    pub fn standard_tflops_on(&self, model: &GpuModel) -> Option<Decimal> {
        let gpus = Decimal::from(self.gpu_count());
        // Held units are kept to 3 decimals, as MIG profile units are (ARCHITECTURE.md §2).
        let standard = model
            .standard_tflops(self.precision(), self.tflops)?
            .round_dp_with_strategy(3, rust_decimal::RoundingStrategy::MidpointNearestEven);
        let fits = standard / gpus <= model.fp16
            && Decimal::from(self.vram_gb) / gpus <= Decimal::from(model.memory_gb);
        // As a share holds: never less than one milli-GPU of the model.
        fits.then_some(standard.max(model.milli_tflops()))
    }

    /// `vram_h` units asked for.
    pub fn vram_units(&self) -> Decimal {
        Decimal::from(self.vram_gb / UNIT_VRAM_GB)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteRequest {
    pub mode: Mode,
    pub resources: Resources,
    /// A region name, or `any` (default) to compare every region.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub region: RegionChoice,
    /// Start of a reserved window: a whole hour (e.g. `14:00:00Z`), at least 1 h ahead.
    #[serde(default)]
    pub start_at: Option<DateTime<Utc>>,
    /// Length of the window in seconds (default 3600; required for reserved).
    #[serde(default)]
    #[schema(minimum = 60, maximum = 31622400)]
    pub duration_s: Option<u64>,
    /// The most the whole order pays per hour: spot's bid; on every other
    /// mode a bound the order is never filled above (`slice.max_price_binds`
    /// says whether it would refuse the price quoted).
    #[serde(default, deserialize_with = "crate::decimal::money_option")]
    #[schema(value_type = Option<crate::bounds::PricePerHour>)]
    pub max_price: Option<Decimal>,
    /// As on the order: the quote prices what the order would get, so it
    /// takes what the order takes (`realtime` pooled work is placed ahead of batch).
    #[serde(default)]
    pub qos: Option<crate::market::Qos>,
    /// As on the order: identical units (1–64, on-demand or pooled); the
    /// quote's `units` says how many would be placed now.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 64)]
    pub count: Option<u32>,
}

pub const MIN_DURATION_S: u64 = 60;
pub const MAX_DURATION_S: u64 = 366 * 24 * 3600;
/// A reserved window must start at least this far ahead.
pub const RESERVED_LEAD_S: i64 = 3600;

/// The window a request covers, checked against its mode's rules.
pub fn window(
    mode: Mode,
    start_at: Option<DateTime<Utc>>,
    duration_s: Option<u64>,
    now: DateTime<Utc>,
) -> Result<(DateTime<Utc>, u64), ApiError> {
    let duration = match (mode, duration_s) {
        (Mode::Reserved, None) => {
            return Err(ApiError::field(
                "duration_s",
                "a reserved window needs a duration",
            ))
        }
        (_, d) => d.unwrap_or(3600),
    };
    if !(MIN_DURATION_S..=MAX_DURATION_S).contains(&duration) {
        return Err(ApiError::field(
            "duration_s",
            "must be between 60 s and 366 days",
        ));
    }
    match mode {
        Mode::Reserved => {
            let start = start_at
                .ok_or_else(|| ApiError::field("start_at", "a reserved window needs a start"))?;
            if start < now + Duration::seconds(RESERVED_LEAD_S) {
                return Err(ApiError::refused(
                    "reserved_too_soon",
                    "a reserved window must start at least 1 hour from now; use on_demand for sooner",
                ));
            }
            // Hourly holds, charge lines, resale slots and the calendar all
            // cut a reservation at whole hours; a window off the hour would
            // leave a part-hour none of them was built for (issue 34 item 8).
            if start.timestamp().rem_euclid(3600) != 0 || start.timestamp_subsec_nanos() != 0 {
                return Err(ApiError::field(
                    "start_at",
                    "a reserved window starts on a whole hour (e.g. 14:00:00Z)",
                ));
            }
            Ok((start, duration))
        }
        _ => {
            if start_at.is_some_and(|s| s > now + Duration::seconds(60)) {
                return Err(ApiError::field(
                    "start_at",
                    "only reserved orders start in the future; omit start_at",
                ));
            }
            Ok((now, duration))
        }
    }
}

/// Prices `resources` for `mode` over `duration_s` on every adequate priced
/// (region, model), cheapest first.
pub fn price_options(
    resources: &Resources,
    mode: Mode,
    duration_s: u64,
    prices: &[ListPrice],
) -> Vec<QuoteOption> {
    // (region, model) → (tflops_h list price, vram_h list price)
    type UnitPrices = (Option<Decimal>, Option<Decimal>);
    let mut by_pair: HashMap<(&str, &str), UnitPrices> = HashMap::new();
    for p in prices {
        let slot = by_pair
            .entry((p.region.as_str(), p.gpu_model.as_str()))
            .or_default();
        match p.unit {
            Unit::TflopsH => slot.0 = Some(p.list_price),
            Unit::VramH => slot.1 = Some(p.list_price),
        }
    }
    let hours = Decimal::from(duration_s) / dec!(3600);
    let mut options: Vec<QuoteOption> = by_pair
        .into_iter()
        .filter_map(|((region, model_name), prices)| {
            let (Some(tflops_list), Some(vram_list)) = prices else {
                return None;
            };
            let model = catalog::lookup(model_name)?;
            if resources
                .gpu_model
                .as_deref()
                .is_some_and(|m| m != model_name)
            {
                return None;
            }
            let standard = resources.standard_tflops_on(model)?;
            let line = |unit: Unit, quantity: Decimal, list: Decimal| {
                let unit_price = DerivedPrices::from_list(list).for_mode(mode);
                QuoteLine {
                    unit,
                    quantity,
                    unit_price,
                    list_unit_price: list,
                    hours,
                    amount: round_money(quantity * unit_price * hours),
                }
            };
            let breakdown = vec![
                line(Unit::TflopsH, standard, tflops_list),
                line(Unit::VramH, resources.vram_units(), vram_list),
            ];
            let price_per_hour = breakdown.iter().map(|l| l.quantity * l.unit_price).sum();
            Some(QuoteOption {
                region: region.to_owned(),
                gpu_model: model_name.to_owned(),
                standard_tflops: standard,
                price_per_hour: round_money(price_per_hour),
                total: breakdown.iter().map(|l| l.amount).sum(),
                breakdown,
            })
        })
        .collect();
    options.sort_by(|a, b| {
        (a.total, &a.region, &a.gpu_model).cmp(&(b.total, &b.region, &b.gpu_model))
    });
    options
}

/// Whether any catalog model at all could hold `resources` (priced or not).
pub fn any_model_can_hold(resources: &Resources) -> bool {
    catalog::all_models().iter().any(|m| {
        resources.gpu_model.as_deref().is_none_or(|n| n == m.name)
            && resources.standard_tflops_on(m).is_some()
    })
}

pub fn rule_text(mode: Mode) -> &'static str {
    match mode {
        Mode::OnDemand => "on_demand: 1.8 × list price",
        Mode::Reserved => "reserved: 0.85 × list price; the whole window is owed",
        Mode::Spot => {
            "spot: the auction clears between 0.5 × and 0.7 × list; shown at the 0.7 × cap"
        }
        Mode::Pooled => "pooled: 1.0 × list price",
    }
}
