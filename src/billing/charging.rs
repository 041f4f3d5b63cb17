//! Charging worked out in memory and written together (ARCHITECTURE.md
//! "Money"). Each capture and renewal is a ledger entry as before, checked
//! the same way, but the holds and accounts of every lease charged are read
//! (and locked) in one statement each, and the entries, postings, balances,
//! holds, charge lines and leases' `billed_until` are written in a handful
//! of statements at the end. Charged one by one, a lease cost some fifteen
//! trips to the database, and a billing slice of 200 leases held the
//! market's batch for most of a second on PostgreSQL (BENCHMARKS.md, "The
//! whole market at fleet scale").
//!
//! Until [`Charging::write`], what it decided exists only here: the
//! transaction must not touch these holds, accounts or leases' bills by
//! any other path before.

use super::charges::{
    proceeds_line, segments, split_fee, unit_lines, ChargeOutcome, Chargeable, Ts,
};
use super::holds::{self, Capture};
use super::ledger::{positive_money, Account, Journal, LedgerError};
use super::lines::{self, NewLine};
use crate::db::leases;
use crate::db::{dispatch_tx, Money, Tx, Writes};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// A hold as this charging leaves it.
#[derive(Debug, Clone, Copy)]
struct Held {
    user: Uuid,
    remaining: Decimal,
    open: bool,
}

/// Charges, renewals and bills of a set of leases, not yet written.
pub struct Charging {
    now: DateTime<Utc>,
    journal: Journal,
    /// Every hold read; a hold not here does not exist.
    holds: HashMap<Uuid, Held>,
    changed_holds: BTreeSet<Uuid>,
    lines: Vec<(NewLine, Uuid)>,
    billed_until: BTreeMap<Uuid, Ts>,
}

impl Charging {
    pub fn new(now: DateTime<Utc>) -> Charging {
        Charging {
            now,
            journal: Journal::default(),
            holds: HashMap::new(),
            changed_holds: BTreeSet::new(),
            lines: Vec::new(),
            billed_until: BTreeMap::new(),
        }
    }

    /// Reads (on PostgreSQL, locks) the holds and the ledger accounts that
    /// charging `leases` may move, in one statement each.
    pub async fn load<'c>(
        &mut self,
        tx: &mut Tx<'_>,
        leases: impl IntoIterator<Item = &'c Chargeable>,
    ) -> Result<(), LedgerError> {
        let mut holds = BTreeSet::new();
        let mut accounts = BTreeSet::new();
        for c in leases {
            if !c.hold.is_nil() {
                holds.insert(c.hold);
            }
            accounts.extend([Account::Wallet(c.buyer), Account::Holds(c.buyer), payee(c)]);
        }
        // The platform's fee account, read once for all of them (a
        // database with nothing to charge may not have opened it yet).
        if !accounts.is_empty() {
            accounts.insert(Account::PlatformRevenue);
        }
        self.load_holds(tx, holds).await?;
        let accounts: Vec<&Account> = accounts.iter().collect();
        self.journal.load(tx, &accounts).await
    }

    async fn load_holds(
        &mut self,
        tx: &mut Tx<'_>,
        ids: BTreeSet<Uuid>,
    ) -> Result<(), LedgerError> {
        let missing: Vec<Uuid> = ids
            .into_iter()
            .filter(|id| !self.holds.contains_key(id))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let params: Vec<String> = (1..=missing.len()).map(|i| format!("${i}")).collect();
        // In id order, as the ledger locks accounts in code order.
        let sql = format!(
            "SELECT id, user_id, remaining, status FROM holds WHERE id IN ({}) ORDER BY id{}",
            params.join(", "),
            tx.for_update()
        );
        let rows: Vec<(Uuid, Uuid, Money, String)> = dispatch_tx!(tx, conn => {
            let mut query = sqlx::query_as(&sql);
            for id in &missing {
                query = query.bind(*id);
            }
            query.fetch_all(conn).await
        })?;
        for (id, user, remaining, status) in rows {
            let held = Held {
                user,
                remaining: remaining.0,
                open: status == "open",
            };
            self.holds.insert(id, held);
        }
        Ok(())
    }

    /// What is left of a hold (zero for one that does not exist).
    pub fn remaining(&self, hold: Uuid) -> Decimal {
        self.holds.get(&hold).map_or(Decimal::ZERO, |h| h.remaining)
    }

    fn open_hold(&self, hold: Uuid) -> Result<Held, LedgerError> {
        match self.holds.get(&hold) {
            Some(held) if held.open => Ok(*held),
            _ => Err(LedgerError::UnknownHold(hold)),
        }
    }

    /// Adds `amount` from the wallet to an open hold (a renewal).
    pub async fn extend_hold(
        &mut self,
        tx: &mut Tx<'_>,
        hold: Uuid,
        amount: Decimal,
    ) -> Result<(), LedgerError> {
        let amount = positive_money(amount)?;
        let held = self.open_hold(hold)?;
        let entry = holds::renewal_entry(hold, held.user, amount);
        self.journal.post(tx, &entry, self.now).await?;
        self.set_remaining(hold, held.remaining + amount);
        Ok(())
    }

    fn set_remaining(&mut self, hold: Uuid, remaining: Decimal) {
        if let Some(held) = self.holds.get_mut(&hold) {
            held.remaining = remaining;
            self.changed_holds.insert(hold);
        }
    }

    /// The lease is charged up to `until`.
    pub fn bill_until(&mut self, lease: Uuid, until: Ts) {
        self.billed_until.insert(lease, until);
    }

    /// Charges `[from, to)`: the lines of each hour are captured from the
    /// hold, topping the hold up from the wallet when it runs short. A line
    /// the buyer cannot pay stops the run (the caller starts the funds
    /// notice).
    pub async fn charge(
        &mut self,
        tx: &mut Tx<'_>,
        c: &Chargeable,
        from: Ts,
        to: Ts,
        fee_rate: Decimal,
    ) -> Result<ChargeOutcome, LedgerError> {
        // Hours charged beyond now can only be the unused rest of a reserved
        // window that ended early: they are unused whatever the row says yet.
        let mut c = c.clone();
        let now_ts = self.now.timestamp();
        c.detail.ended_at = Some(c.detail.ended_at.map_or(now_ts, |e| e.min(now_ts)));
        let c = &c;
        let mut charged = Decimal::ZERO;
        let mut billed_until = from;
        let cuts: Vec<Ts> = if c.detail.mode == crate::engine::Mode::Reserved {
            [c.detail.running_at, c.detail.ended_at]
                .into_iter()
                .flatten()
                .collect()
        } else {
            Vec::new()
        };
        for (start, end) in segments(from, to, &cuts) {
            let mut parts = unit_lines(c, start, end);
            let total: Decimal = parts.iter().map(|l| l.amount).sum();
            if total.is_zero() {
                billed_until = end;
                continue;
            }
            let remaining = self.remaining(c.hold);
            if remaining < total {
                match self.extend_hold(tx, c.hold, total - remaining).await {
                    Ok(()) => {}
                    // A released hold (its lease ended) has nothing left to charge from.
                    Err(LedgerError::InsufficientFunds(_) | LedgerError::UnknownHold(_)) => {
                        return Ok(ChargeOutcome {
                            charged,
                            billed_until,
                            unpaid: true,
                        })
                    }
                    Err(e) => return Err(e),
                }
            }
            let memo = format!("lease {} {}–{}", c.lease, start, end);
            let held = self.open_hold(c.hold)?;
            let capture = Capture::of(
                c.hold,
                held.user,
                total,
                held.remaining,
                payee(c),
                fee_rate,
                &memo,
            )?;
            let entry = self.journal.post(tx, &capture.entry, self.now).await?;
            self.set_remaining(c.hold, held.remaining - capture.amount);
            split_fee(&mut parts, capture.fee);
            self.lines
                .extend(parts.into_iter().map(|line| (line, entry)));
            // The seller's proceeds belong to the same ledger entry, so the
            // seller's export ties out to its wallet as the buyer's does to its holds.
            if let Some(resold) = c.resale.as_ref().filter(|_| !capture.paid.is_zero()) {
                let proceeds = proceeds_line(resold, start, end, capture.paid);
                self.lines.push((proceeds, entry));
            }
            charged += total;
            billed_until = end;
        }
        Ok(ChargeOutcome {
            charged,
            billed_until,
            unpaid: false,
        })
    }

    /// Writes everything decided; returns the balances of every account
    /// read, as the transaction leaves them.
    pub async fn write(
        mut self,
        tx: &mut Tx<'_>,
    ) -> Result<BTreeMap<Account, Decimal>, LedgerError> {
        let holds: Vec<(Uuid, Decimal)> = self
            .changed_holds
            .iter()
            .map(|id| (*id, self.remaining(*id)))
            .collect();
        let billed: Vec<(Uuid, Ts)> = self.billed_until.iter().map(|(l, t)| (*l, *t)).collect();
        let mut writes = Writes::new(tx);
        // Entries before the lines that name them.
        self.journal.push_writes(&mut writes);
        holds::push_remaining(&mut writes, &holds, self.now);
        lines::push_inserts(&mut writes, &self.lines, self.now);
        leases::push_billed_until(&mut writes, &billed);
        writes.execute(tx).await?;
        Ok(self.journal.take_balances())
    }
}

/// Who a charge of `c` pays: the provider's payable, or for a lease bought
/// on resale, the seller's wallet.
fn payee(c: &Chargeable) -> Account {
    match &c.resale {
        Some(resold) => Account::Wallet(resold.seller),
        None => Account::Payable(c.provider),
    }
}

/// Charges one lease `[from, to)` in a charging of its own, written at once.
pub async fn charge_alone(
    tx: &mut Tx<'_>,
    c: &Chargeable,
    from: Ts,
    to: Ts,
    fee_rate: Decimal,
    now: DateTime<Utc>,
) -> Result<ChargeOutcome, LedgerError> {
    let mut charging = Charging::new(now);
    charging.load(tx, [c]).await?;
    let outcome = charging.charge(tx, c, from, to, fee_rate).await?;
    charging.write(tx).await?;
    Ok(outcome)
}
