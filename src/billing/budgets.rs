//! Monthly budgets per tag value (ARCHITECTURE.md §4).
//!
//! What counts against a budget this month: the charge lines of leases with
//! the tag (credits net them), what running leases owe but were not billed
//! yet, and every reserved window booked this month, whole, at booking (its
//! charges are not counted again). An order that would take a budget over
//! its limit is refused (`budget_exceeded`); when what is spent plus the
//! notice period of the running leases reaches the limit, those leases get
//! their notice (`FundsExhausted`). Reserved leases are never ended for a budget.

use super::lines::{self, Scope};
use super::{period, BillingState};
use crate::auth::{Caller, Role, RouterState};
use crate::db::{dispatch, Db, Money, Text};
use crate::engine::Command;
use crate::error::responses::{InvalidFields, MalformedJson, NotABuyer};
use crate::error::{ApiError, FieldError, Json};
use crate::events::{EventType, NewEvent, Owner};
use crate::pricing::{quotes, round_money, Mode};
use anyhow::Context;
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(put_budget, list_budgets))
}

/// A monthly limit on what leases tagged `tag_key=tag_value` may cost.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetRequest {
    #[schema(min_length = 1, max_length = 63)]
    pub tag_key: String,
    #[schema(min_length = 1, max_length = 256)]
    pub tag_value: String,
    /// Per calendar month (UTC); `0` removes the budget.
    #[serde(deserialize_with = "crate::decimal::money")]
    #[schema(value_type = crate::bounds::BudgetLimit)]
    pub monthly_limit: Decimal,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BudgetView {
    pub tag_key: String,
    pub tag_value: String,
    #[schema(schema_with = crate::bounds::money_out)]
    pub monthly_limit: Decimal,
    /// Counted against the limit this month so far (reserved windows whole).
    #[schema(schema_with = crate::bounds::money_out)]
    pub spent: Decimal,
    #[schema(schema_with = crate::bounds::money_out)]
    pub remaining: Decimal,
    pub currency: String,
}

/// A budget as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    pub buyer: Uuid,
    pub tag_key: String,
    pub tag_value: String,
    pub limit: Decimal,
}

/// Set (or with `0`, remove) a monthly budget for one tag value.
#[utoipa::path(put, path = "/v1/budgets", tag = "billing", security(("bearer" = [])),
    request_body = BudgetRequest,
    responses(
        (status = 200, description = "The budget and what it has counted this month", body = BudgetView),
        MalformedJson,
        NotABuyer,
        InvalidFields,
    ))]
async fn put_budget(
    State(state): State<BillingState>,
    caller: Caller,
    Json(mut req): Json<BudgetRequest>,
) -> Result<Json<BudgetView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let mut errors = Vec::new();
    // Characters, as the schema's maxLength counts them, not bytes.
    if req.tag_key.is_empty() || req.tag_key.chars().count() > 63 {
        errors.push(FieldError::new("tag_key", "must be 1 to 63 characters"));
    }
    if req.tag_value.is_empty() || req.tag_value.chars().count() > 256 {
        errors.push(FieldError::new("tag_value", "must be 1 to 256 characters"));
    }
    errors.extend(crate::bounds::BUDGET.take("monthly_limit", &mut req.monthly_limit));
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let now = state.settings.clock.now();
    if req.monthly_limit.is_zero() {
        dispatch!(state.db, pool => {
            sqlx::query("DELETE FROM budgets WHERE buyer_id = $1 AND tag_key = $2 AND tag_value = $3")
                .bind(caller.id)
                .bind(&req.tag_key)
                .bind(&req.tag_value)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })?;
    } else {
        dispatch!(state.db, pool => {
            sqlx::query(
                "INSERT INTO budgets (buyer_id, tag_key, tag_value, monthly_limit, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (buyer_id, tag_key, tag_value) \
                 DO UPDATE SET monthly_limit = excluded.monthly_limit, updated_at = excluded.updated_at",
            )
            .bind(caller.id)
            .bind(&req.tag_key)
            .bind(&req.tag_value)
            .bind(Money(req.monthly_limit))
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
    }
    let budget = Budget {
        buyer: caller.id,
        tag_key: req.tag_key,
        tag_value: req.tag_value,
        limit: req.monthly_limit,
    };
    Ok(Json(view(&state, &budget, now).await?))
}

/// The caller's budgets with what each has counted this month.
#[utoipa::path(get, path = "/v1/budgets", tag = "billing", security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's budgets", body = [BudgetView]),
        NotABuyer,
    ))]
async fn list_budgets(
    State(state): State<BillingState>,
    caller: Caller,
) -> Result<Json<Vec<BudgetView>>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let now = state.settings.clock.now();
    let mut out = Vec::new();
    for b in budgets(&state.db, Some(caller.id)).await? {
        out.push(view(&state, &b, now).await?);
    }
    Ok(Json(out))
}

async fn view(
    state: &BillingState,
    b: &Budget,
    now: DateTime<Utc>,
) -> Result<BudgetView, ApiError> {
    let spent = spent(
        &state.db,
        b.buyer,
        &b.tag_key,
        &b.tag_value,
        now.timestamp(),
    )
    .await?;
    Ok(BudgetView {
        tag_key: b.tag_key.clone(),
        tag_value: b.tag_value.clone(),
        monthly_limit: b.limit,
        spent,
        remaining: (b.limit - spent).max(Decimal::ZERO),
        currency: state.settings.currency.clone(),
    })
}

/// Budgets of one buyer, or of everyone.
pub async fn budgets(db: &Db, buyer: Option<Uuid>) -> anyhow::Result<Vec<Budget>> {
    let rows: Vec<(Uuid, String, String, Money)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT buyer_id, tag_key, tag_value, monthly_limit FROM budgets \
             WHERE ($1 IS NULL OR buyer_id = $1) ORDER BY buyer_id, tag_key, tag_value",
        )
        .bind(buyer)
        .fetch_all(pool)
        .await
    })
    .context("failed to read budgets")?;
    Ok(rows
        .into_iter()
        .map(|(buyer, tag_key, tag_value, limit)| Budget {
            buyer,
            tag_key,
            tag_value,
            limit: limit.0,
        })
        .collect())
}

fn has_tag(tags_json: &str, key: &str, value: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(tags_json)
        .ok()
        .and_then(|v| v.get(key).and_then(|v| v.as_str().map(|s| s == value)))
        .unwrap_or(false)
}

type LiveLease = (Uuid, Text<Mode>, Money, Option<i64>, Option<i64>, String);

/// Live leases of `buyer` (or everyone's) with their order's tags.
async fn live_leases(db: &Db, buyer: Option<Uuid>) -> anyhow::Result<Vec<LiveLease>> {
    let rows: Result<Vec<LiveLease>, sqlx::Error> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT l.id, l.mode, l.price_per_hour, l.billed_until, l.ends_at, o.tags_json \
             FROM leases l JOIN orders o ON o.id = l.order_id \
             WHERE l.state IN ('running', 'provisioning', 'pending') AND ($1 IS NULL OR l.buyer_id = $1)",
        )
        .bind(buyer)
        .fetch_all(pool)
        .await
    });
    rows.context("failed to read live leases")
}

/// What counts against the budget `key=value` of `buyer` in the month of `now`.
pub async fn spent(
    db: &Db,
    buyer: Uuid,
    key: &str,
    value: &str,
    now: i64,
) -> anyhow::Result<Decimal> {
    let (month_start, month_end) = period::month_bounds(now);
    let mut total = Decimal::ZERO;
    lines::for_each(db, Scope::Buyer(buyer), month_start, month_end, |l| {
        if l.mode.as_deref() != Some(Mode::Reserved.as_str()) && has_tag(&l.tags_json, key, value) {
            total += l.amount.0;
        }
    })
    .await?;
    // Reserved windows booked this month count whole, at booking.
    let (from, to) = (
        DateTime::from_timestamp(month_start, 0).unwrap_or_default(),
        DateTime::from_timestamp(month_end, 0).unwrap_or_default(),
    );
    let reserved: Vec<(Money, i64, Option<i64>, String)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT l.price_per_hour, l.starts_at, l.ends_at, o.tags_json FROM leases l \
             JOIN orders o ON o.id = l.order_id WHERE l.buyer_id = $1 AND l.mode = $2 \
             AND o.state = 'filled' AND l.created_at >= $3 AND l.created_at < $4",
        )
        .bind(buyer)
        .bind(Text(Mode::Reserved))
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await
    })
    .context("failed to read reserved bookings")?;
    for (price, starts, ends, tags) in reserved {
        if has_tag(&tags, key, value) {
            let seconds = ends.map_or(0, |e| e - starts).max(0);
            total += round_money(price.0 * Decimal::from(seconds) / Decimal::from(3600));
        }
    }
    // What running leases owe since they were last billed.
    for (_, mode, price, billed_until, _, tags) in live_leases(db, Some(buyer)).await? {
        if mode.0 != Mode::Reserved && has_tag(&tags, key, value) {
            if let Some(b) = billed_until.filter(|b| *b < now) {
                total += round_money(price.0 * Decimal::from(now - b) / Decimal::from(3600));
            }
        }
    }
    Ok(total)
}

/// Refuses an order whose `estimated_cost` would take one of the buyer's
/// budgets over its monthly limit (`budget_exceeded`, 422).
pub async fn check_order(
    db: &Db,
    buyer: Uuid,
    tags: &BTreeMap<String, String>,
    estimated_cost: Decimal,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    if tags.is_empty() {
        return Ok(());
    }
    let now = now.timestamp();
    for b in budgets(db, Some(buyer)).await? {
        if tags.get(&b.tag_key) != Some(&b.tag_value) {
            continue;
        }
        let spent = spent(db, buyer, &b.tag_key, &b.tag_value, now).await?;
        if spent + estimated_cost > b.limit {
            return Err(ApiError::refused(
                "budget_exceeded",
                format!(
                    "the order's estimated cost {} would take the budget {}={} to {}, above its monthly limit {} ({} counted this month)",
                    round_money(estimated_cost),
                    b.tag_key,
                    b.tag_value,
                    round_money(spent + estimated_cost),
                    b.limit,
                    round_money(spent),
                ),
            ));
        }
    }
    Ok(())
}

/// What an order is expected to cost, for the budget check: a reserved
/// window whole, others over their duration (one hour when open-ended), at
/// the cheapest adequate price (spot: its `max_price`).
pub async fn estimate(
    db: &Db,
    mode: Mode,
    resources: &quotes::Resources,
    region: Option<&str>,
    duration_s: Option<u64>,
    max_price: Option<Decimal>,
) -> anyhow::Result<Decimal> {
    let duration = duration_s.unwrap_or(3600);
    let hours = Decimal::from(duration) / Decimal::from(3600);
    if let (Mode::Spot, Some(max)) = (mode, max_price) {
        return Ok(round_money(max * hours));
    }
    let prices = crate::pricing::store::list(db, region, resources.gpu_model.as_deref()).await?;
    let options = quotes::price_options(resources, mode, duration, &prices);
    Ok(options.first().map_or(Decimal::ZERO, |o| o.total))
}

/// A budget whose spend plus the notice period of its running leases
/// reached its limit, and the leases that must get notice for it.
#[derive(Debug, Clone)]
pub struct Reached {
    pub budget: Budget,
    pub spent: Decimal,
    /// Its non-reserved live leases.
    pub leases: Vec<Uuid>,
}

/// Every budget [`Reached`] now.
pub async fn reached(db: &Db, notice_s: i64, now: i64) -> anyhow::Result<Vec<Reached>> {
    let mut out = Vec::new();
    for b in budgets(db, None).await? {
        let tagged: Vec<(Uuid, Decimal)> = live_leases(db, Some(b.buyer))
            .await?
            .into_iter()
            .filter(|l| l.1 .0 != Mode::Reserved && has_tag(&l.5, &b.tag_key, &b.tag_value))
            .map(|l| (l.0, l.2 .0))
            .collect();
        if tagged.is_empty() {
            continue;
        }
        let notice_cost: Decimal = tagged
            .iter()
            .map(|(_, price)| *price * Decimal::from(notice_s) / Decimal::from(3600))
            .sum();
        let spent = spent(db, b.buyer, &b.tag_key, &b.tag_value, now).await?;
        if spent + notice_cost >= b.limit {
            out.push(Reached {
                budget: b,
                spent,
                leases: tagged.into_iter().map(|(id, _)| id).collect(),
            });
        }
    }
    Ok(out)
}

/// Leases that must get notice now: for each budget, when what is counted
/// plus the cost of every tagged running lease over the notice period
/// reaches the limit, its non-reserved live leases not already noticed.
pub async fn leases_to_notice(db: &Db, notice_s: i64, now: i64) -> anyhow::Result<Vec<Uuid>> {
    let mut out: Vec<Uuid> = reached(db, notice_s, now)
        .await?
        .into_iter()
        .flat_map(|r| r.leases)
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// Leases already under notice (so the watcher does not repeat itself).
async fn noticed(db: &Db) -> anyhow::Result<Vec<Uuid>> {
    let rows: Vec<Uuid> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT id FROM leases WHERE state = 'preempting'")
            .fetch_all(pool)
            .await
    })?;
    Ok(rows)
}

/// One pass of the watcher: gives notice to the leases [`reached`] names.
/// The first notice a budget causes carries its `budget.notice` event.
pub async fn enforce(state: &BillingState) -> anyhow::Result<usize> {
    let now = state.settings.clock.now();
    let due = reached(&state.db, state.settings.preempt_notice_s, now.timestamp()).await?;
    let already = noticed(&state.db).await?;
    let mut sent = 0;
    for reached in due {
        let leases: Vec<Uuid> = reached
            .leases
            .iter()
            .copied()
            .filter(|l| !already.contains(l))
            .collect();
        let notice = budget_notice(&reached, &leases, now);
        let mut tell = vec![notice.clone()];
        for lease_id in leases {
            let command = Command::FundsExhausted {
                lease_id,
                funded_until: None,
            };
            match state
                .market
                .command_telling(command, std::mem::take(&mut tell))
                .await
            {
                Ok(()) => sent += 1,
                Err(e) => {
                    tracing::warn!(%lease_id, error = %e, "budget notice refused");
                    // Refused, so the event was not written: the next notice carries it.
                    if tell.is_empty() {
                        tell = vec![notice.clone()];
                    }
                }
            }
        }
    }
    Ok(sent)
}

/// `budget.notice`: which budget, how far it got, and the leases noticed.
fn budget_notice(reached: &Reached, leases: &[Uuid], now: DateTime<Utc>) -> NewEvent {
    let b = &reached.budget;
    NewEvent::new(
        Owner::User(b.buyer),
        EventType::BudgetNotice,
        now,
        serde_json::json!({
            "tag_key": b.tag_key,
            "tag_value": b.tag_value,
            "monthly_limit": b.limit,
            "spent": reached.spent,
            "leases": leases,
        }),
    )
}

/// Checks budgets every `every` until the process ends.
pub fn spawn_watcher(state: BillingState, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = enforce(&state).await {
                tracing::warn!(error = %e, "budget check failed");
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_matches_only_its_exact_value() {
        assert!(has_tag(
            r#"{"business_line":"ads"}"#,
            "business_line",
            "ads"
        ));
        assert!(!has_tag(
            r#"{"business_line":"ads2"}"#,
            "business_line",
            "ads"
        ));
        assert!(!has_tag("{}", "business_line", "ads"));
        assert!(!has_tag("not json", "business_line", "ads"));
    }
}
