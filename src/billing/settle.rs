//! A lease's bill, settled from inside the market's batch: charges up to a
//! time, hold renewals, and what a lease owes when it ends (ARCHITECTURE.md §7, §8).
//!
//! Each function says what it decided and changes no engine state: the
//! market task tells the engine when a lease's funds ran out.

use super::charges::{self, ChargeDetail, Chargeable, Resold};
use super::ledger::{self, LedgerError};
use super::refund;
use crate::db::leases::{self, LeaseRecord};
use crate::db::{dispatch_tx, Flushed, Money};
use crate::engine::{EndReason, Mode, ResaleSource};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

/// Renew a hold this long before the notice would have to start.
const RENEWAL_MARGIN_S: i64 = 300;
/// A reserved booking holds a rolling 7 days of its window (ARCHITECTURE.md §4).
const RESERVED_HOLD_S: i64 = 7 * 24 * 3600;

/// What charging a lease decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The hold and the wallet could not pay every second charged.
    pub unpaid: bool,
    /// The lease is paid up to here.
    pub funded_until: i64,
}

/// A hold too small for the notice period that the wallet could not top up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldShort {
    /// What the hold still pays for.
    pub funded_until: Option<i64>,
}

/// Charges a lease up to `until` (capped at its window's end). `None` when
/// nothing was owed: no such lease, not yet billable, or already charged.
pub async fn settle(
    flushed: &mut Flushed<'_, '_>,
    lease: Uuid,
    until: i64,
    platform_fee: Decimal,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<Settled>> {
    let Some(row) = chargeable(flushed, lease).await? else {
        return Ok(None);
    };
    let Some(from) = row.billed_until else {
        return Ok(None);
    };
    let until = row.ends_at.map_or(until, |e| until.min(e));
    if until <= from {
        return Ok(None);
    }
    let outcome = charges::charge(flushed.tx(), &row.charge, from, until, platform_fee, now)
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    leases::set_billed_until(flushed.tx(), lease, outcome.billed_until).await?;
    Ok(Some(Settled {
        unpaid: outcome.unpaid,
        funded_until: outcome.billed_until,
    }))
}

/// Settles a lease that ends at `at`: charges what it owes, refunds what it
/// was charged for time not delivered (a lost node's, past its last
/// heartbeat) by reversing those charges, and releases its hold. Nothing
/// else is credited: time only held was never paid (ARCHITECTURE.md §7, §19).
pub async fn settle_end(
    flushed: &mut Flushed<'_, '_>,
    lease: Uuid,
    reason: EndReason,
    at: i64,
    platform_fee: Decimal,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<Settled>> {
    let Some(row) = chargeable(flushed, lease).await? else {
        return Ok(None);
    };
    let owed_until = match (row.mode, reason) {
        // A reserved window is owed whole unless the provider lost it or the
        // buyer's funds ended it.
        (
            Mode::Reserved,
            EndReason::Released
            | EndReason::AgentEnded
            | EndReason::DiskQuota
            | EndReason::OrderCancelled
            | EndReason::Listed,
        ) => row.ends_at.unwrap_or(at).max(at),
        (_, EndReason::NodeLost) => last_sign_of_life(flushed, row.node)
            .await?
            .unwrap_or(at)
            .min(at),
        _ => at,
    };
    // `settle` reads the row again; the credit below needs it as it stood
    // before this last charge.
    let mut settled = settle(flushed, lease, owed_until, platform_fee, now).await?;
    // Anything charged past what is owed (a lost node's lease charged past
    // its last heartbeat) is reversed, before a converted lease's window
    // ahead is charged below: that one is owed.
    let refunded = refund::refund_undelivered(flushed.tx(), &row.charge, owed_until, now)
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    if refunded > Decimal::ZERO {
        leases::cut_billed_until(flushed.tx(), lease, owed_until).await?;
    }
    let owes_window = matches!(
        reason,
        EndReason::Released
            | EndReason::AgentEnded
            | EndReason::DiskQuota
            | EndReason::OrderCancelled
    );
    if let Some(window) = row.converts_to_reserved.filter(|_| owes_window) {
        if settled.is_none_or(|s| !s.unpaid) {
            settled = settle_reserved_ahead(flushed, &row, window, platform_fee, now)
                .await?
                .or(settled);
        }
    }
    if let Some(hold) = row.charge_hold() {
        match ledger::release(flushed.tx(), hold, now).await {
            Ok(_) | Err(LedgerError::UnknownHold(_)) => {}
            Err(e) => return Err(anyhow::anyhow!(e)),
        }
    }
    Ok(settled)
}

/// An on-demand lease converted to reserved that ends before its reserved
/// window begins still owes that window whole (ARCHITECTURE.md §3), at the reserved
/// price and as reserved lines, unused from the end on.
async fn settle_reserved_ahead(
    flushed: &mut Flushed<'_, '_>,
    row: &ChargeRow,
    window: crate::engine::ReservedWindow,
    platform_fee: Decimal,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<Settled>> {
    let mut reserved = row.charge.clone();
    let multiplier = crate::engine::pricing::RESERVED;
    reserved.detail.mode = Mode::Reserved;
    reserved.detail.tflops.price = reserved.detail.tflops.list * multiplier;
    reserved.detail.vram.price = reserved.detail.vram.list * multiplier;
    reserved.price_per_hour = reserved.detail.tflops.units * reserved.detail.tflops.price
        + reserved.detail.vram.units * reserved.detail.vram.price;
    let outcome = charges::charge(
        flushed.tx(),
        &reserved,
        window.from,
        window.until,
        platform_fee,
        now,
    )
    .await
    .map_err(|e| anyhow::anyhow!(e))?;
    leases::set_billed_until(flushed.tx(), row.charge.lease, outcome.billed_until).await?;
    Ok(Some(Settled {
        unpaid: outcome.unpaid,
        funded_until: outcome.billed_until,
    }))
}

/// Every running lease charged short of `ts`, with the time it is owed up
/// to: now, or its node's last heartbeat when that is older. ARCHITECTURE.md §7:
/// charges stop at a lost node's last heartbeat, and a node is lost only a
/// timeout after it fell silent, so the seconds since are never charged
/// ahead: they are charged once the next heartbeat shows the node alive.
pub async fn running_due(
    flushed: &mut Flushed<'_, '_>,
    ts: i64,
    slice: &BillingSlice,
) -> anyhow::Result<Vec<(Uuid, i64)>> {
    let after = if slice.after.is_some() {
        "AND l.id > $2 "
    } else {
        ""
    };
    let sql = format!(
        "SELECT l.id, n.last_heartbeat_at FROM leases l JOIN nodes n ON n.id = l.node_id \
         WHERE l.state IN ('provisioning', 'running', 'preempting', 'pending') \
         AND l.billed_until IS NOT NULL AND l.billed_until < $1 {after}\
         ORDER BY l.id LIMIT {}",
        slice.limit
    );
    let rows: Vec<(Uuid, Option<DateTime<Utc>>)> = dispatch_tx!(flushed.tx(), conn => {
        let mut query = sqlx::query_as(&sql).bind(ts);
        if let Some(after) = slice.after {
            query = query.bind(after);
        }
        query.fetch_all(conn).await
    })?;
    Ok(rows
        .into_iter()
        .map(|(id, heartbeat)| (id, heartbeat.map_or(ts, |hb| hb.timestamp().min(ts))))
        .collect())
}

/// Which running leases one batch bills: at most `limit`, in id order after
/// `after` (ARCHITECTURE.md §8). A pass over every lease due goes on over as
/// many batches as it takes, so billing a large fleet holds the market for
/// one slice at a time, never for the whole fleet; and each lease is visited
/// once a pass even when a silent node keeps it due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BillingSlice {
    pub after: Option<Uuid>,
    pub limit: u32,
}

/// Tops a hold up when it covers less than the notice period (`notice_s`)
/// plus a margin.
pub async fn renew_hold(
    flushed: &mut Flushed<'_, '_>,
    lease: Uuid,
    notice_s: i64,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<HoldShort>> {
    let Some(row) = chargeable(flushed, lease).await? else {
        return Ok(None);
    };
    let Some(hold) = row.charge_hold() else {
        return Ok(None);
    };
    let price = row.charge.price_per_hour;
    let remaining = charges::hold_remaining(flushed.tx(), hold)
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    let needed = price * Decimal::from(notice_s + RENEWAL_MARGIN_S) / Decimal::from(3600);
    if remaining >= needed {
        return Ok(None);
    }
    let horizon = match row.mode {
        Mode::Reserved => RESERVED_HOLD_S,
        _ => 3600,
    };
    let horizon = row
        .ends_at
        .zip(row.billed_until)
        .map_or(horizon, |(e, b)| horizon.min(e - b));
    let top_up =
        crate::pricing::round_money(price * Decimal::from(horizon.max(0)) / Decimal::from(3600))
            - remaining;
    if top_up <= Decimal::ZERO {
        return Ok(None);
    }
    match ledger::extend_hold(flushed.tx(), hold, top_up, now).await {
        Ok(()) => Ok(None),
        Err(LedgerError::InsufficientFunds(_)) => {
            let funded_s = if price.is_zero() {
                0
            } else {
                use rust_decimal::prelude::ToPrimitive;
                (remaining * Decimal::from(3600) / price)
                    .floor()
                    .to_i64()
                    .unwrap_or(0)
            };
            Ok(Some(HoldShort {
                funded_until: row.billed_until.map(|b| b + funded_s),
            }))
        }
        Err(e) => Err(anyhow::anyhow!(e)),
    }
}

/// A lease row with what charging it needs.
struct ChargeRow {
    mode: Mode,
    /// An on-demand lease converted to reserved, before its window begins.
    converts_to_reserved: Option<crate::engine::ReservedWindow>,
    node: Uuid,
    billed_until: Option<i64>,
    ends_at: Option<i64>,
    charge: Chargeable,
}

impl ChargeRow {
    fn charge_hold(&self) -> Option<Uuid> {
        (!self.charge.hold.is_nil()).then_some(self.charge.hold)
    }
}

type LeaseChargeRow = (
    Uuid,
    Uuid,
    Uuid,
    Option<Uuid>,
    Money,
    Option<i64>,
    Option<i64>,
    String,
    Uuid,
    Option<i64>,
    Option<i64>,
    Option<String>,
);

async fn chargeable(
    flushed: &mut Flushed<'_, '_>,
    lease: Uuid,
) -> anyhow::Result<Option<ChargeRow>> {
    let row: Option<LeaseChargeRow> = dispatch_tx!(flushed.tx(), conn => {
        sqlx::query_as(
            "SELECT l.id, l.buyer_id, l.node_id, l.hold_id, l.price_per_hour, l.billed_until, l.ends_at, \
             l.record_json, n.provider_id, l.running_at, l.ended_at, o.tags_json FROM leases l \
             JOIN nodes n ON n.id = l.node_id LEFT JOIN orders o ON o.id = l.order_id WHERE l.id = $1",
        )
        .bind(lease)
        .fetch_optional(conn)
        .await
    })?;
    let Some((
        id,
        buyer,
        node,
        hold,
        price,
        billed_until,
        ends_at,
        json,
        provider,
        running_at,
        ended_at,
        tags_json,
    )) = row
    else {
        return Ok(None);
    };
    let record = LeaseRecord::parse(&json)?;
    let detail = ChargeDetail::of_lease(&record, node, running_at, ended_at, tags_json);
    let resale = match &record.resale {
        Some(source) => Some(resold(flushed, source).await?),
        None => None,
    };
    Ok(Some(ChargeRow {
        mode: record.mode,
        converts_to_reserved: record.converts_to_reserved,
        node,
        billed_until,
        ends_at,
        charge: Chargeable {
            lease: id,
            buyer,
            provider,
            resale,
            hold: hold.unwrap_or(Uuid::nil()),
            price_per_hour: price.0,
            tflops_units: record.placement.units.tflops_h,
            vram_units: record.placement.units.vram_h,
            detail,
        },
    }))
}

/// The seller's side of a lease bought on resale: the lease its listing
/// cut the tail from, and that lease's order's tags.
async fn resold(flushed: &mut Flushed<'_, '_>, source: &ResaleSource) -> anyhow::Result<Resold> {
    let row: Option<(Uuid, Option<String>)> = dispatch_tx!(flushed.tx(), conn => {
        sqlx::query_as(
            "SELECT r.lease_id, o.tags_json FROM resale_listings r JOIN leases l ON l.id = r.lease_id \
             LEFT JOIN orders o ON o.id = l.order_id WHERE r.id = $1",
        )
        .bind(source.listing_id)
        .fetch_optional(conn)
        .await
    })?;
    let (seller_lease, tags_json) = row.unzip();
    Ok(Resold {
        listing: source.listing_id,
        seller: source.seller,
        seller_lease,
        seller_tags_json: tags_json.flatten().unwrap_or_else(|| "{}".to_owned()),
    })
}

/// A node's last heartbeat and its registration.
type SignsOfLife = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// When the node last showed it was alive: its last heartbeat, or its
/// registration when that came later (the watchdog's view too).
async fn last_sign_of_life(
    flushed: &mut Flushed<'_, '_>,
    node: Uuid,
) -> anyhow::Result<Option<i64>> {
    let at: Option<SignsOfLife> = dispatch_tx!(flushed.tx(), conn => {
        sqlx::query_as("SELECT last_heartbeat_at, registered_at FROM nodes WHERE id = $1")
            .bind(node)
            .fetch_optional(conn)
            .await
    })?;
    Ok(at
        .and_then(|(heartbeat, registered)| heartbeat.max(registered))
        .map(|t| t.timestamp()))
}
