//! The book of open orders: on-demand and pooled orders waiting for capacity,
//! and persistent spot bids (queued, or holding a live lease).

use std::cmp::Reverse;
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

/// A queued bid's place in the auction: highest index first, then earliest.
/// The index is kept as the order holds it (its scale shows in events).
type RankKey = (Reverse<Decimal>, u64);

/// Open orders by id, with the acceptance order kept for FIFO retries.
#[derive(Debug, Clone, Default)]
pub struct Book {
    orders: BTreeMap<OrderId, OpenOrder>,
    by_seq: BTreeMap<u64, OrderId>,
    /// Orders added, changed or removed since [`Book::clear_changed`].
    changed: BTreeSet<OrderId>,
    /// Queued spot bids in the auction's order, so a clearing does not sort
    /// every bid again; kept in step from `unranked` (see [`Book::sync_ranked`]).
    ranked: BTreeMap<RankKey, OrderId>,
    /// Each ranked bid's key, to find it again when it changes.
    rank_of: BTreeMap<OrderId, RankKey>,
    /// Orders touched since the ranking was last brought in step: `get_mut`
    /// hands out the order itself, so its new state is read afterwards.
    unranked: BTreeSet<OrderId>,
    /// Waiting orders by acceptance sequence, kept in step with the ranking,
    /// so a release retries them without walking every open bid.
    waiting: BTreeMap<u64, OrderId>,
}

impl Book {
    pub fn insert(&mut self, o: OpenOrder) {
        self.changed.insert(o.id);
        self.unranked.insert(o.id);
        self.by_seq.insert(o.seq, o.id);
        self.orders.insert(o.id, o);
    }

    pub fn remove(&mut self, id: OrderId) -> Option<OpenOrder> {
        let o = self.orders.remove(&id)?;
        self.changed.insert(id);
        self.unranked.insert(id);
        self.by_seq.remove(&o.seq);
        self.waiting.remove(&o.seq);
        Some(o)
    }

    pub fn get(&self, id: OrderId) -> Option<&OpenOrder> {
        self.orders.get(&id)
    }

    pub fn get_mut(&mut self, id: OrderId) -> Option<&mut OpenOrder> {
        let o = self.orders.get_mut(&id)?;
        self.changed.insert(id);
        self.unranked.insert(id);
        Some(o)
    }

    /// Files every touched order again under its rank (or out of the
    /// ranking when it is no longer a queued bid) and in or out of the
    /// waiting list. O(touched · log n).
    pub fn sync_ranked(&mut self) {
        for id in std::mem::take(&mut self.unranked) {
            if let Some(key) = self.rank_of.remove(&id) {
                self.ranked.remove(&key);
            }
            let Some(o) = self.orders.get(&id) else {
                continue;
            };
            if o.state == OpenState::Waiting {
                self.waiting.insert(o.seq, id);
            } else {
                self.waiting.remove(&o.seq);
            }
            if let Some(key) = rank_key(o) {
                self.ranked.insert(key, id);
                self.rank_of.insert(id, key);
            }
        }
    }

    /// Waiting orders, in acceptance order.
    pub fn waiting_ids(&mut self) -> Vec<OrderId> {
        self.sync_ranked();
        self.waiting.values().copied().collect()
    }

    /// Queued spot bids as (order, index, seq), highest index first, then
    /// earliest: the order `auction::rank` sorts them into.
    pub fn ranked_bids(&mut self) -> impl Iterator<Item = (OrderId, Decimal, u64)> + '_ {
        self.sync_ranked();
        self.ranked
            .iter()
            .map(|((Reverse(index), seq), id)| (*id, *index, *seq))
    }

    /// Drops the ranking, to be rebuilt from every order on the next read
    /// (tests compare a clearing with and without it).
    #[cfg(test)]
    pub fn forget_ranking(&mut self) {
        self.ranked.clear();
        self.rank_of.clear();
        self.waiting.clear();
        self.unranked = self.orders.keys().copied().collect();
    }

    /// Whether the ranking holds exactly the queued bids under their keys.
    pub fn ranked_in_step(&self) -> bool {
        let fresh: BTreeMap<RankKey, OrderId> = self
            .orders
            .values()
            .filter_map(|o| rank_key(o).map(|k| (k, o.id)))
            .collect();
        let same = |(a, x): (&RankKey, &OrderId), (b, y): (&RankKey, &OrderId)| {
            x == y && a.1 == b.1 && a.0 .0.serialize() == b.0 .0.serialize()
        };
        self.unranked.is_empty()
            && fresh.len() == self.ranked.len()
            && fresh.iter().zip(&self.ranked).all(|(f, r)| same(f, r))
    }

    /// Whether the waiting list holds exactly the waiting orders.
    pub fn waiting_in_step(&self) -> bool {
        let fresh: BTreeMap<u64, OrderId> = self
            .orders
            .values()
            .filter(|o| o.state == OpenState::Waiting)
            .map(|o| (o.seq, o.id))
            .collect();
        self.unranked.is_empty() && fresh == self.waiting
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

/// Where a queued bid ranks; `None` for any other order.
fn rank_key(o: &OpenOrder) -> Option<RankKey> {
    (o.state == OpenState::SpotQueued)
        .then_some(o.bid_index)
        .flatten()
        .map(|index| (Reverse(index), o.seq))
}
