//! The double-entry ledger.
//!
//! Every movement of money is one journal entry whose postings sum to zero,
//! written in the caller's transaction, between [`Account`]s. User accounts
//! never go below zero; the check happens under the account's row lock.

pub use super::account::Account;
pub use super::holds::{capture, extend_hold, reduce_hold, release, Captured};
use crate::db::{dispatch_tx, execute_tx, push_rows, Money, Tx, Writes};
use crate::pricing::round_money;
pub use crate::pricing::MONEY_SCALE;
use anyhow::Context;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Why a ledger operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("postings sum to {0}, not zero")]
    Unbalanced(Decimal),
    #[error("account {0} would go below zero")]
    InsufficientFunds(Account),
    #[error("unknown account {0}")]
    UnknownAccount(Account),
    #[error("unknown or closed hold {0}")]
    UnknownHold(Uuid),
    #[error("capture of {requested} exceeds the hold's remaining {remaining}")]
    CaptureExceedsHold {
        requested: Decimal,
        remaining: Decimal,
    },
    #[error("amount must be positive")]
    NonPositive,
    /// A sum beyond `Decimal`'s range: refused, never a panic.
    #[error("the amounts exceed what a balance can hold")]
    Overflow,
    #[error(transparent)]
    Storage(#[from] anyhow::Error),
}

impl From<sqlx::Error> for LedgerError {
    fn from(e: sqlx::Error) -> Self {
        LedgerError::Storage(e.into())
    }
}

/// One balanced movement of money.
#[derive(Debug, Clone)]
pub struct Entry {
    /// What kind of movement: `credit`, `hold`, `capture`, `release`, `charge`, …
    pub kind: &'static str,
    pub memo: String,
    pub actor: Option<Uuid>,
    /// What it belongs to, e.g. `order:{id}` or `hold:{id}`.
    pub reference: Option<String>,
    pub postings: Vec<(Account, Decimal)>,
}

/// Creates the wallet, holds and payable accounts of a new user.
pub async fn open_user_accounts(
    tx: &mut Tx<'_>,
    user: Uuid,
    currency: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    for account in [
        Account::Wallet(user),
        Account::Holds(user),
        Account::Payable(user),
    ] {
        execute_tx!(
            tx,
            "INSERT INTO accounts (code, owner_id, kind, currency, balance, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            account,
            user,
            account.kind(),
            currency,
            Money(Decimal::ZERO),
            now,
        )
        .with_context(|| format!("failed to open account {account}"))?;
    }
    Ok(())
}

/// Creates the platform's own accounts if they are missing.
pub async fn open_system_accounts(
    tx: &mut Tx<'_>,
    currency: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    for account in [
        Account::PlatformRevenue,
        Account::Rounding,
        Account::ExternalFunding,
    ] {
        execute_tx!(
            tx,
            "INSERT INTO accounts (code, owner_id, kind, currency, balance, created_at) \
                 VALUES ($1, NULL, $2, $3, $4, $5) ON CONFLICT (code) DO NOTHING",
            account,
            account.kind(),
            currency,
            Money(Decimal::ZERO),
            now,
        )
        .with_context(|| format!("failed to open account {account}"))?;
    }
    Ok(())
}

/// Posts `entry` in `tx`: checks it balances, locks its accounts, refuses any
/// user account going negative, and records the postings with each account's
/// new balance.
pub async fn post(tx: &mut Tx<'_>, entry: &Entry, now: DateTime<Utc>) -> Result<Uuid, LedgerError> {
    let mut journal = Journal::default();
    let id = journal.post(tx, entry, now).await?;
    journal.flush(tx).await?;
    Ok(id)
}

struct EntryRow {
    id: Uuid,
    kind: &'static str,
    memo: String,
    actor: Option<Uuid>,
    reference: Option<String>,
    at: DateTime<Utc>,
}

struct PostingRow {
    entry: Uuid,
    account: Account,
    amount: Decimal,
    balance_after: Decimal,
    at: DateTime<Utc>,
}

struct HoldRow {
    id: Uuid,
    user: Uuid,
    amount: Decimal,
    reference: String,
    at: DateTime<Utc>,
}

/// Ledger entries gathered in memory and written in a few statements: each
/// account is read (and locked, on PostgreSQL) once, entries, postings and
/// holds are inserted together, and each balance is updated once. The market
/// task posts a whole batch of orders' holds through one journal.
///
/// Until [`Journal::flush`], the rows exist only here: the transaction must
/// not touch these accounts or holds by any other path before flushing.
#[derive(Default)]
pub struct Journal {
    /// Each loaded account's balance as this journal leaves it.
    balances: BTreeMap<Account, Decimal>,
    changed: BTreeSet<Account>,
    entries: Vec<EntryRow>,
    postings: Vec<PostingRow>,
    holds: Vec<HoldRow>,
}

impl Journal {
    /// Reads (on PostgreSQL, locks) the balances not yet loaded, in code
    /// order, as single entries always did. A journal spanning several
    /// entries may lock in more than one round; PostgreSQL breaks the rare
    /// deadlock by failing one transaction, and a failed market batch
    /// rebuilds the engine and answers with an error.
    pub async fn load(
        &mut self,
        tx: &mut Tx<'_>,
        accounts: &[&Account],
    ) -> Result<(), LedgerError> {
        let mut missing: Vec<Account> = accounts
            .iter()
            .map(|a| **a)
            .filter(|a| !self.balances.contains_key(a))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        missing.sort_unstable();
        missing.dedup();
        let params: Vec<String> = (1..=missing.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT code, balance FROM accounts WHERE code IN ({}) ORDER BY code{}",
            params.join(", "),
            tx.for_update()
        );
        let rows: Vec<(Account, Money)> = dispatch_tx!(tx, conn => {
            let mut query = sqlx::query_as(&sql);
            for account in &missing {
                query = query.bind(*account);
            }
            query.fetch_all(conn).await
        })?;
        for (account, balance) in rows {
            self.balances.insert(account, balance.0);
        }
        match missing.iter().find(|a| !self.balances.contains_key(a)) {
            Some(unknown) => Err(LedgerError::UnknownAccount(*unknown)),
            None => Ok(()),
        }
    }

    /// Takes these balances as known, unless already loaded: what an
    /// earlier transaction left, when nothing has written since
    /// ([`crate::db::WriterMark`]).
    ///
    /// Keyed by code while the market writer keeps them so; a code that
    /// names no account is forgotten, and read again when needed.
    pub fn remember(&mut self, mut balances: BTreeMap<Account, Decimal>) {
        // What this journal loaded itself is as fresh, and wins.
        balances.append(&mut self.balances);
        self.balances = balances;
    }

    /// Every balance this journal knows, as it leaves them; the journal
    /// forgets them.
    pub fn take_balances(&mut self) -> BTreeMap<Account, Decimal> {
        std::mem::take(&mut self.balances)
    }

    /// An account's balance as this transaction will leave it.
    pub async fn balance(
        &mut self,
        tx: &mut Tx<'_>,
        account: &Account,
    ) -> Result<Decimal, LedgerError> {
        self.load(tx, &[account]).await?;
        Ok(self.balances[account])
    }

    /// Checks and records `entry`; nothing is written until [`Journal::flush`].
    /// A refused entry changes nothing.
    pub async fn post(
        &mut self,
        tx: &mut Tx<'_>,
        entry: &Entry,
        now: DateTime<Utc>,
    ) -> Result<Uuid, LedgerError> {
        let sum = entry
            .postings
            .iter()
            .try_fold(Decimal::ZERO, |sum, (_, amount)| sum.checked_add(*amount))
            .ok_or(LedgerError::Overflow)?;
        if !sum.is_zero() {
            return Err(LedgerError::Unbalanced(sum));
        }
        let postings = at_money_scale(&entry.postings)?;
        let mut by_account: BTreeMap<Account, Decimal> = BTreeMap::new();
        for (account, amount) in &postings {
            let total = by_account.entry(*account).or_default();
            *total = total.checked_add(*amount).ok_or(LedgerError::Overflow)?;
        }
        let accounts: Vec<&Account> = by_account.keys().collect();
        self.load(tx, &accounts).await?;
        // Every balance is checked before any changes, so a refused entry changes nothing.
        for (account, delta) in &by_account {
            let updated = self.balances[account]
                .checked_add(*delta)
                .ok_or(LedgerError::Overflow)?;
            let owes = updated.is_sign_negative() && !updated.is_zero();
            if owes && account.is_user() && !may_owe(entry.kind, *account) {
                return Err(LedgerError::InsufficientFunds(*account));
            }
        }
        // Each posting's running balance, all computed before anything is recorded.
        let mut running: BTreeMap<Account, Decimal> = BTreeMap::new();
        let mut after = Vec::with_capacity(entry.postings.len());
        for (account, amount) in &postings {
            let balance = running.entry(*account).or_insert(self.balances[account]);
            *balance = balance.checked_add(*amount).ok_or(LedgerError::Overflow)?;
            after.push(*balance);
        }
        let id = Uuid::now_v7();
        self.entries.push(EntryRow {
            id,
            kind: entry.kind,
            memo: entry.memo.clone(),
            actor: entry.actor,
            reference: entry.reference.clone(),
            at: now,
        });
        // Postings keep the entry's own order so a statement reads as it was written.
        for ((account, amount), balance_after) in postings.iter().zip(after) {
            self.postings.push(PostingRow {
                entry: id,
                account: *account,
                amount: *amount,
                balance_after,
                at: now,
            });
            self.changed.insert(*account);
        }
        self.balances.extend(running);
        Ok(id)
    }

    /// Sets `amount` of a user's wallet aside for `reference`; the hold
    /// exists once the journal is flushed.
    pub async fn place_hold(
        &mut self,
        tx: &mut Tx<'_>,
        user: Uuid,
        amount: Decimal,
        reference: &str,
        now: DateTime<Utc>,
    ) -> Result<Uuid, LedgerError> {
        let amount = positive_money(amount)?;
        let id = Uuid::now_v7();
        let entry = Entry {
            kind: "hold",
            memo: format!("hold for {reference}"),
            actor: None,
            reference: Some(format!("hold:{id}")),
            postings: vec![
                (Account::Wallet(user), -amount),
                (Account::Holds(user), amount),
            ],
        };
        self.post(tx, &entry, now).await?;
        self.holds.push(HoldRow {
            id,
            user,
            amount,
            reference: reference.to_owned(),
            at: now,
        });
        Ok(id)
    }

    /// Writes everything recorded and forgets the loaded balances, so the
    /// transaction may use the ledger by other paths again.
    pub async fn flush(&mut self, tx: &mut Tx<'_>) -> Result<(), LedgerError> {
        let mut writes = Writes::new(tx);
        self.push_writes(&mut writes);
        writes.execute(tx).await?;
        self.clear();
        Ok(())
    }

    /// Adds the statements that write everything recorded to `writes`; the
    /// caller runs them, then [`Journal::clear`]s the journal.
    pub fn push_writes<'a>(&'a self, writes: &mut Writes<'a>) {
        push_rows!(
            writes,
            "INSERT INTO journal_entries (id, kind, memo, actor_id, reference, created_at) ",
            self.entries,
            |row, e| row
                .push_bind(e.id)
                .push_bind(e.kind)
                .push_bind(&e.memo)
                .push_bind(e.actor)
                .push_bind(&e.reference)
                .push_bind(e.at)
        );
        push_rows!(
            writes,
            "INSERT INTO postings (entry_id, account, amount, balance_after, created_at) ",
            self.postings,
            |row, p| row
                .push_bind(p.entry)
                .push_bind(p.account)
                .push_bind(Money(p.amount))
                .push_bind(Money(p.balance_after))
                .push_bind(p.at)
        );
        push_rows!(
            writes,
            "INSERT INTO holds (id, user_id, remaining, reference, status, created_at, updated_at) ",
            self.holds,
            |row, h| row
                .push_bind(h.id)
                .push_bind(h.user)
                .push_bind(Money(h.amount))
                .push_bind(&h.reference)
                .push_bind("open")
                .push_bind(h.at)
                .push_bind(h.at)
        );
        // One statement for every balance changed (SQLite and PostgreSQL
        // both name a VALUES list's columns column1, column2).
        let balances: Vec<(Account, Decimal)> = self
            .changed
            .iter()
            .map(|account| (*account, self.balances[account]))
            .collect();
        push_rows!(
            writes,
            "UPDATE accounts SET balance = v.column2 FROM (",
            balances,
            |row, (account, balance)| row.push_bind(*account).push_bind(Money(*balance)),
            ") AS v WHERE accounts.code = v.column1"
        );
    }

    /// Forgets everything recorded and loaded, once [`Journal::push_writes`]'s
    /// statements have run.
    pub fn clear(&mut self) {
        *self = Journal::default();
    }
}

/// The kind of a refund's entry: what a buyer was charged for time not
/// delivered, reversed (ARCHITECTURE.md §7).
pub const REFUND: &str = "refund";

/// A refund takes back what a provider was paid even when its payable was
/// already paid out: the payable then owes, and later earnings make it good
/// (ARCHITECTURE.md §7). No other entry, and no other user account, goes below zero.
fn may_owe(kind: &str, account: Account) -> bool {
    kind == REFUND && matches!(account, Account::Payable(_))
}

/// `amount` at the money scale, refused unless still above zero. Holds take
/// amounts through it, so a hold's `remaining` moves by exactly what its
/// postings do.
pub(super) fn positive_money(amount: Decimal) -> Result<Decimal, LedgerError> {
    let amount = round_money(amount);
    if amount > Decimal::ZERO {
        Ok(amount)
    } else {
        Err(LedgerError::NonPositive)
    }
}

/// `postings` each rounded once, half-even, to [`MONEY_SCALE`], and what the
/// rounding changed posted to [`Account::Rounding`], so the entry still sums
/// to exactly zero (ARCHITECTURE.md §19 "Money out"). Checked: never a panic.
fn at_money_scale(postings: &[(Account, Decimal)]) -> Result<Vec<(Account, Decimal)>, LedgerError> {
    let mut rounded: Vec<(Account, Decimal)> = postings
        .iter()
        .map(|(account, amount)| (*account, round_money(*amount)))
        .collect();
    let residue = rounded
        .iter()
        .try_fold(Decimal::ZERO, |sum, (_, amount)| sum.checked_add(*amount))
        .ok_or(LedgerError::Overflow)?;
    if !residue.is_zero() {
        rounded.push((Account::Rounding, -residue));
    }
    Ok(rounded)
}

/// Moves money from outside into a user's wallet.
pub async fn credit(
    tx: &mut Tx<'_>,
    user: Uuid,
    amount: Decimal,
    memo: &str,
    actor: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<Uuid, LedgerError> {
    let amount = positive_money(amount)?;
    let entry = Entry {
        kind: "credit",
        memo: memo.to_owned(),
        actor,
        reference: None,
        postings: vec![
            (Account::ExternalFunding, -amount),
            (Account::Wallet(user), amount),
        ],
    };
    post(tx, &entry, now).await
}

/// Sets `amount` of a user's wallet aside for `reference` (an order, a lease).
pub async fn place_hold(
    tx: &mut Tx<'_>,
    user: Uuid,
    amount: Decimal,
    reference: &str,
    now: DateTime<Utc>,
) -> Result<Uuid, LedgerError> {
    let mut journal = Journal::default();
    let id = journal.place_hold(tx, user, amount, reference, now).await?;
    journal.flush(tx).await?;
    Ok(id)
}

/// The platform's share of `amount`, rounded half-even to the money scale.
pub fn platform_fee(amount: Decimal, fee_rate: Decimal) -> Decimal {
    round_money(amount * fee_rate)
}

/// A user's wallet figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balances {
    pub available: Decimal,
    pub held: Decimal,
}

/// Reads a user's available and held money.
pub async fn balances(db: &crate::db::Db, user: Uuid) -> anyhow::Result<Balances> {
    let rows: Vec<(String, Money)> = crate::db::dispatch!(db, pool => {
        sqlx::query_as("SELECT kind, balance FROM accounts WHERE owner_id = $1")
            .bind(user)
            .fetch_all(pool)
            .await
    })
    .context("failed to read balances")?;
    let of = |kind: &str| {
        rows.iter()
            .find(|(k, _)| k == kind)
            .map(|(_, m)| m.0)
            .unwrap_or(Decimal::ZERO)
    };
    Ok(Balances {
        available: of("wallet"),
        held: of("holds"),
    })
}

/// The sum of every account's balance: zero whenever the ledger is consistent.
pub async fn trial_balance(db: &crate::db::Db) -> anyhow::Result<Decimal> {
    let rows: Vec<Money> = crate::db::dispatch!(db, pool => {
        sqlx::query_scalar("SELECT balance FROM accounts").fetch_all(pool).await
    })
    .context("failed to read balances")?;
    Ok(rows.into_iter().map(|m| m.0).sum())
}
