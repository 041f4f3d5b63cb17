//! The open resale listings and the index of their asks.
//!
//! Invariant, checked by [`OpenListings::asks_in_step`]: every open listing
//! is filed under its GPU count at (ask, id) with its [`ListingFit`], and
//! nothing else is. A buyer's order then looks only at listings of its GPU
//! count, cheapest first, and stops at the first that holds it. It holds
//! because listings come and go only through [`OpenListings::file`] and
//! [`OpenListings::unfile`].

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;

use super::resale::{Listing, ListingFit};
use super::types::ListingId;

#[derive(Debug, Clone, Default)]
pub(super) struct OpenListings {
    by_id: BTreeMap<ListingId, Listing>,
    asks: BTreeMap<u8, BTreeMap<(Decimal, ListingId), ListingFit>>,
    /// Listings the current command opened or closed.
    changed: BTreeSet<ListingId>,
    /// Counts every listing opened or closed: equal values, the same listings.
    revision: u64,
}

impl OpenListings {
    pub fn get(&self, id: ListingId) -> Option<&Listing> {
        self.by_id.get(&id)
    }

    pub fn contains(&self, id: ListingId) -> bool {
        self.by_id.contains_key(&id)
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Every open listing, by id.
    pub fn values(&self) -> impl Iterator<Item = &Listing> {
        self.by_id.values()
    }

    /// Opens a listing: in the book, its ask and fit filed.
    pub fn file(&mut self, listing: Listing) {
        self.asks
            .entry(listing.gpu_count())
            .or_default()
            .insert((listing.ask_per_hour, listing.id), ListingFit::of(&listing));
        self.changed.insert(listing.id);
        self.revision += 1;
        self.by_id.insert(listing.id, listing);
    }

    /// Closes a listing: out of the book, its ask out of the index.
    pub fn unfile(&mut self, id: ListingId) -> Option<Listing> {
        let listing = self.by_id.remove(&id)?;
        self.changed.insert(id);
        self.revision += 1;
        let gpus = listing.gpu_count();
        if let Some(asks) = self.asks.get_mut(&gpus) {
            asks.remove(&(listing.ask_per_hour, id));
            if asks.is_empty() {
                self.asks.remove(&gpus);
            }
        }
        Some(listing)
    }

    /// The asks of listings of `gpus` GPUs below `below` (all when `None`),
    /// cheapest then id first.
    pub fn asks_below(
        &self,
        gpus: u8,
        below: Option<Decimal>,
    ) -> impl Iterator<Item = (ListingId, &ListingFit)> {
        let asks = self.asks.get(&gpus);
        // Every (ask, id) below (`below`, the least id) asks less than `below`.
        let range = asks.map(|asks| match below {
            Some(b) => asks.range(..(b, ListingId::nil())),
            None => asks.range(..),
        });
        range.into_iter().flatten().map(|((_, id), fit)| (*id, fit))
    }

    /// Listings opened or closed since [`OpenListings::clear_changed`].
    /// See the field: equal values mean no listing opened or closed in between.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub fn changed(&self) -> impl Iterator<Item = ListingId> + '_ {
        self.changed.iter().copied()
    }

    pub fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Whether the ask index holds exactly the open listings, each as it is now.
    pub fn asks_in_step(&self) -> bool {
        let filed: usize = self.asks.values().map(BTreeMap::len).sum();
        filed == self.by_id.len()
            && self.by_id.values().all(|l| {
                self.asks
                    .get(&l.gpu_count())
                    .and_then(|asks| asks.get(&(l.ask_per_hour, l.id)))
                    .is_some_and(|fit| *fit == ListingFit::of(l))
            })
    }
}
