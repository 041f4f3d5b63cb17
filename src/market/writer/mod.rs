//! The market's batch writer: what one batch of engine events means for the
//! database, inside the market task's transaction (ARCHITECTURE.md §5).
//!
//! The flow is one-way. The task applies a command to the engine and hands
//! the events here; each event kind has its own function ([`events`]),
//! which buffers new rows ([`rows`]), updates existing ones, and asks
//! billing to settle ([`crate::billing::settle`]). What an event calls for
//! from the engine (a lease whose hold could not be placed, funds that ran
//! out) is kept as a [`Followup`] the batch owes; the task applies it at the
//! start of the next batch, never within this one (ARCHITECTURE.md §20). Orders are admitted ([`admission`]) before they reach
//! the engine. A read of rows the batch may still hold needs a
//! [`crate::db::Flushed`], which only writing the buffer gives.

mod admission;
mod convert;
mod demand;
mod events;
mod listings;
mod rows;

pub use admission::Admission;
pub use demand::DemandCursor;
pub use rows::WrittenOrder;

use crate::billing::settle::BillingSlice;
use crate::db::leases;
use crate::db::{Tx, Writes};
use crate::engine::Engine;
use crate::events::NewEvent;
use crate::market::history::Clearing;
use chrono::{DateTime, Utc};
use demand::DemandLogWrite;
use rows::Rows;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// What billing needs of the market's configuration.
#[derive(Debug, Clone, Copy)]
pub struct BillingTerms {
    pub platform_fee: Decimal,
    /// Seconds of notice a lease gets before its funds run out.
    pub notice_s: i64,
}

/// What a recorded event calls for from the engine, owed to the next batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Followup {
    /// A new lease whose hold the wallet could not cover: it is released.
    Unfunded { lease_id: Uuid },
    /// A charge the hold and the wallet could not pay in full.
    Unpaid { lease_id: Uuid, funded_until: i64 },
    /// A hold running low that the wallet could not top up.
    HoldShort {
        lease_id: Uuid,
        funded_until: Option<i64>,
    },
}

/// The database side of one batch of engine events.
pub struct Batch {
    terms: BillingTerms,
    now: DateTime<Utc>,
    rows: Rows,
    touched_leases: BTreeSet<Uuid>,
    /// Orders whose lease this batch could not fund: rejected, so their
    /// `OrderFilled`, which follows the grant, must not mark them filled.
    unfunded: BTreeSet<Uuid>,
    /// Their leases: released by the next batch, never told to the buyer.
    unfunded_leases: BTreeSet<Uuid>,
    /// The leases this batch granted to orders of several units, by order:
    /// released together when one of them cannot be funded.
    gang_legs: BTreeMap<Uuid, Vec<Uuid>>,
    /// What this batch's events call for, for the next batch to apply.
    owed: Vec<Followup>,
    /// What the batch tells users (ARCHITECTURE.md §15), written with its changes.
    outbox: Vec<NewEvent>,
    /// New orders still in memory at [`Batch::finish`]: their rows exactly as committed.
    written: HashMap<Uuid, WrittenOrder>,
    demand: DemandLogWrite,
    /// The spot clearings of the batch, for market history and the market stream.
    clearings: Vec<Clearing>,
}

impl Batch {
    pub fn new(terms: BillingTerms, now: DateTime<Utc>) -> Self {
        Batch {
            terms,
            now,
            rows: Rows::default(),
            touched_leases: BTreeSet::new(),
            unfunded: BTreeSet::new(),
            unfunded_leases: BTreeSet::new(),
            gang_legs: BTreeMap::new(),
            owed: Vec::new(),
            outbox: Vec::new(),
            written: HashMap::new(),
            demand: DemandLogWrite::default(),
            clearings: Vec::new(),
        }
    }

    /// The leases whose rows this batch wrote.
    pub fn touched_leases(&self) -> impl Iterator<Item = Uuid> + '_ {
        self.touched_leases.iter().copied()
    }

    fn ts(&self) -> i64 {
        self.now.timestamp()
    }

    /// Notes the leases the engine's last command changed, so
    /// [`Batch::finish`] writes their rows.
    pub fn note_changes(&mut self, engine: &Engine) {
        self.touched_leases.extend(engine.changed_leases());
    }

    /// Charges one slice of the running leases up to now (or their node's
    /// last heartbeat) and renews holds running low. Returns where the pass
    /// goes on, or `None` when this slice was its last.
    pub async fn bill_running(
        &mut self,
        tx: &mut Tx<'_>,
        slice: BillingSlice,
    ) -> anyhow::Result<Option<BillingSlice>> {
        use crate::billing::settle;
        let (ts, now, terms) = (self.ts(), self.now, self.terms);
        let mut flushed = self.rows.flush(tx, now).await?;
        let fee = terms.platform_fee;
        let billed =
            settle::bill_running(&mut flushed, ts, slice, fee, terms.notice_s, now).await?;
        for lease in billed.leases {
            if let Some(unpaid) = lease.settled.and_then(|s| unpaid(lease.lease, s)) {
                self.owed.push(unpaid);
            }
            if let Some(short) = lease.short {
                self.owed.push(Followup::HoldShort {
                    lease_id: lease.lease,
                    funded_until: short.funded_until,
                });
            }
        }
        // The flush above left the batch's journal empty; what the slice
        // read and wrote is what this transaction leaves, so later batches
        // need not read those balances again.
        self.rows.journal.remember(billed.balances);
        Ok(billed.rest)
    }

    /// A lease the last batch could not fund, released in this one: its
    /// end is not told, as the buyer never heard of it.
    pub fn releasing_unfunded(&mut self, lease_id: Uuid) {
        self.unfunded_leases.insert(lease_id);
    }

    /// What the batch's events call for, for the next batch to apply first.
    pub fn owed(&self) -> &[Followup] {
        &self.owed
    }

    /// Writes the engine's view of every lease touched in this batch and
    /// prepares the last writes, [`Batch::final_writes`]. Orders keep no
    /// engine state: their rows change with their events.
    pub async fn finish(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &Engine,
        demand: &DemandCursor,
    ) -> anyhow::Result<()> {
        let now = self.now;
        // Kept after: the market's live leases follow what was written.
        for &id in &self.touched_leases {
            let Some(lease) = engine.lease(id) else {
                continue;
            };
            if let Some(row) = self.rows.lease(id) {
                row.lease.clone_from(lease);
                continue;
            }
            leases::store(tx, lease, now).await?;
        }
        self.written.extend(self.rows.written_orders());
        self.rows.serialize_leases()?;
        self.demand = DemandLogWrite::since(engine.demand_mix(), *demand);
        Ok(())
    }

    /// What is left after [`Batch::finish`]: every row still held in memory
    /// and the new demand classes. The caller commits with them
    /// ([`Tx::commit_with`]), so the batch's last statements and its commit
    /// make one trip to the database.
    pub fn final_writes<'a>(&'a self, tx: &Tx<'_>) -> Writes<'a> {
        let mut writes = Writes::new(tx);
        self.rows.push(&mut writes, self.now);
        crate::events::store::push(&mut writes, &self.outbox);
        self.demand.push(&mut writes);
        writes
    }

    /// Adds events that came with a command (a budget's notice) or that
    /// the task decided on (a wallet that ran dry).
    pub fn tell(&mut self, events: impl IntoIterator<Item = NewEvent>) {
        self.outbox.extend(events);
    }

    /// Whether the batch wrote events, so the hub should look.
    pub fn told_anything(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// The batch's spot clearings, in the order they ran.
    pub fn clearings(&self) -> &[Clearing] {
        &self.clearings
    }

    /// The demand log's cursor once [`Batch::final_writes`] is committed.
    pub fn demand_after(&self) -> DemandCursor {
        self.demand.cursor
    }

    /// The new order `id`'s row as committed, unless the batch had to write
    /// it early (then the row must be read back).
    pub fn written_order(&mut self, id: Uuid) -> Option<WrittenOrder> {
        self.written.remove(&id)
    }
}

/// The follow-up an unpaid charge calls for.
fn unpaid(lease_id: Uuid, settled: crate::billing::settle::Settled) -> Option<Followup> {
    settled.unpaid.then_some(Followup::Unpaid {
        lease_id,
        funded_until: settled.funded_until,
    })
}
