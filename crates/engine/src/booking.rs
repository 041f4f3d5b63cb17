//! A lease's life in the calendars: booking it, re-timing it, ending it, and
//! keeping the capacity view and the per-lease indexes in step.

use rust_decimal::Decimal;

use super::calendar::Booking;
use super::core::{Engine, PreemptRecord};
use super::events::Event;
use super::lease::{EndReason, Lease, LeaseState, NoticeReason};
use super::orders::OpenState;
use super::placement::{DemandClass, GpuFree, PartitionMode, Placement};
use super::timers::Timer;
use super::types::{LeaseId, Mode, NodeId, Ts};
use gpuex_wire::catalog;

impl Engine {
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
            node.hold(&lease);
        }
        let req_gpus = u8::try_from(lease.placement.gpus.len()).unwrap_or(1);
        let per_gpu = lease
            .placement
            .asked_milli
            .div_ceil(u32::from(req_gpus.max(1)));
        // Host CPU is part of the demand shape: on CPU-tight nodes it runs
        // out before the GPUs do (the simulator measured this on openb).
        self.mix.record(
            DemandClass::quantized(per_gpu, memory_per_gpu(&lease.placement), req_gpus)
                .with_host_cpu(lease.placement.cpu_milli),
        );
        self.schedule(&lease);
        events.push(Event::LeaseGranted {
            lease: Box::new(lease.clone()),
            at: self.now,
        });
        self.leases.insert(lease);
        self.refresh_node(node_id);
        debug_assert!(
            self.node_sound(node_id),
            "a grant over-committed node {node_id}"
        );
    }

    /// Whether a node's calendars hold no over-commitment (cheap: one node).
    pub(super) fn node_sound(&self, node_id: NodeId) -> bool {
        self.nodes.get(&node_id).is_none_or(|n| {
            n.spec.gpus.iter().zip(&n.calendars).all(|(g, cal)| {
                catalog::lookup(&g.model).is_none_or(|m| cal.check(m, g.mode).is_ok())
            })
        })
    }

    /// Adds the timers a lease's fields call for (stale ones are skipped when due).
    pub(super) fn schedule(&mut self, lease: &Lease) {
        if let Some(t) = lease.booked_until() {
            self.timers.set(t, Timer::End, lease.id);
        }
        if let Some(t) = lease.notice_at {
            self.timers.set(t, Timer::Notice, lease.id);
        }
        if lease.state == LeaseState::Pending {
            self.timers.set(lease.starts_at, Timer::Ready, lease.id);
        }
        if let Some(w) = lease.converts_to_reserved {
            self.timers.set(w.from, Timer::Convert, lease.id);
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
        if let Some(l) = self.lease_mut(id) {
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
        let Some(l) = self.leases.get(id) else {
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
        debug_assert!(
            self.node_sound(node_id),
            "a rebooking over-committed node {node_id}"
        );
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
        let Some(mut lease) = self.leases.remove(id) else {
            return;
        };
        if let Some(node) = self.nodes.get_mut(&lease.node) {
            for cal in &mut node.calendars {
                cal.remove(id);
            }
            node.unhold(&lease);
        }
        self.refresh_node(lease.node);
        self.capacity_changed = true;
        // What waited for this slice starts now rather than at the deadline
        // when the lease went early of its own accord: a preempted workload
        // that exited within its notice, a release, a cancel. (Ends on the
        // clock start waiters by their own timers; node loss re-places.)
        if matches!(
            reason,
            EndReason::AgentEnded
                | EndReason::AgentFailed
                | EndReason::DiskQuota
                | EndReason::Released
                | EndReason::OrderCancelled
        ) {
            self.start_waiting_early(lease.node, events);
        }
        if reason == EndReason::Preempted {
            self.record_preemption(&lease, at);
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
            self.after_spot_end(&lease, reason, at, events);
        }
    }

    /// Keeps who was preempted and when it was told, for `validate`.
    fn record_preemption(&mut self, lease: &Lease, at: Ts) {
        debug_assert!(
            lease.priority.preemptible(),
            "only pooled and spot are preempted"
        );
        self.preempted.push(PreemptRecord {
            lease: lease.id,
            priority: lease.priority,
            noticed_at: lease.noticed_at,
            ended_at: at,
        });
        if self.preempted.len() > 4096 {
            self.preempted.drain(..2048);
        }
    }

    /// A spot lease ended: its order goes back to the queue if it was
    /// preempted or lost its node, and closes otherwise.
    fn after_spot_end(
        &mut self,
        lease: &Lease,
        reason: EndReason,
        at: Ts,
        events: &mut Vec<Event>,
    ) {
        // A workload that exits on its preemption notice (SIGTERM asks it
        // to) ends `agent_ended`, but the order was still preempted: it
        // goes back to the queue however its workload ended (ARCHITECTURE.md §3).
        let noticed_for_priority =
            lease.noticed_at.is_some() && lease.notice_reason == Some(NoticeReason::Priority);
        let requeue = match reason {
            EndReason::Preempted | EndReason::NodeLost | EndReason::CapacityRemoved => true,
            EndReason::AgentEnded | EndReason::AgentFailed | EndReason::DiskQuota => {
                noticed_for_priority
            }
            EndReason::Released
            | EndReason::Expired
            | EndReason::FundsExhausted
            | EndReason::OrderCancelled
            | EndReason::Listed => false,
        };
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
        } else if self
            .book
            .get(order)
            .is_some_and(|o| o.lease == Some(lease.id))
        {
            self.book.remove(order);
        }
    }

    /// Recomputes a node's free state in the view from its calendars and leases.
    pub(super) fn refresh_node(&mut self, node_id: NodeId) {
        let Some(node) = self.nodes.get(&node_id) else {
            return;
        };
        let track_ends = self.cfg.duration_prediction;
        let leases = &self.leases;
        let frees: Vec<(u8, GpuFree, Vec<Option<Ts>>)> = node
            .spec
            .gpus
            .iter()
            .zip(&node.calendars)
            .filter_map(|(g, cal)| {
                let model = catalog::lookup(&g.model)?;
                let ends = if track_ends {
                    cal.bookings
                        .iter()
                        .map(|b| leases.get(b.lease).and_then(Lease::expected_end))
                        .collect()
                } else {
                    Vec::new()
                };
                Some((g.index, cal.free_all(model, g.mode), ends))
            })
            .collect();
        let (cpu, mem) = node.host_used;
        debug_assert_eq!(
            (cpu, mem),
            node.host_used_of(&self.leases),
            "node {node_id}'s host use drifted from its leases"
        );
        let cordoned = node.cordoned;
        self.view.update_node(node_id, |v| {
            for (index, free, ends) in frees {
                if let Some(g) = v.gpus.iter_mut().find(|g| g.index == index) {
                    g.free = free;
                    g.ends = ends;
                }
            }
            v.cpu_free = v.cpu_milli.saturating_sub(cpu);
            v.memory_free = v.memory_mib.saturating_sub(mem);
            v.cordoned = cordoned;
        });
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
