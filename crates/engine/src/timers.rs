//! Time: everything that falls due — ends, notices, pending leases becoming
//! ready, waiting orders expiring — runs in time order on the next tick, so
//! after downtime the first tick catches up on all of it.

use std::collections::BTreeSet;

use uuid::Uuid;

use super::core::Engine;
use super::events::Event;
use super::lease::{EndReason, LeaseState, NoticeReason};
use super::types::Ts;

/// Timer kinds, in the order they run when due at the same instant: ends free
/// capacity before waiting leases start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Timer {
    End,
    Notice,
    Ready,
    Expire,
    ListingEnd,
    /// An on-demand lease's conversion to reserved takes effect.
    Convert,
}

/// Timers by when they fall due, then kind, then the lease, order or
/// listing they are for. A timer is never cancelled: when it falls due its
/// handler checks it still applies (a lease that ended early, a notice
/// moved), which is cheaper than finding it again on every change.
#[derive(Debug, Clone, Default)]
pub(super) struct TimerQueue(BTreeSet<(Ts, Timer, Uuid)>);

impl TimerQueue {
    pub fn set(&mut self, at: Ts, kind: Timer, id: Uuid) {
        self.0.insert((at, kind, id));
    }

    pub fn is_set(&self, at: Ts, kind: Timer, id: Uuid) -> bool {
        self.0.contains(&(at, kind, id))
    }

    /// The earliest timer due at or before `now`, taken off the queue.
    fn pop_due(&mut self, now: Ts) -> Option<(Ts, Timer, Uuid)> {
        let first = *self.0.first()?;
        (first.0 <= now).then(|| {
            self.0.pop_first();
            first
        })
    }
}

impl Engine {
    /// Processes every timer due at or before now, in (time, kind) order.
    pub(super) fn run_timers(&mut self, events: &mut Vec<Event>) {
        while let Some((at, kind, id)) = self.timers.pop_due(self.now) {
            match kind {
                Timer::End => self.due_end(id, at, events),
                Timer::Notice => self.due_notice(id, at, events),
                Timer::Ready => self.due_ready(id, at, events),
                Timer::Expire => self.expire(id, at, events),
                Timer::ListingEnd => self.due_listing_end(id, at, events),
                Timer::Convert => self.due_conversion(id, at, events),
            }
        }
    }

    /// A lease's window, duration or notice ran out at `at` (skipped when stale).
    fn due_end(&mut self, id: uuid::Uuid, at: Ts, events: &mut Vec<Event>) {
        let Some(l) = self.leases.get(id) else {
            return;
        };
        if l.booked_until() != Some(at) {
            return;
        }
        let reason = if l.preempt_at == Some(at) {
            match l.notice_reason {
                Some(NoticeReason::FundsExhausted) => EndReason::FundsExhausted,
                _ => EndReason::Preempted,
            }
        } else if l.vacate_at == Some(at) {
            EndReason::Listed
        } else {
            EndReason::Expired
        };
        // A scheduled notice that was never sent (its lease ends first) is sent now, at the latest.
        if reason == EndReason::Preempted && l.noticed_at.is_none() {
            if let Some(n) = l.notice_at {
                self.due_notice(id, n.min(at), events);
            }
        }
        self.end_lease(id, reason, at, events);
    }

    /// A scheduled preemption notice (reserved window ahead) is due.
    fn due_notice(&mut self, id: uuid::Uuid, at: Ts, events: &mut Vec<Event>) {
        let Some(l) = self.lease_mut(id) else {
            return;
        };
        if l.notice_at != Some(at) || l.noticed_at.is_some() {
            return;
        }
        let Some(preempt_at) = l.preempt_at else {
            return;
        };
        l.noticed_at = Some(at);
        l.notice_at = None;
        let reason = l.notice_reason.unwrap_or(NoticeReason::Priority);
        events.push(Event::PreemptNotice {
            lease_id: id,
            preempt_at,
            reason,
            at,
        });
        self.begin_preempting(id, at, events);
    }

    /// A pending lease's slice is free: the agent may provision it.
    fn due_ready(&mut self, id: uuid::Uuid, at: Ts, events: &mut Vec<Event>) {
        let Some(l) = self.leases.get(id) else {
            return;
        };
        if l.state != LeaseState::Pending || l.starts_at != at {
            return;
        }
        self.set_state(id, LeaseState::Provisioning, at, events);
    }

    /// Tick: timers, then waiting orders, then a step of the spot auction:
    /// of the clearing under way, or of one that begins because its interval
    /// is up or capacity changed since the last clearing.
    pub(super) fn tick(&mut self, events: &mut Vec<Event>) {
        self.run_timers(events);
        self.after_capacity_change(events);
        // A clearing under way goes on; the next is due only once it ended.
        if !self.spot.running() && self.spot.take_due(self.now, self.cfg.spot_interval_s) {
            self.begin_clearing();
        }
        self.step_clearing(events);
    }

    /// When capacity freed: retry waiting orders now, and clear spot at the
    /// next tick (at most one clearing per tick however much churn there is).
    pub(super) fn after_capacity_change(&mut self, events: &mut Vec<Event>) {
        if !self.capacity_changed {
            return;
        }
        self.capacity_changed = false;
        self.retry_waiting(events);
        self.spot.mark_dirty();
        // Granting may not free anything; what it freed was already used.
        self.capacity_changed = false;
    }
}
