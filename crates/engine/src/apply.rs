//! The one entry point: `apply(now, command) -> events`, and the lease
//! commands (release, agent reports, funds exhausted, cancel).

use super::commands::{AgentReport, Command};
use super::core::{Engine, EngineError};
use super::events::Event;
use super::lease::{EndReason, LeaseState, NoticeReason};
use super::orders::OpenState;
use super::types::{LeaseId, Mode, OrderId, Ts};

impl Engine {
    /// Applies one command at `now` (unix seconds) and returns its events.
    /// Time never runs backwards inside the engine: an earlier `now` counts as
    /// the latest seen. The same commands in the same order give the same events.
    pub fn apply(&mut self, now: Ts, cmd: Command) -> Result<Vec<Event>, EngineError> {
        self.now = self.now.max(now);
        self.refresh_offpeak();
        self.leases.clear_changed();
        self.listings.clear_changed();
        self.book.clear_changed();
        let mut events = Vec::new();
        // Whatever fell due runs first, so no command sees stale leases.
        self.run_timers(&mut events);
        match cmd {
            Command::UpsertNode(spec) => self.upsert_node(spec, &mut events)?,
            Command::Cordon { node, cordoned } => self.cordon(node, cordoned)?,
            Command::NodeLost { node } => self.node_lost(node, &mut events)?,
            Command::SetPrices(prices) => self.set_prices(prices)?,
            Command::SetRegion { name, timezone } => self.set_region(name, &timezone),
            Command::SetForecast(markets) => self.set_forecast(markets),
            Command::Place(po) => self.place_order(po, &mut events),
            Command::Cancel { order_id } => self.cancel(order_id, &mut events)?,
            Command::Release { lease_id } => self.release(lease_id, &mut events)?,
            Command::AgentStatus { lease_id, status } => {
                self.agent_status(lease_id, status, &mut events)?
            }
            Command::FundsExhausted {
                lease_id,
                funded_until,
            } => self.funds_exhausted(lease_id, funded_until, &mut events)?,
            Command::ListResale(ask) => self.list_resale(ask, &mut events)?,
            Command::CancelListing { listing_id, seller } => {
                self.cancel_listing(listing_id, seller, &mut events)?
            }
            Command::Convert {
                lease_id,
                to,
                funds_available,
            } => self.convert(lease_id, to, funds_available, &mut events)?,
            Command::Tick => self.tick(&mut events),
        }
        // Capacity that freed inside a command is offered at once.
        self.after_capacity_change(&mut events);
        // A lease's expected end can move without its bookings changing
        // (a conversion, a notice): its GPUs' predicted ends follow, so the
        // view after every command is what a restore would rebuild.
        if self.cfg.duration_prediction {
            let nodes: std::collections::BTreeSet<_> = self
                .leases
                .changed()
                .filter_map(|id| self.leases.get(id).map(|l| l.node))
                .collect();
            for node in nodes {
                self.refresh_node(node);
            }
        }
        // The spot ranking is brought in step here too, so that between
        // commands it is whole (as `validate` checks) and not only when read.
        self.book.sync_ranked();
        #[cfg(debug_assertions)]
        if self.leases.len() < 64 {
            debug_assert_eq!(self.validate(), Ok(()));
        }
        Ok(events)
    }

    fn cancel(&mut self, order_id: OrderId, events: &mut Vec<Event>) -> Result<(), EngineError> {
        let Some(o) = self.book.get(order_id) else {
            return Err(if self.leases.has_order(order_id) {
                EngineError::NotCancellable(order_id)
            } else {
                EngineError::UnknownOrder(order_id)
            });
        };
        let lease = (o.state == OpenState::SpotLive)
            .then_some(o.lease)
            .flatten();
        self.book.remove(order_id);
        if let Some(l) = lease {
            self.end_lease(l, EndReason::OrderCancelled, self.now, events);
        }
        events.push(Event::OrderCancelled {
            order_id,
            at: self.now,
        });
        Ok(())
    }

    fn live_lease(&self, id: LeaseId) -> Result<&super::lease::Lease, EngineError> {
        self.leases.get(id).ok_or(EngineError::UnknownLease(id))
    }

    fn release(&mut self, id: LeaseId, events: &mut Vec<Event>) -> Result<(), EngineError> {
        self.live_lease(id)?;
        self.end_lease(id, EndReason::Released, self.now, events);
        Ok(())
    }

    fn agent_status(
        &mut self,
        id: LeaseId,
        status: AgentReport,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let state = self.live_lease(id)?.state;
        match status {
            AgentReport::Provisioned => match state {
                LeaseState::Provisioning => {
                    self.set_state(id, LeaseState::Running, self.now, events);
                    // Given notice before it ran: it runs, billed, until then.
                    if self.leases.get(id).is_some_and(|l| l.noticed_at.is_some()) {
                        self.set_state(id, LeaseState::Preempting, self.now, events);
                    }
                }
                LeaseState::Preempting | LeaseState::Running => {}
                _ => return Err(EngineError::InvalidTransition { lease: id, state }),
            },
            AgentReport::Ended => self.end_lease(id, EndReason::AgentEnded, self.now, events),
            AgentReport::Failed => self.end_lease(id, EndReason::AgentFailed, self.now, events),
            AgentReport::DiskQuota => self.end_lease(id, EndReason::DiskQuota, self.now, events),
        }
        Ok(())
    }

    /// A hold renewal failed. Reserved: the lease ends where its funding ends.
    /// Others: notice starts now and the lease ends a notice period later.
    fn funds_exhausted(
        &mut self,
        id: LeaseId,
        funded_until: Option<Ts>,
        events: &mut Vec<Event>,
    ) -> Result<(), EngineError> {
        let now = self.now;
        let lease = self.live_lease(id)?;
        let reserved = lease.mode == Mode::Reserved;
        let end = if reserved {
            funded_until.unwrap_or(now).max(now)
        } else {
            now + self.cfg.notice_s
        };
        if end <= now || (reserved && end <= lease.starts_at) {
            self.end_lease(id, EndReason::FundsExhausted, now, events);
            return Ok(());
        }
        if let Some(l) = self.lease_mut(id) {
            l.notice_reason = Some(NoticeReason::FundsExhausted);
        }
        // Reserved: the workload hears of it a notice period before the funded end.
        let notice_at = if reserved {
            (end - self.cfg.notice_s).max(now)
        } else {
            now
        };
        self.give_notice(id, notice_at, end, NoticeReason::FundsExhausted, events);
        Ok(())
    }
}
