//! The engine's state and the helpers every command shares: resolving an
//! order into a placement request, pricing a placement, granting and ending
//! leases, keeping the capacity view in step with the calendars.

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::calendar::{Booking, GpuCalendar};
use super::commands::NodeSpec;
use super::events::{Event, FillReport};
use super::lease::{EndReason, Lease, LeaseState};
use super::orders::{Book, OpenState};
use super::placement::{
    model_at, model_idx, CapacityView, Compute, DemandClass, DemandMix, GpuFree, ModelSet,
    PartitionMode, Placement, PlacementRequest, Policy, UnitPrices,
};
use super::pricing::{self, PriceRule};
use super::reject::RejectReason;
use super::types::{Isolation, LeaseId, Mode, NodeId, OrderId, OrderSpec, Priority, Ts};
use crate::catalog::{self, Precision, Unit};

/// Tunables; the defaults are DESIGN's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineConfig {
    /// Preemption notice (default 120 s).
    pub notice_s: Ts,
    /// Spot clearing interval (default 10 s).
    pub spot_interval_s: Ts,
    /// Requests remembered in the demand mix.
    pub demand_window: usize,
    pub policy: Policy,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            notice_s: 120,
            spot_interval_s: 10,
            demand_window: 512,
            policy: Policy::default(),
        }
    }
}

/// Errors of commands that name something unknown or ask the impossible.
/// Order refusals are not errors: they are [`Event::OrderRejected`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}

/// A node and the calendars of its GPUs (by position in `spec.gpus`).
#[derive(Debug, Clone)]
pub(super) struct NodeState {
    pub spec: NodeSpec,
    pub cordoned: bool,
    pub calendars: Vec<GpuCalendar>,
    pub leases: BTreeSet<LeaseId>,
}

/// Timer kinds, in the order they run when due at the same instant: ends free
/// capacity before waiting leases start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Timer {
    End,
    Notice,
    Ready,
    Expire,
}

/// Who preempted whom, kept so `validate` can prove the rules held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PreemptRecord {
    pub lease: LeaseId,
    pub priority: Priority,
    pub noticed_at: Option<Ts>,
    pub ended_at: Ts,
}

/// The matching engine: commands in, events out (DESIGN §5).
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) cfg: EngineConfig,
    pub(super) now: Ts,
    pub(super) regions: BTreeMap<String, i32>,
    pub(super) prices: BTreeMap<(String, String, Unit), Decimal>,
    pub(super) nodes: BTreeMap<NodeId, NodeState>,
    pub(super) view: CapacityView,
    pub(super) leases: BTreeMap<LeaseId, Lease>,
    pub(super) book: Book,
    pub(super) timers: BTreeSet<(Ts, Timer, Uuid)>,
    pub(super) mix: DemandMix,
    pub(super) seq: u64,
    /// Spot clearing index per (model, region).
    pub(super) clearing: BTreeMap<(String, String), Decimal>,
    pub(super) last_clear: Option<Ts>,
    pub(super) capacity_changed: bool,
    pub(super) preempted: Vec<PreemptRecord>,
    pub(super) offpeak_hour: Option<Ts>,
}

/// The lease id of an order's `fill_no`-th fill: a fixed mix of the two, so
/// replays and restores derive the same ids (UUID version 8, "custom").
pub fn lease_id(order: OrderId, fill_no: u32) -> LeaseId {
    let mut x = order.as_u128() ^ (u128::from(fill_no) << 64 | u128::from(fill_no));
    // Two rounds of a 128-bit multiply-xorshift: cheap and well spread.
    for _ in 0..2 {
        x ^= x >> 67;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
    }
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
            leases: BTreeMap::new(),
            book: Book::default(),
            timers: BTreeSet::new(),
            mix: DemandMix::new(cfg.demand_window),
            seq: 0,
            clearing: BTreeMap::new(),
            last_clear: None,
            capacity_changed: false,
            preempted: Vec::new(),
            offpeak_hour: None,
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
        self.leases.get(&id)
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
        self.clearing
            .get(&(model.to_owned(), region.to_owned()))
            .copied()
    }

    /// `frag_ratio` of the fleet against the recent demand mix.
    pub fn frag_ratio(&self) -> f64 {
        super::placement::frag_ratio(&self.view, &self.mix)
    }

    /// `internal_waste` of the live leases, milli-GPU.
    pub fn internal_waste_milli(&self) -> u64 {
        super::placement::internal_waste(self.leases.values().map(|l| &l.placement))
    }

    pub(super) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Marks regions off-peak (22:00–06:00 local) once per hour of `now`.
    pub(super) fn refresh_offpeak(&mut self) {
        let hour = self.now.div_euclid(3600);
        if self.offpeak_hour == Some(hour) {
            return;
        }
        self.offpeak_hour = Some(hour);
        for (name, offset) in &self.regions {
            if let Some(r) = self.view.region_idx(name) {
                let local = self.now + Ts::from(*offset) * 60;
                let h = local.rem_euclid(86_400) / 3600;
                self.view.set_offpeak(r, !(6..22).contains(&h));
            }
        }
    }

    /// Parses an order into a placement request, or says why it cannot be one.
    pub(super) fn resolve(&self, spec: &OrderSpec) -> Result<PlacementRequest, RejectReason> {
        let res = &spec.resources;
        let gpus = res.gpus.unwrap_or(1);
        if gpus == 0
            || gpus > 32
            || res.vram_gb % catalog::UNIT_VRAM_GB != 0
            || res.tflops < Decimal::ZERO
            || (res.tflops.is_zero() && res.vram_gb == 0)
        {
            return Err(RejectReason::InvalidResources);
        }
        let models = match &res.gpu_model {
            Some(name) => ModelSet::only(model_idx(name).ok_or(RejectReason::UnknownModel)?),
            None => ModelSet::ANY,
        };
        let precision = res.precision.unwrap_or(Precision::Fp16);
        let allowed = catalog::all_models()
            .iter()
            .filter(|m| model_idx(m.name).is_some_and(|i| models.contains(i)));
        if !allowed.clone().any(|m| m.peak(precision).is_some()) {
            return Err(RejectReason::UnknownPrecision);
        }
        let region = match &spec.region {
            Some(name) if name != "any" => Some(
                self.view
                    .region_idx(name)
                    .ok_or(RejectReason::UnknownRegion)?,
            ),
            _ => None,
        };
        if let Some(node) = spec.node {
            if !self.nodes.contains_key(&node) {
                return Err(RejectReason::UnknownNode);
            }
        }
        let isolation = if spec.mode == Mode::Pooled {
            Isolation::Shared
        } else {
            res.isolation
        };
        let req = PlacementRequest {
            compute: Compute::Tflops {
                tflops: res.tflops,
                precision,
            },
            memory_mb: u64::from(res.vram_gb) * 1000,
            gpus,
            models,
            nvlink: res.nvlink,
            isolation,
            region,
            node: spec.node,
            cpu_milli: res.cpu_milli,
            memory_mib: res.memory_mib,
        };
        // Some catalog model must be able to hold it at all.
        let holdable = allowed.clone().any(|m| {
            let whole_ok = gpus == 1 || matches!(isolation, Isolation::Any | Isolation::Whole);
            let mig_ok = isolation != Isolation::Mig || m.mig.is_some();
            whole_ok
                && mig_ok
                && req.milli_per_gpu(m).is_some_and(|x| x <= 1000)
                && req.memory_per_gpu() <= m.memory_mb()
        });
        if !holdable {
            return Err(RejectReason::UnsatisfiableResources);
        }
        Ok(req)
    }

    /// List prices of a placement's (region, model).
    pub(super) fn list_of(&self, p: &Placement) -> UnitPrices {
        self.view.price(p.region, p.model).unwrap_or(UnitPrices {
            tflops_h: Decimal::ZERO,
            vram_h: Decimal::ZERO,
        })
    }

    pub(super) fn region_name(&self, p: &Placement) -> String {
        self.view
            .regions
            .get(usize::from(p.region))
            .map_or_else(String::new, |r| r.name.clone())
    }

    /// Builds a lease for `order_id`'s next fill on placement `p`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_lease(
        &self,
        order_id: OrderId,
        buyer: Uuid,
        spec: &OrderSpec,
        fill_no: u32,
        p: Placement,
        rule: PriceRule,
        state: LeaseState,
        starts_at: Ts,
    ) -> Lease {
        let list = self.list_of(&p);
        let unit_prices = pricing::unit_prices(list, &rule);
        let price_per_hour = pricing::per_hour(p.units, unit_prices);
        let ends_at = spec.duration_s.map(|d| starts_at + d);
        let hold = pricing::hold(spec.mode, price_per_hour, spec.duration_s, spec.max_price);
        let bid_index = match rule {
            PriceRule::Spot { bid_index, .. } => Some(bid_index),
            PriceRule::ListMultiple { .. } => None,
        };
        Lease {
            id: lease_id(order_id, fill_no),
            order_id,
            buyer,
            mode: spec.mode,
            qos: spec.qos,
            priority: Priority::of(spec.mode, spec.qos),
            state,
            node: p.node,
            region: self.region_name(&p),
            model: model_at(p.model).name.to_owned(),
            unit_prices,
            price_per_hour,
            rule,
            bid_index,
            starts_at,
            ends_at,
            ready_at: (state == LeaseState::Pending).then_some(starts_at),
            notice_at: None,
            preempt_at: None,
            notice_reason: None,
            noticed_at: None,
            rebalance_warned: false,
            fill_no,
            hold,
            spec: spec.clone(),
            placement: p,
        }
    }

    /// The fill report of a lease just built.
    pub(super) fn report(
        &self,
        lease: &Lease,
        preempted: Vec<LeaseId>,
        clearing: Option<Decimal>,
    ) -> FillReport {
        let p = &lease.placement;
        let list = self.list_of(p);
        let explanation = format!(
            "{} on {} GPU(s) of {} in {} at {} × list: cheapest adequate slice, then least fragmentation (Δ {}){}",
            match lease.mode {
                Mode::OnDemand => "on-demand",
                Mode::Reserved => "reserved",
                Mode::Spot => "spot",
                Mode::Pooled => "pooled",
            },
            p.gpus.len(),
            lease.model,
            lease.region,
            lease.rule.multiplier(),
            p.why.frag_delta,
            if preempted.is_empty() {
                String::new()
            } else {
                format!("; {} lower-priority lease(s) given notice", preempted.len())
            }
        );
        FillReport {
            sources_considered: vec!["primary".to_owned()],
            list_prices: list,
            rule: lease.rule,
            clearing_index: clearing,
            units: p.units,
            price_per_hour: lease.price_per_hour,
            why_slice: p.why.clone(),
            preempted,
            explanation,
        }
    }

    /// Books a lease into the calendars and the view; emits `LeaseGranted`.
    pub(super) fn grant(&mut self, lease: Lease, events: &mut Vec<Event>) {
        let node_id = lease.node;
        if let Some(node) = self.nodes.get_mut(&node_id) {
            for gs in &lease.placement.gpus {
                if let Some(pos) = node.spec.gpus.iter().position(|g| g.index == gs.index) {
                    node.calendars[pos].bookings.push(Booking {
                        lease: lease.id,
                        slot: gs.slot.clone(),
                        from: lease.booked_from(),
                        until: lease.booked_until(),
                        priority: lease.priority,
                    });
                }
            }
            node.leases.insert(lease.id);
        }
        let req_gpus = u8::try_from(lease.placement.gpus.len()).unwrap_or(1);
        let per_gpu = lease
            .placement
            .asked_milli
            .div_ceil(u32::from(req_gpus.max(1)));
        self.mix.record(DemandClass::quantized(
            per_gpu,
            memory_per_gpu(&lease.placement),
            req_gpus,
        ));
        self.schedule(&lease);
        events.push(Event::LeaseGranted {
            lease: Box::new(lease.clone()),
            at: self.now,
        });
        self.leases.insert(lease.id, lease);
        self.refresh_node(node_id);
    }

    /// Adds the timers a lease's fields call for (stale ones are skipped when due).
    pub(super) fn schedule(&mut self, lease: &Lease) {
        if let Some(t) = lease.booked_until() {
            self.timers.insert((t, Timer::End, lease.id));
        }
        if let Some(t) = lease.notice_at {
            self.timers.insert((t, Timer::Notice, lease.id));
        }
        if lease.state == LeaseState::Pending {
            self.timers
                .insert((lease.starts_at, Timer::Ready, lease.id));
        }
    }

    /// Changes a live lease's state and says so.
    pub(super) fn set_state(
        &mut self,
        id: LeaseId,
        to: LeaseState,
        at: Ts,
        events: &mut Vec<Event>,
    ) {
        if let Some(l) = self.leases.get_mut(&id) {
            let from = l.state;
            if from == to {
                return;
            }
            l.state = to;
            if to != LeaseState::Pending {
                l.ready_at = None;
            }
            events.push(Event::LeaseStateChanged {
                lease_id: id,
                from,
                to,
                ready_at: l.ready_at,
                preempt_at: l.preempt_at,
                at,
            });
        }
    }

    /// Re-times a lease's bookings after its end or preemption moved.
    pub(super) fn rebook(&mut self, id: LeaseId) {
        let Some(l) = self.leases.get(&id) else {
            return;
        };
        let (node_id, until) = (l.node, l.booked_until());
        let lease = l.clone();
        if let Some(node) = self.nodes.get_mut(&node_id) {
            for cal in &mut node.calendars {
                cal.set_until(id, until);
            }
        }
        self.schedule(&lease);
        self.refresh_node(node_id);
    }

    /// Ends a live lease at `at`: frees its slice, emits `LeaseEnded`, and puts
    /// a preempted spot order back in the queue.
    pub(super) fn end_lease(
        &mut self,
        id: LeaseId,
        reason: EndReason,
        at: Ts,
        events: &mut Vec<Event>,
    ) {
        let Some(mut lease) = self.leases.remove(&id) else {
            return;
        };
        if let Some(node) = self.nodes.get_mut(&lease.node) {
            for cal in &mut node.calendars {
                cal.remove(id);
            }
            node.leases.remove(&id);
        }
        self.refresh_node(lease.node);
        self.capacity_changed = true;
        if reason == EndReason::Preempted {
            debug_assert!(
                lease.priority.preemptible(),
                "only pooled and spot are preempted"
            );
            self.preempted.push(PreemptRecord {
                lease: id,
                priority: lease.priority,
                noticed_at: lease.noticed_at,
                ended_at: at,
            });
            if self.preempted.len() > 4096 {
                self.preempted.drain(..2048);
            }
        }
        let final_state = if reason == EndReason::AgentFailed {
            LeaseState::Failed
        } else {
            LeaseState::Ended
        };
        events.push(Event::LeaseStateChanged {
            lease_id: id,
            from: lease.state,
            to: final_state,
            ready_at: None,
            preempt_at: lease.preempt_at,
            at,
        });
        lease.state = final_state;
        events.push(Event::LeaseEnded {
            lease_id: id,
            reason,
            at,
        });
        if lease.mode == Mode::Spot {
            let requeue = matches!(
                reason,
                EndReason::Preempted | EndReason::NodeLost | EndReason::CapacityRemoved
            );
            let order = lease.order_id;
            if requeue {
                if let Some(o) = self.book.get_mut(order) {
                    o.state = OpenState::SpotQueued;
                    o.lease = None;
                    events.push(Event::OrderRequeued {
                        order_id: order,
                        at,
                    });
                }
            } else if self.book.get(order).is_some_and(|o| o.lease == Some(id)) {
                self.book.remove(order);
            }
        }
    }

    /// Recomputes a node's free state in the view from its calendars and leases.
    pub(super) fn refresh_node(&mut self, node_id: NodeId) {
        let Some(node) = self.nodes.get(&node_id) else {
            return;
        };
        let frees: Vec<(u8, GpuFree)> = node
            .spec
            .gpus
            .iter()
            .zip(&node.calendars)
            .filter_map(|(g, cal)| {
                let model = catalog::lookup(&g.model)?;
                Some((g.index, cal.free_all(model, g.mode)))
            })
            .collect();
        let (cpu, mem) = node
            .leases
            .iter()
            .filter_map(|l| self.leases.get(l))
            .fold((0u64, 0u64), |(c, m), l| {
                (c + l.placement.cpu_milli, m + l.placement.memory_mib)
            });
        let cordoned = node.cordoned;
        if let Some(v) = self.view.node_mut(node_id) {
            for (index, free) in frees {
                if let Some(g) = v.gpus.iter_mut().find(|g| g.index == index) {
                    g.free = free;
                }
            }
            v.cpu_free = v.cpu_milli.saturating_sub(cpu);
            v.memory_free = v.memory_mib.saturating_sub(mem);
            v.cordoned = cordoned;
            v.refresh_summary();
        }
    }

    /// The GPU model and mode at a node's GPU index.
    pub(super) fn gpu_kind(
        &self,
        node: NodeId,
        index: u8,
    ) -> Option<(&'static catalog::GpuModel, PartitionMode)> {
        let n = self.nodes.get(&node)?;
        let g = n.spec.gpus.iter().find(|g| g.index == index)?;
        Some((catalog::lookup(&g.model)?, g.mode))
    }
}

/// Memory per GPU a placement asked for, MB.
fn memory_per_gpu(p: &Placement) -> u64 {
    let gpus = u64::try_from(p.gpus.len()).unwrap_or(1).max(1);
    let mb = p.asked.vram_h * Decimal::from(u64::from(catalog::UNIT_VRAM_GB) * 1000);
    rust_decimal::prelude::ToPrimitive::to_u64(&mb).unwrap_or(0) / gpus
}
