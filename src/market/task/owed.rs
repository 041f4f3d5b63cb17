//! What a batch owes the next (ARCHITECTURE.md §20): its events' follow-ups (a
//! release, a funds notice) are applied by the next batch, first, never fed
//! back into the engine within the batch that found them.

use super::{Batch, Duty, MarketTask, Panicked, OWED_ROUNDS};
use crate::engine::{Command, Event, LeaseState};
use crate::events::{EventType, NewEvent, Owner};
use crate::market::writer::Followup;

impl MarketTask {
    /// Has the batch record `events`; what they call for is owed to the
    /// next batch, never applied within this one.
    pub(super) async fn record(
        &mut self,
        out: &mut Batch,
        tx: &mut crate::db::Tx<'_>,
        events: Vec<Event>,
    ) -> anyhow::Result<()> {
        out.note_changes(&self.engine);
        out.record(tx, events).await
    }

    /// Applies what the last batch owes (funds notices only to leases not
    /// already on notice, decided against the engine as that batch left
    /// it); returns the events, for this batch to record.
    pub(super) fn apply_owed(&mut self, out: &mut Batch, ts: i64, owed: &[Followup]) -> Vec<Event> {
        let mut commands = Vec::new();
        for followup in owed {
            if let Followup::Unfunded { lease_id } = followup {
                out.releasing_unfunded(*lease_id);
            }
            let Some(command) = self.command_for(*followup) else {
                continue;
            };
            if let Some(low) = funds_low(*followup, ts) {
                out.tell([low]);
            }
            commands.push(command);
        }
        let mut events = Vec::new();
        for command in commands {
            match self.step(ts, command) {
                Ok(more) => events.extend(more),
                Err(e) => tracing::warn!(error = %e, "follow-up command refused"),
            }
            out.note_changes(&self.engine);
        }
        events
    }

    /// A leader's batches until none owes the next anything: what a batch
    /// owes is applied at once, each round in a transaction of its own.
    /// Bounded, as a chain of follow-ups ends within a few (a release, then
    /// its final charge); what is left goes with the next batch. Follow-ups
    /// that panic the engine are dropped, so they cannot stop the market.
    pub(super) async fn settle_owed(&mut self) {
        for _ in 0..OWED_ROUNDS {
            if self.owed.is_empty() || !matches!(self.duty, Duty::Leading { .. }) {
                return;
            }
            match self.guarded_batch(&[]).await {
                Ok(Ok(_)) => {}
                Ok(Err(err)) => {
                    self.batch_failed(&err).await;
                    return;
                }
                Err(Panicked) => {
                    tracing::error!(
                        "follow-up commands panicked; they are dropped and the engine rebuilt"
                    );
                    self.rebuild().await;
                    self.owed.clear();
                    return;
                }
            }
        }
    }

    fn command_for(&self, followup: Followup) -> Option<Command> {
        let noticed = |lease_id, preempting_counts: bool| {
            self.engine.lease(lease_id).is_some_and(|l| {
                l.notice_reason.is_some()
                    || (preempting_counts && l.state == LeaseState::Preempting)
            })
        };
        match followup {
            Followup::Unfunded { lease_id } => Some(Command::Release { lease_id }),
            Followup::Unpaid {
                lease_id,
                funded_until,
            } => (!noticed(lease_id, true)).then_some(Command::FundsExhausted {
                lease_id,
                funded_until: Some(funded_until),
            }),
            Followup::HoldShort {
                lease_id,
                funded_until,
            } => (!noticed(lease_id, false)).then_some(Command::FundsExhausted {
                lease_id,
                funded_until,
            }),
        }
    }
}

/// `funds.low`: the wallet could not fund a lease further, so it gets notice.
fn funds_low(followup: Followup, ts: i64) -> Option<NewEvent> {
    let (lease_id, funded_until) = match followup {
        Followup::Unfunded { .. } => return None,
        Followup::Unpaid {
            lease_id,
            funded_until,
        } => (lease_id, Some(funded_until)),
        Followup::HoldShort {
            lease_id,
            funded_until,
        } => (lease_id, funded_until),
    };
    let time = |ts: i64| chrono::DateTime::from_timestamp(ts, 0);
    Some(NewEvent::new(
        Owner::BuyerOfLease(lease_id),
        EventType::FundsLow,
        time(ts).unwrap_or_default(),
        serde_json::json!({
            "lease_id": lease_id,
            // Paid up to here; the lease's notice runs out soon after.
            "funded_until": funded_until.and_then(time),
        }),
    ))
}
