//! The live leases and the indexes kept beside them.
//!
//! Invariants, checked by [`LiveLeases::indexes_in_step`]:
//! - `preemptible` counts the live pooled and spot leases, so preemption is
//!   not even tried when there are none;
//! - `spot` holds exactly the live spot leases, repriced at every clearing;
//! - `per_order` counts each order's live leases, so a duplicate order id and
//!   a cancel of a filled order are told apart without a scan.
//!
//! They hold because a lease comes in only through [`LiveLeases::insert`],
//! goes only through [`LiveLeases::remove`], and changes the fields the
//! indexes read (mode, priority, order) only through [`LiveLeases::update`].

use std::collections::{BTreeMap, BTreeSet};

use super::lease::Lease;
use super::types::{LeaseId, Mode, OrderId};

#[derive(Debug, Clone, Default)]
pub(super) struct LiveLeases {
    by_id: BTreeMap<LeaseId, Lease>,
    preemptible: usize,
    spot: BTreeSet<LeaseId>,
    per_order: BTreeMap<OrderId, u32>,
    /// Leases whose rows the current command changed (granted, updated or ended).
    changed: BTreeSet<LeaseId>,
    /// Counts every change to any lease: equal values, the same leases.
    revision: u64,
}

impl LiveLeases {
    pub fn get(&self, id: LeaseId) -> Option<&Lease> {
        self.by_id.get(&id)
    }

    pub fn contains(&self, id: LeaseId) -> bool {
        self.by_id.contains_key(&id)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Every live lease, by id.
    pub fn values(&self) -> impl Iterator<Item = &Lease> {
        self.by_id.values()
    }

    /// A lease to change in place; remembers that its row changed. The
    /// fields the indexes read change through [`LiveLeases::update`] instead.
    pub fn get_mut(&mut self, id: LeaseId) -> Option<&mut Lease> {
        let lease = self.by_id.get_mut(&id)?;
        self.changed.insert(id);
        self.revision += 1;
        Some(lease)
    }

    /// Changes a lease however `change` likes (its mode or priority too),
    /// keeping the indexes in step. `None` when the lease is not live.
    pub fn update<R>(&mut self, id: LeaseId, change: impl FnOnce(&mut Lease) -> R) -> Option<R> {
        let mut lease = self.remove(id)?;
        let out = change(&mut lease);
        self.insert(lease);
        Some(out)
    }

    /// Adds a live lease and marks its row changed.
    pub fn insert(&mut self, lease: Lease) {
        self.preemptible += usize::from(lease.priority.preemptible());
        if lease.mode == Mode::Spot {
            self.spot.insert(lease.id);
        }
        *self.per_order.entry(lease.order_id).or_insert(0) += 1;
        self.changed.insert(lease.id);
        self.revision += 1;
        if let Some(old) = self.by_id.insert(lease.id, lease) {
            self.forget(&old);
        }
    }

    /// Takes a lease out and marks its row changed.
    pub fn remove(&mut self, id: LeaseId) -> Option<Lease> {
        let lease = self.by_id.remove(&id)?;
        self.changed.insert(id);
        self.revision += 1;
        self.forget(&lease);
        Some(lease)
    }

    fn forget(&mut self, lease: &Lease) {
        self.preemptible -= usize::from(lease.priority.preemptible());
        if lease.mode == Mode::Spot {
            self.spot.remove(&lease.id);
        }
        if let Some(n) = self.per_order.get_mut(&lease.order_id) {
            *n -= 1;
            if *n == 0 {
                self.per_order.remove(&lease.order_id);
            }
        }
    }

    /// See the field: equal values mean no lease changed in between.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Whether any live lease could be preempted.
    pub fn any_preemptible(&self) -> bool {
        self.preemptible > 0
    }

    /// The live spot leases, by id.
    pub fn spot_ids(&self) -> Vec<LeaseId> {
        self.spot.iter().copied().collect()
    }

    /// The live spot leases.
    pub fn spot(&self) -> impl Iterator<Item = &Lease> {
        self.spot.iter().filter_map(|id| self.by_id.get(id))
    }

    /// Whether an order has a live lease.
    pub fn has_order(&self, order: OrderId) -> bool {
        self.per_order.contains_key(&order)
    }

    /// Leases whose rows changed since [`LiveLeases::clear_changed`].
    pub fn changed(&self) -> impl Iterator<Item = LeaseId> + '_ {
        self.changed.iter().copied()
    }

    pub fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Whether the indexes above agree with the leases, counted again.
    pub fn indexes_in_step(&self) -> bool {
        let mut preemptible = 0;
        let mut spot = BTreeSet::new();
        let mut per_order = BTreeMap::new();
        for l in self.values() {
            preemptible += usize::from(l.priority.preemptible());
            if l.mode == Mode::Spot {
                spot.insert(l.id);
            }
            *per_order.entry(l.order_id).or_insert(0) += 1;
        }
        preemptible == self.preemptible && spot == self.spot && per_order == self.per_order
    }
}
