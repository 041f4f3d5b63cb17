//! How long each filled order waited in the queue.

use crate::engine::Engine;

/// When each open order joined the queue, so its fill can observe the wait.
pub(super) struct QueueClock {
    since: std::collections::HashMap<crate::engine::types::OrderId, i64>,
    pub(super) histogram: prometheus::Histogram,
}

impl QueueClock {
    /// The orders open in `engine`, waiting since they were accepted.
    pub(super) fn waiting_in(engine: &Engine, histogram: prometheus::Histogram) -> QueueClock {
        let since = engine
            .open_orders()
            .map(|o| (o.id, o.accepted_at))
            .collect();
        QueueClock { since, histogram }
    }

    /// Follows committed events: an order joins at acceptance or re-queue,
    /// leaves at its fill (observing the wait; `0` for a fill at once) or end.
    pub(super) fn follow(&mut self, events: &[crate::engine::Event]) {
        use crate::engine::Event;
        for event in events {
            match event {
                Event::OrderAccepted { order_id, at } | Event::OrderRequeued { order_id, at } => {
                    self.since.insert(*order_id, *at);
                }
                Event::OrderFilled { order_id, at, .. } => {
                    let waited = self.since.remove(order_id).map_or(0, |since| at - since);
                    // Whole seconds: the engine's clock.
                    #[allow(clippy::cast_precision_loss)]
                    self.histogram.observe(waited.max(0) as f64);
                }
                Event::OrderRejected { order_id, .. }
                | Event::OrderCancelled { order_id, .. }
                | Event::OrderExpired { order_id, .. } => {
                    self.since.remove(order_id);
                }
                _ => {}
            }
        }
    }
}
