//! The engine's state: its configuration, errors, the `Engine` struct and its
//! read accessors. Commands live in sibling files (`apply.rs` dispatches).

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::calendar::GpuCalendar;
use super::commands::NodeSpec;
use super::lease::{Lease, LeaseState};
use super::listings::OpenListings;
use super::live_leases::LiveLeases;
use super::offpeak::{LocalTime, RegionClock};
use super::orders::Book;
use super::placement::{CapacityView, DemandMix, Policy};
use super::resale::ListingRefusal;
use super::spot_state::SpotState;
use super::timers::TimerQueue;
use super::types::{LeaseId, ListingId, NodeId, OrderId, Priority, Ts};
use gpuex_wire::catalog::Unit;

/// Tunables; the defaults are the design's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineConfig {
    /// Preemption notice (default 120 s).
    pub notice_s: Ts,
    /// Spot clearing interval (default 10 s).
    pub spot_interval_s: Ts,
    /// Requests remembered in the demand mix.
    pub demand_window: usize,
    pub policy: Policy,
    /// Keep idle capacity the demand forecast expects primary orders to ask
    /// for within the notice period away from spot (off: measure without).
    pub forecast_holdback: bool,
    /// Keep room on MIG GPUs for the profiles the forecast expects primary
    /// orders to take within the notice period (off: measure without).
    #[serde(default = "on")]
    pub forecast_mig_layout: bool,
    /// Place a lease with a known or predicted end on the GPUs whose other
    /// leases are predicted to end near it, so whole GPUs free up together
    /// (ARCHITECTURE.md §17; off: measure without).
    #[serde(default = "on")]
    pub duration_prediction: bool,
    /// The most bids one step of a spot clearing tries (one step a tick).
    /// A bid costs at most one placement, some 10 µs on a filled fleet of
    /// 10,000 GPUs, so a step holds the market for a few milliseconds,
    /// never a whole clearing's 100 ms (BENCHMARKS.md, "Auctions off the
    /// critical path"). Counted in bids, not in placements or time, so
    /// that a replica whose memo is empty (restored from a snapshot) steps
    /// exactly as the leader did. Every replica must step alike: the
    /// server's `--clearing-step-bids` is the same on all of them, as the
    /// spot interval is. Tests shrink it to step often.
    #[serde(default = "clearing_step_bids")]
    pub clearing_step_bids: u32,
}

fn on() -> bool {
    true
}

fn clearing_step_bids() -> u32 {
    256
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            notice_s: 120,
            spot_interval_s: 10,
            demand_window: 512,
            policy: Policy::default(),
            forecast_holdback: true,
            forecast_mig_layout: true,
            duration_prediction: true,
            clearing_step_bids: clearing_step_bids(),
        }
    }
}

/// Errors of commands that name something unknown or ask the impossible.
/// Order refusals are not errors: they are [`Event::OrderRejected`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum EngineError {
    #[error("unknown order {0}")]
    UnknownOrder(OrderId),
    #[error("unknown lease {0}")]
    UnknownLease(LeaseId),
    #[error("unknown node {0}")]
    UnknownNode(NodeId),
    #[error("invalid node inventory: {0}")]
    InvalidNode(String),
    #[error("order {0} is filled and cannot be cancelled; release its lease")]
    NotCancellable(OrderId),
    #[error("lease {lease} is {state:?}; the agent report does not apply")]
    InvalidTransition { lease: LeaseId, state: LeaseState },
    #[error("unknown region or model in a price: {0}")]
    InvalidPrice(String),
    #[error("cannot restore: {0}")]
    Restore(String),
    #[error(transparent)]
    Listing(#[from] ListingRefusal),
    /// A mode conversion the rules refuse (ARCHITECTURE.md §3 "Mode changes").
    #[error("{0}")]
    Conversion(#[from] super::convert::ConversionRefused),
}

/// A node and the calendars of its GPUs (by position in `spec.gpus`).
#[derive(Debug, Clone)]
pub(super) struct NodeState {
    pub spec: NodeSpec,
    pub cordoned: bool,
    pub calendars: Vec<GpuCalendar>,
    /// Change through [`NodeState::hold`] and [`NodeState::unhold`], which
    /// keep `host_used` in step.
    pub leases: BTreeSet<LeaseId>,
    /// Host CPU (milli) and memory (MiB) that `leases` take: kept as they
    /// come and go, because summing them again on every grant looked up each
    /// of the node's leases.
    pub host_used: (u64, u64),
}

impl NodeState {
    /// Counts a lease on the node.
    pub fn hold(&mut self, lease: &Lease) {
        if self.leases.insert(lease.id) {
            self.host_used.0 += lease.placement.cpu_milli;
            self.host_used.1 += lease.placement.memory_mib;
        }
    }

    /// Stops counting a lease on the node.
    pub fn unhold(&mut self, lease: &Lease) {
        if self.leases.remove(&lease.id) {
            self.host_used.0 = self.host_used.0.saturating_sub(lease.placement.cpu_milli);
            self.host_used.1 = self.host_used.1.saturating_sub(lease.placement.memory_mib);
        }
    }

    /// `host_used` summed from the leases themselves.
    pub fn host_used_of(&self, leases: &LiveLeases) -> (u64, u64) {
        self.leases
            .iter()
            .filter_map(|l| leases.get(*l))
            .fold((0, 0), |(c, m), l| {
                (c + l.placement.cpu_milli, m + l.placement.memory_mib)
            })
    }
}

/// Who preempted whom, kept so `validate` can prove the rules held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PreemptRecord {
    pub lease: LeaseId,
    pub priority: Priority,
    pub noticed_at: Option<Ts>,
    pub ended_at: Ts,
}

/// The matching engine: commands in, events out (ARCHITECTURE.md §5).
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) cfg: EngineConfig,
    pub(super) now: Ts,
    /// Each region's time zone, for its off-peak hours.
    pub(super) regions: BTreeMap<String, RegionClock>,
    pub(super) prices: BTreeMap<(String, String, Unit), Decimal>,
    pub(super) nodes: BTreeMap<NodeId, NodeState>,
    pub(super) view: CapacityView,
    pub(super) leases: LiveLeases,
    pub(super) book: Book,
    pub(super) timers: TimerQueue,
    pub(super) mix: DemandMix,
    pub(super) seq: u64,
    /// The spot auction between clearings.
    pub(super) spot: SpotState,
    pub(super) capacity_changed: bool,
    pub(super) preempted: Vec<PreemptRecord>,
    /// The minute of `now` the regions' off-peak flags were last set for.
    pub(super) offpeak_minute: Option<Ts>,
    pub(super) listings: OpenListings,
}

/// The lease id of an order's `fill_no`-th fill: a fixed mix of the two, so
/// replays and restores derive the same ids (UUID version 8, "custom").
///
/// The order id's leading 48 bits (a UUIDv7's milliseconds) are kept, so
/// leases sort by time like their orders and new rows append to the lease
/// table's index instead of landing on random pages.
pub fn lease_id(order: OrderId, fill_no: u32) -> LeaseId {
    const TIME_BITS: u128 = 0xFFFF_FFFF_FFFF << 80;
    let order = order.as_u128();
    let mut x = order ^ (u128::from(fill_no) << 64 | u128::from(fill_no));
    // Two rounds of a 128-bit multiply-xorshift: cheap and well spread.
    for _ in 0..2 {
        x ^= x >> 67;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
    }
    let x = (order & TIME_BITS) | (x & !TIME_BITS);
    let mut bytes = x.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Uuid::from_bytes(bytes)
}

impl Engine {
    /// An empty engine.
    pub fn new(cfg: EngineConfig) -> Engine {
        Engine {
            cfg,
            now: 0,
            regions: BTreeMap::new(),
            prices: BTreeMap::new(),
            nodes: BTreeMap::new(),
            view: CapacityView::new(),
            leases: LiveLeases::default(),
            book: Book::default(),
            timers: TimerQueue::default(),
            mix: DemandMix::new(cfg.demand_window),
            seq: 0,
            spot: SpotState::default(),
            capacity_changed: false,
            preempted: Vec::new(),
            offpeak_minute: None,
            listings: OpenListings::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    /// The capacity view placement reads (free for open-ended work from now).
    pub fn view(&self) -> &CapacityView {
        &self.view
    }

    /// The recent demand mix.
    pub fn demand_mix(&self) -> &DemandMix {
        &self.mix
    }

    /// A live lease.
    pub fn lease(&self, id: LeaseId) -> Option<&Lease> {
        self.leases.get(id)
    }

    /// Every live lease, by id.
    pub fn leases(&self) -> impl Iterator<Item = &Lease> {
        self.leases.values()
    }

    /// Every open order, by id.
    pub fn open_orders(&self) -> impl Iterator<Item = &super::orders::OpenOrder> {
        self.book.all()
    }

    /// The spot clearing index of a (model, region), once cleared.
    pub fn clearing_index(&self, model: &str, region: &str) -> Option<Decimal> {
        self.spot.index(&(model.to_owned(), region.to_owned()))
    }

    /// `frag_ratio` of the fleet against the recent demand mix.
    pub fn frag_ratio(&self) -> f64 {
        super::placement::frag_ratio(&self.view, &self.mix)
    }

    /// `internal_waste` of the live leases, milli-GPU.
    pub fn internal_waste_milli(&self) -> u64 {
        super::placement::internal_waste(self.leases.values().map(|l| &l.placement))
    }

    /// A live lease to change; remembers that its row changed.
    pub(super) fn lease_mut(&mut self, id: LeaseId) -> Option<&mut Lease> {
        self.leases.get_mut(id)
    }

    /// Leases whose rows the last command changed, by id: re-read each with
    /// [`Engine::lease`] and upsert it (`None`: it ended, as its
    /// `LeaseEnded` event says). Nothing else changes a lease.
    pub fn changed_leases(&self) -> impl Iterator<Item = LeaseId> + '_ {
        self.leases.changed()
    }

    /// Open orders the last command added, changed or closed: re-read each
    /// with [`Engine::open_order`] and upsert it (`None`: no longer open).
    pub fn changed_orders(&self) -> impl Iterator<Item = OrderId> + '_ {
        self.book.changed()
    }

    /// Listings the last command opened or closed: re-read each with
    /// [`Engine::listing`] (`None`: closed, as its event says).
    pub fn changed_listings(&self) -> impl Iterator<Item = ListingId> + '_ {
        self.listings.changed()
    }

    /// An open order.
    pub fn open_order(&self, id: OrderId) -> Option<&super::orders::OpenOrder> {
        self.book.get(id)
    }

    pub(super) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Marks regions off-peak (22:00–08:00 local) once per minute of `now`:
    /// offsets and daylight saving changes fall on whole minutes, and zones
    /// like Asia/Kolkata change hour at half past a UTC hour.
    pub(super) fn refresh_offpeak(&mut self) {
        let minute = self.now.div_euclid(60);
        if self.offpeak_minute == Some(minute) {
            return;
        }
        self.offpeak_minute = Some(minute);
        for (name, clock) in &self.regions {
            if let Some(r) = self.view.region_idx(name) {
                self.view.set_offpeak(r, clock.local(self.now).is_offpeak());
            }
        }
    }

    /// A region's local time now (UTC for a region without a zone).
    pub(super) fn local_time(&self, region: &str) -> LocalTime {
        match self.regions.get(region) {
            Some(clock) => clock.local(self.now),
            None => RegionClock::utc().local(self.now),
        }
    }
}
