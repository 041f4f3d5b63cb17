//! A lease's bill, settled from inside the market's batch: charges up to a
//! time, hold renewals, and what a lease owes when it ends (ARCHITECTURE.md §7, §8).
//!
//! Each function says what it decided and changes no engine state: the
//! market task tells the engine when a lease's funds ran out.

pub use super::running::{bill_running, BillingSlice, HoldShort, LeaseBilled, RunningBilled};

use super::charges::{ChargeDetail, Chargeable, Resold};
use super::charging::Charging;
use super::ledger::{self, LedgerError};
use super::refund;
use crate::db::leases::{self, LeaseRecord};
use crate::db::{dispatch_tx, Flushed, Money, Tx};
use crate::engine::{EndReason, Mode, ResaleSource};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::HashMap;
use uuid::Uuid;

/// What charging a lease decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The hold and the wallet could not pay every second charged.
    pub unpaid: bool,
    /// The lease is paid up to here.
    pub funded_until: i64,
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
    let mut charging = Charging::new(now);
    let settled = charge_row(&mut charging, flushed.tx(), &row, until, platform_fee).await?;
    charging.write(flushed.tx()).await?;
    Ok(settled)
}

/// Charges `row`'s lease up to `until` (capped at its window's end) in
/// `charging`, which has its hold and accounts loaded or loads them.
pub(super) async fn charge_row(
    charging: &mut Charging,
    tx: &mut Tx<'_>,
    row: &ChargeRow,
    until: i64,
    platform_fee: Decimal,
) -> anyhow::Result<Option<Settled>> {
    let Some(from) = row.billed_until else {
        return Ok(None);
    };
    let until = row.ends_at.map_or(until, |e| until.min(e));
    if until <= from {
        return Ok(None);
    }
    charging.load(tx, [&row.charge]).await?;
    let outcome = charging
        .charge(tx, &row.charge, from, until, platform_fee)
        .await?;
    charging.bill_until(row.charge.lease, outcome.billed_until);
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
    let mut charging = Charging::new(now);
    charging.load(flushed.tx(), [&reserved]).await?;
    let outcome = charging
        .charge(
            flushed.tx(),
            &reserved,
            window.from,
            window.until,
            platform_fee,
        )
        .await?;
    charging.bill_until(row.charge.lease, outcome.billed_until);
    charging.write(flushed.tx()).await?;
    Ok(Some(Settled {
        unpaid: outcome.unpaid,
        funded_until: outcome.billed_until,
    }))
}

/// A lease row with what charging it needs.
pub(super) struct ChargeRow {
    pub mode: Mode,
    /// An on-demand lease converted to reserved, before its window begins.
    pub converts_to_reserved: Option<crate::engine::ReservedWindow>,
    pub node: Uuid,
    /// The node's last heartbeat.
    pub last_heartbeat: Option<DateTime<Utc>>,
    pub billed_until: Option<i64>,
    pub ends_at: Option<i64>,
    pub charge: Chargeable,
}

impl ChargeRow {
    pub fn charge_hold(&self) -> Option<Uuid> {
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
    Option<DateTime<Utc>>,
);

/// Which lease rows [`charge_rows`] reads.
pub(super) enum Which {
    /// One lease.
    Lease(Uuid),
    /// One slice of the running leases charged short of `ts`, in id order.
    Due { ts: i64, slice: BillingSlice },
}

/// The rows of the leases `which` names, with their resale sources, in two
/// statements however many.
pub(super) async fn charge_rows(
    flushed: &mut Flushed<'_, '_>,
    which: &Which,
) -> anyhow::Result<Vec<ChargeRow>> {
    let filter = match which {
        Which::Lease(_) => "WHERE l.id = $1".to_owned(),
        Which::Due { slice, .. } => format!(
            "WHERE l.state IN ('provisioning', 'running', 'preempting', 'pending') \
             AND l.billed_until IS NOT NULL AND l.billed_until < $1 {}ORDER BY l.id LIMIT {}",
            if slice.after.is_some() {
                "AND l.id > $2 "
            } else {
                ""
            },
            slice.limit
        ),
    };
    let sql = format!(
        "SELECT l.id, l.buyer_id, l.node_id, l.hold_id, l.price_per_hour, l.billed_until, l.ends_at, \
         l.record_json, n.provider_id, l.running_at, l.ended_at, o.tags_json, n.last_heartbeat_at \
         FROM leases l JOIN nodes n ON n.id = l.node_id LEFT JOIN orders o ON o.id = l.order_id {filter}"
    );
    let rows: Vec<LeaseChargeRow> = dispatch_tx!(flushed.tx(), conn => {
        let mut query = sqlx::query_as(&sql);
        match which {
            Which::Lease(lease) => query = query.bind(*lease),
            Which::Due { ts, slice } => {
                query = query.bind(*ts);
                if let Some(after) = slice.after {
                    query = query.bind(after);
                }
            }
        }
        query.fetch_all(conn).await
    })?;
    let mut parsed = Vec::with_capacity(rows.len());
    for row in rows {
        let (
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
            last_heartbeat,
        ) = row;
        let record = LeaseRecord::parse(&json)?;
        let detail = ChargeDetail::of_lease(&record, node, running_at, ended_at, tags_json);
        let charge_row = ChargeRow {
            mode: record.mode,
            converts_to_reserved: record.converts_to_reserved,
            node,
            last_heartbeat,
            billed_until,
            ends_at,
            charge: Chargeable {
                lease: id,
                buyer,
                provider,
                resale: None,
                hold: hold.unwrap_or(Uuid::nil()),
                price_per_hour: price.0,
                tflops_units: record.placement.units.tflops_h,
                vram_units: record.placement.units.vram_h,
                detail,
            },
        };
        parsed.push((record.resale, charge_row));
    }
    let sources: Vec<&ResaleSource> = parsed.iter().filter_map(|(r, _)| r.as_ref()).collect();
    let mut sellers = resold(flushed, &sources).await?;
    Ok(parsed
        .into_iter()
        .map(|(source, mut row)| {
            row.charge.resale = source.map(|source| {
                sellers.remove(&source.listing_id).unwrap_or(Resold {
                    listing: source.listing_id,
                    seller: source.seller,
                    seller_lease: None,
                    seller_tags_json: "{}".to_owned(),
                })
            });
            row
        })
        .collect())
}

/// One lease's row, if it exists.
async fn chargeable(
    flushed: &mut Flushed<'_, '_>,
    lease: Uuid,
) -> anyhow::Result<Option<ChargeRow>> {
    Ok(charge_rows(flushed, &Which::Lease(lease)).await?.pop())
}

/// The seller's side of leases bought on resale: the lease each listing
/// cut the tail from, and that lease's order's tags, by listing.
async fn resold(
    flushed: &mut Flushed<'_, '_>,
    sources: &[&ResaleSource],
) -> anyhow::Result<HashMap<Uuid, Resold>> {
    if sources.is_empty() {
        return Ok(HashMap::new());
    }
    let params: Vec<String> = (1..=sources.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT r.id, r.lease_id, o.tags_json FROM resale_listings r JOIN leases l ON l.id = r.lease_id \
         LEFT JOIN orders o ON o.id = l.order_id WHERE r.id IN ({})",
        params.join(", ")
    );
    let rows: Vec<(Uuid, Uuid, Option<String>)> = dispatch_tx!(flushed.tx(), conn => {
        let mut query = sqlx::query_as(&sql);
        for source in sources {
            query = query.bind(source.listing_id);
        }
        query.fetch_all(conn).await
    })?;
    let sellers: HashMap<Uuid, Uuid> = sources.iter().map(|s| (s.listing_id, s.seller)).collect();
    Ok(rows
        .into_iter()
        .filter_map(|(listing, seller_lease, tags_json)| {
            let seller = *sellers.get(&listing)?;
            Some((
                listing,
                Resold {
                    listing,
                    seller,
                    seller_lease: Some(seller_lease),
                    seller_tags_json: tags_json.unwrap_or_else(|| "{}".to_owned()),
                },
            ))
        })
        .collect())
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
