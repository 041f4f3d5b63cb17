//! What the spot auction remembers between clearings so that a clearing
//! redoes only the work its changes call for: the parsed bids, the memo of
//! the last clearing's losers, and the displacements that found no plan.
//! All of it derived, so none of it is in a snapshot: a restored engine
//! redoes the work once and finds the same (`tests/auction_memo.rs` checks
//! that forgetting all of it before every command changes no event).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rust_decimal::Decimal;

use super::auction::Bid;
use super::core::Engine;
use super::orders::OpenState;
use super::placement::{
    place, CapacityView, Compute, DemandMix, ForecastClass, PlacementRequest, Policy,
};
use super::types::{NodeId, OrderId};

/// Queued bids' parsed requests by order (see [`Resolved`]).
pub(super) type Prepared = HashMap<OrderId, Resolved>;

/// A queued bid's parsed request and its max price per hour.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    /// The acceptance sequence of the order it was parsed for.
    pub seq: u64,
    pub req: PlacementRequest,
    pub max_price: Decimal,
    /// Whether it stays valid while the order is queued (see `resolve_bids`).
    lasting: bool,
}

impl Engine {
    /// The request and max price of each queued bid that resolves. A request
    /// that reads nothing but its order (no node named, no predicted end) is
    /// kept from the clearing that first parsed it: regions are never
    /// removed, so it parses the same for as long as the order is queued.
    /// `queued`: how many bids the clearing tries in all, of which `bids`
    /// are this step's.
    pub(super) fn resolve_bids(&mut self, bids: &[Bid], queued: usize) -> Prepared {
        let mut cache = std::mem::take(&mut self.spot.resolved);
        for b in bids {
            if cache
                .get(&b.order)
                .is_some_and(|r| r.seq == b.seq && r.lasting)
            {
                continue;
            }
            let parsed = self.book.get(b.order).and_then(|o| {
                let req = self.resolve(&o.spec).ok()?;
                Some(Resolved {
                    seq: b.seq,
                    lasting: req.ends.is_none() && req.node.is_none(),
                    req,
                    max_price: o.spec.max_price.unwrap_or_default(),
                })
            });
            match parsed {
                Some(r) => cache.insert(b.order, r),
                None => cache.remove(&b.order),
            };
        }
        // Entries of orders that left the queue are never read (every read
        // is by a queued bid's id and seq); dropped now and then, not on
        // every step (a walk of every entry).
        if cache.len() > 2 * queued.max(bids.len()) + 64 {
            let book = &self.book;
            cache.retain(|id, r| {
                book.get(*id)
                    .is_some_and(|o| o.seq == r.seq && o.state == OpenState::SpotQueued)
            });
        }
        cache
    }

    /// What placement and the spot holdback read besides the bids: equal
    /// values, the same placements.
    /// What a displacement plan reads besides its bid: equal values, the
    /// same plan. Open-ended plans from now read the clock only through
    /// bookings that end, and every end is a timer that has run by the
    /// clearing (it changes a lease or a listing).
    pub(super) fn displace_inputs(&self) -> DisplaceInputs {
        DisplaceInputs {
            view_changes: self.view.changes(),
            demand_recorded: self.mix.recorded(),
            mix_forecast: self.mix.forecast().to_vec(),
            leases: self.leases.revision(),
            listings: self.listings.revision(),
        }
    }

    pub(super) fn placement_inputs(&self) -> PlacementInputs {
        PlacementInputs {
            view_changes: self.view.changes(),
            demand_recorded: self.mix.recorded(),
            mix_forecast: self.mix.forecast().to_vec(),
            holdback: self.spot.holdback.clone(),
        }
    }
}

/// What the last clearing's memo still says when a step of this one starts.
pub(super) struct Known<'m> {
    /// Bids that found no room at a winning price, with nothing freed
    /// since: they find none.
    pub no_room: Option<&'m HashSet<OrderId>>,
    /// Bids that found no room at a winning price, and the only nodes freed
    /// since: they can find room only there.
    pub no_room_but: Option<(&'m HashSet<OrderId>, Vec<NodeId>)>,
    /// Bids that lost, with nothing placement reads changed since.
    pub lost: Option<&'m HashSet<OrderId>>,
}

impl<'m> Known<'m> {
    /// What `memo` still says with the view and placement's inputs as they
    /// are now (`inputs`: [`Engine::placement_inputs`]).
    pub fn of(memo: &'m ClearingMemo, view: &CapacityView, inputs: &PlacementInputs) -> Known<'m> {
        // Nothing freed since: a bid that found no room (at a price it could
        // win at) finds none. Only a few nodes freed: it can find room only
        // on those.
        let grown = memo
            .growth
            .and_then(|g| view.grown_since(g))
            .map(|nodes| nodes.into_iter().collect::<Vec<_>>());
        // A pinned placement per grown node costs about what one placement
        // over the fleet does for a few nodes: past that, place as usual.
        const MAX_PINNED: usize = 4;
        let (no_room, no_room_but) = match grown {
            Some(nodes) if nodes.is_empty() => (Some(&memo.no_room), None),
            Some(nodes) if nodes.len() <= MAX_PINNED => (None, Some((&memo.no_room, nodes))),
            _ => (None, None),
        };
        // While nothing placement reads has changed either, every bid lands
        // where it did and loses the same way, until a bid of this clearing
        // wins and takes capacity (a bid with a predicted end reads the
        // clock, so it is always placed).
        let lost = (memo.seen.as_ref() == Some(inputs)).then_some(&memo.lost);
        Known {
            no_room,
            no_room_but,
            lost,
        }
    }

    pub fn no_room(&self, order: &OrderId) -> bool {
        self.no_room.is_some_and(|set| set.contains(order))
    }

    pub fn lost(&self, order: &OrderId) -> bool {
        self.lost.is_some_and(|set| set.contains(order))
    }
}

/// Whether `req` finds no room on any of `nodes` (pinned to each in turn:
/// placement on one node is what the full walk would find there).
pub(super) fn no_room_on(
    nodes: &[NodeId],
    view: &CapacityView,
    req: &PlacementRequest,
    mix: &DemandMix,
    policy: &Policy,
) -> bool {
    nodes.iter().all(|n| {
        let pinned = PlacementRequest {
            node: Some(*n),
            ..req.clone()
        };
        req.node.is_some_and(|own| own != *n) || place(view, &pinned, mix, policy).is_none()
    })
}

/// What the last spot clearing learned of the bids that lost, so the next
/// one skips placements whose outcome cannot have changed. Derived, so not
/// in a snapshot: a restored engine places those bids once and finds the same.
#[derive(Debug, Clone, Default)]
pub(super) struct ClearingMemo {
    /// The view's growth count after the clearing.
    pub growth: Option<u64>,
    /// Bids that found no room at a price they could win at (none at all,
    /// or only where the list value prices them under the floor).
    pub no_room: HashSet<OrderId>,
    /// What placement read, after the clearing.
    pub seen: Option<PlacementInputs>,
    /// Bids that lost, for any reason (none with a predicted end).
    pub lost: HashSet<OrderId>,
}

/// What placement and the spot holdback read besides the bids.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PlacementInputs {
    view_changes: u64,
    demand_recorded: u64,
    mix_forecast: Vec<ForecastClass>,
    holdback: BTreeMap<(String, String), Decimal>,
}

/// Whether `a` asks for at least what `b` asks, with the same constraints
/// (host CPU and memory left to the default share, which grows with size).
pub(super) fn at_least(a: &PlacementRequest, b: &PlacementRequest) -> bool {
    let compute = match (a.compute, b.compute) {
        (Compute::Milli(x), Compute::Milli(y)) => x >= y,
        (
            Compute::Tflops {
                tflops: x,
                precision: px,
            },
            Compute::Tflops {
                tflops: y,
                precision: py,
            },
        ) => px == py && x >= y,
        _ => false,
    };
    compute
        && a.memory_mb >= b.memory_mb
        && a.gpus == b.gpus
        && a.models == b.models
        && a.nvlink == b.nvlink
        && a.isolation == b.isolation
        && a.region == b.region
        && a.node == b.node
        && a.cpu_milli.is_none()
        && b.cpu_milli.is_none()
        && a.memory_mib.is_none()
        && b.memory_mib.is_none()
        // `None` asks no version, the least.
        && a.min_cuda >= b.min_cuda
}

/// See [`Engine::displace_inputs`].
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DisplaceInputs {
    view_changes: u64,
    demand_recorded: u64,
    mix_forecast: Vec<ForecastClass>,
    leases: u64,
    listings: u64,
}

/// Bids (by order and acceptance seq) whose displacement found no plan,
/// while what plans read stood at `seen`: a clearing with nothing changed
/// would otherwise copy the view and walk the fleet for them again.
#[derive(Debug, Clone, Default)]
pub(super) struct DisplaceMemo {
    seen: Option<DisplaceInputs>,
    failed: BTreeSet<(OrderId, u64)>,
}

impl DisplaceMemo {
    /// Whether this bid's plan failed with everything as it is now.
    pub fn failed(&self, seen: &DisplaceInputs, order: OrderId, seq: u64) -> bool {
        self.seen.as_ref() == Some(seen) && self.failed.contains(&(order, seq))
    }

    /// Remembers a failed plan; what was remembered under other inputs goes.
    pub fn record(&mut self, seen: DisplaceInputs, order: OrderId, seq: u64) {
        if self.seen.as_ref() != Some(&seen) {
            self.failed.clear();
            self.seen = Some(seen);
        }
        self.failed.insert((order, seq));
    }
}
