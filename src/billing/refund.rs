//! Refunds: what a lease was charged for time it was not given, reversed
//! (ARCHITECTURE.md §7, §19 "Credits are never larger than charges").
//!
//! A lease whose node is lost, or that ends early, may have been charged
//! past the moment its capacity stopped (the billing pass ran before the
//! loss was seen). Each such charge is undone by reversing the postings of
//! its capture: the buyer's wallet gets back what it paid, the payee gives
//! back what it was paid and the platform the fee it kept. Nothing is given
//! that was not first taken, so a refund never draws on platform revenue
//! beyond the fees of the very charges it reverses, and time that was only
//! held (a reserved window not yet charged) is never refunded: its hold is
//! released instead.

use super::charges::Chargeable;
use super::ledger::{self, Account, Entry, LedgerError};
use super::lines::{self, Kind, NewLine};
use crate::db::{dispatch_tx, Money, Tx};
use crate::pricing::round_money;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use uuid::Uuid;

/// One stored charge line of the lease, as far as a refund needs it.
type ChargedRow = (Uuid, i64, i64, Money, Money);

/// What one capture's reversal gives back.
#[derive(Debug, Default)]
struct Reversal {
    /// To the buyer: the part of the charge for time not delivered.
    amount: Decimal,
    /// Of which the platform's fee.
    fee: Decimal,
    /// The refunded part of the capture's period.
    from: i64,
    until: i64,
}

/// The share of a line `[start, end)` charged for `[delivered_until, end)`,
/// rounded once, half-even, at the money scale. A line wholly after the
/// moment is given back exactly.
fn undelivered_share(value: Decimal, start: i64, end: i64, delivered_until: i64) -> Decimal {
    if start >= delivered_until || end <= start {
        return value;
    }
    let undelivered = Decimal::from(end - delivered_until);
    let whole = Decimal::from(end - start);
    // Never more than the line itself, whatever the rounding does.
    round_money(value * undelivered / whole).min(value)
}

/// Reverses what `lease` was charged for time after `delivered_until`;
/// returns what went back to the buyer. Only the lease's own charge lines
/// count (never credits, never a reseller's proceeds).
pub async fn refund_undelivered(
    tx: &mut Tx<'_>,
    lease: &Chargeable,
    delivered_until: i64,
    now: DateTime<Utc>,
) -> Result<Decimal, LedgerError> {
    let rows: Vec<ChargedRow> = dispatch_tx!(tx, conn => {
        sqlx::query_as(
            "SELECT entry_id, period_start, period_end, amount, fee FROM charges \
             WHERE lease_id = $1 AND buyer_id = $2 AND kind <> 'credit' AND period_end > $3 \
             ORDER BY period_start",
        )
        .bind(lease.lease)
        .bind(lease.buyer)
        .bind(delivered_until)
        .fetch_all(conn)
        .await
    })?;
    // One reversal per capture, as each capture was one entry.
    let mut reversals: BTreeMap<Uuid, Reversal> = BTreeMap::new();
    for (entry, start, end, amount, fee) in rows {
        let r = reversals.entry(entry).or_insert_with(|| Reversal {
            from: i64::MAX,
            ..Reversal::default()
        });
        let back = undelivered_share(amount.0, start, end, delivered_until);
        let fee_back = undelivered_share(fee.0, start, end, delivered_until).min(back);
        r.amount = r.amount.checked_add(back).ok_or(LedgerError::Overflow)?;
        r.fee = r.fee.checked_add(fee_back).ok_or(LedgerError::Overflow)?;
        r.from = r.from.min(start.max(delivered_until));
        r.until = r.until.max(end);
    }
    let mut refunded = Decimal::ZERO;
    for (entry, r) in reversals {
        if r.amount <= Decimal::ZERO {
            continue;
        }
        reverse(tx, lease, entry, &r, now).await?;
        refunded = refunded
            .checked_add(r.amount)
            .ok_or(LedgerError::Overflow)?;
    }
    Ok(refunded)
}

/// Posts one capture's reversal and its lines.
async fn reverse(
    tx: &mut Tx<'_>,
    lease: &Chargeable,
    capture: Uuid,
    r: &Reversal,
    now: DateTime<Utc>,
) -> Result<(), LedgerError> {
    let paid_back = r.amount.checked_sub(r.fee).ok_or(LedgerError::Overflow)?;
    let mut postings = vec![(Account::Wallet(lease.buyer), r.amount)];
    if !r.fee.is_zero() {
        postings.push((Account::PlatformRevenue, -r.fee));
    }
    match &lease.resale {
        None => postings.push((Account::Payable(lease.provider), -paid_back)),
        Some(resold) => {
            // A reseller was paid into its wallet, which never goes below
            // zero: what it no longer holds is owed on its payable instead,
            // recovered from what it earns next.
            let mut journal = ledger::Journal::default();
            let wallet = Account::Wallet(resold.seller);
            let held = journal.balance(tx, &wallet).await?.max(Decimal::ZERO);
            let from_wallet = paid_back.min(held);
            let owed = paid_back - from_wallet;
            if !from_wallet.is_zero() {
                postings.push((wallet, -from_wallet));
            }
            if !owed.is_zero() {
                postings.push((Account::Payable(resold.seller), -owed));
            }
        }
    }
    let seconds = r.until - r.from;
    let memo = format!(
        "refund of lease {}: {seconds} s charged but not delivered (capture {capture} reversed)",
        lease.lease
    );
    let entry = Entry {
        kind: ledger::REFUND,
        memo: memo.clone(),
        actor: None,
        reference: Some(format!("lease:{}", lease.lease)),
        postings,
    };
    let entry_id = ledger::post(tx, &entry, now).await?;
    let d = &lease.detail;
    let line = NewLine {
        lease: Some(lease.lease),
        order: d.order,
        buyer: lease.buyer,
        // The provider's earnings net the refund out of what they showed; a
        // resold lease never counted there (its seller was paid instead).
        provider: lease.resale.is_none().then_some(lease.provider),
        node: d.node,
        kind: Kind::Credit,
        mode: Some(d.mode),
        gpu_model: Some(d.gpu_model.clone()),
        region: Some(d.region.clone()),
        unit: None,
        quantity: Decimal::ZERO,
        unit_price: Decimal::ZERO,
        list_unit_price: Decimal::ZERO,
        tags_json: d.tags_json.clone(),
        memo: Some(memo.clone()),
        period_start: r.from,
        period_end: r.until,
        tflops_units: Decimal::ZERO,
        vram_units: Decimal::ZERO,
        amount: -r.amount,
        fee: -r.fee,
        // The buyer's own line, whatever the source: the lease's `charged`
        // counts it (a resale source marks the seller's proceeds lines).
        resale_listing: None,
    };
    lines::insert(tx, &line, entry_id, now).await?;
    if let Some(resold) = &lease.resale {
        // The seller's proceeds line for these hours is undone in its own
        // statement too, so its export still ties out to its accounts.
        let mut back = super::charges::proceeds_line(resold, r.from, r.until, paid_back);
        back.amount = paid_back;
        back.memo = Some(memo);
        lines::insert(tx, &back, entry_id, now).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn a_line_wholly_after_the_moment_is_given_back_exactly() {
        assert_eq!(
            undelivered_share(dec!(1.234567), 100, 200, 100),
            dec!(1.234567)
        );
        assert_eq!(
            undelivered_share(dec!(1.234567), 150, 200, 100),
            dec!(1.234567)
        );
    }

    #[test]
    fn a_line_cut_by_the_moment_gives_back_its_undelivered_share() {
        assert_eq!(undelivered_share(dec!(3.6), 0, 3600, 2700), dec!(0.9));
        // Rounded once, half-even, never above the line.
        assert_eq!(undelivered_share(dec!(0.000001), 0, 2, 1), dec!(0));
        assert!(undelivered_share(dec!(1), 0, 3, 1) <= dec!(1));
    }
}
