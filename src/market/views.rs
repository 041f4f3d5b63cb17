//! What the API shows of orders and leases, read from their rows.

use crate::bounds::sum_stored;
use crate::db::leases::LeaseRecord;
use crate::db::Text;
use crate::db::{dispatch, Db, Money};
use crate::engine::{LeaseState, Mode};
use crate::error::ApiError;
use anyhow::Context;
use chrono::{DateTime, Utc};
pub use gpuex_api::market::{
    ConversionView, LeaseView, OrderState, OrderView, ResumedFrom, UnitsView, UsageView,
};
use serde_json::value::RawValue;
use uuid::Uuid;

type OrderRow = (
    Uuid,
    Option<String>,
    Text<Mode>,
    Text<OrderState>,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<Uuid>,
    DateTime<Utc>,
    DateTime<Utc>,
);

const ORDER_COLUMNS: &str = "id, client_order_id, mode, state, region, request_json, tags_json, \
     reject_reason, reject_message, lease_id, created_at, updated_at";

/// A stored JSON text, passed through as it is: replies copy it instead of
/// building and walking a tree. Text that is not JSON shows as `null`.
fn raw_json(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

fn order_view(row: OrderRow) -> OrderView {
    let (id, client_order_id, mode, state, region, request, tags, reason, message, lease_id, c, u) =
        row;
    OrderView {
        id,
        client_order_id,
        mode: mode.0,
        state: state.0,
        region,
        request: raw_json(request),
        tags: raw_json(tags),
        reject_reason: reason,
        reject_message: message,
        lease_id,
        lease_ids: Vec::new(),
        attempts: Vec::new(),
        resumed_from: None,
        created_at: c,
        updated_at: u,
    }
}

/// A fill of an order: (order, lease, filled at, the lease's state).
type FillRow = (Uuid, Uuid, DateTime<Utc>, Option<Text<LeaseState>>);

/// An order's `lease_ids` from its fills (oldest first): those still
/// live, or when none is, those of its last fill.
fn current_leases(fills: &[&FillRow]) -> Vec<Uuid> {
    let live: Vec<Uuid> = fills
        .iter()
        .filter(|f| {
            f.3.as_ref()
                .is_some_and(|s| !matches!(s.0, LeaseState::Ended | LeaseState::Failed))
        })
        .map(|f| f.1)
        .collect();
    if !live.is_empty() {
        return live;
    }
    let last = fills.iter().map(|f| f.2).max();
    fills
        .iter()
        .filter(|f| Some(f.2) == last)
        .map(|f| f.1)
        .collect()
}

/// Fills in the orders' `attempts` and `resumed_from`: two queries for all.
async fn with_history(db: &Db, mut views: Vec<OrderView>) -> Result<Vec<OrderView>, ApiError> {
    if views.is_empty() {
        return Ok(views);
    }
    let placeholders = (1..=views.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let fills_sql = format!(
        "SELECT f.order_id, f.lease_id, f.created_at, l.state FROM fills f \
         LEFT JOIN leases l ON l.id = f.lease_id \
         WHERE f.order_id IN ({placeholders}) ORDER BY f.created_at, f.lease_id"
    );
    let restores_sql = format!(
        "SELECT order_id, lease_id, seq, stored_at FROM checkpoint_restores \
         WHERE order_id IN ({placeholders}) ORDER BY restored_at"
    );
    let fills: Vec<FillRow> = dispatch!(db, pool => {
        let mut q = sqlx::query_as(&fills_sql);
        for v in &views {
            q = q.bind(v.id);
        }
        q.fetch_all(pool).await
    })?;
    let restores: Vec<(Uuid, Uuid, i64, DateTime<Utc>)> = dispatch!(db, pool => {
        let mut q = sqlx::query_as(&restores_sql);
        for v in &views {
            q = q.bind(v.id);
        }
        q.fetch_all(pool).await
    })?;
    for view in &mut views {
        let own: Vec<_> = fills.iter().filter(|f| f.0 == view.id).collect();
        view.attempts = own.iter().map(|f| f.1).collect();
        view.lease_ids = current_leases(&own);
        view.resumed_from = restores
            .iter()
            .rev()
            .find(|(order, ..)| *order == view.id)
            .map(|(_, lease_id, seq, stored_at)| ResumedFrom {
                lease_id: *lease_id,
                seq: *seq,
                stored_at: *stored_at,
            });
    }
    Ok(views)
}

/// The buyer's order `id`, or 404.
pub async fn order(db: &Db, buyer: Uuid, id: Uuid) -> Result<OrderView, ApiError> {
    let sql = format!("SELECT {ORDER_COLUMNS} FROM orders WHERE id = $1 AND buyer_id = $2");
    let row: Option<OrderRow> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(id).bind(buyer).fetch_optional(pool).await
    })?;
    let view = row
        .map(order_view)
        .ok_or_else(|| ApiError::NotFound("no such order".into()))?;
    with_history(db, vec![view])
        .await?
        .pop()
        .ok_or_else(|| ApiError::NotFound("no such order".into()))
}

pub struct OrderFilter {
    pub buyer: Uuid,
    pub state: Option<OrderState>,
    pub mode: Option<Mode>,
    pub cursor: Option<Uuid>,
    pub limit: u32,
}

/// A page of orders, newest first, with one extra row to tell whether more follow.
pub async fn orders(db: &Db, f: &OrderFilter) -> Result<Vec<OrderView>, ApiError> {
    // Order ids are UUIDv7: their byte order is their creation order.
    let sql = format!(
        "SELECT {ORDER_COLUMNS} FROM orders WHERE buyer_id = $1 AND ($2 IS NULL OR state = $2) \
         AND ($3 IS NULL OR mode = $3) AND ($4 IS NULL OR id < $4) ORDER BY id DESC LIMIT $5"
    );
    let rows: Vec<OrderRow> = dispatch!(db, pool => {
        sqlx::query_as(&sql)
            .bind(f.buyer)
            .bind(f.state.map(Text))
            .bind(f.mode.map(Text))
            .bind(f.cursor)
            .bind(i64::from(f.limit) + 1)
            .fetch_all(pool)
            .await
    })?;
    with_history(db, rows.into_iter().map(order_view).collect()).await
}

pub async fn fills(
    db: &Db,
    order: Uuid,
    order_type: &super::order_request::OrderType,
) -> Result<Vec<super::orders::FillView>, ApiError> {
    // A fill's lease may have been converted since: its conversions come from the lease row.
    let rows: Vec<(Uuid, String, DateTime<Utc>, Option<String>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT f.lease_id, f.report_json, f.created_at, l.record_json FROM fills f \
             LEFT JOIN leases l ON l.id = f.lease_id WHERE f.order_id = $1 ORDER BY f.created_at",
        )
        .bind(order)
        .fetch_all(pool)
        .await
    })?;
    rows.into_iter()
        .map(|(lease_id, report, created_at, lease)| {
            let conversions = match lease {
                Some(json) => conversion_views(&LeaseRecord::parse(&json)?),
                None => Vec::new(),
            };
            Ok(super::orders::FillView {
                lease_id,
                report: serde_json::from_str(&report).context("corrupt fill report")?,
                conversions,
                order_type: order_type.clone(),
                created_at,
            })
        })
        .collect::<anyhow::Result<_>>()
        .map_err(ApiError::Internal)
}

pub fn conversion_views(lease: &LeaseRecord) -> Vec<ConversionView> {
    lease
        .conversions
        .iter()
        .map(|c| ConversionView {
            at: at(c.at),
            effective_at: at(c.effective_at),
            from_mode: c.from_mode,
            to_mode: c.to_mode,
            price_per_hour_before: c.price_per_hour_before,
            price_per_hour_after: c.price_per_hour_after,
        })
        .collect()
}

fn at(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

type LeaseRow = (
    Uuid,
    Text<LeaseState>,
    Money,
    Option<String>,
    Option<String>,
    Option<i32>,
    Option<String>,
    Option<i64>,
    String,
    Option<String>,
);

/// The buyer's lease `id`, or 404.
pub async fn lease(db: &Db, buyer: Uuid, id: Uuid) -> Result<LeaseView, ApiError> {
    let row: Option<LeaseRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, state, price_per_hour, device, end_reason, exit_code, failure, billed_until, record_json, image_id \
             FROM leases WHERE id = $1 AND buyer_id = $2",
        )
        .bind(id)
        .bind(buyer)
        .fetch_optional(pool)
        .await
    })?;
    let row = row.ok_or_else(|| ApiError::NotFound("no such lease".into()))?;
    lease_view(db, row).await
}

/// One of the buyer's leases that is still live; an ended one is refused as
/// 409 `lease_ended` (what the engine answers too once it has ended since).
pub async fn live_lease(db: &Db, buyer: Uuid, id: Uuid) -> Result<LeaseView, ApiError> {
    let view = lease(db, buyer, id).await?;
    if !view.state.live() {
        return Err(ApiError::Refused {
            status: axum::http::StatusCode::CONFLICT,
            code: "lease_ended",
            detail: format!("the lease is already {}", view.state),
        });
    }
    Ok(view)
}

async fn lease_view(db: &Db, row: LeaseRow) -> Result<LeaseView, ApiError> {
    let (id, state, price, device, end_reason, exit_code, failure, billed_until, json, image_id) =
        row;
    let state = state.0;
    let lease = LeaseRecord::parse(&json)?;
    let charged: Vec<Money> = dispatch!(db, pool => {
        // A seller's resale proceeds name the lease they were cut from, but
        // they are income, not a charge of it.
        sqlx::query_scalar(
            "SELECT amount FROM charges WHERE lease_id = $1 AND NOT (kind = 'credit' AND source = 'resale')",
        )
        .bind(id)
        .fetch_all(pool)
        .await
    })?;
    let usage: Vec<(Money, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT tflops_s, vram_gb_s FROM usage_records WHERE lease_id = $1")
            .bind(id)
            .fetch_all(pool)
            .await
    })?;
    Ok(LeaseView {
        id,
        order_id: lease.order_id,
        state,
        mode: lease.mode,
        node_id: lease.node,
        region: lease.region.clone(),
        gpu_model: lease.model.clone(),
        placement: serde_json::json!({
            "gpus": lease.placement.gpus,
            "mode": lease.placement.mode,
            "cpu_milli": lease.placement.cpu_milli,
            "memory_mib": lease.placement.memory_mib,
        }),
        units: UnitsView {
            tflops_h: lease.placement.units.tflops_h,
            vram_h: lease.placement.units.vram_h,
        },
        price_per_hour: price.0,
        unit_prices: UnitsView {
            tflops_h: lease.unit_prices.tflops_h,
            vram_h: lease.unit_prices.vram_h,
        },
        starts_at: at(lease.starts_at),
        ends_at: lease.ends_at.map(at),
        vacate_at: lease.vacate_at.map(at),
        ready_at: lease.ready_at.map(at),
        preempt_at: lease.preempt_at.map(at),
        rebalance_at: lease.rebalance_at.map(at),
        device,
        image_id,
        end_reason,
        exit_code,
        failure,
        usage: UsageView {
            charged: sum_stored(charged.into_iter().map(|m| m.0), "lease charges"),
            billed_until: billed_until.map(at),
            // Stored records may predate the bounds on what nodes report.
            tflops_s: sum_stored(usage.iter().map(|(t, _)| t.0), "lease tflops_s"),
            vram_gb_s: sum_stored(usage.iter().map(|(_, v)| v.0), "lease vram_gb_s"),
        },
        conversions: conversion_views(&lease),
    })
}

pub struct LeaseFilter {
    pub buyer: Uuid,
    pub state: Option<LeaseState>,
    pub cursor: Option<Uuid>,
    pub limit: u32,
}

/// A page of leases, newest first, with one extra row to tell whether more follow.
pub async fn leases(db: &Db, f: &LeaseFilter) -> Result<Vec<LeaseView>, ApiError> {
    let rows: Vec<LeaseRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, state, price_per_hour, device, end_reason, exit_code, failure, billed_until, record_json, image_id \
             FROM leases WHERE buyer_id = $1 AND ($2 IS NULL OR state = $2) \
             AND ($3 IS NULL OR created_at < (SELECT created_at FROM leases WHERE id = $3)) \
             ORDER BY created_at DESC, id DESC LIMIT $4",
        )
        .bind(f.buyer)
        .bind(f.state.map(Text))
        .bind(f.cursor)
        .bind(i64::from(f.limit) + 1)
        .fetch_all(pool)
        .await
    })?;
    let mut views = Vec::with_capacity(rows.len());
    for row in rows {
        views.push(lease_view(db, row).await?);
    }
    Ok(views)
}
