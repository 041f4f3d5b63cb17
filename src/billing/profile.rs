//! `GET /v1/billing/profile`: a buyer's capacity profile over a period
//! (ARCHITECTURE.md §17), by mode, tag and GPU model: how many units it held at once
//! (peak, mean, the level held at least half the time), how long its leases
//! ran, and how much of what it held it used. The TCO calculator sizes its
//! reserved, on-demand and spot mix from it.
//!
//! Held capacity is read from the charge lines (`usage` and `reserved_used`:
//! time a lease ran; owed but unrun reserved hours are not capacity held),
//! so the profile agrees with the bill to the second. Usage is what agents
//! reported to `/v1/agent/usage` for those leases.

use super::export::window_or_month;
use super::lines::{self, ChargeLine, Kind, Scope, Unit};
use super::BillingState;
use crate::auth::{Caller, Role, RouterState};
use crate::bounds::add_stored;
use crate::db::{dispatch, Db, Money};
use crate::error::{ApiError, Json, Problem, Query};
use anyhow::Context;
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
pub use gpuex_api::billing::{
    CapacityProfile, Concurrency, GroupProfile, HeldUtilization, LeaseDurations,
};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::Deserialize;
use std::collections::BTreeMap;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(profile))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ProfileQuery {
    /// Capacity held at or after this time (RFC 3339; default: this month's start).
    pub from: Option<DateTime<Utc>>,
    /// Capacity held before this time (RFC 3339; default: next month's start).
    pub to: Option<DateTime<Utc>>,
    /// The profile of one of the caller's job-history imports instead (its
    /// whole window; not with `from` or `to`).
    pub import_id: Option<Uuid>,
}

/// One span of held units.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: i64,
    end: i64,
    units: Decimal,
}

/// Where a lease's usage report belongs: the lines of one lease, by time.
#[derive(Debug, Default)]
struct LeaseLines {
    /// (period start, period end, the groups of that line).
    periods: Vec<(i64, i64, Vec<GroupKey>)>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum GroupKey {
    Total,
    Mode(String),
    GpuModel(String),
    Tag(String),
}

#[derive(Debug, Default)]
struct Accumulator {
    tflops: Vec<Span>,
    vram: Vec<Span>,
    lease_seconds: BTreeMap<Uuid, i64>,
    measured_tflops_s: Decimal,
    used_tflops_s: Decimal,
}

/// One agent usage record, as the profile reads it.
#[derive(Debug, Clone)]
pub struct UsageSample {
    pub lease: Uuid,
    pub at: i64,
    pub tflops_s: Decimal,
    pub mean_utilization: Option<Decimal>,
}

/// Builds a profile from lines and usage samples (pure: tests feed it by hand).
#[derive(Debug)]
pub struct Builder {
    from: i64,
    until: i64,
    groups: BTreeMap<GroupKey, Accumulator>,
    leases: BTreeMap<Uuid, LeaseLines>,
    spot_tflops_s: Decimal,
}

pub(crate) fn dp(value: Decimal, places: u32) -> Decimal {
    value
        .round_dp_with_strategy(places, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

impl Builder {
    /// A profile of `[from, until)`, `until` being the earlier of the
    /// window's end and now.
    pub fn new(from: i64, until: i64) -> Builder {
        Builder {
            from,
            until: until.max(from),
            groups: BTreeMap::new(),
            leases: BTreeMap::new(),
            spot_tflops_s: Decimal::ZERO,
        }
    }

    fn keys(line: &ChargeLine) -> Vec<GroupKey> {
        let mut keys = vec![GroupKey::Total];
        if let Some(mode) = &line.mode {
            keys.push(GroupKey::Mode(mode.clone()));
        }
        if let Some(model) = &line.gpu_model {
            keys.push(GroupKey::GpuModel(model.clone()));
        }
        let tags = line.tags();
        if tags.is_empty() {
            keys.push(GroupKey::Tag("(untagged)".to_owned()));
        }
        keys.extend(
            tags.into_iter()
                .map(|(k, v)| GroupKey::Tag(format!("{k}={v}"))),
        );
        keys
    }

    /// Adds a charge line; credits and unrun reserved hours hold nothing.
    pub fn line(&mut self, line: &ChargeLine) {
        if !matches!(line.kind(), Kind::Usage | Kind::ReservedUsed) {
            return;
        }
        let (start, end) = (
            line.period_start.max(self.from),
            line.period_end.min(self.until),
        );
        if end <= start {
            return;
        }
        let unit = line.unit();
        let keys = Self::keys(line);
        if unit == Some(Unit::TflopsH) && line.mode.as_deref() == Some("spot") {
            // Below 10⁵ units × 10⁹ s per line: sums stay far inside Decimal.
            self.spot_tflops_s += line.tflops_units.0 * Decimal::from(end - start);
        }
        for key in &keys {
            let acc = self.groups.entry(key.clone()).or_default();
            match unit {
                Some(Unit::TflopsH) => {
                    acc.tflops.push(Span {
                        start,
                        end,
                        units: line.tflops_units.0,
                    });
                    if let Some(lease) = line.lease_id {
                        *acc.lease_seconds.entry(lease).or_default() += end - start;
                    }
                }
                Some(Unit::VramH) => acc.vram.push(Span {
                    start,
                    end,
                    units: line.vram_units.0,
                }),
                None => {}
            }
        }
        if let (Some(lease), Some(Unit::TflopsH)) = (line.lease_id, unit) {
            self.leases.entry(lease).or_default().periods.push((
                line.period_start,
                line.period_end,
                keys,
            ));
        }
    }

    /// The lease ids whose usage the profile wants.
    pub fn lease_ids(&self) -> Vec<Uuid> {
        self.leases.keys().copied().collect()
    }

    /// Adds a usage sample to the groups of the line covering it (a lease
    /// converted from spot to on-demand counts each part in its own mode).
    pub fn usage(&mut self, sample: &UsageSample) {
        let Some(utilization) = sample.mean_utilization else {
            return;
        };
        if sample.at < self.from || sample.at >= self.until {
            return;
        }
        let Some(lease) = self.leases.get(&sample.lease) else {
            return;
        };
        let covering = lease
            .periods
            .iter()
            .find(|(s, e, _)| *s <= sample.at && sample.at < *e)
            .or_else(|| lease.periods.first());
        let Some((_, _, keys)) = covering else {
            return;
        };
        for key in keys {
            let acc = self.groups.entry(key.clone()).or_default();
            // Stored records may predate the bounds on what nodes report.
            let used = sample.tflops_s.checked_mul(utilization).unwrap_or_default();
            add_stored(
                &mut acc.measured_tflops_s,
                sample.tflops_s,
                "profile tflops_s",
            );
            add_stored(&mut acc.used_tflops_s, used, "profile used tflops_s");
        }
    }

    pub fn finish(self, from: DateTime<Utc>, to: DateTime<Utc>) -> CapacityProfile {
        let elapsed = self.until - self.from;
        let mut total = GroupProfile {
            key: "all".to_owned(),
            ..GroupProfile::default()
        };
        let (mut by_mode, mut by_gpu_model, mut by_tag) = (Vec::new(), Vec::new(), Vec::new());
        let mut total_tflops_s = Decimal::ZERO;
        for (key, acc) in self.groups {
            let (name, bucket) = match &key {
                GroupKey::Total => ("all".to_owned(), None),
                GroupKey::Mode(m) => (m.clone(), Some(&mut by_mode)),
                GroupKey::GpuModel(m) => (m.clone(), Some(&mut by_gpu_model)),
                GroupKey::Tag(t) => (t.clone(), Some(&mut by_tag)),
            };
            let group = summarize(name, &acc, elapsed);
            match bucket {
                Some(list) => list.push(group),
                None => {
                    total_tflops_s = unit_seconds(&acc.tflops);
                    total = group;
                }
            }
        }
        let spot_share = if total_tflops_s.is_zero() {
            Decimal::ZERO
        } else {
            dp(self.spot_tflops_s / total_tflops_s, 6)
        };
        CapacityProfile {
            from,
            to,
            elapsed_s: elapsed,
            spot_share,
            total,
            by_mode,
            by_gpu_model,
            by_tag,
        }
    }
}

fn unit_seconds(spans: &[Span]) -> Decimal {
    spans
        .iter()
        .map(|s| s.units * Decimal::from(s.end - s.start))
        .sum()
}

fn summarize(key: String, acc: &Accumulator, elapsed: i64) -> GroupProfile {
    let measured = acc.measured_tflops_s;
    GroupProfile {
        key,
        tflops_units: concurrency(&acc.tflops, elapsed),
        vram_units: concurrency(&acc.vram, elapsed),
        durations: durations(acc.lease_seconds.values().copied().collect()),
        utilization: HeldUtilization {
            measured_tflops_h: dp(measured / Decimal::from(3600), 6),
            used_tflops_h: dp(acc.used_tflops_s / Decimal::from(3600), 6),
            fraction: (!measured.is_zero()).then(|| dp(acc.used_tflops_s / measured, 6)),
        },
    }
}

fn concurrency(spans: &[Span], elapsed: i64) -> Concurrency {
    let mut changes: Vec<(i64, Decimal)> = Vec::with_capacity(spans.len() * 2);
    for s in spans {
        changes.push((s.start, s.units));
        changes.push((s.end, -s.units));
    }
    from_changes(changes, elapsed)
}

/// Sweeps the level's changes in time order: the level between two
/// changes is constant, which gives the peak and, sorted by level, the
/// baseline. (Imported job histories use it too.)
pub(crate) fn from_changes(mut changes: Vec<(i64, Decimal)>, elapsed: i64) -> Concurrency {
    changes.sort_unstable_by_key(|c| c.0);
    // Seconds at each level, idle seconds included at level 0: a map, as a
    // long history returns to the same few levels again and again.
    let mut levels: BTreeMap<Decimal, i64> = BTreeMap::new();
    let mut level = Decimal::ZERO;
    let mut peak = Decimal::ZERO;
    let mut busy = 0;
    let mut i = 0;
    while i < changes.len() {
        let at = changes[i].0;
        while i < changes.len() && changes[i].0 == at {
            level += changes[i].1;
            i += 1;
        }
        peak = peak.max(level);
        if let Some(next) = changes.get(i) {
            if !level.is_zero() {
                *levels.entry(level).or_default() += next.0 - at;
                busy += next.0 - at;
            }
        }
    }
    drop(changes);
    *levels.entry(Decimal::ZERO).or_default() += (elapsed - busy).max(0);
    let mut baseline = Decimal::ZERO;
    let mut held_for = 0;
    for (level, seconds) in levels.iter().rev() {
        held_for += seconds;
        if elapsed > 0 && 2 * held_for >= elapsed {
            baseline = *level;
            break;
        }
    }
    let held: Decimal = levels.iter().map(|(l, s)| *l * Decimal::from(*s)).sum();
    let above: Decimal = levels
        .range(baseline..)
        .filter(|(l, _)| **l > baseline)
        .map(|(l, s)| (*l - baseline) * Decimal::from(*s))
        .sum();
    let per_elapsed = |v: Decimal| {
        if elapsed > 0 {
            dp(v / Decimal::from(elapsed), 6)
        } else {
            Decimal::ZERO
        }
    };
    Concurrency {
        peak: peak.normalize(),
        mean: per_elapsed(held),
        baseline: baseline.normalize(),
        mean_above_baseline: per_elapsed(above),
        unit_hours: dp(held / Decimal::from(3600), 6),
    }
}

/// Nearest rank: the smallest value with at least `p` of them at or below it.
fn percentile(sorted: &[i64], p: u32) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() * p as usize).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

pub(crate) fn durations(mut seconds: Vec<i64>) -> LeaseDurations {
    seconds.sort_unstable();
    let n = seconds.len();
    let sum: i64 = seconds.iter().sum();
    LeaseDurations {
        leases: n as u64,
        mean_s: (n > 0).then(|| dp(Decimal::from(sum) / Decimal::from(n), 3)),
        p50_s: percentile(&seconds, 50),
        p90_s: percentile(&seconds, 90),
        p99_s: percentile(&seconds, 99),
        max_s: seconds.last().copied(),
    }
}

/// Agents' usage records of `leases` whose interval starts in `[from, to)`.
async fn usage_samples(
    db: &Db,
    buyer: Uuid,
    from: i64,
    to: i64,
) -> anyhow::Result<Vec<UsageSample>> {
    type Row = (Uuid, DateTime<Utc>, Money, Option<Money>);
    let (from, to) = (
        DateTime::from_timestamp(from, 0).unwrap_or_default(),
        DateTime::from_timestamp(to, 0).unwrap_or_default(),
    );
    let rows: Vec<Row> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT r.lease_id, r.interval_start, r.tflops_s, r.mean_utilization FROM usage_records r \
             WHERE r.lease_id IN (SELECT DISTINCT lease_id FROM charges WHERE buyer_id = $1) \
             AND r.interval_start >= $2 AND r.interval_start < $3",
        )
        .bind(buyer)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await
    })
    .context("failed to read usage records")?;
    Ok(rows
        .into_iter()
        .map(|(lease, at, tflops_s, u)| UsageSample {
            lease,
            at: at.timestamp(),
            tflops_s: tflops_s.0,
            mean_utilization: u.map(|m| m.0),
        })
        .collect())
}

/// The profile of `buyer` over `[from, to)`, as of `now`.
pub async fn build(
    db: &Db,
    buyer: Uuid,
    from: i64,
    to: i64,
    now: i64,
) -> anyhow::Result<CapacityProfile> {
    let mut builder = Builder::new(from, to.min(now));
    // A line starting before `from` can still hold capacity inside the window.
    let earliest = from.saturating_sub(3600);
    lines::for_each(db, Scope::Buyer(buyer), earliest, to, |l| builder.line(l)).await?;
    for sample in usage_samples(db, buyer, from, to).await? {
        builder.usage(&sample);
    }
    Ok(builder.finish(
        DateTime::from_timestamp(from, 0).unwrap_or_default(),
        DateTime::from_timestamp(to, 0).unwrap_or_default(),
    ))
}

/// The caller's capacity profile: units held at once, lease durations and
/// utilization, in total and by mode, GPU model and tag.
#[utoipa::path(get, path = "/v1/billing/profile", tag = "billing", security(("bearer" = [])),
    params(ProfileQuery),
    responses(
        (status = 200, description = "The capacity profile", body = CapacityProfile),
        (status = 403, description = "Node tokens have no profile", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such import of yours (`import_id`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid query (e.g. `to` not after `from`)", body = Problem, content_type = "application/problem+json"),
    ))]
async fn profile(
    State(state): State<BillingState>,
    caller: Caller,
    Query(q): Query<ProfileQuery>,
) -> Result<Json<CapacityProfile>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    if let Some(id) = q.import_id {
        if q.from.is_some() || q.to.is_some() {
            return Err(ApiError::field(
                "query.import_id",
                "an import's profile covers its whole window: give no `from` or `to`",
            ));
        }
        return super::imports::own(&state.db, &caller, id)
            .await?
            .profile
            .map(Json)
            .ok_or_else(|| ApiError::field("query.import_id", "the import took no rows"));
    }
    let now = state.settings.clock.now().timestamp();
    let (from, to) = window_or_month(q.from, q.to, now)?;
    Ok(Json(build(&state.db, caller.id, from, to, now).await?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn span(start: i64, end: i64, units: Decimal) -> Span {
        Span { start, end, units }
    }

    #[test]
    fn the_baseline_is_the_level_held_at_least_half_the_time() {
        // 0–600 s at 100, 600–900 at 300, idle until 1200: 100 is held for
        // 900 of 1200 s, 300 only for 300 s.
        let c = concurrency(&[span(0, 900, dec!(100)), span(600, 900, dec!(200))], 1200);
        assert_eq!(c.peak, dec!(300));
        assert_eq!(c.baseline, dec!(100));
        // (100 × 900 + 200 × 300) / 1200 = 125.
        assert_eq!(c.mean, dec!(125));
        // 200 above the baseline for 300 s: 50.
        assert_eq!(c.mean_above_baseline, dec!(50));
        assert_eq!(c.unit_hours, dec!(41.666667));
    }

    #[test]
    fn mostly_idle_capacity_has_no_baseline() {
        let c = concurrency(&[span(0, 500, dec!(8))], 1200);
        assert_eq!(c.baseline, Decimal::ZERO);
        assert_eq!(c.mean_above_baseline, c.mean);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let d = durations(vec![10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
        assert_eq!(
            (d.p50_s, d.p90_s, d.p99_s, d.max_s),
            (Some(50), Some(90), Some(100), Some(100))
        );
        assert_eq!(d.mean_s, Some(dec!(55)));
        assert_eq!(durations(vec![]).p50_s, None);
    }
}
