//! The early `rebalance` warning (ARCHITECTURE.md §3, §15): a spot lease hears that
//! it is at elevated risk of preemption before its notice comes. Risk is the
//! clearing index within 10 % of its bid, or — whatever the bid, since the
//! clearing index is capped below high bids — its capacity booked or
//! forecast for on-demand or reserved work within 15 minutes.

use super::core::Engine;
use super::events::{Event, RebalanceReason};
use super::lease::Lease;
use super::pricing::{PriceRule, REBALANCE_WITHIN};
use super::types::Ts;

/// How far ahead a booking counts as elevated risk.
pub const RISK_HORIZON_S: Ts = 15 * 60;

impl Engine {
    /// Warns each live spot lease once when its risk rises, and re-arms the
    /// warning when the risk passes.
    pub(super) fn warn_rebalance(&mut self, events: &mut Vec<Event>) {
        let now = self.now;
        let short = self.forecast_short();
        let ids = self.leases.spot_ids();
        for id in ids {
            let Some(l) = self.leases.get(id) else {
                continue;
            };
            let Some(bid_index) = l.bid_index else {
                continue;
            };
            let market = (l.model.clone(), l.region.clone());
            let clearing = self.spot.index(&market);
            let reason = if clearing.is_some_and(|c| c >= bid_index * REBALANCE_WITHIN) {
                Some(RebalanceReason::ClearingNear)
            } else if self.booked_soon(l) {
                Some(RebalanceReason::Booked)
            } else if short.contains(&market) {
                Some(RebalanceReason::Forecast)
            } else {
                None
            };
            let clearing_index = clearing.unwrap_or(match l.rule {
                PriceRule::Spot { clearing_index, .. } => clearing_index,
                PriceRule::ListMultiple { .. } => bid_index,
            });
            let (warned, noticed) = (l.rebalance_at.is_some(), l.noticed_at.is_some());
            match reason {
                Some(reason) if !warned && !noticed => {
                    if let Some(l) = self.lease_mut(id) {
                        l.rebalance_at = Some(now);
                    }
                    events.push(Event::RebalanceWarning {
                        lease_id: id,
                        clearing_index,
                        bid_index,
                        reason,
                        at: now,
                    });
                }
                None if warned => {
                    if let Some(l) = self.lease_mut(id) {
                        l.rebalance_at = None;
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether a claim already booked the lease's slice within the horizon:
    /// a reservation (or other work that outranks it) scheduled its notice,
    /// and the lease ends by then. Every booking that overlaps a spot
    /// lease's slice schedules such a notice (the calendars never promise a
    /// slice twice), so this is where a booking shows.
    fn booked_soon(&self, l: &Lease) -> bool {
        l.noticed_at.is_none()
            && l.notice_at.is_some()
            && l.preempt_at.is_some_and(|t| t <= self.now + RISK_HORIZON_S)
    }
}
