//! Preemption (ARCHITECTURE.md §3): priority reserved > on-demand > pooled realtime >
//! pooled batch > spot. Capacity is only ever taken from pooled and spot
//! leases, lowest priority and lowest bid index first, and only after notice.

use std::cell::RefCell;
use std::collections::BTreeSet;

use rust_decimal::Decimal;

use super::core::{Engine, NodeState};
use super::events::Event;
use super::lease::{LeaseState, NoticeReason};
use super::placement::{place, take, CapacityView, Placement, PlacementRequest};
use super::types::{LeaseId, NodeId, Priority, Ts};

/// The order victims are chosen in: lowest priority, then lowest bid index, then id.
pub fn victim_order(
    a: &(Priority, Option<Decimal>, LeaseId),
    b: &(Priority, Option<Decimal>, LeaseId),
) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
}

/// Who claims capacity: a priority, and for a spot bid its price index (a
/// spot bid displaces only spot leases whose index is lower than its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    pub priority: Priority,
    pub bid_index: Option<Decimal>,
}

impl From<Priority> for Claim {
    fn from(priority: Priority) -> Claim {
        Claim {
            priority,
            bid_index: None,
        }
    }
}

impl Engine {
    /// Whether a lease of `priority` bidding `index` makes way for `claim`.
    fn yields(&self, priority: Priority, index: Option<Decimal>, claim: Claim) -> bool {
        if !priority.preemptible() {
            return false;
        }
        if priority < claim.priority {
            return true;
        }
        priority == Priority::Spot
            && claim.priority == Priority::Spot
            && matches!((index, claim.bid_index), (Some(own), Some(bid)) if own < bid)
    }

    /// The leases that would yield to `claim` over `[from, until)`, in the
    /// order they are taken: lowest priority, then lowest index, then id.
    fn yielding(&self, claim: Claim, from: Ts, until: Option<Ts>) -> Vec<LeaseId> {
        let mut found: Vec<(Priority, Option<Decimal>, LeaseId)> = self
            .leases
            .values()
            .filter(|l| {
                self.yields(l.priority, l.bid_index, claim)
                    && l.booked_from() < until.unwrap_or(Ts::MAX)
                    && l.booked_until().is_none_or(|u| u > from)
            })
            .map(|l| (l.priority, l.bid_index, l.id))
            .collect();
        found.sort_by(victim_order);
        found.into_iter().map(|(_, _, id)| id).collect()
    }

    /// A view over `[from, until)` in which the leases in `gone` are treated
    /// as ended. O(fleet) for a window; for open-ended work from now only
    /// nodes holding a lease in `gone` are recomputed (the live view already
    /// counts everything else).
    fn view_without(&self, gone: &BTreeSet<LeaseId>, from: Ts, until: Option<Ts>) -> CapacityView {
        let mut view = self.view.clone();
        self.discount(&mut view, gone, from, until);
        view
    }

    /// Sets the nodes of `view` (a copy of the live view) to what they have
    /// free over `[from, until)` with the leases in `gone` treated as ended:
    /// every node for a window, only those holding a lease in `gone` for
    /// open-ended work from now. Returns the nodes it set.
    fn discount(
        &self,
        view: &mut CapacityView,
        gone: &BTreeSet<LeaseId>,
        from: Ts,
        until: Option<Ts>,
    ) -> Vec<NodeId> {
        let open_ended = until.is_none() && from <= self.now;
        let set: Vec<NodeId> = if open_ended {
            self.holding(gone)
        } else {
            self.nodes.keys().copied().collect()
        };
        self.discount_nodes(view, set, gone, from, until)
    }

    /// The nodes the leases in `gone` are on.
    fn holding(&self, gone: &BTreeSet<LeaseId>) -> Vec<NodeId> {
        let holding: BTreeSet<NodeId> = gone
            .iter()
            .filter_map(|l| self.leases.get(*l))
            .map(|l| l.node)
            .collect();
        holding.into_iter().collect()
    }

    /// Sets each of the nodes `set` of `view` to what it has free over
    /// `[from, until)` with the leases in `gone` treated as ended; returns
    /// `set`.
    fn discount_nodes(
        &self,
        view: &mut CapacityView,
        set: Vec<NodeId>,
        gone: &BTreeSet<LeaseId>,
        from: Ts,
        until: Option<Ts>,
    ) -> Vec<NodeId> {
        for id in &set {
            let Some(node) = self.nodes.get(id) else {
                continue;
            };
            let (cpu, mem) = node
                .leases
                .iter()
                .filter(|l| !gone.contains(l))
                .filter_map(|l| self.leases.get(*l))
                .filter(|l| {
                    l.booked_from() < until.unwrap_or(Ts::MAX)
                        && l.booked_until().is_none_or(|u| u > from)
                })
                .fold((0, 0), |(c, m), l| {
                    (c + l.placement.cpu_milli, m + l.placement.memory_mib)
                });
            view.update_node(*id, |v| {
                for (g, cal) in node.spec.gpus.iter().zip(&node.calendars) {
                    let Some(model) = gpuex_wire::catalog::lookup(&g.model) else {
                        continue;
                    };
                    if let Some(gv) = v.gpus.iter_mut().find(|x| x.index == g.index) {
                        gv.free =
                            cal.free_over(model, g.mode, from, until, |b| gone.contains(&b.lease));
                    }
                }
                v.cpu_free = v.cpu_milli.saturating_sub(cpu);
                v.memory_free = v.memory_mib.saturating_sub(mem);
            });
        }
        set
    }

    /// Places `req` at `claim` over `[from, until)` and picks its victims.
    /// ARCHITECTURE.md §3: capacity is taken lowest priority and lowest index first,
    /// and a claim notices only as many leases as it needs. So the placement
    /// is searched with the shortest prefix of the yielding leases (in victim
    /// order) that makes room, not with every yielding lease counted free:
    /// that would let placement land on a GPU held by a high bid while a low
    /// one elsewhere would do. Placement succeeds on a prefix whenever it does
    /// on a shorter one (more free capacity never hurts), so the prefix is
    /// found by bisection: O(log n) views instead of one.
    pub(super) fn plan_preemption(
        &self,
        req: &PlacementRequest,
        claim: impl Into<Claim>,
        from: Ts,
        until: Option<Ts>,
    ) -> Option<(Placement, Vec<LeaseId>)> {
        let (p, allowed) = self.place_over_fewest_yielding(req, claim.into(), from, until)?;
        let node = self.nodes.get(&p.node)?;
        let mut victims = self.slot_victims(&p, &allowed, from, until)?;
        self.add_host_victims(node, &p, &allowed, &mut victims, (from, until))?;
        Some((p, victims))
    }

    /// Places `req` over the view with the shortest prefix of the yielding
    /// leases (in victim order) counted free, found by bisection; the
    /// placement and the leases that prefix allows to go.
    fn place_over_fewest_yielding(
        &self,
        req: &PlacementRequest,
        claim: Claim,
        from: Ts,
        until: Option<Ts>,
    ) -> Option<(Placement, BTreeSet<LeaseId>)> {
        // Nothing could yield: the plain view already said no to open-ended
        // work; reserved windows still need the view over their window.
        let order = if !self.leases.any_preemptible() {
            until?;
            Vec::new()
        } else {
            self.yielding(claim, from, until)
        };
        // A try differs from the view over the window with nothing let go
        // only on the nodes of the leases it lets go: for open-ended work
        // from now that view is the live one; for a window it is worked out
        // once. One copy of it serves every try, each putting back the
        // nodes the last one changed (a window's tries each worked out
        // every node's calendars over the window: at 10,000 GPUs the
        // market-scale bench spent a third of the server's time there).
        let open_ended = until.is_none() && from <= self.now;
        let window_base = (!open_ended).then(|| self.view_without(&BTreeSet::new(), from, until));
        let base = window_base.as_ref().unwrap_or(&self.view);
        let scratch = RefCell::new((base.clone(), Vec::<NodeId>::new()));
        let place_with = |n: usize| {
            let gone: BTreeSet<LeaseId> = order[..n].iter().copied().collect();
            let mut scratch = scratch.borrow_mut();
            let (view, changed) = &mut *scratch;
            for id in changed.drain(..) {
                if let Some(unchanged) = base.node(id) {
                    let unchanged = unchanged.clone();
                    view.update_node(id, |v| *v = unchanged);
                }
            }
            *changed = self.discount_nodes(view, self.holding(&gone), &gone, from, until);
            place(view, req, &self.mix, &self.cfg.policy).map(|p| (p, gone))
        };
        // With everything yielding gone it must fit, or nothing will.
        let mut best = place_with(order.len())?;
        let (mut lo, mut hi) = (0, order.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match place_with(mid) {
                Some(found) => {
                    best = found;
                    hi = mid;
                }
                None => lo = mid + 1,
            }
        }
        Some(best)
    }

    /// The leases among `allowed` that must go, lowest first, for each of the
    /// placement's slots to fit over `[from, until)`.
    fn slot_victims(
        &self,
        p: &Placement,
        allowed: &BTreeSet<LeaseId>,
        from: Ts,
        until: Option<Ts>,
    ) -> Option<Vec<LeaseId>> {
        let node = self.nodes.get(&p.node)?;
        let mut victims: Vec<LeaseId> = Vec::new();
        for gs in &p.gpus {
            let pos = node.spec.gpus.iter().position(|g| g.index == gs.index)?;
            let (model, mode) = self.gpu_kind(p.node, gs.index)?;
            let cal = &node.calendars[pos];
            let mut candidates: Vec<(Priority, Option<Decimal>, LeaseId)> = cal
                .bookings
                .iter()
                .filter(|b| b.overlaps(from, until) && allowed.contains(&b.lease))
                .map(|b| {
                    (
                        b.priority,
                        self.leases.get(b.lease).and_then(|l| l.bid_index),
                        b.lease,
                    )
                })
                .collect();
            candidates.sort_by(victim_order);
            // Add victims lowest first until the slot fits among what stays.
            let fits = |gone: &[LeaseId]| {
                let free = cal.free_over(model, mode, from, until, |b| gone.contains(&b.lease));
                take(free, mode, &gs.slot, model).is_some()
            };
            let mut i = 0;
            while !fits(&victims) {
                let (_, _, id) = candidates.get(i)?;
                if !victims.contains(id) {
                    victims.push(*id);
                }
                i += 1;
            }
        }
        Some(victims)
    }

    /// Host CPU and memory: more victims among `allowed` on the node, lowest
    /// first, until the placement's host share fits beside what stays.
    fn add_host_victims(
        &self,
        node: &NodeState,
        p: &Placement,
        allowed: &BTreeSet<LeaseId>,
        victims: &mut Vec<LeaseId>,
        (from, until): (Ts, Option<Ts>),
    ) -> Option<()> {
        let mut host: Vec<(Priority, Option<Decimal>, LeaseId)> = node
            .leases
            .iter()
            .filter(|l| allowed.contains(l) && !victims.contains(l))
            .filter_map(|l| self.leases.get(*l))
            .map(|l| (l.priority, l.bid_index, l.id))
            .collect();
        host.sort_by(victim_order);
        let used = |gone: &[LeaseId]| {
            node.leases
                .iter()
                .filter(|l| !gone.contains(l))
                .filter_map(|l| self.leases.get(*l))
                .filter(|l| {
                    l.booked_from() < until.unwrap_or(Ts::MAX)
                        && l.booked_until().is_none_or(|u| u > from)
                })
                .fold((0u64, 0u64), |(c, m), l| {
                    (c + l.placement.cpu_milli, m + l.placement.memory_mib)
                })
        };
        let mut h = host.into_iter();
        loop {
            let (c, m) = used(victims);
            if c + p.cpu_milli <= node.spec.cpu_milli && m + p.memory_mib <= node.spec.memory_mib {
                return Some(());
            }
            victims.push(h.next()?.2);
        }
    }

    /// Gives `victim` notice that it ends at `preempt_at` (keeping an earlier
    /// end it already has). The notice is sent at `notice_at`: now, or later
    /// for a reserved window far ahead.
    pub(super) fn give_notice(
        &mut self,
        victim: LeaseId,
        notice_at: Ts,
        preempt_at: Ts,
        reason: NoticeReason,
        events: &mut Vec<Event>,
    ) -> Ts {
        let now = self.now;
        let Some(l) = self.lease_mut(victim) else {
            return preempt_at;
        };
        let end = l.preempt_at.map_or(preempt_at, |t| t.min(preempt_at));
        l.preempt_at = Some(end);
        l.notice_reason.get_or_insert(reason);
        if notice_at <= now {
            if l.noticed_at.is_none() {
                l.noticed_at = Some(now);
                l.notice_at = None;
                events.push(Event::PreemptNotice {
                    lease_id: victim,
                    preempt_at: end,
                    reason,
                    at: now,
                });
                self.begin_preempting(victim, now, events);
            }
        } else {
            let at = l.notice_at.map_or(notice_at, |t| t.min(notice_at));
            l.notice_at = Some(at);
            events.push(Event::PreemptScheduled {
                lease_id: victim,
                notice_at: at,
                preempt_at: end,
                reason,
                at: now,
            });
        }
        self.rebook(victim);
        end
    }

    /// A noticed lease that is running is `preempting` from now on. One
    /// that has not started keeps its state: a pending lease is not
    /// provisioned if its notice ends first, and a provisioning one turns
    /// `preempting` once it runs (see `agent_status`), so that its seconds
    /// until then are billed and the agent learns of the notice.
    pub(super) fn begin_preempting(&mut self, id: LeaseId, at: Ts, events: &mut Vec<Event>) {
        if self
            .leases
            .get(id)
            .is_some_and(|l| l.state == LeaseState::Running)
        {
            self.set_state(id, LeaseState::Preempting, at, events);
        }
    }
}
