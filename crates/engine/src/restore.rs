//! Rebuilding the engine after a restart from what the server persisted:
//! nodes, regions, prices, live leases with their placements, open orders,
//! the spot clearing state. [`Engine::snapshot`] gives the same rows, so a
//! restored engine is checked to equal the one that stopped.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::calendar::Booking;
use super::commands::{ListPrice, NodeSpec};
use super::core::{Engine, EngineConfig, EngineError, NodeState};
use super::lease::Lease;
use super::orders::{OpenOrder, OpenState};
use super::placement::DemandClass;
use super::resale::Listing;
use super::spot_state::ClearingRun;
use super::timers::Timer;
use super::types::Ts;

/// A node row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRow {
    pub spec: NodeSpec,
    pub cordoned: bool,
}

/// A region row: its IANA time zone, from which the engine reads local
/// off-peak hours at every `now` (so a restore across a daylight saving
/// change gives the hours the running engine would have).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionRow {
    pub name: String,
    pub timezone: String,
}

/// The last clearing index of a spot market.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearingRow {
    pub gpu_model: String,
    pub region: String,
    pub clearing_index: Decimal,
}

/// Everything the engine needs to come back as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The latest `now` the engine saw.
    pub now: Ts,
    pub regions: Vec<RegionRow>,
    pub prices: Vec<ListPrice>,
    pub nodes: Vec<NodeRow>,
    /// Live leases as the last `LeaseGranted` / state events left them.
    pub leases: Vec<Lease>,
    /// Open orders: waiting on-demand/pooled and spot bids.
    pub orders: Vec<OpenOrder>,
    #[serde(default)]
    pub clearing: Vec<ClearingRow>,
    /// When spot last cleared; `None` clears on the first tick.
    #[serde(default)]
    pub last_clear: Option<Ts>,
    /// Capacity changed since that clearing (when not kept: true, clear on the first tick).
    #[serde(default = "dirty_by_default")]
    pub spot_dirty: bool,
    /// The acceptance sequence counter (0 if not kept: the open orders' highest is used).
    #[serde(default)]
    pub seq: u64,
    /// The recent demand mix, oldest first; empty: rebuilt from the leases.
    #[serde(default)]
    pub demand: Vec<DemandClass>,
    /// Open resale listings.
    #[serde(default)]
    pub listings: Vec<Listing>,
    /// The spot clearing under way, if one is: the next ticks carry it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clearing_run: Option<ClearingRun>,
}

fn dirty_by_default() -> bool {
    true
}

impl Engine {
    /// The engine's state as rows.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            now: self.now,
            regions: self
                .view
                .regions
                .iter()
                .map(|r| RegionRow {
                    name: r.name.clone(),
                    timezone: self
                        .regions
                        .get(&r.name)
                        .map_or_else(|| "UTC".to_owned(), |c| c.timezone.clone()),
                })
                .collect(),
            prices: self
                .prices
                .iter()
                .map(|((region, model, unit), p)| ListPrice {
                    region: region.clone(),
                    gpu_model: model.clone(),
                    unit: *unit,
                    list_price: *p,
                })
                .collect(),
            nodes: self
                .nodes
                .values()
                .map(|n| NodeRow {
                    spec: n.spec.clone(),
                    cordoned: n.cordoned,
                })
                .collect(),
            leases: self.leases.values().cloned().collect(),
            orders: self.book.all().cloned().collect(),
            clearing: self
                .spot
                .indexes()
                .map(|((m, r), i)| ClearingRow {
                    gpu_model: m.clone(),
                    region: r.clone(),
                    clearing_index: i,
                })
                .collect(),
            last_clear: self.spot.last_clear(),
            spot_dirty: self.spot.is_dirty(),
            seq: self.seq,
            demand: self.mix.recent().copied().collect(),
            listings: self.listings.values().cloned().collect(),
            clearing_run: self.spot.run.clone(),
        }
    }

    /// Rebuilds an engine from persisted rows and checks its invariants.
    pub fn restore(cfg: EngineConfig, snap: Snapshot) -> Result<Engine, EngineError> {
        let mut e = Engine::new(cfg);
        e.now = snap.now;
        let mut sink = Vec::new();
        for r in &snap.regions {
            e.set_region(r.name.clone(), &r.timezone);
        }
        e.set_prices(snap.prices)?;
        for n in snap.nodes {
            let id = n.spec.id;
            e.upsert_node(n.spec, &mut sink)?;
            e.cordon(id, n.cordoned)?;
        }
        // Rows written before the demand window had a log of its own.
        let demand = if snap.demand.is_empty() {
            demand_of(&snap.leases)
        } else {
            snap.demand
        };
        for lease in snap.leases {
            e.restore_lease(lease)?;
        }
        for listing in snap.listings {
            e.restore_listing(listing)?;
        }
        let node_ids: Vec<_> = e.nodes.keys().copied().collect();
        for id in node_ids {
            e.refresh_node(id);
        }
        for o in snap.orders {
            if o.state == OpenState::Waiting {
                if let Some(d) = o.deadline {
                    e.timers.set(d, Timer::Expire, o.id);
                }
            }
            e.book.insert(o);
        }
        e.book.sync_ranked();
        for c in snap.clearing {
            e.spot.set_index((c.gpu_model, c.region), c.clearing_index);
        }
        e.spot.restore_clock(snap.last_clear, snap.spot_dirty);
        e.spot.run = snap.clearing_run;
        // Rows may lag the counter; never hand out a sequence number twice.
        e.seq = snap.seq.max(e.book.all().map(|o| o.seq).max().unwrap_or(0));
        for d in demand {
            e.mix.record(d);
        }
        e.capacity_changed = false;
        // Restored rows are what the store already holds: none changed.
        e.leases.clear_changed();
        e.listings.clear_changed();
        e.validate()
            .map_err(|i| EngineError::Restore(i.to_string()))?;
        Ok(e)
    }

    /// Books a persisted lease back into its node's calendars and the timers.
    fn restore_lease(&mut self, lease: Lease) -> Result<(), EngineError> {
        let node = self.nodes.get_mut(&lease.node).ok_or_else(|| {
            EngineError::Restore(format!("lease {} on unknown node {}", lease.id, lease.node))
        })?;
        for gs in &lease.placement.gpus {
            let pos = gpu_position(node, gs.index, "lease", lease.id)?;
            node.calendars[pos].bookings.push(Booking {
                lease: lease.id,
                slot: gs.slot.clone(),
                from: lease.booked_from(),
                until: lease.booked_until(),
                priority: lease.priority,
            });
        }
        node.hold(&lease);
        self.schedule(&lease);
        self.leases.insert(lease);
        Ok(())
    }

    /// Books a persisted listing back into its node's calendars and the timers.
    fn restore_listing(&mut self, listing: Listing) -> Result<(), EngineError> {
        let node = self.nodes.get_mut(&listing.node).ok_or_else(|| {
            EngineError::Restore(format!(
                "listing {} on unknown node {}",
                listing.id, listing.node
            ))
        })?;
        for gs in &listing.placement.gpus {
            let pos = gpu_position(node, gs.index, "listing", listing.id)?;
            node.calendars[pos].bookings.push(listing.booking(&gs.slot));
        }
        self.timers
            .set(listing.until, Timer::ListingEnd, listing.id);
        self.listings.file(listing);
        Ok(())
    }
}

/// Where a GPU of a persisted lease or listing is in its node's inventory.
fn gpu_position(
    node: &NodeState,
    index: u8,
    what: &str,
    id: uuid::Uuid,
) -> Result<usize, EngineError> {
    node.spec
        .gpus
        .iter()
        .position(|g| g.index == index)
        .ok_or_else(|| EngineError::Restore(format!("{what} {id} on unknown GPU {index}")))
}

/// The demand window rebuilt from the live leases, oldest first.
fn demand_of(leases: &[Lease]) -> Vec<DemandClass> {
    let mut leases: Vec<&Lease> = leases.iter().collect();
    leases.sort_by_key(|l| (l.starts_at, l.id));
    leases
        .iter()
        .map(|l| {
            let gpus = u8::try_from(l.placement.gpus.len()).unwrap_or(1).max(1);
            DemandClass::quantized(l.placement.asked_milli.div_ceil(u32::from(gpus)), 0, gpus)
        })
        .collect()
}

/// The engine's own bookkeeping beside its rows: persisted after every batch
/// so a restart resumes the same sequence and auction clock.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EngineMeta {
    pub now: Ts,
    pub last_clear: Option<Ts>,
    pub seq: u64,
    /// The demand window, in rows written before it had a log of its own
    /// (the caller appends [`Engine::demand_mix`] as it grows); [`Engine::meta`]
    /// leaves it empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub demand: Vec<DemandClass>,
    #[serde(default)]
    pub spot_dirty: bool,
}

impl Engine {
    /// The part of [`Engine::snapshot`] that is not rows of its own.
    pub fn meta(&self) -> EngineMeta {
        EngineMeta {
            now: self.now,
            last_clear: self.spot.last_clear(),
            seq: self.seq,
            demand: Vec::new(),
            spot_dirty: self.spot.is_dirty(),
        }
    }
}
