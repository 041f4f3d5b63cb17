//! `POST /v1/tco`: the cost of a workload over `months` (ARCHITECTURE.md §17), renting
//! whole 8-GPU nodes against buying the same work as gpuex units.
//!
//! The work is a load shape per unit (`tflops_h`, `vram_h`): its peak, its
//! mean, its baseline (the level held at least half the time) and its mean
//! above the baseline, from the caller's capacity profile of the last 30
//! days or from the body. The cheapest mix, per unit:
//! - the preemptible share (`spot_share`) of the mean runs as **spot**, at
//!   the market's current clearing index (or [`DEFAULT_SPOT_INDEX`] when the
//!   market has not cleared), plus [`SPOT_PREEMPTION_OVERHEAD`] of work
//!   redone after preemptions;
//! - the rest is **reserved** up to the baseline (a reserved unit busy at
//!   least half the time costs 0.85 × list against 1.8 × list on-demand, so
//!   it pays from 47 % busy) and **on-demand** above it, unless buying all of
//!   it on-demand is cheaper (a body's shape can say so), which is then used.
//!
//! Whole nodes hold the mean at the given utilization (`nodes = ⌈mean GPUs ÷
//! (8 × utilization)⌉`), or without one are sized to the peak. Months are
//! [`HOURS_PER_MONTH`] hours. Every price, share and overhead used is in the
//! answer's `assumptions`; the same body and price table give the same answer.

mod body;

use crate::billing::BillingState;
use body::{share_ok, UNITS};
pub use body::{
    GpuexCost, LoadProfile, LoadProfileInput, LoadShape, LoadShapeInput, MixLine, ProfileSource,
    ShareInput, Tco, TcoAssumptions, TcoRequest, TcoSaving, UnitPrices, UnitsInput, WholeNodeCost,
};

use crate::auth::{Caller, Role, RouterState};
use crate::billing::imports;
use crate::billing::profile::{self, CapacityProfile};
use crate::bounds::PRICE_PER_HOUR;
use crate::catalog::{self, GpuModel, Unit};
use crate::db::{dispatch, Db, Money};
use crate::engine::Mode;
use crate::error::{ApiError, FieldError, Json, Problem};
use crate::pricing::store as prices;
use crate::pricing::{round_money, ON_DEMAND_FACTOR, RESERVED_FACTOR};
use anyhow::Context;
use axum::extract::{FromRef, State};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use rust_decimal_macros::dec;

use crate::error::responses::MalformedJson;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(tco))
}

/// GPUs in the whole node rented for comparison.
pub const NODE_GPUS: u32 = 8;
/// 8,760 hours a year ÷ 12.
pub const HOURS_PER_MONTH: u32 = 730;
pub const DEFAULT_MONTHS: u32 = 36;
pub const MAX_MONTHS: u32 = 120;
/// The spot price ÷ list when the market has not cleared: 40 % under list,
/// the middle of the auction's 0.5–0.7 band.
pub const DEFAULT_SPOT_INDEX: Decimal = dec!(0.6);
/// Work redone after preemptions, as a share of the spot work (a checkpoint
/// interval's loss at a preemption or two a day).
pub const SPOT_PREEMPTION_OVERHEAD: Decimal = dec!(0.10);
/// The days of history a profile is read from when the body has none.
pub const HISTORY_DAYS: i64 = 30;
/// The model priced when neither the body nor the history names one.
pub const DEFAULT_GPU_MODEL: &str = "H100-SXM5-80GB";

const MIX_RULE: &str = "The preemptible share of the mean runs as spot at spot_index × list, \
    plus the preemption overhead; the rest is reserved up to its baseline (the level held at \
    least half the time) and on-demand above it, or all on-demand when that costs less.";

/// Checked arithmetic: every input is bounded so no product nears
/// Decimal's range, but an overflow would be refused, never a panic.
fn checked(v: Option<Decimal>) -> Result<Decimal, ApiError> {
    v.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("TCO arithmetic overflowed")))
}

fn mul(a: Decimal, b: Decimal) -> Result<Decimal, ApiError> {
    checked(a.checked_mul(b))
}

fn add(a: Decimal, b: Decimal) -> Result<Decimal, ApiError> {
    checked(a.checked_add(b))
}

fn div(a: Decimal, b: Decimal) -> Result<Decimal, ApiError> {
    checked(a.checked_div(b))
}

fn dp(v: Decimal, places: u32) -> Decimal {
    v.round_dp_with_strategy(places, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

/// A body's shape, checked and completed, or the fields it gets wrong.
fn shape(input: &LoadShapeInput, at: &str, errors: &mut Vec<FieldError>) -> LoadShape {
    let field = |f: &str| format!("profile.{at}.{f}");
    let before = errors.len();
    errors.extend(UNITS.check(field("peak"), input.peak));
    errors.extend(UNITS.check(field("mean"), input.mean));
    let baseline = input.baseline.unwrap_or(Decimal::ZERO);
    errors.extend(UNITS.check(field("baseline"), baseline));
    if let Some(above) = input.mean_above_baseline {
        errors.extend(UNITS.check(field("mean_above_baseline"), above));
    }
    let floor = (input.mean - baseline).max(Decimal::ZERO);
    let above = input.mean_above_baseline.unwrap_or(floor);
    if errors.len() == before {
        if input.mean > input.peak {
            errors.push(FieldError::new(field("mean"), "must not exceed peak"));
        }
        if baseline > input.peak {
            errors.push(FieldError::new(field("baseline"), "must not exceed peak"));
        }
        // Whatever the load's shape: mean − baseline ≤ E[max(0, load − baseline)]
        // ≤ min(mean, peak − baseline).
        if above < floor || above > input.mean || above > input.peak - baseline {
            errors.push(FieldError::new(
                field("mean_above_baseline"),
                "must be at least mean − baseline and at most mean and peak − baseline",
            ));
        }
    }
    LoadShape {
        peak: input.peak,
        mean: input.mean,
        baseline,
        mean_above_baseline: above,
    }
}

fn from_history(p: &CapacityProfile) -> LoadProfile {
    let s = |c: &profile::Concurrency| LoadShape {
        peak: c.peak,
        mean: c.mean,
        baseline: c.baseline,
        mean_above_baseline: c.mean_above_baseline,
    };
    LoadProfile {
        tflops_units: s(&p.total.tflops_units),
        vram_units: s(&p.total.vram_units),
        spot_share: p.spot_share,
    }
}

/// The model a profile held the most TFLOPS-hours of.
fn most_used(p: &CapacityProfile) -> Option<&'static GpuModel> {
    p.by_gpu_model
        .iter()
        .max_by(|a, b| a.tflops_units.unit_hours.cmp(&b.tflops_units.unit_hours))
        .and_then(|g| catalog::lookup(&g.key))
}

/// The market's current spot clearing index for a model and region, if it has cleared.
async fn clearing_index(db: &Db, model: &str, region: &str) -> anyhow::Result<Option<Decimal>> {
    let index: Option<Money> = dispatch!(db, pool => {
        sqlx::query_scalar(
            "SELECT clearing_index FROM spot_clearing WHERE gpu_model = $1 AND region = $2",
        )
        .bind(model)
        .bind(region)
        .fetch_optional(pool)
        .await
    })
    .context("failed to read the spot clearing index")?;
    Ok(index.map(|m| m.0))
}

/// The (region, tflops_h list, vram_h list) to price `model` at: the named
/// region, or the one where a whole GPU of it lists cheapest among those
/// `supplied` with it (any priced one only when none is).
async fn list_prices(
    db: &Db,
    model: &GpuModel,
    region: Option<&str>,
    supplied: &std::collections::BTreeSet<String>,
) -> Result<Option<(String, Decimal, Decimal)>, ApiError> {
    let listed = prices::list(db, region, Some(model.name)).await?;
    let mut by_region: std::collections::BTreeMap<String, (Option<Decimal>, Option<Decimal>)> =
        Default::default();
    for p in listed {
        let entry = by_region.entry(p.region.clone()).or_default();
        match p.unit {
            Unit::TflopsH => entry.0 = Some(p.list_price),
            Unit::VramH => entry.1 = Some(p.list_price),
        }
    }
    let any_supplied = region.is_none() && by_region.keys().any(|r| supplied.contains(r));
    let mut best: Option<(Decimal, String, Decimal, Decimal)> = None;
    for (region, prices) in by_region {
        let (Some(t), Some(v)) = prices else { continue };
        if any_supplied && !supplied.contains(&region) {
            continue;
        }
        let gpu_hour = add(mul(t, model.fp16)?, mul(v, model.vram_units())?)?;
        // Regions come in name order, so a tie keeps the first name.
        if best.as_ref().is_none_or(|b| gpu_hour < b.0) {
            best = Some((gpu_hour, region, t, v));
        }
    }
    Ok(best.map(|(_, r, t, v)| (r, t, v)))
}

/// The mix for one unit and what it costs per hour, exactly.
fn unit_mix(
    unit: Unit,
    load: &LoadShape,
    spot_share: Decimal,
    prices: &UnitPrices,
) -> Result<(Vec<MixLine>, Decimal), ApiError> {
    let steady = Decimal::ONE - spot_share;
    let line = |mode: Mode, units: Decimal, price: Decimal| -> Result<MixLine, ApiError> {
        Ok(MixLine {
            unit,
            mode,
            units: dp(units, 6),
            price_per_unit_hour: price.normalize(),
            per_hour: mul(units, price)?,
        })
    };
    let mut lines = Vec::new();
    if !spot_share.is_zero() {
        let work = mul(
            mul(spot_share, load.mean)?,
            Decimal::ONE + SPOT_PREEMPTION_OVERHEAD,
        )?;
        lines.push(line(Mode::Spot, work, prices.spot)?);
    }
    let reserved_plan = add(
        mul(load.baseline, prices.reserved)?,
        mul(load.mean_above_baseline, prices.on_demand)?,
    )?;
    let on_demand_plan = mul(load.mean, prices.on_demand)?;
    if reserved_plan < on_demand_plan {
        lines.push(line(
            Mode::Reserved,
            mul(steady, load.baseline)?,
            prices.reserved,
        )?);
        lines.push(line(
            Mode::OnDemand,
            mul(steady, load.mean_above_baseline)?,
            prices.on_demand,
        )?);
    } else {
        lines.push(line(
            Mode::OnDemand,
            mul(steady, load.mean)?,
            prices.on_demand,
        )?);
    }
    lines.retain(|l| !l.units.is_zero());
    let mut per_hour = Decimal::ZERO;
    for l in &mut lines {
        per_hour = add(per_hour, l.per_hour)?;
        l.per_hour = round_money(l.per_hour);
    }
    Ok((lines, per_hour))
}

/// GPUs of `model` that hold `tflops` and `vram` units at once.
fn gpus_for(model: &GpuModel, tflops: Decimal, vram: Decimal) -> Result<Decimal, ApiError> {
    Ok(div(tflops, model.fp16)?.max(div(vram, model.vram_units())?))
}

/// What a (validated) request costs both ways.
pub struct Priced {
    pub model: &'static GpuModel,
    pub region: String,
    pub lists: (Decimal, Decimal),
    pub spot_index: Decimal,
    pub spot_from_market: bool,
}

pub fn price(
    req_months: u32,
    node_price: Decimal,
    utilization: Option<Decimal>,
    load: &LoadProfile,
    p: &Priced,
) -> Result<
    (
        WholeNodeCost,
        GpuexCost,
        TcoSaving,
        Vec<UnitPrices>,
        Decimal,
    ),
    ApiError,
> {
    let hours = Decimal::from(HOURS_PER_MONTH);
    let months = Decimal::from(req_months);
    let unit_prices = |unit: Unit, list: Decimal| -> Result<UnitPrices, ApiError> {
        Ok(UnitPrices {
            unit,
            list: list.normalize(),
            reserved: mul(list, RESERVED_FACTOR)?.normalize(),
            on_demand: mul(list, ON_DEMAND_FACTOR)?.normalize(),
            spot: mul(list, p.spot_index)?.normalize(),
        })
    };
    let tflops_prices = unit_prices(Unit::TflopsH, p.lists.0)?;
    let vram_prices = unit_prices(Unit::VramH, p.lists.1)?;
    let (mut mix, tflops_hour) = unit_mix(
        Unit::TflopsH,
        &load.tflops_units,
        load.spot_share,
        &tflops_prices,
    )?;
    let (vram_mix, vram_hour) =
        unit_mix(Unit::VramH, &load.vram_units, load.spot_share, &vram_prices)?;
    mix.extend(vram_mix);
    let gpuex_hour = add(tflops_hour, vram_hour)?;
    let gpuex = GpuexCost {
        per_hour: round_money(gpuex_hour),
        per_month: round_money(mul(gpuex_hour, hours)?),
        total: round_money(mul(mul(gpuex_hour, hours)?, months)?),
        mix,
    };

    let capacity_per_node = Decimal::from(NODE_GPUS);
    let mean_gpus = gpus_for(p.model, load.tflops_units.mean, load.vram_units.mean)?;
    let (nodes, utilization) = match utilization {
        Some(u) => {
            let nodes = div(mean_gpus, mul(capacity_per_node, u)?)?.ceil();
            (nodes.max(Decimal::ONE), u)
        }
        None => {
            let peak_gpus = gpus_for(p.model, load.tflops_units.peak, load.vram_units.peak)?;
            let nodes = div(peak_gpus, capacity_per_node)?.ceil().max(Decimal::ONE);
            (
                nodes,
                dp(div(mean_gpus, mul(nodes, capacity_per_node)?)?, 6),
            )
        }
    };
    let node_hour = mul(nodes, node_price)?;
    let whole_node = WholeNodeCost {
        nodes: nodes
            .to_u64()
            .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("node count out of range")))?,
        per_hour: round_money(node_hour),
        per_month: round_money(mul(node_hour, hours)?),
        total: round_money(mul(mul(node_hour, hours)?, months)?),
    };
    let amount = whole_node.total - gpuex.total;
    let saving = TcoSaving {
        amount,
        fraction: dp(div(amount, whole_node.total)?, 4),
    };
    Ok((
        whole_node,
        gpuex,
        saving,
        vec![tflops_prices, vram_prices],
        utilization,
    ))
}

/// Compare renting whole 8-GPU nodes with buying the same work as gpuex
/// units over `months`, from the caller's last 30 days, a given profile or
/// an imported job history (`import_id`).
#[utoipa::path(post, path = "/v1/tco", tag = "billing", security(("bearer" = [])),
    request_body = TcoRequest,
    responses(
        (status = 200, description = "Both costs, the saving and every assumption", body = Tco),
        MalformedJson,
        (status = 403, description = "Node tokens have no profile", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such import of yours (`import_id`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields, an unknown model, a region without its prices, or no history and no `profile`", body = Problem, content_type = "application/problem+json"),
    ))]
async fn tco(
    State(state): State<BillingState>,
    caller: Caller,
    Json(mut req): Json<TcoRequest>,
) -> Result<Json<Tco>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let mut errors = Vec::new();
    let months = req.months.unwrap_or(DEFAULT_MONTHS);
    if !(1..=MAX_MONTHS).contains(&months) {
        errors.push(FieldError::new("months", "must be from 1 to 120"));
    }
    errors.extend(PRICE_PER_HOUR.take("node_price_per_hour", &mut req.node_price_per_hour));
    if let Some(u) = req.utilization {
        if u.is_zero() || !share_ok(u) {
            errors.push(FieldError::new(
                "utilization",
                "must be above 0 and at most 1, with at most 6 decimals",
            ));
        }
    }
    let model_named = match req.gpu_model.as_deref() {
        Some(name) => match catalog::lookup(name) {
            Some(m) => Some(m),
            None => {
                errors.push(FieldError::new("gpu_model", "not a catalog GPU model"));
                None
            }
        },
        None => None,
    };
    let body_profile = req.profile.as_ref().map(|p| {
        let spot_share = p.spot_share.unwrap_or(Decimal::ZERO);
        if !share_ok(spot_share) {
            errors.push(FieldError::new(
                "profile.spot_share",
                "must be from 0 to 1, with at most 6 decimals",
            ));
        }
        LoadProfile {
            tflops_units: shape(&p.tflops_units, "tflops_units", &mut errors),
            vram_units: shape(&p.vram_units, "vram_units", &mut errors),
            spot_share,
        }
    });
    if body_profile.is_some() && req.import_id.is_some() {
        errors.push(FieldError::new(
            "import_id",
            "give either `profile` or `import_id`, not both",
        ));
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let now = state.settings.clock.now().timestamp();
    let (load, source, history, history_model) = match (body_profile, req.import_id) {
        (Some(load), _) => (load, ProfileSource::Body, None, None),
        (None, Some(id)) => {
            let import = imports::own(&state.db, &caller, id).await?;
            let p = import.profile.ok_or_else(|| {
                ApiError::field("import_id", "the import took no rows: nothing to price")
            })?;
            (
                from_history(&p),
                ProfileSource::Import,
                Some((p.from, p.to)),
                most_used(&p),
            )
        }
        (None, None) => {
            let from = now - HISTORY_DAYS * 86_400;
            let p = profile::build(&state.db, caller.id, from, now, now).await?;
            if p.total.tflops_units.unit_hours.is_zero() && p.total.vram_units.unit_hours.is_zero()
            {
                return Err(ApiError::field(
                    "profile",
                    "no capacity held in the last 30 days: give a profile",
                ));
            }
            (
                from_history(&p),
                ProfileSource::History,
                Some((p.from, p.to)),
                most_used(&p),
            )
        }
    };
    let model = model_named
        .or(history_model)
        .or_else(|| catalog::lookup(DEFAULT_GPU_MODEL))
        .ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!("the default model is not in the catalog"))
        })?;
    let name = model.name;
    let supplied = state.market.supplied_regions(name).await?;
    let Some((region, tflops_list, vram_list)) =
        list_prices(&state.db, model, req.region.as_deref(), &supplied).await?
    else {
        let (field, message) = match req.region {
            Some(r) => (
                "region",
                format!("no list prices for {} in {r}", model.name),
            ),
            None => (
                "gpu_model",
                format!("no region lists prices for {}", model.name),
            ),
        };
        return Err(ApiError::field(field, message));
    };
    let market_index = clearing_index(&state.db, model.name, &region).await?;
    let priced = Priced {
        model,
        region,
        lists: (tflops_list, vram_list),
        spot_index: market_index.unwrap_or(DEFAULT_SPOT_INDEX),
        spot_from_market: market_index.is_some(),
    };
    let (whole_node, gpuex, saving, prices, utilization) = price(
        months,
        req.node_price_per_hour,
        req.utilization,
        &load,
        &priced,
    )?;
    Ok(Json(Tco {
        currency: state.settings.currency.clone(),
        whole_node,
        gpuex,
        saving,
        assumptions: TcoAssumptions {
            gpu_model: model.name.to_owned(),
            region: priced.region,
            months,
            hours_per_month: HOURS_PER_MONTH,
            profile_source: source,
            history_from: history.map(|h| h.0),
            history_to: history.map(|h| h.1),
            import_id: req.import_id.filter(|_| source == ProfileSource::Import),
            profile: load,
            prices,
            reserved_factor: RESERVED_FACTOR,
            on_demand_factor: ON_DEMAND_FACTOR,
            spot_index: priced.spot_index.normalize(),
            spot_index_source: if priced.spot_from_market {
                "market_clearing"
            } else {
                "default_discount"
            }
            .to_owned(),
            spot_preemption_overhead: SPOT_PREEMPTION_OVERHEAD,
            node_gpus: NODE_GPUS,
            node_price_per_hour: req.node_price_per_hour.normalize(),
            utilization: utilization.normalize(),
            utilization_source: if req.utilization.is_some() {
                "given"
            } else {
                "sized_to_peak"
            }
            .to_owned(),
            gpu_tflops_units: model.fp16,
            gpu_vram_units: model.vram_units(),
            mix_rule: MIX_RULE.to_owned(),
        },
    }))
}
