//! The rows a batch creates, held in memory and written in a handful of
//! multi-row statements instead of some twenty statements per order.

use crate::billing::ledger::Journal;
use crate::db::leases::{self, NewLease};
use crate::db::Text;
use crate::db::{push_rows, Flushed, Tx, Writes};
use crate::engine::Mode;
use crate::market::OrderState;
use anyhow::Context;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// An order row created in this batch.
pub(super) struct NewOrder {
    pub id: Uuid,
    pub buyer: Uuid,
    pub client_order_id: Option<String>,
    pub mode: Mode,
    pub state: OrderState,
    pub region: String,
    pub request_json: String,
    pub tags_json: String,
    pub reject_reason: Option<String>,
    pub reject_message: Option<String>,
    pub lease_id: Option<Uuid>,
    /// The duration prediction the order was placed with (ARCHITECTURE.md §17).
    pub predicted_duration_s: Option<i64>,
    pub prediction_basis: &'static str,
}

pub(super) struct NewFill {
    pub order_id: Uuid,
    pub lease_id: Uuid,
    pub report_json: String,
}

/// How a new order's row stood when its batch committed.
#[derive(Debug, Clone)]
pub struct WrittenOrder {
    pub state: OrderState,
    pub reject_reason: Option<String>,
    pub reject_message: Option<String>,
    pub lease_id: Option<Uuid>,
}

impl WrittenOrder {
    fn of(order: &NewOrder) -> WrittenOrder {
        WrittenOrder {
            state: order.state,
            reject_reason: order.reject_reason.clone(),
            reject_message: order.reject_message.clone(),
            lease_id: order.lease_id,
        }
    }
}

/// New order, lease and fill rows, and the ledger journal of the holds
/// placed for them, not yet written.
#[derive(Default)]
pub(super) struct Rows {
    orders: Vec<NewOrder>,
    order_at: HashMap<Uuid, usize>,
    leases: Vec<NewLease>,
    lease_at: HashMap<Uuid, usize>,
    fills: Vec<NewFill>,
    pub journal: Journal,
}

impl Rows {
    pub fn add_order(&mut self, order: NewOrder) {
        self.order_at.insert(order.id, self.orders.len());
        self.orders.push(order);
    }

    pub fn add_lease(&mut self, lease: NewLease) {
        self.lease_at.insert(lease.lease.id, self.leases.len());
        self.leases.push(lease);
    }

    pub fn add_fill(&mut self, fill: NewFill) {
        self.fills.push(fill);
    }

    pub fn order(&mut self, id: Uuid) -> Option<&mut NewOrder> {
        self.order_at.get(&id).map(|&i| &mut self.orders[i])
    }

    pub fn lease(&mut self, id: Uuid) -> Option<&mut NewLease> {
        self.lease_at.get(&id).map(|&i| &mut self.leases[i])
    }

    /// The order this buyer placed with `client_order_id` earlier in the batch.
    pub fn order_with_client_id(&self, buyer: Uuid, client_order_id: &str) -> Option<Uuid> {
        self.orders
            .iter()
            .find(|o| o.buyer == buyer && o.client_order_id.as_deref() == Some(client_order_id))
            .map(|o| o.id)
    }

    /// Every new order's row as it stands.
    pub fn written_orders(&self) -> impl Iterator<Item = (Uuid, WrittenOrder)> + '_ {
        self.orders.iter().map(|o| (o.id, WrittenOrder::of(o)))
    }

    /// Writes every row held in memory, so reads see them.
    pub async fn flush<'a, 't>(
        &'a mut self,
        tx: &'a mut Tx<'t>,
        now: DateTime<Utc>,
    ) -> anyhow::Result<Flushed<'a, 't>> {
        self.serialize_leases()?;
        let mut writes = Writes::new(tx);
        self.push(&mut writes, now);
        writes
            .execute(tx)
            .await
            .context("failed to write the batch's rows")?;
        self.clear();
        Ok(Flushed::written(tx, self))
    }

    /// Serializes each new lease's record, once, for its row.
    pub fn serialize_leases(&mut self) -> serde_json::Result<()> {
        self.leases
            .iter_mut()
            .try_for_each(NewLease::serialize_record)
    }

    /// Adds the INSERTs of every row held in memory to `writes`.
    pub fn push<'a>(&'a self, writes: &mut Writes<'a>, now: DateTime<Utc>) {
        push_rows!(
            writes,
            "INSERT INTO orders (id, buyer_id, client_order_id, mode, state, region, \
             reject_reason, reject_message, request_json, tags_json, lease_id, \
             predicted_duration_s, prediction_basis, created_at, updated_at) ",
            self.orders,
            |row, o| row
                .push_bind(o.id)
                .push_bind(o.buyer)
                .push_bind(&o.client_order_id)
                .push_bind(Text(o.mode))
                .push_bind(Text(o.state))
                .push_bind(&o.region)
                .push_bind(&o.reject_reason)
                .push_bind(&o.reject_message)
                .push_bind(&o.request_json)
                .push_bind(&o.tags_json)
                .push_bind(o.lease_id)
                .push_bind(o.predicted_duration_s)
                .push_bind(o.prediction_basis)
                .push_bind(now)
                .push_bind(now)
        );
        leases::push_inserts(writes, &self.leases, now);
        self.journal.push_writes(writes);
        push_rows!(
            writes,
            "INSERT INTO fills (order_id, lease_id, report_json, created_at) ",
            self.fills,
            |row, f| row
                .push_bind(f.order_id)
                .push_bind(f.lease_id)
                .push_bind(&f.report_json)
                .push_bind(now),
            " ON CONFLICT (order_id, lease_id) DO NOTHING"
        );
    }

    fn clear(&mut self) {
        *self = Rows::default();
    }
}
