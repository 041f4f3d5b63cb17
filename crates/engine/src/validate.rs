//! The engine's invariants, written as code: tests call `validate()` after
//! every step, and debug builds after every command on small states.

use super::core::{Engine, NodeState};
use super::lease::{Lease, NoticeReason};
use super::timers::Timer;
use super::types::{LeaseId, Mode, NodeId};

/// A broken invariant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invariant {
    #[error("node {node} GPU {gpu} is promised twice: {detail}")]
    OverCommitted {
        node: NodeId,
        gpu: u8,
        detail: String,
    },
    #[error("node {node} host CPU or memory is promised twice")]
    HostOverCommitted { node: NodeId },
    #[error("the view of node {node} GPU {gpu} is out of step with its calendar")]
    ViewOutOfStep { node: NodeId, gpu: u8 },
    #[error("lease {0} and its bookings disagree")]
    Bookings(LeaseId),
    #[error("lease {0} was preempted but is neither pooled nor spot")]
    NotPreemptible(LeaseId),
    #[error("lease {0} was preempted without a full notice")]
    NoticeTooShort(LeaseId),
    #[error("the count of live pooled and spot leases is off")]
    PreemptibleCount,
    #[error("lease {0}'s conversion to reserved is out of step with its mode, end or timer")]
    Conversion(LeaseId),
    #[error("the index of listing asks is out of step with the open listings")]
    ListingAsks,
    #[error("placement's index of node states is out of step with the nodes")]
    NodeStates,
    #[error("the ranking of queued spot bids is out of step with the book")]
    SpotRanking,
    #[error("the list of waiting orders is out of step with the book")]
    WaitingList,
}

impl Engine {
    /// Checks every invariant: no slice over-committed at any instant
    /// (reserved windows disjoint follows), the view equals the calendars,
    /// every lease booked where it says, only pooled and spot preempted and
    /// only after a full notice, every open listing indexed once with its fit, the node states indexed
    /// as a fresh index would file them.
    pub fn validate(&self) -> Result<(), Invariant> {
        for (id, node) in &self.nodes {
            self.validate_node(*id, node)?;
        }
        if !self.view.states_in_step() {
            return Err(Invariant::NodeStates);
        }
        for l in self.leases.values() {
            self.validate_lease(l)?;
        }
        if !self.leases.indexes_in_step() {
            return Err(Invariant::PreemptibleCount);
        }
        if !self.listings.asks_in_step() {
            return Err(Invariant::ListingAsks);
        }
        if !self.book.ranked_in_step() {
            return Err(Invariant::SpotRanking);
        }
        if !self.book.waiting_in_step() {
            return Err(Invariant::WaitingList);
        }
        for r in &self.preempted {
            if !r.priority.preemptible() {
                return Err(Invariant::NotPreemptible(r.lease));
            }
            if r.noticed_at
                .is_none_or(|n| r.ended_at - n < self.cfg.notice_s)
            {
                return Err(Invariant::NoticeTooShort(r.lease));
            }
        }
        Ok(())
    }

    /// A node's calendars: none over-committed, each in step with the view,
    /// every booking a live lease or listing there; its host not over-committed.
    fn validate_node(&self, id: NodeId, node: &NodeState) -> Result<(), Invariant> {
        for (g, cal) in node.spec.gpus.iter().zip(&node.calendars) {
            let Some(model) = gpuex_wire::catalog::lookup(&g.model) else {
                continue;
            };
            cal.check(model, g.mode)
                .map_err(|e| Invariant::OverCommitted {
                    node: id,
                    gpu: g.index,
                    detail: e.to_string(),
                })?;
            let expected = cal.free_all(model, g.mode);
            let seen = self
                .view
                .node(id)
                .and_then(|v| v.gpus.iter().find(|x| x.index == g.index))
                .map(|x| x.free);
            if seen != Some(expected) {
                return Err(Invariant::ViewOutOfStep {
                    node: id,
                    gpu: g.index,
                });
            }
            for b in &cal.bookings {
                let a_lease = node.leases.contains(&b.lease) && self.leases.contains(b.lease);
                let a_listing = self.listings.get(b.lease).is_some_and(|l| l.node == id);
                if !a_lease && !a_listing {
                    return Err(Invariant::Bookings(b.lease));
                }
            }
        }
        let leases: Vec<_> = node
            .leases
            .iter()
            .filter_map(|l| self.leases.get(*l))
            .collect();
        if !super::nodes::host_fits(&leases, node.spec.cpu_milli, node.spec.memory_mib) {
            return Err(Invariant::HostOverCommitted { node: id });
        }
        Ok(())
    }

    /// A live lease: booked where it says, noticed only if preemptible, its
    /// conversion timed.
    fn validate_lease(&self, l: &Lease) -> Result<(), Invariant> {
        let node = self.nodes.get(&l.node).ok_or(Invariant::Bookings(l.id))?;
        if !node.leases.contains(&l.id) {
            return Err(Invariant::Bookings(l.id));
        }
        for gs in &l.placement.gpus {
            let pos = node.spec.gpus.iter().position(|g| g.index == gs.index);
            let booked = pos.is_some_and(|p| {
                node.calendars[p]
                    .bookings
                    .iter()
                    .any(|b| b.lease == l.id && b.slot == gs.slot && b.until == l.booked_until())
            });
            if !booked {
                return Err(Invariant::Bookings(l.id));
            }
        }
        if l.notice_reason == Some(NoticeReason::Priority) && !l.priority.preemptible() {
            return Err(Invariant::NotPreemptible(l.id));
        }
        if let Some(w) = l.converts_to_reserved {
            let timed = self.timers.is_set(w.from, Timer::Convert, l.id);
            if l.mode != Mode::OnDemand || l.ends_at != Some(w.until) || !timed {
                return Err(Invariant::Conversion(l.id));
            }
        }
        Ok(())
    }
}
