//! Holds: money set aside from a wallet for an order or a lease, then
//! renewed, captured to a provider or released back, each movement a ledger
//! entry in the caller's transaction.

use super::ledger::{platform_fee, positive_money, post, Account, Entry, LedgerError};
use crate::db::{dispatch_tx, execute_tx, push_rows, Money, Tx, Writes};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

/// An open hold, locked for update.
struct OpenHold {
    user: Uuid,
    remaining: Decimal,
}

async fn lock_hold(tx: &mut Tx<'_>, hold: Uuid) -> Result<OpenHold, LedgerError> {
    let sql = format!(
        "SELECT user_id, remaining FROM holds WHERE id = $1 AND status = 'open'{}",
        tx.for_update()
    );
    let row: Option<(Uuid, Money)> = dispatch_tx!(tx, conn => {
        sqlx::query_as(&sql).bind(hold).fetch_optional(conn).await
    })?;
    let (user, remaining) = row.ok_or(LedgerError::UnknownHold(hold))?;
    Ok(OpenHold {
        user,
        remaining: remaining.0,
    })
}

/// Whether a hold stays open for more renewals and charges. Only a release
/// closes one: a hold charged down to exactly zero belongs to a lease that
/// is still running, and its next renewal tops it up (a hold closed at zero
/// refused that renewal and failed every billing pass after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HoldStatus {
    Open,
    Closed,
}

async fn set_hold(
    tx: &mut Tx<'_>,
    hold: Uuid,
    remaining: Decimal,
    status: HoldStatus,
    now: DateTime<Utc>,
) -> Result<(), LedgerError> {
    let status = match status {
        HoldStatus::Open => "open",
        HoldStatus::Closed => "closed",
    };
    execute_tx!(
        tx,
        "UPDATE holds SET remaining = $1, status = $2, updated_at = $3 WHERE id = $4",
        Money(remaining),
        status,
        now,
        hold,
    )?;
    Ok(())
}

/// Adds one statement per [`crate::db::INSERT_CHUNK`] holds that sets each
/// open hold's `remaining` (charged down or renewed) as of `now`.
pub(super) fn push_remaining<'a>(
    writes: &mut Writes<'a>,
    holds: &[(Uuid, Decimal)],
    now: DateTime<Utc>,
) {
    push_rows!(
        writes,
        "UPDATE holds SET remaining = v.column2, updated_at = v.column3 FROM (",
        holds,
        |row, (id, remaining)| row
            .push_bind(*id)
            .push_bind(Money(*remaining))
            .push_bind(now),
        ") AS v WHERE holds.id = v.column1"
    );
}

/// Money moved between a user's wallet and holds for one hold.
struct Move {
    kind: &'static str,
    memo: &'static str,
    from: Account,
    to: Account,
    amount: Decimal,
}

impl Move {
    fn entry(self, hold: Uuid) -> Entry {
        Entry {
            kind: self.kind,
            memo: self.memo.into(),
            actor: None,
            reference: Some(format!("hold:{hold}")),
            postings: vec![(self.from, -self.amount), (self.to, self.amount)],
        }
    }

    async fn post(
        self,
        tx: &mut Tx<'_>,
        hold: Uuid,
        now: DateTime<Utc>,
    ) -> Result<(), LedgerError> {
        post(tx, &self.entry(hold), now).await.map(|_| ())
    }
}

/// Adds `amount` from the wallet to an open hold (a renewal).
pub async fn extend_hold(
    tx: &mut Tx<'_>,
    hold: Uuid,
    amount: Decimal,
    now: DateTime<Utc>,
) -> Result<(), LedgerError> {
    let amount = positive_money(amount)?;
    let open = lock_hold(tx, hold).await?;
    post(tx, &renewal_entry(hold, open.user, amount), now).await?;
    set_hold(tx, hold, open.remaining + amount, HoldStatus::Open, now).await
}

/// The entry that adds `amount` (at the money scale) from `user`'s wallet
/// to its hold `hold`.
pub(super) fn renewal_entry(hold: Uuid, user: Uuid, amount: Decimal) -> Entry {
    Move {
        kind: "hold",
        memo: "hold renewed",
        from: Account::Wallet(user),
        to: Account::Holds(user),
        amount,
    }
    .entry(hold)
}

/// What a capture posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Captured {
    /// The ledger entry.
    pub entry: Uuid,
    /// The platform's fee.
    pub fee: Decimal,
    /// What the payee received: the amount less the fee, exactly as posted
    /// (a reseller's proceeds lines repeat it).
    pub paid: Decimal,
}

/// Pays `amount` out of a hold to `payee` (a provider's payable, or a
/// reseller's wallet), less the platform's fee.
pub async fn capture(
    tx: &mut Tx<'_>,
    hold: Uuid,
    amount: Decimal,
    payee: Account,
    fee_rate: Decimal,
    memo: &str,
    now: DateTime<Utc>,
) -> Result<Captured, LedgerError> {
    let open = lock_hold(tx, hold).await?;
    let capture = Capture::of(
        hold,
        open.user,
        amount,
        open.remaining,
        payee,
        fee_rate,
        memo,
    )?;
    let entry = post(tx, &capture.entry, now).await?;
    set_hold(
        tx,
        hold,
        open.remaining - capture.amount,
        HoldStatus::Open,
        now,
    )
    .await?;
    Ok(Captured {
        entry,
        fee: capture.fee,
        paid: capture.paid,
    })
}

/// A capture worked out, not yet posted.
pub(super) struct Capture {
    pub entry: Entry,
    /// What leaves the hold, at the money scale.
    pub amount: Decimal,
    pub fee: Decimal,
    pub paid: Decimal,
}

impl Capture {
    /// Pays `amount` of `user`'s hold `hold`, which has `remaining` left,
    /// to `payee`, less the platform's fee.
    pub fn of(
        hold: Uuid,
        user: Uuid,
        amount: Decimal,
        remaining: Decimal,
        payee: Account,
        fee_rate: Decimal,
        memo: &str,
    ) -> Result<Capture, LedgerError> {
        let amount = positive_money(amount)?;
        if amount > remaining {
            return Err(LedgerError::CaptureExceedsHold {
                requested: amount,
                remaining,
            });
        }
        let fee = platform_fee(amount, fee_rate);
        let paid = amount.checked_sub(fee).ok_or(LedgerError::Overflow)?;
        let mut postings = vec![(Account::Holds(user), -amount), (payee, paid)];
        if !fee.is_zero() {
            postings.push((Account::PlatformRevenue, fee));
        }
        let entry = Entry {
            kind: "capture",
            memo: memo.to_owned(),
            actor: None,
            reference: Some(format!("hold:{hold}")),
            postings,
        };
        Ok(Capture {
            entry,
            amount,
            fee,
            paid,
        })
    }
}

/// Returns part of an open hold to the wallet (a lease whose terms changed
/// needs less set aside), at most what remains; the hold stays open.
pub async fn reduce_hold(
    tx: &mut Tx<'_>,
    hold: Uuid,
    amount: Decimal,
    now: DateTime<Utc>,
) -> Result<(), LedgerError> {
    let amount = positive_money(amount)?;
    let open = lock_hold(tx, hold).await?;
    let amount = amount.min(open.remaining);
    if amount.is_zero() {
        return Ok(());
    }
    let (wallet, holds) = (Account::Wallet(open.user), Account::Holds(open.user));
    let moved = Move {
        kind: "release",
        memo: "hold reduced",
        from: holds,
        to: wallet,
        amount,
    };
    moved.post(tx, hold, now).await?;
    set_hold(tx, hold, open.remaining - amount, HoldStatus::Open, now).await
}

/// Returns what is left of a hold to the wallet and closes it.
pub async fn release(
    tx: &mut Tx<'_>,
    hold: Uuid,
    now: DateTime<Utc>,
) -> Result<Decimal, LedgerError> {
    let open = lock_hold(tx, hold).await?;
    if !open.remaining.is_zero() {
        let (wallet, holds) = (Account::Wallet(open.user), Account::Holds(open.user));
        let amount = open.remaining;
        let moved = Move {
            kind: "release",
            memo: "hold released",
            from: holds,
            to: wallet,
            amount,
        };
        moved.post(tx, hold, now).await?;
    }
    set_hold(tx, hold, Decimal::ZERO, HoldStatus::Closed, now).await?;
    Ok(open.remaining)
}
