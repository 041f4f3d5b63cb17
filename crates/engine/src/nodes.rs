//! Capacity commands: nodes added or changed, cordoned, lost; regions and prices.

use std::collections::{BTreeMap, BTreeSet};

use super::calendar::GpuCalendar;
use super::commands::{ListPrice, NodeSpec};
use super::core::{Engine, EngineError, NodeState};
use super::events::Event;
use super::lease::EndReason;
use super::offpeak::RegionClock;
use super::orders::{OpenOrder, OpenState};
use super::place_order::Fill;
use super::placement::{model_idx, place, NodeView, UnitPrices};
use super::timers::Timer;
use super::types::{LeaseId, Mode, NodeId, Qos};
use gpuex_wire::catalog::{self, Unit};
use rust_decimal::Decimal;

impl Engine {
    /// Checks an inventory: known models, MIG only on MIG-capable ones, unique indices below 32.
    fn check_node(spec: &NodeSpec) -> Result<(), EngineError> {
        let mut seen = BTreeSet::new();
        for g in &spec.gpus {
            let model = catalog::lookup(&g.model)
                .ok_or_else(|| EngineError::InvalidNode(format!("unknown model {}", g.model)))?;
            if g.index >= 32 || !seen.insert(g.index) {
                return Err(EngineError::InvalidNode(format!(
                    "GPU index {} repeated or ≥ 32",
                    g.index
                )));
            }
            if g.mode == super::placement::PartitionMode::Mig && model.mig.is_none() {
                return Err(EngineError::InvalidNode(format!("{} has no MIG", g.model)));
            }
        }
        Ok(())
    }

    fn node_view(&mut self, spec: &NodeSpec, cordoned: bool) -> NodeView {
        let region = self.view.region(&spec.region);
        let mut v = NodeView::new(spec.id, region, spec.cpu_milli, spec.memory_mib);
        v.cordoned = cordoned;
        v.cuda = spec.cuda;
        for g in &spec.gpus {
            let nvlink = g
                .nvlink
                .iter()
                .filter(|i| **i < 32)
                .fold(0u32, |m, i| m | 1 << i);
            if let Some(m) = model_idx(&g.model) {
                v = v.with_gpu(m, g.mode, nvlink);
                if let Some(last) = v.gpus.last_mut() {
                    last.index = g.index;
                }
            }
        }
        v
    }

    /// Adds a node or replaces its inventory; leases on GPUs that changed end.
    pub(super) fn upsert_node(
        &mut self,
        spec: NodeSpec,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        Self::check_node(&spec)?;
        let node_id = spec.id;
        self.regions
            .entry(spec.region.clone())
            .or_insert_with(RegionClock::utc);
        let old = self.nodes.remove(&spec.id);
        let cordoned = old.as_ref().is_some_and(|n| n.cordoned);
        let mut calendars = vec![GpuCalendar::default(); spec.gpus.len()];
        if let Some(old) = &old {
            for (pos, g) in spec.gpus.iter().enumerate() {
                let same = old.spec.gpus.iter().position(|o| {
                    o == g || (o.index == g.index && o.model == g.model && o.mode == g.mode)
                });
                if let Some(op) = same {
                    calendars[pos] = old.calendars[op].clone();
                }
            }
        }
        let (keep, ended) = self.leases_kept(old.as_ref(), &spec);
        let intact_listings: BTreeSet<_> = match &old {
            Some(old) => self
                .listings
                .values()
                .filter(|l| l.node == node_id)
                .filter(|l| slice_intact(&old.spec, &spec, &l.placement))
                .map(|l| l.id)
                .collect(),
            None => BTreeSet::new(),
        };
        for cal in &mut calendars {
            cal.bookings
                .retain(|b| keep.contains(&b.lease) || intact_listings.contains(&b.lease));
        }
        let view = self.node_view(&spec, cordoned);
        self.offpeak_minute = None;
        self.refresh_offpeak();
        self.view.upsert_node(view);
        let mut state = NodeState {
            spec,
            cordoned,
            calendars,
            leases: keep.clone(),
            host_used: (0, 0),
        };
        state.host_used = state.host_used_of(&self.leases);
        self.nodes.insert(node_id, state);
        for id in ended {
            // Its bookings are already gone with the old calendars.
            self.end_lease(id, EndReason::CapacityRemoved, self.now, events);
        }
        self.withdraw_listings(node_id, |l| intact_listings.contains(&l.id), events);
        self.refresh_node(node_id);
        self.capacity_changed = true;
        Ok(())
    }

    /// Which of a replaced node's leases stay on its new inventory, and which
    /// end: those whose slice changed, then on a smaller host the lowest
    /// priority ones until the rest fits.
    fn leases_kept(
        &self,
        old: Option<&NodeState>,
        spec: &NodeSpec,
    ) -> (BTreeSet<LeaseId>, Vec<LeaseId>) {
        let mut keep = BTreeSet::new();
        let mut ended = Vec::new();
        for id in old.into_iter().flat_map(|o| &o.leases) {
            let Some(l) = self.leases.get(*id) else {
                continue;
            };
            if old.is_some_and(|o| slice_intact(&o.spec, spec, &l.placement)) {
                keep.insert(*id);
            } else {
                ended.push(*id);
            }
        }
        let mut kept: Vec<&super::lease::Lease> =
            keep.iter().filter_map(|id| self.leases.get(*id)).collect();
        kept.sort_by(|a, b| {
            super::preemption::victim_order(
                &(a.priority, a.bid_index, a.id),
                &(b.priority, b.bid_index, b.id),
            )
        });
        while !host_fits(&kept, spec.cpu_milli, spec.memory_mib) && !kept.is_empty() {
            let gone = kept.remove(0).id;
            keep.remove(&gone);
            ended.push(gone);
        }
        (keep, ended)
    }

    pub(super) fn cordon(&mut self, node: NodeId, cordoned: bool) -> Result<(), EngineError> {
        let n = self
            .nodes
            .get_mut(&node)
            .ok_or(EngineError::UnknownNode(node))?;
        n.cordoned = cordoned;
        self.view.set_cordoned(node, cordoned);
        if !cordoned {
            self.capacity_changed = true;
        }
        Ok(())
    }

    /// The node is gone: its leases end; on-demand and reserved leases are
    /// re-placed elsewhere where possible, in another zone first, or their
    /// orders wait again (the server refunds what was charged past the loss).
    pub(super) fn node_lost(
        &mut self,
        node: NodeId,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let state = self
            .nodes
            .remove(&node)
            .ok_or(EngineError::UnknownNode(node))?;
        self.view.remove_node(node);
        let now = self.now;
        self.withdraw_listings(node, |_| false, events);
        let mut lost = Vec::new();
        for id in &state.leases {
            let Some(lease) = self.leases.get(*id).cloned() else {
                continue;
            };
            self.end_lease(*id, EndReason::NodeLost, now, events);
            if matches!(lease.mode, Mode::OnDemand | Mode::Reserved) {
                lost.push(lease);
            }
        }
        // Another failure domain first: what the lost node's zone still has
        // sits out a first round, which takes free room elsewhere only.
        let benched = match &state.spec.zone {
            Some(zone) => self.bench_zone(zone),
            None => Vec::new(),
        };
        if !benched.is_empty() {
            lost.retain(|lease| !self.replace_elsewhere_free(lease, events));
            for id in benched {
                self.view.set_cordoned(id, false);
            }
        }
        for lease in &lost {
            self.replace_lost(lease, events);
        }
        self.capacity_changed = true;
        Ok(())
    }

    /// Keeps the uncordoned nodes of `zone` out of placements (in the view
    /// only); returns them, to be let back in.
    fn bench_zone(&mut self, zone: &str) -> Vec<NodeId> {
        let peers: Vec<NodeId> = self
            .nodes
            .iter()
            .filter(|(_, n)| !n.cordoned && n.spec.zone.as_deref() == Some(zone))
            .map(|(id, _)| *id)
            .collect();
        for id in &peers {
            self.view.set_cordoned(*id, true);
        }
        peers
    }

    /// The first round for a lost lease running now: free room (no
    /// preemption) outside its zone. Whether it was placed.
    fn replace_elsewhere_free(
        &mut self,
        lease: &super::lease::Lease,
        events: &mut Vec<Event>,
    ) -> bool {
        let now = self.now;
        if lease.mode == Mode::Reserved && lease.starts_at > now + super::pricing::RESERVED_LEAD_S {
            return false;
        }
        let mut spec = lease.spec_for_replacement(now);
        spec.node = None;
        let Ok(req) = self.resolve(&spec) else {
            return false;
        };
        if place(&self.view, &req, &self.mix, &self.cfg.policy).is_none() {
            return false;
        }
        let fill = self.fill_fixed(
            lease.order_id,
            lease.buyer,
            &spec,
            Decimal::MAX,
            lease.fill_no + 1,
            &req,
            true,
            events,
        );
        matches!(fill, Fill::Filled)
    }

    /// A lost on-demand or reserved lease: placed again where there is room
    /// (preempting lower priorities), or its order waits again.
    fn replace_lost(&mut self, lease: &super::lease::Lease, events: &mut Vec<Event>) {
        let now = self.now;
        let mut spec = lease.spec_for_replacement(now);
        spec.node = None;
        let Ok(req) = self.resolve(&spec) else {
            // Nothing could ever hold it now: it ends rather than stay `filled`.
            return self.requeue_lost(lease, spec, 0, events);
        };
        if lease.mode == Mode::Reserved && lease.starts_at > now + super::pricing::RESERVED_LEAD_S {
            // Still ahead: book the same window elsewhere.
            let replaced =
                match self.plan_preemption(&req, lease.priority, lease.starts_at, lease.ends_at) {
                    Some((p, victims)) => self.replace(lease, p, victims, events),
                    None => false,
                };
            if !replaced {
                // A window ahead cannot wait for capacity now: it ends.
                self.requeue_lost(lease, spec, 0, events);
            }
            return;
        }
        // The wallet is checked where the new lease's hold is placed.
        let funds = Decimal::MAX;
        let fill = self.fill_fixed(
            lease.order_id,
            lease.buyer,
            &spec,
            funds,
            lease.fill_no + 1,
            &req,
            true,
            events,
        );
        if !matches!(fill, Fill::Filled) {
            let wait = match spec.qos {
                Qos::Realtime => 0,
                _ => spec.max_wait_s.unwrap_or(0).max(0),
            };
            self.requeue_lost(lease, spec, wait, events);
        }
    }

    /// A lost lease with no room elsewhere: its order waits again, for
    /// `wait` seconds from now (its `max_wait_s` counts from the requeue),
    /// for capacity for the rest of its window, and expires after that. A
    /// lost lease never leaves its order `filled` with nothing running.
    fn requeue_lost(
        &mut self,
        lease: &super::lease::Lease,
        spec: super::types::OrderSpec,
        wait: i64,
        events: &mut Vec<Event>,
    ) {
        let (order_id, now) = (lease.order_id, self.now);
        if self.book.contains(order_id) {
            // Still open (another of its leases was lost first): it waits once.
            return;
        }
        events.push(Event::OrderRequeued { order_id, at: now });
        if wait <= 0 {
            events.push(Event::OrderExpired { order_id, at: now });
            return;
        }
        let seq = self.next_seq();
        let deadline = now + wait;
        self.book.insert(OpenOrder {
            id: order_id,
            buyer: lease.buyer,
            spec,
            state: OpenState::Waiting,
            accepted_at: now,
            seq,
            deadline: Some(deadline),
            funds_available: Decimal::MAX,
            bid_index: None,
            // The next fill's lease id follows the lost one's.
            fills: lease.fill_no + 1,
            lease: None,
        });
        self.timers.set(deadline, Timer::Expire, order_id);
    }

    /// Books `old`'s window on placement `p`, giving `victims` notice;
    /// whether it did. Not where the slice costs more than the order's
    /// `max_price` (ARCHITECTURE.md §22: never filled above it, a replacement
    /// included).
    fn replace(
        &mut self,
        old: &super::lease::Lease,
        p: super::placement::Placement,
        victims: Vec<uuid::Uuid>,
        events: &mut Vec<Event>,
    ) -> bool {
        let spec = old.spec_for_replacement(self.now);
        let mut lease = self.build_lease(
            old.order_id,
            old.buyer,
            &spec,
            old.fill_no + 1,
            p,
            old.rule,
            old.state_for_replacement(),
            old.starts_at,
        );
        if super::place_order::over_max_price(&spec, lease.price_per_hour).is_some() {
            return false;
        }
        lease.ends_at = old.ends_at;
        for v in &victims {
            self.give_notice(
                *v,
                old.starts_at - self.cfg.notice_s,
                old.starts_at,
                super::lease::NoticeReason::Priority,
                events,
            );
        }
        let report = self.report(&lease, victims, None);
        let (order_id, lease_id) = (lease.order_id, lease.id);
        self.grant(lease, events);
        events.push(Event::OrderFilled {
            order_id,
            lease_id,
            report: Box::new(report),
            at: self.now,
        });
        true
    }

    pub(super) fn set_region(&mut self, name: String, timezone: &str) {
        self.view.region(&name);
        self.regions.insert(name, RegionClock::new(timezone));
        self.offpeak_minute = None;
        self.refresh_offpeak();
    }

    /// Sets list prices; a (region, model) is for sale once both units are priced.
    pub(super) fn set_prices(&mut self, prices: Vec<ListPrice>) -> Result<(), EngineError> {
        for p in &prices {
            let in_range =
                p.list_price > Decimal::ZERO && p.list_price <= super::pricing::MAX_LIST_PRICE;
            if catalog::lookup(&p.gpu_model).is_none() || !in_range {
                return Err(EngineError::InvalidPrice(p.gpu_model.clone()));
            }
        }
        let mut touched = BTreeMap::new();
        for p in prices {
            self.regions
                .entry(p.region.clone())
                .or_insert_with(RegionClock::utc);
            self.view.region(&p.region);
            self.prices.insert(
                (p.region.clone(), p.gpu_model.clone(), p.unit),
                p.list_price,
            );
            touched.insert((p.region, p.gpu_model), ());
        }
        for (region, model) in touched.into_keys() {
            let t = self
                .prices
                .get(&(region.clone(), model.clone(), Unit::TflopsH));
            let v = self
                .prices
                .get(&(region.clone(), model.clone(), Unit::VramH));
            if let (Some(t), Some(v), Some(m)) = (t, v, model_idx(&model)) {
                let r = self.view.region(&region);
                self.view.set_price(
                    r,
                    m,
                    UnitPrices {
                        tflops_h: *t,
                        vram_h: *v,
                    },
                );
            }
        }
        self.offpeak_minute = None;
        self.refresh_offpeak();
        self.capacity_changed = true;
        Ok(())
    }
}

/// Whether `leases` never need more host CPU or memory at once than the node has.
/// The load only rises where a lease starts, so those instants suffice.
pub(super) fn host_fits(leases: &[&super::lease::Lease], cpu_milli: u64, memory_mib: u64) -> bool {
    leases.iter().all(|probe| {
        let t = probe.booked_from();
        let (cpu, mem) = leases
            .iter()
            .filter(|l| l.booked_from() <= t && l.booked_until().is_none_or(|u| t < u))
            .fold((0, 0), |(c, m), l| {
                (c + l.placement.cpu_milli, m + l.placement.memory_mib)
            });
        cpu <= cpu_milli && mem <= memory_mib
    })
}

/// Whether a slice survives a node's new inventory: same region, and each of
/// its GPUs still there with the same model and partition mode.
fn slice_intact(old: &NodeSpec, new: &NodeSpec, placement: &super::placement::Placement) -> bool {
    old.region == new.region
        && placement.gpus.iter().all(|gs| {
            let o = old.gpus.iter().find(|o| o.index == gs.index);
            let n = new.gpus.iter().find(|n| n.index == gs.index);
            matches!((o, n), (Some(o), Some(n)) if o.model == n.model && o.mode == n.mode)
        })
}
