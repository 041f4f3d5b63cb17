//! Billing the running leases, one slice at a time (ARCHITECTURE.md "Money"):
//! each lease charged up to now (or its node's last heartbeat) and its hold
//! renewed when it runs low, the whole slice read in a few statements and
//! written in a few more ([`Charging`]).

use super::charging::Charging;
use super::ledger::{Account, LedgerError};
use super::settle::{charge_row, charge_rows, ChargeRow, Settled, Which};
use crate::db::{Flushed, Tx};
use crate::engine::Mode;
use chrono::{DateTime, Utc};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Renew a hold this long before the notice would have to start.
const RENEWAL_MARGIN_S: i64 = 300;
/// A reserved booking holds a rolling 7 days of its window (ARCHITECTURE.md §4).
const RESERVED_HOLD_S: i64 = 7 * 24 * 3600;

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

/// A hold too small for the notice period that the wallet could not top up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldShort {
    /// What the hold still pays for.
    pub funded_until: Option<i64>,
}

/// What billing one lease of a slice decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseBilled {
    pub lease: Uuid,
    /// `None` when nothing was owed yet.
    pub settled: Option<Settled>,
    /// Its hold runs low and the wallet could not top it up.
    pub short: Option<HoldShort>,
}

/// What a slice decided.
#[derive(Debug)]
pub struct RunningBilled {
    /// Each lease of the slice, in id order.
    pub leases: Vec<LeaseBilled>,
    /// Where the pass goes on; `None` when this slice was its last.
    pub rest: Option<BillingSlice>,
    /// The balances of every account the slice read, as it leaves them.
    pub balances: BTreeMap<Account, Decimal>,
}

/// Charges one slice of the running leases up to `ts` (or their node's last
/// heartbeat, ARCHITECTURE.md §7: charges stop at a lost node's last
/// heartbeat, and a node is lost only a timeout after it fell silent, so the
/// seconds since are never charged ahead; they are charged once the next
/// heartbeat shows the node alive) and renews the holds running low.
pub async fn bill_running(
    flushed: &mut Flushed<'_, '_>,
    ts: i64,
    slice: BillingSlice,
    platform_fee: Decimal,
    notice_s: i64,
    now: DateTime<Utc>,
) -> anyhow::Result<RunningBilled> {
    let rows = charge_rows(flushed, &Which::Due { ts, slice }).await?;
    let rest = (rows.len() >= slice.limit as usize).then(|| BillingSlice {
        after: rows.last().map(|row| row.charge.lease),
        limit: slice.limit,
    });
    let tx = flushed.tx();
    let mut charging = Charging::new(now);
    charging
        .load(tx, rows.iter().map(|row| &row.charge))
        .await?;
    let mut leases = Vec::with_capacity(rows.len());
    for row in &rows {
        let until = row.last_heartbeat.map_or(ts, |hb| hb.timestamp().min(ts));
        let settled = charge_row(&mut charging, tx, row, until, platform_fee).await?;
        let billed_until = settled.map_or(row.billed_until, |s| Some(s.funded_until));
        let short = renew_hold(&mut charging, tx, row, billed_until, notice_s).await?;
        leases.push(LeaseBilled {
            lease: row.charge.lease,
            settled,
            short,
        });
    }
    let balances = charging.write(tx).await?;
    Ok(RunningBilled {
        leases,
        rest,
        balances,
    })
}

/// Tops a hold up when it covers less than the notice period (`notice_s`)
/// plus a margin; `billed_until` is where the lease's charges reach now.
async fn renew_hold(
    charging: &mut Charging,
    tx: &mut Tx<'_>,
    row: &ChargeRow,
    billed_until: Option<i64>,
    notice_s: i64,
) -> anyhow::Result<Option<HoldShort>> {
    let Some(hold) = row.charge_hold() else {
        return Ok(None);
    };
    let price = row.charge.price_per_hour;
    let remaining = charging.remaining(hold);
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
        .zip(billed_until)
        .map_or(horizon, |(e, b)| horizon.min(e - b));
    let top_up =
        crate::pricing::round_money(price * Decimal::from(horizon.max(0)) / Decimal::from(3600))
            - remaining;
    if top_up <= Decimal::ZERO {
        return Ok(None);
    }
    match charging.extend_hold(tx, hold, top_up).await {
        Ok(()) => Ok(None),
        Err(LedgerError::InsufficientFunds(_)) => {
            let funded_s = if price.is_zero() {
                0
            } else {
                (remaining * Decimal::from(3600) / price)
                    .floor()
                    .to_i64()
                    .unwrap_or(0)
            };
            Ok(Some(HoldShort {
                funded_until: billed_until.map(|b| b + funded_s),
            }))
        }
        Err(e) => Err(anyhow::anyhow!(e)),
    }
}
