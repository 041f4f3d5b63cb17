//! Applying a batch of commands and committing what they did, in one
//! transaction; a failed commit rebuilds the engine from the database.

use super::{Duty, MarketTask, Panicked, Pending, QueueClock, UNWRITTEN_TICKS};
use crate::engine::Command;
use crate::market::handle::{Committed, MarketError};
use crate::market::journal;
use crate::market::restore;
use crate::market::writer::{self, Batch, BillingTerms};
use chrono::{DateTime, SubsecRound, Utc};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;

impl MarketTask {
    pub(super) async fn apply_batch(&mut self, batch: Vec<Pending>) {
        match self.guarded_batch(&batch).await {
            Ok(Ok(results)) => {
                // Answered once what the batch owes is applied too, so a
                // client reads its command's whole effect.
                self.settle_owed().await;
                for (pending, result) in batch.into_iter().zip(results) {
                    let _ = pending.reply.send(result);
                }
            }
            Ok(Err(err)) => {
                self.batch_failed(&err).await;
                for pending in batch {
                    let _ = pending.reply.send(Err(self.not_applied()));
                }
            }
            Err(Panicked) => {
                tracing::error!(commands = batch.len(), "a market batch panicked; rebuilding the engine and applying its commands one by one");
                self.rebuild().await;
                // Alone, each innocent command goes through and only the
                // one that panics again is refused.
                for pending in batch {
                    self.apply_alone(pending).await;
                }
            }
        }
    }

    /// One command in a batch of its own; one that panics is refused.
    pub(super) async fn apply_alone(&mut self, pending: Pending) {
        let batch = [pending];
        let outcome = self.guarded_batch(&batch).await;
        let [pending] = batch;
        let result = match outcome {
            Ok(Ok(mut results)) => {
                self.settle_owed().await;
                results.pop().unwrap_or_else(|| {
                    Err(MarketError::Storage(anyhow::anyhow!(
                        "the command had no result"
                    )))
                })
            }
            Ok(Err(err)) => {
                self.batch_failed(&err).await;
                Err(self.not_applied())
            }
            Err(Panicked) => {
                tracing::error!(command = ?pending.command, "a market command panicked; it is refused and the engine rebuilt");
                self.rebuild().await;
                Err(MarketError::Panicked)
            }
        };
        let _ = pending.reply.send(result);
    }

    /// [`MarketTask::try_batch`], with a panic caught: the transaction is
    /// dropped (rolled back) and the caller rebuilds the engine, whose
    /// memory may be half-changed.
    pub(super) async fn guarded_batch(
        &mut self,
        batch: &[Pending],
    ) -> Result<anyhow::Result<Vec<Result<Committed, MarketError>>>, Panicked> {
        // PostgreSQL keeps microseconds: a reply shows the time as stored.
        let now = self.config.clock.now().trunc_subsecs(6);
        AssertUnwindSafe(self.try_batch(batch, now))
            .catch_unwind()
            .await
            .map_err(|_| Panicked)
    }

    /// A batch that could not commit: memory goes back in step with disk;
    /// a leader that was replaced stops leading.
    pub(super) async fn batch_failed(&mut self, err: &anyhow::Error) {
        if let Some(fenced) = err.downcast_ref::<crate::cluster::Fenced>() {
            tracing::error!(%fenced, "another replica leads the market now; stepping down");
            self.duty = Duty::Detached;
        } else {
            tracing::error!(error = ?err, "market batch failed; rebuilding the engine from the database");
        }
        self.rebuild().await;
    }

    /// Why a command of a failed batch was not applied.
    pub(super) fn not_applied(&self) -> MarketError {
        match self.duty {
            Duty::Leading { .. } => MarketError::NotCommitted,
            Duty::Following | Duty::Detached => MarketError::NoLeader,
        }
    }

    /// Memory back in step with disk, after a failed or panicked batch.
    pub(super) async fn rebuild(&mut self) {
        self.live.forget();
        self.balances.forget();
        self.history.forget();
        self.journal.unwritten.clear();
        self.journal.digest_due = None;
        self.journal.snapshot_due = false;
        self.journal.hash_due = false;
        self.journal.checks.clear();
        match restore::load_at(&self.db, self.config.engine).await {
            Ok((engine, seq)) => {
                self.engine = engine;
                self.journal.seq = seq;
                self.journal.status.restored(seq);
                if let Duty::Leading { .. } = self.duty {
                    self.live.rebuild(&self.engine);
                }
            }
            Err(e) => tracing::error!(error = ?e, "failed to rebuild the engine"),
        }
        match journal::owed_at(&self.db, self.journal.seq).await {
            Ok(owed) => self.owed = owed,
            Err(e) => tracing::error!(error = ?e, "failed to read what the last batch owes"),
        }
        self.queue = QueueClock::waiting_in(&self.engine, self.queue.histogram.clone());
        match restore::demand_cursor(&self.db, &self.engine).await {
            Ok(cursor) => self.demand = cursor,
            Err(e) => tracing::error!(error = ?e, "failed to read the demand log"),
        }
    }

    /// Applies every command of the batch in one transaction. A command the
    /// engine refuses is answered with its error; a storage failure fails the batch.
    pub(super) async fn try_batch(
        &mut self,
        batch: &[Pending],
        now: DateTime<Utc>,
    ) -> anyhow::Result<Vec<Result<Committed, MarketError>>> {
        let ts = now.timestamp();
        // Its own handle, so the transaction does not borrow the task.
        let db = self.db.clone();
        // Charges stop at a node's last heartbeat, and a lost node's leases
        // are settled at it: the beats kept in memory are written first, in
        // their own transaction (the batch's must not wait on theirs). A
        // pass's later slices read what the flusher wrote since.
        let reads_beats = self.billing.begins(ts, self.config.billing_interval_s)
            || batch
                .iter()
                .any(|p| matches!(*p.command, Command::NodeLost { .. }));
        if reads_beats {
            self.heartbeats.flush(&db).await?;
        }
        let mut tx = db.begin().await?;
        let terms = BillingTerms {
            platform_fee: self.config.platform_fee,
            notice_s: self.config.engine.notice_s,
        };
        let mut out = Batch::new(terms, now);
        // Before anything settles: settling flushes the journal, which
        // forgets these balances along with everything else it knew.
        if let Some(balances) = self.balances.take_current(&tx) {
            out.remember_balances(balances);
        }
        // What the last batch's events called for, before anything new
        // (the release of a lease it could not fund first of all).
        let owed = std::mem::take(&mut self.owed);
        let events = self.apply_owed(&mut out, ts, &owed);
        self.record(&mut out, &mut tx, events).await?;
        // Whatever fell due next, so a refused command cannot swallow timer events.
        let due = self
            .step(ts, Command::Tick)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // A clearing that leaves market history as it was changes nothing either.
        let quiet = due.iter().all(|e| self.history.absorbs(e))
            && self.engine.changed_leases().next().is_none()
            && self.engine.changed_orders().next().is_none();
        self.record(&mut out, &mut tx, due.clone()).await?;
        let billing_due = self.billing.due(ts, self.config.billing_interval_s);
        // A clock tick that changed nothing writes nothing: no transaction per second at rest.
        let committed = |events| Committed {
            events,
            at: now,
            order: None,
        };
        if quiet
            && !billing_due
            && owed.is_empty()
            && self.journal.unwritten.len() < UNWRITTEN_TICKS
            && batch.iter().all(|p| matches!(*p.command, Command::Tick))
        {
            // Nothing was written, so the balances taken above still hold.
            self.balances.keep(tx.writer_mark(), out.take_balances());
            self.feed.committed(out.clearings(), false);
            return Ok(batch.iter().map(|_| Ok(committed(Vec::new()))).collect());
        }
        let mut results = Vec::with_capacity(batch.len());
        for pending in batch {
            let mut command = (*pending.command).clone();
            if let Command::Place(place) = &mut command {
                match out.admit(&mut tx, place, pending.meta.as_deref()).await? {
                    writer::Admission::New => {}
                    writer::Admission::Refused(err) => {
                        results.push(Err(err));
                        continue;
                    }
                }
                place.funds_available = out.available_funds(&mut tx, place.buyer).await?;
            }
            if let Command::Convert {
                lease_id,
                funds_available,
                ..
            } = &mut command
            {
                if let Some(buyer) = self.engine.lease(*lease_id).map(|l| l.buyer) {
                    *funds_available = out.available_funds(&mut tx, buyer).await?;
                }
            }
            if matches!(command, Command::Tick) {
                results.push(Ok(Vec::new()));
                continue;
            }
            #[cfg(test)]
            let doomed = super::tests::is_doomed(&command);
            match self.step(ts, command) {
                Ok(events) => {
                    // Tests stand in for an engine bug here: after the engine
                    // changed, before anything of it is committed.
                    #[cfg(test)]
                    assert!(!doomed, "a command doomed by a test panics");
                    self.record(&mut out, &mut tx, events.clone()).await?;
                    out.tell(pending.tell.iter().cloned());
                    results.push(Ok(events));
                }
                Err(e) => results.push(Err(MarketError::Engine(e))),
            }
        }
        if billing_due {
            let slice = self.billing.next_slice(ts);
            let rest = out.bill_running(&mut tx, slice).await?;
            self.billing.billed(rest);
        }
        if let Duty::Leading { fence: Some(epoch) } = self.duty {
            crate::cluster::fence(&mut tx, epoch).await?;
        }
        out.finish(&mut tx, &self.engine, &self.demand).await?;
        let history = self.history.roll(&mut tx, out.clearings()).await?;
        let mut writes = out.final_writes(&tx);
        history.push(&mut writes);
        let written = self.journal_row(&mut writes, out.owed())?;
        let mark = tx.commit_with(writes).await?;
        // Before any command is answered: see `live_leases`.
        self.live.update(&self.engine, out.touched_leases());
        self.owed = out.owed().to_vec();
        self.journal.seq = written.seq;
        self.journal.status.applied(written.seq, written.epoch);
        self.send_digest();
        self.feed.committed(out.clearings(), true);
        if out.told_anything() {
            self.events.poke();
        }
        self.demand = out.demand_after();
        self.queue.follow(&due);
        for events in results.iter().flatten() {
            self.queue.follow(events);
        }
        self.balances.keep(mark, out.take_balances());
        Ok(batch
            .iter()
            .zip(results)
            .map(|(pending, result)| {
                let mut done = committed(result?);
                if let Command::Place(place) = &*pending.command {
                    done.order = out.written_order(place.order_id);
                }
                Ok(done)
            })
            .collect())
    }
}
