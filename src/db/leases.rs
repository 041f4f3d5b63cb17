//! The `leases` table: what a row keeps of its lease, and every statement
//! that writes it (ARCHITECTURE.md §20, "one writer"). The market's writer, billing
//! and the node side each change a few columns; they all come through here,
//! so what a lease row can become is read in one file.
//!
//! A row's `record_json` is a [`LeaseRecord`], storage's own type: the terms
//! the views, billing and the agents read. The engine's state is not kept in
//! the rows: the journal and its snapshots are the engine's storage. Rows
//! written before the journal hold the engine's whole lease in the same
//! column (it was `engine_json`), a superset that reads as a record too, and
//! that the first start of such a database reads to keep its first snapshot.

use super::Text;
use super::{execute_tx, push_rows, Db, Money, Tx, Writes};
use crate::engine::placement::{GpuSlot, PartitionMode, UnitPrices, Units};
use crate::engine::pricing::PriceRule;
use crate::engine::types::{Mode, Ts};
use crate::engine::{Conversion, Lease, LeaseState, ResaleSource, ReservedWindow};
use anyhow::Context;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A lease's terms as its row keeps them. Field names are the engine's, so a
/// row from before the journal (the engine's lease) reads as one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaseRecord {
    pub order_id: Uuid,
    pub node: Uuid,
    pub mode: Mode,
    pub model: String,
    pub region: String,
    pub placement: PlacementRecord,
    /// Price per unit-hour charged for each unit.
    pub unit_prices: UnitPrices,
    /// The rule that set the price: contracted = its multiplier × list.
    pub rule: PriceRule,
    pub starts_at: Ts,
    pub ends_at: Option<Ts>,
    #[serde(default)]
    pub ready_at: Option<Ts>,
    #[serde(default)]
    pub preempt_at: Option<Ts>,
    #[serde(default)]
    pub rebalance_at: Option<Ts>,
    #[serde(default)]
    pub vacate_at: Option<Ts>,
    /// Bought on resale: the listing it came from and whom it pays.
    #[serde(default)]
    pub resale: Option<ResaleSource>,
    /// Mode conversions so far, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversions: Vec<Conversion>,
    /// An on-demand lease converted to reserved: the window it turns into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converts_to_reserved: Option<ReservedWindow>,
}

/// Where a lease sits and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementRecord {
    pub mode: PartitionMode,
    pub gpus: Vec<GpuSlot>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    /// Units held (charged).
    pub units: Units,
    /// Units asked (a shared slice holds exactly these).
    pub asked: Units,
}

impl LeaseRecord {
    pub fn of(lease: &Lease) -> LeaseRecord {
        let placement = &lease.placement;
        LeaseRecord {
            order_id: lease.order_id,
            node: lease.node,
            mode: lease.mode,
            model: lease.model.clone(),
            region: lease.region.clone(),
            placement: PlacementRecord {
                mode: placement.mode,
                gpus: placement.gpus.clone(),
                cpu_milli: placement.cpu_milli,
                memory_mib: placement.memory_mib,
                units: placement.units,
                asked: placement.asked,
            },
            unit_prices: lease.unit_prices,
            rule: lease.rule,
            starts_at: lease.starts_at,
            ends_at: lease.ends_at,
            ready_at: lease.ready_at,
            preempt_at: lease.preempt_at,
            rebalance_at: lease.rebalance_at,
            vacate_at: lease.vacate_at,
            resale: lease.resale.clone(),
            conversions: lease.conversions.clone(),
            converts_to_reserved: lease.converts_to_reserved,
        }
    }

    /// A row's `record_json`; an unreadable one is an error, never skipped.
    pub fn parse(json: &str) -> anyhow::Result<LeaseRecord> {
        serde_json::from_str(json).context("corrupt lease record")
    }

    pub fn to_json(lease: &Lease) -> serde_json::Result<String> {
        serde_json::to_string(&LeaseRecord::of(lease))
    }
}

/// A lease row created in a batch: the engine's lease (as of the batch's
/// end) and what only the row keeps.
pub struct NewLease {
    pub lease: Lease,
    pub hold_id: Option<Uuid>,
    pub billed_until: Option<Ts>,
    pub running_at: Option<Ts>,
    /// `lease`'s record, serialized once, just before the row is written.
    pub record_json: String,
}

impl NewLease {
    pub fn serialize_record(&mut self) -> serde_json::Result<()> {
        self.record_json = LeaseRecord::to_json(&self.lease)?;
        Ok(())
    }
}

/// Adds the INSERTs of `rows` to `writes`.
pub fn push_inserts<'a>(writes: &mut Writes<'a>, rows: &'a [NewLease], now: DateTime<Utc>) {
    push_rows!(
        writes,
        "INSERT INTO leases (id, order_id, buyer_id, node_id, mode, state, gpu_model, \
         region, price_per_hour, hold_id, billed_until, starts_at, ends_at, running_at, \
         record_json, created_at, updated_at) ",
        rows,
        |row, new| row
            .push_bind(new.lease.id)
            .push_bind(new.lease.order_id)
            .push_bind(new.lease.buyer)
            .push_bind(new.lease.node)
            .push_bind(Text(new.lease.mode))
            .push_bind(Text(new.lease.state))
            .push_bind(&new.lease.model)
            .push_bind(&new.lease.region)
            .push_bind(Money(new.lease.price_per_hour))
            .push_bind(new.hold_id)
            .push_bind(new.billed_until)
            .push_bind(new.lease.starts_at)
            .push_bind(new.lease.ends_at)
            .push_bind(new.running_at)
            .push_bind(&new.record_json)
            .push_bind(now)
            .push_bind(now)
    );
}

/// The engine's view of a live lease: its state, terms, price and end. An
/// ended row keeps how it ended.
pub async fn store(tx: &mut Tx<'_>, lease: &Lease, now: DateTime<Utc>) -> anyhow::Result<()> {
    let record = LeaseRecord::to_json(lease)?;
    execute_tx!(
        tx,
        "UPDATE leases SET state = $1, record_json = $2, price_per_hour = $3, \
         ends_at = $4, updated_at = $5 WHERE id = $6 AND state NOT IN ('ended', 'failed')",
        Text(lease.state),
        record,
        Money(lease.price_per_hour),
        lease.ends_at,
        now,
        lease.id,
    )?;
    Ok(())
}

/// The lease started running at `at`: billing starts there, once.
pub async fn mark_running(tx: &mut Tx<'_>, lease: Uuid, at: Ts) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE leases SET running_at = COALESCE(running_at, $1), \
         billed_until = COALESCE(billed_until, $1) WHERE id = $2",
        at,
        lease,
    )?;
    Ok(())
}

pub async fn set_price(
    tx: &mut Tx<'_>,
    lease: Uuid,
    price_per_hour: Decimal,
) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE leases SET price_per_hour = $1 WHERE id = $2",
        Money(price_per_hour),
        lease,
    )?;
    Ok(())
}

/// The lease ended at `at` for `reason` (its wire name).
pub async fn end(
    tx: &mut Tx<'_>,
    lease: Uuid,
    state: LeaseState,
    reason: &str,
    at: Ts,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE leases SET state = $1, end_reason = $2, ended_at = $3, updated_at = $4 WHERE id = $5",
        Text(state),
        reason,
        at,
        now,
        lease,
    )?;
    Ok(())
}

/// Adds the statements that set each lease's `billed_until` (charges reach
/// it) to `writes`, one per [`super::INSERT_CHUNK`] leases.
pub fn push_billed_until<'a>(writes: &mut Writes<'a>, billed: &[(Uuid, Ts)]) {
    push_rows!(
        writes,
        "UPDATE leases SET billed_until = v.column2 FROM (",
        billed,
        |row, (lease, until)| row.push_bind(*lease).push_bind(*until),
        ") AS v WHERE leases.id = v.column1"
    );
}

/// Charges past `until` were reversed: they reach no further than it.
pub async fn cut_billed_until(tx: &mut Tx<'_>, lease: Uuid, until: Ts) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE leases SET billed_until = $1 WHERE id = $2 AND billed_until > $1",
        until,
        lease,
    )?;
    Ok(())
}

/// What the agent reports of a lease: the device it runs on (and the image
/// by ID), its exit code, why it failed. Each committed on its own.
pub enum AgentReported<'a> {
    /// The slice exists: its device, and a container's image by ID.
    Provisioned {
        device: &'a str,
        image_id: Option<&'a str>,
    },
    ExitCode(Option<i32>),
    Failure(&'a str),
}

pub async fn set_reported(db: &Db, lease: Uuid, reported: AgentReported<'_>) -> anyhow::Result<()> {
    let mut tx = db.begin().await?;
    match reported {
        AgentReported::Provisioned { device, image_id } => execute_tx!(
            tx,
            "UPDATE leases SET device = $1, image_id = COALESCE($2, image_id) WHERE id = $3",
            device,
            image_id,
            lease,
        )?,
        AgentReported::ExitCode(code) => execute_tx!(
            tx,
            "UPDATE leases SET exit_code = $1 WHERE id = $2",
            code,
            lease,
        )?,
        AgentReported::Failure(reason) => execute_tx!(
            tx,
            "UPDATE leases SET failure = $1 WHERE id = $2",
            reason,
            lease,
        )?,
    };
    tx.commit().await?;
    Ok(())
}
