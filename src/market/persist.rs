//! What each engine event means for the database: order and lease rows,
//! fills, holds and charges. Runs inside the market task's transaction.

use super::handle::{MarketError, OrderMeta};
use super::task::MarketConfig;
use crate::billing::charges::{self, Chargeable};
use crate::billing::ledger::{self, Journal, LedgerError};
use crate::db::{dispatch_tx, execute_tx, push_rows, push_statement, Money, Tx, Writes};
use crate::engine::placement::{DemandClass, DemandMix};
use crate::engine::{Command, EndReason, Engine, Event, Lease, LeaseState, Mode, PlaceOrder};
use crate::idempotency;
use anyhow::Context;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// Idempotency scope of `POST /v1/orders`.
pub const ORDER_SCOPE: &str = "order";

/// Whether a new order may enter the engine.
pub enum Admission {
    New,
    Refused(MarketError),
}

pub fn mode_str(mode: Mode) -> &'static str {
    match mode {
        Mode::OnDemand => "on_demand",
        Mode::Reserved => "reserved",
        Mode::Spot => "spot",
        Mode::Pooled => "pooled",
    }
}

pub fn state_str(state: LeaseState) -> &'static str {
    match state {
        LeaseState::Pending => "pending",
        LeaseState::Provisioning => "provisioning",
        LeaseState::Running => "running",
        LeaseState::Preempting => "preempting",
        LeaseState::Ended => "ended",
        LeaseState::Failed => "failed",
    }
}

fn json_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// An order row created in this batch, written at [`Batch::flush`].
struct NewOrder {
    id: Uuid,
    buyer: Uuid,
    client_order_id: Option<String>,
    mode: &'static str,
    state: &'static str,
    region: String,
    request_json: String,
    tags_json: String,
    reject_reason: Option<String>,
    reject_message: Option<String>,
    engine_json: Option<String>,
    lease_id: Option<Uuid>,
}

/// A lease row created in this batch, written at [`Batch::flush`]: the
/// engine's lease (as of the batch's end) and what only the row keeps.
struct NewLease {
    lease: Lease,
    hold_id: Option<Uuid>,
    billed_until: Option<i64>,
    running_at: Option<i64>,
    /// `lease` serialized, once, just before the row is written.
    engine_json: String,
}

/// How a new order's row stood when its batch committed.
#[derive(Debug, Clone)]
pub struct WrittenOrder {
    pub state: &'static str,
    pub reject_reason: Option<String>,
    pub reject_message: Option<String>,
    pub lease_id: Option<Uuid>,
}

struct NewFill {
    order_id: Uuid,
    lease_id: Uuid,
    report_json: String,
}

/// What of the engine's demand mix the `demand_log` table already holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct DemandCursor {
    /// The mix's [`DemandMix::recorded`] count as last stored.
    pub persisted: u64,
    pub next_seq: i64,
}

/// The `demand_log` rows a batch appends, and the cursor after them.
#[derive(Debug, Default)]
struct DemandLogWrite {
    rows: Vec<(i64, DemandClass)>,
    trim_before: Option<i64>,
    cursor: DemandCursor,
}

/// The database side of one batch of engine events.
///
/// Placing an order is the hot path: its order, lease, fill and hold rows
/// stay in memory and the whole batch writes them in a handful of multi-row
/// statements, instead of some twenty statements per order. Anything that
/// must read rows back (billing, ending a lease) flushes first, so reads
/// always see every earlier write of the batch.
pub struct Batch<'c> {
    config: &'c MarketConfig,
    now: DateTime<Utc>,
    touched_leases: BTreeSet<Uuid>,
    touched_orders: BTreeSet<Uuid>,
    new_orders: Vec<NewOrder>,
    order_at: HashMap<Uuid, usize>,
    new_leases: Vec<NewLease>,
    lease_at: HashMap<Uuid, usize>,
    new_fills: Vec<NewFill>,
    /// Orders whose lease this batch could not fund: rejected, so their
    /// `OrderFilled`, which follows the grant, must not mark them filled.
    unfunded: BTreeSet<Uuid>,
    journal: Journal,
    /// New orders still in memory at [`Batch::finish`]: their rows exactly as committed.
    written: HashMap<Uuid, WrittenOrder>,
    /// Set by [`Batch::finish`] for [`Batch::final_writes`].
    meta_json: String,
    demand: DemandLogWrite,
}

impl<'c> Batch<'c> {
    pub fn new(config: &'c MarketConfig, now: DateTime<Utc>) -> Self {
        Batch {
            config,
            now,
            touched_leases: BTreeSet::new(),
            touched_orders: BTreeSet::new(),
            new_orders: Vec::new(),
            order_at: HashMap::new(),
            new_leases: Vec::new(),
            lease_at: HashMap::new(),
            new_fills: Vec::new(),
            unfunded: BTreeSet::new(),
            journal: Journal::default(),
            written: HashMap::new(),
            meta_json: String::new(),
            demand: DemandLogWrite::default(),
        }
    }

    fn new_order(&mut self, id: Uuid) -> Option<&mut NewOrder> {
        self.order_at.get(&id).map(|&i| &mut self.new_orders[i])
    }

    fn new_lease(&mut self, id: Uuid) -> Option<&mut NewLease> {
        self.lease_at.get(&id).map(|&i| &mut self.new_leases[i])
    }

    /// Checks the order's `Idempotency-Key` and `client_order_id`, then
    /// records the order row (state `open`) and stores the key, so a retry
    /// finds them.
    pub async fn admit(
        &mut self,
        tx: &mut Tx<'_>,
        place: &PlaceOrder,
        meta: Option<&OrderMeta>,
    ) -> anyhow::Result<Admission> {
        let Some(meta) = meta else {
            anyhow::bail!("an order reached the market without its request");
        };
        if let Some(key) = &meta.idempotency {
            match idempotency::lookup(tx, place.buyer, ORDER_SCOPE, key).await {
                Ok(Some(stored)) => {
                    let id = stored.body["order_id"]
                        .as_str()
                        .and_then(|s| s.parse().ok());
                    return Ok(Admission::Refused(match id {
                        Some(id) => MarketError::AlreadyPlaced(id),
                        None => {
                            MarketError::Storage(anyhow::anyhow!("malformed idempotency record"))
                        }
                    }));
                }
                Ok(None) => {}
                Err(crate::error::ApiError::Internal(e)) => return Err(e),
                Err(e) => {
                    return Ok(Admission::Refused(MarketError::Conflict {
                        status: 422,
                        code: "idempotency_key_reused",
                        detail: e.to_problem().detail,
                    }))
                }
            }
        }
        if let Some(client_id) = &meta.client_order_id {
            let in_batch = self
                .new_orders
                .iter()
                .find(|o| o.buyer == place.buyer && o.client_order_id.as_ref() == Some(client_id))
                .map(|o| o.id);
            let existing = match in_batch {
                Some(id) => Some(id),
                None => dispatch_tx!(tx, conn => {
                    sqlx::query_scalar(
                        "SELECT id FROM orders WHERE buyer_id = $1 AND client_order_id = $2",
                    )
                    .bind(place.buyer)
                    .bind(client_id)
                    .fetch_optional(conn)
                    .await
                })?,
            };
            if let Some(existing) = existing {
                return Ok(Admission::Refused(MarketError::Conflict {
                    status: 409,
                    code: "duplicate_client_order_id",
                    detail: format!("client_order_id `{client_id}` is already order {existing}"),
                }));
            }
        }
        self.order_at.insert(place.order_id, self.new_orders.len());
        self.new_orders.push(NewOrder {
            id: place.order_id,
            buyer: place.buyer,
            client_order_id: meta.client_order_id.clone(),
            mode: mode_str(place.spec.mode),
            state: "open",
            region: meta.region.clone(),
            request_json: meta.request_json.clone(),
            tags_json: meta.tags_json.clone(),
            reject_reason: None,
            reject_message: None,
            engine_json: None,
            lease_id: None,
        });
        if let Some(key) = &meta.idempotency {
            let body = serde_json::json!({ "order_id": place.order_id });
            idempotency::store(
                tx,
                place.buyer,
                ORDER_SCOPE,
                key,
                axum::http::StatusCode::CREATED,
                &body,
                self.now,
            )
            .await
            .map_err(|e| anyhow::anyhow!("failed to store the idempotency key: {e}"))?;
        }
        Ok(Admission::New)
    }

    /// The buyer's spendable money, as this batch leaves it.
    pub async fn available_funds(
        &mut self,
        tx: &mut Tx<'_>,
        buyer: Uuid,
    ) -> anyhow::Result<Decimal> {
        let wallet = ledger::wallet(buyer);
        // A hold moves money to the buyer's holds account: read both at once.
        match self
            .journal
            .load(tx, &[&wallet, &ledger::holds(buyer)])
            .await
        {
            Ok(()) | Err(LedgerError::UnknownAccount(_)) => {}
            Err(e) => return Err(anyhow::anyhow!(e)),
        }
        match self.journal.balance(tx, &wallet).await {
            Ok(balance) => Ok(balance),
            Err(LedgerError::UnknownAccount(_)) => Ok(Decimal::ZERO),
            Err(e) => Err(anyhow::anyhow!(e)),
        }
    }

    /// Starts from the balances an earlier batch left, when nothing has
    /// written since (see [`Journal::remember`]).
    pub fn remember_balances(&mut self, balances: BTreeMap<String, Decimal>) {
        self.journal.remember(balances);
    }

    /// The balances this batch leaves, once committed.
    pub fn take_balances(&mut self) -> BTreeMap<String, Decimal> {
        self.journal.take_balances()
    }

    /// The new order `id`'s row as committed, unless the batch had to write
    /// it early (then the row must be read back).
    pub fn written_order(&mut self, id: Uuid) -> Option<WrittenOrder> {
        self.written.remove(&id)
    }

    /// Writes every row this batch holds in memory, so reads see them.
    pub async fn flush(&mut self, tx: &mut Tx<'_>) -> anyhow::Result<()> {
        self.serialize_leases()?;
        let mut writes = Writes::new(tx);
        self.push_rows(&mut writes);
        writes
            .execute(tx)
            .await
            .context("failed to write the batch's rows")?;
        self.clear_rows();
        Ok(())
    }

    /// Serializes each new lease's engine state, once, for its row.
    fn serialize_leases(&mut self) -> serde_json::Result<()> {
        for new in &mut self.new_leases {
            new.engine_json = serde_json::to_string(&new.lease)?;
        }
        Ok(())
    }

    /// Adds the INSERTs of every row held in memory to `writes`.
    fn push_rows<'a>(&'a self, writes: &mut Writes<'a>) {
        let now = self.now;
        push_rows!(
            writes,
            "INSERT INTO orders (id, buyer_id, client_order_id, mode, state, region, \
             reject_reason, reject_message, request_json, engine_json, tags_json, lease_id, \
             created_at, updated_at) ",
            self.new_orders,
            |row, o| row
                .push_bind(o.id)
                .push_bind(o.buyer)
                .push_bind(&o.client_order_id)
                .push_bind(o.mode)
                .push_bind(o.state)
                .push_bind(&o.region)
                .push_bind(&o.reject_reason)
                .push_bind(&o.reject_message)
                .push_bind(&o.request_json)
                .push_bind(&o.engine_json)
                .push_bind(&o.tags_json)
                .push_bind(o.lease_id)
                .push_bind(now)
                .push_bind(now)
        );
        push_rows!(
            writes,
            "INSERT INTO leases (id, order_id, buyer_id, node_id, mode, state, gpu_model, \
             region, price_per_hour, hold_id, billed_until, starts_at, ends_at, running_at, \
             engine_json, created_at, updated_at) ",
            self.new_leases,
            |row, new| row
                .push_bind(new.lease.id)
                .push_bind(new.lease.order_id)
                .push_bind(new.lease.buyer)
                .push_bind(new.lease.node)
                .push_bind(mode_str(new.lease.mode))
                .push_bind(state_str(new.lease.state))
                .push_bind(&new.lease.model)
                .push_bind(&new.lease.region)
                .push_bind(Money(new.lease.price_per_hour))
                .push_bind(new.hold_id)
                .push_bind(new.billed_until)
                .push_bind(new.lease.starts_at)
                .push_bind(new.lease.ends_at)
                .push_bind(new.running_at)
                .push_bind(&new.engine_json)
                .push_bind(now)
                .push_bind(now)
        );
        self.journal.push_writes(writes);
        push_rows!(
            writes,
            "INSERT INTO fills (order_id, lease_id, report_json, created_at) ",
            self.new_fills,
            |row, f| row
                .push_bind(f.order_id)
                .push_bind(f.lease_id)
                .push_bind(&f.report_json)
                .push_bind(now),
            " ON CONFLICT (order_id, lease_id) DO NOTHING"
        );
    }

    /// What is left after [`Batch::finish`]: every row still held in memory,
    /// the new demand classes and the engine's meta. The caller commits
    /// with them ([`Tx::commit_with`]), so the batch's last statements and
    /// its commit make one trip to the database.
    pub fn final_writes<'a>(&'a self, tx: &Tx<'_>) -> Writes<'a> {
        let mut writes = Writes::new(tx);
        self.push_rows(&mut writes);
        let demand = &self.demand;
        push_rows!(
            &mut writes,
            "INSERT INTO demand_log (seq, milli, memory_mb, gpus, cpu_milli) ",
            demand.rows,
            |row, (seq, c)| row
                .push_bind(*seq)
                .push_bind(i64::from(c.milli))
                .push_bind(i64::try_from(c.memory_mb).unwrap_or(i64::MAX))
                .push_bind(i64::from(c.gpus))
                .push_bind(i64::try_from(c.cpu_milli).unwrap_or(i64::MAX))
        );
        if let Some(before) = demand.trim_before {
            push_statement!(&mut writes, |delete| delete
                .push("DELETE FROM demand_log WHERE seq < ")
                .push_bind(before));
        }
        push_statement!(&mut writes, |upsert| upsert
            .push("INSERT INTO engine_meta (id, state_json) VALUES (1, ")
            .push_bind(&self.meta_json)
            .push(
                ") ON CONFLICT (id) DO UPDATE SET state_json = excluded.state_json"
            ));
        writes
    }

    /// The demand log's cursor once [`Batch::final_writes`] is committed.
    pub fn demand_after(&self) -> DemandCursor {
        self.demand.cursor
    }

    /// Forgets the rows [`Batch::push_rows`] wrote.
    fn clear_rows(&mut self) {
        self.new_orders.clear();
        self.order_at.clear();
        self.new_leases.clear();
        self.lease_at.clear();
        self.new_fills.clear();
        self.journal.clear();
    }

    fn ts(&self) -> i64 {
        self.now.timestamp()
    }

    /// Persists `events`, then applies and persists any command they call for
    /// (a hold that could not be placed releases its lease).
    pub async fn apply(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &mut Engine,
        events: Vec<Event>,
        _meta: Option<&OrderMeta>,
    ) -> anyhow::Result<()> {
        // The rows the engine says the last command changed.
        self.touched_leases.extend(engine.changed_leases());
        self.touched_orders.extend(engine.changed_orders());
        let mut queue = events;
        let mut rounds = 0;
        while !queue.is_empty() {
            let mut followups = Vec::new();
            for event in queue {
                self.event(tx, engine, event, &mut followups).await?;
            }
            queue = Vec::new();
            for command in followups {
                match engine.apply(self.ts(), command) {
                    Ok(events) => queue.extend(events),
                    Err(e) => tracing::warn!(error = %e, "follow-up command refused"),
                }
                self.touched_leases.extend(engine.changed_leases());
                self.touched_orders.extend(engine.changed_orders());
            }
            rounds += 1;
            anyhow::ensure!(rounds < 16, "follow-up commands did not settle");
        }
        Ok(())
    }

    async fn event(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &Engine,
        event: Event,
        followups: &mut Vec<Command>,
    ) -> anyhow::Result<()> {
        let now = self.now;
        match event {
            Event::OrderAccepted { order_id, .. } => self.touched_orders.insert(order_id),
            Event::OrderRejected {
                order_id,
                reason,
                message,
                ..
            } => {
                self.reject_order(tx, order_id, json_name(&reason), message)
                    .await?;
                self.touched_orders.insert(order_id)
            }
            Event::OrderFilled {
                order_id,
                lease_id,
                report,
                ..
            } => {
                if self.unfunded.contains(&order_id) {
                    return Ok(());
                }
                let report_json = serde_json::to_string(&report)?;
                match self.new_order(order_id) {
                    Some(order) => {
                        order.state = "filled";
                        order.lease_id = Some(lease_id);
                    }
                    None => {
                        execute_tx!(
                            tx,
                            "UPDATE orders SET state = 'filled', lease_id = $1, updated_at = $2 WHERE id = $3",
                            lease_id,
                            now,
                            order_id,
                        )?;
                    }
                }
                self.new_fills.push(NewFill {
                    order_id,
                    lease_id,
                    report_json,
                });
                self.touched_orders.insert(order_id)
            }
            Event::OrderCancelled { order_id, .. } => {
                self.set_order_state(tx, order_id, "cancelled").await?;
                self.touched_orders.insert(order_id)
            }
            Event::OrderExpired { order_id, .. } => {
                self.set_order_state(tx, order_id, "expired").await?;
                self.touched_orders.insert(order_id)
            }
            Event::OrderRequeued { order_id, .. } => {
                self.set_order_state(tx, order_id, "open").await?;
                self.touched_orders.insert(order_id)
            }
            Event::LeaseGranted { lease, .. } => {
                let id = lease.id;
                self.grant(tx, *lease, followups).await?;
                self.touched_leases.insert(id)
            }
            Event::LeaseStateChanged {
                lease_id, to, at, ..
            } => {
                if to == LeaseState::Running {
                    match self.new_lease(lease_id) {
                        Some(lease) => {
                            lease.running_at = lease.running_at.or(Some(at));
                            lease.billed_until = lease.billed_until.or(Some(at));
                        }
                        None => {
                            execute_tx!(
                                tx,
                                "UPDATE leases SET running_at = COALESCE(running_at, $1), \
                                 billed_until = COALESCE(billed_until, $1) WHERE id = $2",
                                at,
                                lease_id,
                            )?;
                        }
                    }
                }
                self.touched_leases.insert(lease_id)
            }
            Event::PreemptNotice { lease_id, .. }
            | Event::PreemptScheduled { lease_id, .. }
            | Event::RebalanceWarning { lease_id, .. } => self.touched_leases.insert(lease_id),
            Event::LeaseRepriced {
                lease_id,
                price_per_hour,
                ..
            } => {
                // Seconds before the new price are owed at the old one.
                self.bill_lease(tx, lease_id, self.ts(), followups, engine)
                    .await?;
                execute_tx!(
                    tx,
                    "UPDATE leases SET price_per_hour = $1 WHERE id = $2",
                    Money(price_per_hour),
                    lease_id,
                )?;
                self.touched_leases.insert(lease_id)
            }
            Event::LeaseEnded {
                lease_id,
                reason,
                at,
            } => {
                self.end(tx, engine, lease_id, reason, at, followups)
                    .await?;
                self.touched_leases.insert(lease_id)
            }
            Event::PriceChanged {
                gpu_model,
                region,
                clearing_index,
                ..
            } => {
                execute_tx!(
            tx,
            "INSERT INTO spot_clearing (gpu_model, region, clearing_index, updated_at) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT (gpu_model, region) DO UPDATE SET \
                         clearing_index = excluded.clearing_index, updated_at = excluded.updated_at",
            &gpu_model,
            &region,
            Money(clearing_index),
            now,
        )?;
                true
            }
        };
        Ok(())
    }

    async fn set_order_state(
        &mut self,
        tx: &mut Tx<'_>,
        order: Uuid,
        state: &'static str,
    ) -> anyhow::Result<()> {
        if let Some(row) = self.new_order(order) {
            row.state = state;
            return Ok(());
        }
        execute_tx!(
            tx,
            "UPDATE orders SET state = $1, updated_at = $2 WHERE id = $3",
            state,
            self.now,
            order,
        )?;
        Ok(())
    }

    async fn reject_order(
        &mut self,
        tx: &mut Tx<'_>,
        order: Uuid,
        reason: String,
        message: String,
    ) -> anyhow::Result<()> {
        if let Some(row) = self.new_order(order) {
            row.state = "rejected";
            row.reject_reason = Some(reason);
            row.reject_message = Some(message);
            return Ok(());
        }
        execute_tx!(
            tx,
            "UPDATE orders SET state = 'rejected', reject_reason = $1, reject_message = $2, \
             updated_at = $3 WHERE id = $4",
            reason,
            message,
            self.now,
            order,
        )?;
        Ok(())
    }

    /// A new lease: its row and its hold. A hold the wallet cannot cover
    /// releases the lease at once.
    async fn grant(
        &mut self,
        tx: &mut Tx<'_>,
        lease: Lease,
        followups: &mut Vec<Command>,
    ) -> anyhow::Result<()> {
        let now = self.now;
        // Reserved windows are owed from their start, whatever the agent does.
        let billed_until = (lease.mode == Mode::Reserved).then_some(lease.starts_at);
        let (id, order_id, buyer, hold) = (lease.id, lease.order_id, lease.buyer, lease.hold);
        self.lease_at.insert(id, self.new_leases.len());
        self.new_leases.push(NewLease {
            lease,
            hold_id: None,
            billed_until,
            running_at: None,
            engine_json: String::new(),
        });
        if hold <= Decimal::ZERO {
            return Ok(());
        }
        match self
            .journal
            .place_hold(tx, buyer, hold, &format!("lease:{id}"), now)
            .await
        {
            Ok(hold) => {
                if let Some(row) = self.new_lease(id) {
                    row.hold_id = Some(hold);
                }
            }
            Err(LedgerError::InsufficientFunds(_)) => {
                followups.push(Command::Release { lease_id: id });
                self.unfunded.insert(order_id);
                self.reject_order(
                    tx,
                    order_id,
                    "insufficient_funds".into(),
                    "the wallet could not cover the lease's hold when capacity freed".into(),
                )
                .await?;
            }
            Err(e) => return Err(anyhow::anyhow!(e)),
        }
        Ok(())
    }

    /// Charges a lease up to `until` (capped at its window's end).
    async fn bill_lease(
        &mut self,
        tx: &mut Tx<'_>,
        lease_id: Uuid,
        until: i64,
        followups: &mut Vec<Command>,
        engine: &Engine,
    ) -> anyhow::Result<()> {
        self.flush(tx).await?;
        let Some(row) = chargeable(tx, lease_id).await? else {
            return Ok(());
        };
        let Some(from) = row.billed_until else {
            return Ok(());
        };
        let until = row.ends_at.map_or(until, |e| until.min(e));
        if until <= from {
            return Ok(());
        }
        let outcome = charges::charge(
            tx,
            &row.charge,
            from,
            until,
            self.config.platform_fee,
            self.now,
        )
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
        set_billed_until(tx, lease_id, outcome.billed_until).await?;
        if outcome.unpaid {
            let noticed = engine
                .lease(lease_id)
                .is_some_and(|l| l.state == LeaseState::Preempting || l.notice_reason.is_some());
            if !noticed {
                followups.push(Command::FundsExhausted {
                    lease_id,
                    funded_until: Some(outcome.billed_until),
                });
            }
        }
        Ok(())
    }

    async fn end(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &Engine,
        lease_id: Uuid,
        reason: EndReason,
        at: i64,
        followups: &mut Vec<Command>,
    ) -> anyhow::Result<()> {
        self.flush(tx).await?;
        let row = chargeable(tx, lease_id).await?;
        if let Some(row) = &row {
            let owed_until = match (row.mode, reason) {
                // A reserved window is owed whole unless the provider lost it
                // or the buyer's funds ended it.
                (
                    Mode::Reserved,
                    EndReason::Released | EndReason::AgentEnded | EndReason::OrderCancelled,
                ) => row.ends_at.unwrap_or(at).max(at),
                (_, EndReason::NodeLost) => {
                    last_heartbeat(tx, row.node).await?.unwrap_or(at).min(at)
                }
                _ => at,
            };
            self.bill_lease(tx, lease_id, owed_until, followups, engine)
                .await?;
            if reason == EndReason::NodeLost {
                self.credit_node_loss_gap(tx, row, owed_until).await?;
            }
            if let Some(hold) = row.charge_hold() {
                match ledger::release(tx, hold, self.now).await {
                    Ok(_) | Err(LedgerError::UnknownHold(_)) => {}
                    Err(e) => return Err(anyhow::anyhow!(e)),
                }
            }
        }
        let state = if reason == EndReason::AgentFailed {
            "failed"
        } else {
            "ended"
        };
        execute_tx!(
            tx,
            "UPDATE leases SET state = $1, end_reason = $2, ended_at = $3, updated_at = $4 WHERE id = $5",
            state,
            json_name(&reason),
            at,
            self.now,
            lease_id,
        )?;
        Ok(())
    }

    /// A lost node's lease may have been charged past its last heartbeat (the
    /// billing pass ran before the loss was detected): that gap goes back to
    /// the buyer as a credit line of its own (DESIGN §7).
    async fn credit_node_loss_gap(
        &mut self,
        tx: &mut Tx<'_>,
        row: &ChargeRow,
        last_heartbeat: i64,
    ) -> anyhow::Result<()> {
        let Some(billed_until) = row.billed_until.filter(|b| *b > last_heartbeat) else {
            return Ok(());
        };
        let seconds = Decimal::from(billed_until - last_heartbeat);
        let amount =
            crate::pricing::round_money(row.charge.price_per_hour * seconds / Decimal::from(3600));
        if amount <= Decimal::ZERO {
            return Ok(());
        }
        let tags: Option<String> = dispatch_tx!(tx, conn => {
            sqlx::query_scalar(
                "SELECT o.tags_json FROM leases l JOIN orders o ON o.id = l.order_id WHERE l.id = $1",
            )
            .bind(row.charge.lease)
            .fetch_optional(conn)
            .await
        })?;
        let credit = crate::billing::lines::Credit {
            buyer: row.charge.buyer,
            lease: Some(row.charge.lease),
            amount,
            reason: format!(
                "node lost: {} s charged after its last heartbeat",
                billed_until - last_heartbeat
            ),
            period_start: last_heartbeat,
            period_end: billed_until,
            tags_json: tags.unwrap_or_else(|| "{}".into()),
        };
        crate::billing::lines::credit(tx, &credit, None, self.now)
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        Ok(())
    }

    /// Charges every running lease up to now, or up to its node's last
    /// heartbeat when that is older, and renews holds running low. DESIGN §7:
    /// charges stop at a lost node's last heartbeat, and a node is lost only
    /// a timeout after it fell silent, so the seconds since are never charged
    /// ahead: they are charged once the next heartbeat shows the node alive.
    pub async fn bill_running(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &mut Engine,
    ) -> anyhow::Result<()> {
        let ts = self.ts();
        self.flush(tx).await?;
        let rows: Vec<(Uuid, Option<DateTime<Utc>>)> = dispatch_tx!(tx, conn => {
            sqlx::query_as(
                "SELECT l.id, n.last_heartbeat_at FROM leases l JOIN nodes n ON n.id = l.node_id \
                 WHERE l.state IN ('provisioning', 'running', 'preempting', 'pending') \
                 AND l.billed_until IS NOT NULL AND l.billed_until < $1",
            )
            .bind(ts)
            .fetch_all(conn)
            .await
        })?;
        let mut followups = Vec::new();
        for (id, last_heartbeat) in rows {
            let until = last_heartbeat.map_or(ts, |hb| hb.timestamp().min(ts));
            self.bill_lease(tx, id, until, &mut followups, engine)
                .await?;
            self.renew_hold(tx, engine, id, &mut followups).await?;
        }
        let mut events = Vec::new();
        for command in followups {
            match engine.apply(ts, command) {
                Ok(e) => events.extend(e),
                Err(e) => tracing::warn!(error = %e, "funds notice refused"),
            }
            self.touched_leases.extend(engine.changed_leases());
            self.touched_orders.extend(engine.changed_orders());
        }
        self.apply(tx, engine, events, None).await
    }

    /// Tops a hold up when it covers less than the notice period plus a margin.
    async fn renew_hold(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &Engine,
        lease_id: Uuid,
        followups: &mut Vec<Command>,
    ) -> anyhow::Result<()> {
        self.flush(tx).await?;
        let Some(row) = chargeable(tx, lease_id).await? else {
            return Ok(());
        };
        let Some(hold) = row.charge_hold() else {
            return Ok(());
        };
        let price = row.charge.price_per_hour;
        let remaining = charges::hold_remaining(tx, hold)
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        let notice_s = self.config.engine.notice_s + RENEWAL_MARGIN_S;
        let needed = price * Decimal::from(notice_s) / Decimal::from(3600);
        if remaining >= needed {
            return Ok(());
        }
        let horizon = match row.mode {
            Mode::Reserved => RESERVED_HOLD_S,
            _ => 3600,
        };
        let horizon = row
            .ends_at
            .zip(row.billed_until)
            .map_or(horizon, |(e, b)| horizon.min(e - b));
        let top_up = crate::pricing::round_money(
            price * Decimal::from(horizon.max(0)) / Decimal::from(3600),
        ) - remaining;
        if top_up <= Decimal::ZERO {
            return Ok(());
        }
        match ledger::extend_hold(tx, hold, top_up, self.now).await {
            Ok(()) => Ok(()),
            Err(LedgerError::InsufficientFunds(_)) => {
                let noticed = engine
                    .lease(lease_id)
                    .is_some_and(|l| l.notice_reason.is_some());
                if !noticed {
                    let funded_s = if price.is_zero() {
                        0
                    } else {
                        use rust_decimal::prelude::ToPrimitive;
                        (remaining * Decimal::from(3600) / price)
                            .floor()
                            .to_i64()
                            .unwrap_or(0)
                    };
                    followups.push(Command::FundsExhausted {
                        lease_id,
                        funded_until: row.billed_until.map(|b| b + funded_s),
                    });
                }
                Ok(())
            }
            Err(e) => Err(anyhow::anyhow!(e)),
        }
    }

    /// Writes the engine's view of every lease and order touched in this
    /// batch and prepares the last writes, [`Batch::final_writes`].
    pub async fn finish(
        &mut self,
        tx: &mut Tx<'_>,
        engine: &Engine,
        demand: &DemandCursor,
    ) -> anyhow::Result<()> {
        let now = self.now;
        for id in std::mem::take(&mut self.touched_leases) {
            let Some(lease) = engine.lease(id) else {
                continue;
            };
            if let Some(row) = self.new_lease(id) {
                row.lease.clone_from(lease);
                continue;
            }
            let json = serde_json::to_string(lease)?;
            execute_tx!(
                tx,
                "UPDATE leases SET state = $1, engine_json = $2, price_per_hour = $3, \
                 ends_at = $4, updated_at = $5 WHERE id = $6 AND state NOT IN ('ended', 'failed')",
                state_str(lease.state),
                json,
                Money(lease.price_per_hour),
                lease.ends_at,
                now,
                id,
            )?;
        }
        for id in std::mem::take(&mut self.touched_orders) {
            let open = engine
                .open_order(id)
                .map(serde_json::to_string)
                .transpose()?;
            if let Some(row) = self.new_order(id) {
                row.engine_json = open;
                continue;
            }
            execute_tx!(
                tx,
                "UPDATE orders SET engine_json = $1 WHERE id = $2",
                open,
                id,
            )?;
        }
        self.written.extend(self.new_orders.iter().map(|o| {
            (
                o.id,
                WrittenOrder {
                    state: o.state,
                    reject_reason: o.reject_reason.clone(),
                    reject_message: o.reject_message.clone(),
                    lease_id: o.lease_id,
                },
            )
        }));
        self.serialize_leases()?;
        self.meta_json = serde_json::to_string(&engine.meta())?;
        self.demand = log_demand(engine.demand_mix(), *demand);
        Ok(())
    }
}

/// Renew a hold this long before the notice would have to start.
const RENEWAL_MARGIN_S: i64 = 300;
/// A reserved booking holds a rolling 7 days of its window (DESIGN §4).
const RESERVED_HOLD_S: i64 = 7 * 24 * 3600;

struct ChargeRow {
    mode: Mode,
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

async fn chargeable(tx: &mut Tx<'_>, lease: Uuid) -> anyhow::Result<Option<ChargeRow>> {
    let row: Option<LeaseChargeRow> = dispatch_tx!(tx, conn => {
        sqlx::query_as(
            "SELECT l.id, l.buyer_id, l.node_id, l.hold_id, l.price_per_hour, l.billed_until, l.ends_at, \
             l.engine_json, n.provider_id, l.running_at, l.ended_at, o.tags_json FROM leases l \
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
    let engine: Lease = serde_json::from_str(&json).context("corrupt lease row")?;
    let detail = charges::ChargeDetail::of_lease(&engine, node, running_at, ended_at, tags_json);
    Ok(Some(ChargeRow {
        mode: engine.mode,
        node,
        billed_until,
        ends_at,
        charge: Chargeable {
            lease: id,
            buyer,
            provider,
            hold: hold.unwrap_or(Uuid::nil()),
            price_per_hour: price.0,
            tflops_units: engine.placement.units.tflops_h,
            vram_units: engine.placement.units.vram_h,
            detail,
        },
    }))
}

async fn set_billed_until(tx: &mut Tx<'_>, lease: Uuid, until: i64) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE leases SET billed_until = $1 WHERE id = $2",
        until,
        lease,
    )?;
    Ok(())
}

async fn last_heartbeat(tx: &mut Tx<'_>, node: Uuid) -> anyhow::Result<Option<i64>> {
    let at: Option<Option<DateTime<Utc>>> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT last_heartbeat_at FROM nodes WHERE id = $1")
            .bind(node)
            .fetch_optional(conn)
            .await
    })?;
    Ok(at.flatten().map(|t| t.timestamp()))
}

/// The classes the mix recorded since the last commit, as `demand_log`
/// rows, and the trim that keeps the log to the window (once per window's
/// worth of appends).
fn log_demand(mix: &DemandMix, cursor: DemandCursor) -> DemandLogWrite {
    let new = mix.recorded().saturating_sub(cursor.persisted);
    let kept = mix.recent().len();
    let fresh = usize::try_from(new).unwrap_or(usize::MAX).min(kept);
    if fresh == 0 {
        return DemandLogWrite {
            cursor,
            ..DemandLogWrite::default()
        };
    }
    let rows: Vec<(i64, DemandClass)> = mix
        .recent()
        .skip(kept - fresh)
        .zip(cursor.next_seq..)
        .map(|(c, seq)| (seq, *c))
        .collect();
    let window = i64::try_from(mix.window()).unwrap_or(i64::MAX).max(1);
    let first = cursor.next_seq;
    let next_seq = first + i64::try_from(fresh).unwrap_or(i64::MAX);
    DemandLogWrite {
        rows,
        trim_before: ((first - 1) / window != (next_seq - 1) / window).then_some(next_seq - window),
        cursor: DemandCursor {
            persisted: mix.recorded(),
            next_seq,
        },
    }
}
