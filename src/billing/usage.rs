//! `GET /v1/billing/usage`: cost and units per business line (a tag's
//! value), mode, GPU model, region or day, summed exactly in Rust.

use super::export::window_or_month;
use super::lines::{self, ChargeLine, Scope};
use super::{period, BillingState};
use crate::auth::{Caller, Role, RouterState};
use crate::bounds::{add_stored, sum_stored};
use crate::db::Db;
use crate::error::{ApiError, Json, Problem, Query};
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
pub use gpuex_api::billing::{UsageGroup, UsageReport};
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
    OpenApiRouter::new().routes(routes!(usage))
}

/// How lines are grouped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// The value of one tag; lines without it form `(untagged)`.
    Tag(String),
    Mode,
    GpuModel,
    Region,
    /// The UTC day a line's period starts in.
    Day,
}

impl GroupBy {
    pub fn parse(s: &str) -> Option<GroupBy> {
        match s {
            "mode" => Some(GroupBy::Mode),
            "gpu_model" => Some(GroupBy::GpuModel),
            "region" => Some(GroupBy::Region),
            "day" => Some(GroupBy::Day),
            _ => s
                .strip_prefix("tag:")
                .filter(|k| !k.is_empty())
                .map(|k| GroupBy::Tag(k.to_owned())),
        }
    }

    /// The group a line falls in.
    pub fn key(&self, line: &ChargeLine) -> String {
        let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
        match self {
            GroupBy::Tag(k) => line
                .tags()
                .remove(k)
                .unwrap_or_else(|| "(untagged)".to_owned()),
            GroupBy::Mode if line.kind == "credit" => "credit".to_owned(),
            GroupBy::Mode => or_none(&line.mode),
            GroupBy::GpuModel => or_none(&line.gpu_model),
            GroupBy::Region => or_none(&line.region),
            GroupBy::Day => period::day(line.period_start),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// Lines whose period starts at or after this time (default: this month's start).
    pub from: Option<DateTime<Utc>>,
    /// Lines whose period starts before this time (default: next month's start).
    pub to: Option<DateTime<Utc>>,
    /// `tag:KEY`, `mode`, `gpu_model`, `region` or `day`.
    #[param(pattern = r"^(mode|gpu_model|region|day|tag:[\s\S]+)$")]
    pub group_by: String,
}

/// Groups a buyer's lines in `[from, to)`.
pub async fn report(
    db: &Db,
    buyer: Uuid,
    from: i64,
    to: i64,
    group_by: &GroupBy,
) -> anyhow::Result<Vec<UsageGroup>> {
    let mut groups: BTreeMap<String, UsageGroup> = BTreeMap::new();
    lines::for_each(db, Scope::Buyer(buyer), from, to, |l| {
        let key = group_by.key(l);
        let g = groups.entry(key.clone()).or_insert_with(|| UsageGroup {
            key,
            ..UsageGroup::default()
        });
        add_stored(&mut g.cost, l.amount.0, "usage cost");
        g.lines += 1;
        if let Some(unit) = &l.unit {
            add_stored(
                g.units.entry(unit.clone()).or_default(),
                l.quantity.0,
                "usage units",
            );
        }
    })
    .await?;
    Ok(groups.into_values().collect())
}

/// The caller's cost and units per group over a period.
#[utoipa::path(get, path = "/v1/billing/usage", tag = "billing", security(("bearer" = [])),
    params(UsageQuery),
    responses(
        (status = 200, description = "Cost and units per group", body = UsageReport),
        (status = 403, description = "Node tokens have no charges", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid query (e.g. an unknown `group_by`)", body = Problem, content_type = "application/problem+json"),
    ))]
async fn usage(
    State(state): State<BillingState>,
    caller: Caller,
    Query(q): Query<UsageQuery>,
) -> Result<Json<UsageReport>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let group_by = GroupBy::parse(&q.group_by).ok_or_else(|| {
        ApiError::field(
            "query.group_by",
            "must be tag:KEY, mode, gpu_model, region or day",
        )
    })?;
    let (from_s, to_s) = window_or_month(q.from, q.to, state.settings.clock.now().timestamp())?;
    let groups = report(&state.db, caller.id, from_s, to_s, &group_by).await?;
    let total = sum_stored(groups.iter().map(|g| g.cost), "usage total");
    Ok(Json(UsageReport {
        from: DateTime::from_timestamp(from_s, 0).unwrap_or_default(),
        to: DateTime::from_timestamp(to_s, 0).unwrap_or_default(),
        group_by: q.group_by,
        currency: state.settings.currency.clone(),
        groups,
        total,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_by_parses_the_documented_forms_only() {
        assert_eq!(
            GroupBy::parse("tag:business_line"),
            Some(GroupBy::Tag("business_line".into()))
        );
        assert_eq!(GroupBy::parse("day"), Some(GroupBy::Day));
        assert_eq!(GroupBy::parse("tag:"), None);
        assert_eq!(GroupBy::parse("colour"), None);
    }
}
