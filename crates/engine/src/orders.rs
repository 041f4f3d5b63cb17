//! The book of open orders: on-demand and pooled orders waiting for capacity,
//! and persistent spot bids (queued, or holding a live lease).

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::types::{BuyerId, LeaseId, OrderId, OrderSpec, Ts};

/// Where an open order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenState {
    /// On-demand/pooled: waiting for capacity until `deadline`.
    Waiting,
    /// Spot: in the auction.
    SpotQueued,
    /// Spot: holds a lease; back to the queue if it is preempted.
    SpotLive,
}

/// An accepted order that is still open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenOrder {
    pub id: OrderId,
    pub buyer: BuyerId,
    pub spec: OrderSpec,
    pub state: OpenState,
    pub accepted_at: Ts,
    /// Acceptance sequence: time priority among equal bids and the FIFO of waiting orders.
    pub seq: u64,
    /// Waiting orders expire then.
    pub deadline: Option<Ts>,
    pub funds_available: Decimal,
    /// Spot: max_price ÷ list value of the cheapest adequate market.
    pub bid_index: Option<Decimal>,
    /// Leases granted so far (lease ids derive from it).
    pub fills: u32,
    pub lease: Option<LeaseId>,
}

/// Open orders by id, with the acceptance order kept for FIFO retries.
#[derive(Debug, Clone, Default)]
pub struct Book {
    orders: BTreeMap<OrderId, OpenOrder>,
    by_seq: BTreeMap<u64, OrderId>,
    /// Orders added, changed or removed since [`Book::clear_changed`].
    changed: BTreeSet<OrderId>,
}

impl Book {
    pub fn insert(&mut self, o: OpenOrder) {
        self.changed.insert(o.id);
        self.by_seq.insert(o.seq, o.id);
        self.orders.insert(o.id, o);
    }

    pub fn remove(&mut self, id: OrderId) -> Option<OpenOrder> {
        let o = self.orders.remove(&id)?;
        self.changed.insert(id);
        self.by_seq.remove(&o.seq);
        Some(o)
    }

    pub fn get(&self, id: OrderId) -> Option<&OpenOrder> {
        self.orders.get(&id)
    }

    pub fn get_mut(&mut self, id: OrderId) -> Option<&mut OpenOrder> {
        let o = self.orders.get_mut(&id)?;
        self.changed.insert(id);
        Some(o)
    }

    /// Orders added, changed or removed since the last [`Book::clear_changed`].
    pub fn changed(&self) -> impl Iterator<Item = OrderId> + '_ {
        self.changed.iter().copied()
    }

    pub fn clear_changed(&mut self) {
        self.changed.clear();
    }

    pub fn contains(&self, id: OrderId) -> bool {
        self.orders.contains_key(&id)
    }

    /// Ids in a state, in acceptance order.
    pub fn ids_in(&self, state: OpenState) -> Vec<OrderId> {
        self.by_seq
            .values()
            .filter(|id| self.orders.get(id).is_some_and(|o| o.state == state))
            .copied()
            .collect()
    }

    /// Every open order, by id.
    pub fn all(&self) -> impl Iterator<Item = &OpenOrder> {
        self.orders.values()
    }

    pub fn len(&self) -> usize {
        self.orders.len()
    }

    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }
}
