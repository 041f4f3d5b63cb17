//! A lease waiting for a notice to run out starts as soon as what it waits
//! for is gone (issue 34 item 9): a victim whose workload exits early — the
//! agent reports it `ended` while `preempting` — frees its slice at once,
//! rather than leaving the GPU idle until its deadline.

use super::core::Engine;
use super::events::Event;
use super::lease::LeaseState;
use super::placement::take;
use super::types::{LeaseId, Mode, NodeId};

impl Engine {
    /// Starts now the pending leases on `node_id` that wait for capacity
    /// (not a reserved window) and whose slices are free from now on.
    pub(super) fn start_waiting_early(&mut self, node_id: NodeId, events: &mut Vec<Event>) {
        let now = self.now;
        let Some(node) = self.nodes.get(&node_id) else {
            return;
        };
        let mut waiting: Vec<(super::types::Ts, LeaseId)> = node
            .leases
            .iter()
            .filter_map(|id| self.leases.get(*id))
            .filter(|l| {
                l.state == LeaseState::Pending && l.mode != Mode::Reserved && l.starts_at > now
            })
            .map(|l| (l.starts_at, l.id))
            .collect();
        // The earliest claim first, as the notices were given.
        waiting.sort();
        for (starts_at, id) in waiting {
            if self.free_until(node_id, id, starts_at) {
                self.start_now(id, events);
            }
        }
    }

    /// Whether every slice `id` booked is free over `[now, starts_at)`, the
    /// span it would now hold as well.
    fn free_until(&self, node_id: NodeId, id: LeaseId, starts_at: super::types::Ts) -> bool {
        let (Some(node), Some(lease)) = (self.nodes.get(&node_id), self.leases.get(id)) else {
            return false;
        };
        lease.placement.gpus.iter().all(|gs| {
            let Some(pos) = node.spec.gpus.iter().position(|g| g.index == gs.index) else {
                return false;
            };
            let Some((model, mode)) = self.gpu_kind(node_id, gs.index) else {
                return false;
            };
            let free = node.calendars[pos]
                .free_over(model, mode, self.now, Some(starts_at), |b| b.lease == id);
            take(free, mode, &gs.slot, model).is_some()
        })
    }

    /// Moves a pending lease's start (and so its end) to now and lets the
    /// agent provision it. Host CPU and memory were held for it already.
    fn start_now(&mut self, id: LeaseId, events: &mut Vec<Event>) {
        let now = self.now;
        let Some(l) = self.lease_mut(id) else {
            return;
        };
        l.starts_at = now;
        l.ends_at = l.spec.duration_s.map(|d| now + d);
        l.ready_at = None;
        let (node_id, until) = (l.node, l.booked_until());
        if let Some(node) = self.nodes.get_mut(&node_id) {
            for cal in &mut node.calendars {
                cal.set_window(id, now, until);
            }
        }
        // Its old Ready and End timers are skipped as stale when due.
        self.rebook(id);
        self.set_state(id, LeaseState::Provisioning, now, events);
        self.capacity_changed = true;
    }
}
