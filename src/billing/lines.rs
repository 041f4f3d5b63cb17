//! Charge lines: the rows of `charges`, one per (hour, lease, unit), plus
//! credit lines (a resale seller's proceeds among them). Every line points at the ledger entry that moved its money,
//! so invoices and exports tie out to the ledger.

use super::ledger::{self, Account, Entry, LedgerError};
use crate::db::Text;
use crate::db::{dispatch, push_rows, Db, Money, Tx, Writes};
use crate::engine::Mode;
use anyhow::Context;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Capacity used under on-demand, spot or pooled.
    Usage,
    /// An hour of a reserved window the lease ran in.
    ReservedUsed,
    /// An hour of a reserved window owed but not run (before start, after an early end).
    ReservedUnused,
    /// Money given back: a node-loss gap, an admin adjustment.
    Credit,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::ReservedUsed => "reserved_used",
            Kind::ReservedUnused => "reserved_unused",
            Kind::Credit => "credit",
        }
    }

    pub fn parse(s: &str) -> Kind {
        match s {
            "reserved_used" => Kind::ReservedUsed,
            "reserved_unused" => Kind::ReservedUnused,
            "credit" => Kind::Credit,
            _ => Kind::Usage,
        }
    }
}

pub use crate::catalog::Unit;

/// Where the capacity a line bills came from (FOCUS `x_Source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Capacity the market sold from a provider's node.
    #[default]
    Primary,
    /// The tail of a reserved window, sold on from a resale listing: the
    /// buyer's lines, and the seller's proceeds.
    Resale,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Primary => "primary",
            Source::Resale => "resale",
        }
    }

    /// A stored source; lines written before resale existed are `primary`.
    pub fn parse(s: &str) -> Source {
        match s {
            "resale" => Source::Resale,
            _ => Source::Primary,
        }
    }

    /// A line's source from the listing it names, if any.
    pub fn of(listing: Option<Uuid>) -> Source {
        if listing.is_some() {
            Source::Resale
        } else {
            Source::Primary
        }
    }
}

/// A line about to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLine {
    pub lease: Option<Uuid>,
    pub order: Option<Uuid>,
    pub buyer: Uuid,
    pub provider: Option<Uuid>,
    pub node: Option<Uuid>,
    pub kind: Kind,
    pub mode: Option<Mode>,
    pub gpu_model: Option<String>,
    pub region: Option<String>,
    pub unit: Option<Unit>,
    /// Unit-hours (zero on credits).
    pub quantity: Decimal,
    /// The contracted price per unit-hour.
    pub unit_price: Decimal,
    /// The list price per unit-hour.
    pub list_unit_price: Decimal,
    /// A JSON object.
    pub tags_json: String,
    /// Why (credits).
    pub memo: Option<String>,
    pub period_start: i64,
    pub period_end: i64,
    pub tflops_units: Decimal,
    pub vram_units: Decimal,
    /// What the buyer pays; negative on credits.
    pub amount: Decimal,
    /// The platform's share of `amount`.
    pub fee: Decimal,
    /// The resale listing the capacity was bought from (the buyer's lines)
    /// or whose sale the line pays out (the seller's proceeds); `None` for
    /// primary capacity. It alone decides the line's [`Source`].
    pub resale_listing: Option<Uuid>,
}

impl NewLine {
    /// A credit of `amount` to `buyer` (stored negative, as credits are),
    /// for `period = (start, end)`: no usage, so it names no provider, node
    /// or placement, and every unit and price is zero.
    pub fn credit(
        buyer: Uuid,
        lease: Option<Uuid>,
        tags_json: String,
        memo: String,
        (period_start, period_end): (i64, i64),
        amount: Decimal,
    ) -> NewLine {
        NewLine {
            lease,
            order: None,
            buyer,
            provider: None,
            node: None,
            kind: Kind::Credit,
            mode: None,
            gpu_model: None,
            region: None,
            unit: None,
            quantity: Decimal::ZERO,
            unit_price: Decimal::ZERO,
            list_unit_price: Decimal::ZERO,
            tags_json,
            memo: Some(memo),
            period_start,
            period_end,
            tflops_units: Decimal::ZERO,
            vram_units: Decimal::ZERO,
            amount: -amount,
            fee: Decimal::ZERO,
            resale_listing: None,
        }
    }
}

/// Writes one line belonging to ledger entry `entry`.
pub async fn insert(
    tx: &mut Tx<'_>,
    line: &NewLine,
    entry: Uuid,
    now: DateTime<Utc>,
) -> Result<(), LedgerError> {
    let lines = [(line.clone(), entry)];
    let mut writes = Writes::new(tx);
    push_inserts(&mut writes, &lines, now);
    writes.execute(tx).await?;
    Ok(())
}

/// Adds multi-row INSERTs of `lines`, each with the ledger entry that moved
/// its money, to `writes`.
pub fn push_inserts<'a>(writes: &mut Writes<'a>, lines: &'a [(NewLine, Uuid)], now: DateTime<Utc>) {
    push_rows!(
        writes,
        "INSERT INTO charges (lease_id, order_id, buyer_id, provider_id, node_id, kind, mode, \
         gpu_model, region, unit, quantity, unit_price, list_unit_price, tags_json, memo, \
         period_start, period_end, tflops_units, vram_units, amount, fee, entry_id, created_at, \
         source, listing_id) ",
        lines,
        |row, (line, entry)| row
            .push_bind(line.lease)
            .push_bind(line.order)
            .push_bind(line.buyer)
            .push_bind(line.provider)
            .push_bind(line.node)
            .push_bind(line.kind.as_str())
            .push_bind(line.mode.map(Text))
            .push_bind(&line.gpu_model)
            .push_bind(&line.region)
            .push_bind(line.unit.map(Text))
            .push_bind(Money(line.quantity))
            .push_bind(Money(line.unit_price))
            .push_bind(Money(line.list_unit_price))
            .push_bind(&line.tags_json)
            .push_bind(&line.memo)
            .push_bind(line.period_start)
            .push_bind(line.period_end)
            .push_bind(Money(line.tflops_units))
            .push_bind(Money(line.vram_units))
            .push_bind(Money(line.amount))
            .push_bind(Money(line.fee))
            .push_bind(*entry)
            .push_bind(now)
            .push_bind(Source::of(line.resale_listing).as_str())
            .push_bind(line.resale_listing)
    );
}

/// A credit to give a buyer.
#[derive(Debug, Clone)]
pub struct Credit {
    pub buyer: Uuid,
    /// The lease it concerns (a node-loss gap), if any.
    pub lease: Option<Uuid>,
    /// Positive: what the buyer gets back.
    pub amount: Decimal,
    /// Why; shown on the invoice and in the export.
    pub reason: String,
    /// The period it concerns.
    pub period_start: i64,
    pub period_end: i64,
    /// The tags it belongs to (a JSON object), so cost by tag nets it.
    pub tags_json: String,
}

/// Gives `credit` back to the buyer's wallet from the platform's revenue and
/// records it as a line of its own. Returns the ledger entry.
pub async fn credit(
    tx: &mut Tx<'_>,
    credit: &Credit,
    actor: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<Uuid, LedgerError> {
    if credit.amount <= Decimal::ZERO {
        return Err(LedgerError::NonPositive);
    }
    let entry = Entry {
        kind: "billing_credit",
        memo: credit.reason.clone(),
        actor,
        reference: credit.lease.map(|l| format!("lease:{l}")),
        postings: vec![
            (Account::PlatformRevenue, -credit.amount),
            (Account::Wallet(credit.buyer), credit.amount),
        ],
    };
    let entry_id = ledger::post(tx, &entry, now).await?;
    let line = NewLine::credit(
        credit.buyer,
        credit.lease,
        credit.tags_json.clone(),
        credit.reason.clone(),
        (credit.period_start, credit.period_end),
        credit.amount,
    );
    insert(tx, &line, entry_id, now).await?;
    Ok(entry_id)
}

/// A stored line, as billing reads it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ChargeLine {
    pub id: i64,
    pub lease_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
    pub buyer_id: Uuid,
    pub buyer_email: String,
    pub provider_id: Option<Uuid>,
    pub node_id: Option<Uuid>,
    pub kind: String,
    pub mode: Option<String>,
    pub gpu_model: Option<String>,
    pub region: Option<String>,
    pub unit: Option<String>,
    pub quantity: Money,
    pub unit_price: Money,
    pub list_unit_price: Money,
    pub tags_json: String,
    pub memo: Option<String>,
    pub period_start: i64,
    pub period_end: i64,
    /// The units the lease held over the period (zero on credits).
    pub tflops_units: Money,
    pub vram_units: Money,
    pub amount: Money,
    pub fee: Money,
    /// `primary` or `resale` ([`Source`]).
    pub source: String,
    pub listing_id: Option<Uuid>,
}

impl ChargeLine {
    pub fn kind(&self) -> Kind {
        Kind::parse(&self.kind)
    }

    pub fn source(&self) -> Source {
        Source::parse(&self.source)
    }

    pub fn unit(&self) -> Option<Unit> {
        self.unit.as_deref().and_then(|u| u.parse().ok())
    }

    /// The line's tags (an empty map when the stored JSON is not an object of strings).
    pub fn tags(&self) -> std::collections::BTreeMap<String, String> {
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&self.tags_json)
            .map(|m| {
                m.into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (k, v)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Whose lines to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everyone's (admins).
    All,
    Buyer(Uuid),
    Provider(Uuid),
}

/// Lines whose period starts in `[from, to)`, after id `after`, oldest first,
/// at most `limit`: a keyset page, so readers of any size keep memory flat.
///
/// Each page walks an index in id order (the primary key, or
/// `(buyer_id, id)` / `(provider_id, id)`) and filters the period on the way
/// (`+period_start` keeps planners off period indexes, which would sort every
/// matching line for every page).
pub async fn page(
    db: &Db,
    scope: Scope,
    from: i64,
    to: i64,
    after: i64,
    limit: i64,
) -> anyhow::Result<Vec<ChargeLine>> {
    const COLUMNS: &str = "SELECT c.id, c.lease_id, c.order_id, c.buyer_id, u.email AS buyer_email, \
        c.provider_id, c.node_id, c.kind, c.mode, c.gpu_model, c.region, c.unit, c.quantity, \
        c.unit_price, c.list_unit_price, c.tags_json, c.memo, c.period_start, c.period_end, \
        c.tflops_units, c.vram_units, c.amount, c.fee, c.source, c.listing_id FROM charges c JOIN users u ON u.id = c.buyer_id";
    let (filter, party) = match scope {
        Scope::All => ("", None),
        Scope::Buyer(b) => ("c.buyer_id = $5 AND ", Some(b)),
        Scope::Provider(p) => ("c.provider_id = $5 AND ", Some(p)),
    };
    let sql = format!(
        "{COLUMNS} WHERE {filter}c.id > $1 AND +c.period_start >= $2 AND +c.period_start < $3 \
         ORDER BY c.id LIMIT $4"
    );
    let rows: Vec<ChargeLine> = dispatch!(db, pool => {
        let q = sqlx::query_as(&sql).bind(after).bind(from).bind(to).bind(limit);
        match party {
            Some(id) => q.bind(id),
            None => q,
        }
        .fetch_all(pool)
        .await
    })
    .context("failed to read charge lines")?;
    Ok(rows)
}

/// Page size for readers that walk every line.
pub const PAGE: i64 = 2000;

/// Calls `f` on every line in scope whose period starts in `[from, to)`, a page at a time.
pub async fn for_each(
    db: &Db,
    scope: Scope,
    from: i64,
    to: i64,
    mut f: impl FnMut(&ChargeLine),
) -> anyhow::Result<()> {
    let mut after = 0;
    loop {
        let rows = page(db, scope, from, to, after, PAGE).await?;
        for row in &rows {
            f(row);
        }
        match rows.last() {
            Some(last) if rows.len() as i64 == PAGE => after = last.id,
            _ => return Ok(()),
        }
    }
}

/// What the ledger moved for a buyer's lines whose period starts in
/// `[from, to)`: captures out of the buyer's holds less credits into the
/// wallet. An invoice's or export's total must equal it.
pub async fn ledger_total(db: &Db, buyer: Uuid, from: i64, to: i64) -> anyhow::Result<Decimal> {
    let rows: Vec<Money> = dispatch!(db, pool => {
        sqlx::query_scalar(
            "SELECT p.amount FROM postings p WHERE p.account IN ($1, $2) AND p.entry_id IN \
             (SELECT entry_id FROM charges WHERE buyer_id = $3 AND period_start >= $4 AND period_start < $5)",
        )
        .bind(Account::Holds(buyer))
        .bind(Account::Wallet(buyer))
        .bind(buyer)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await
    })
    .context("failed to read the ledger")?;
    Ok(-rows.into_iter().map(|m| m.0).sum::<Decimal>())
}
