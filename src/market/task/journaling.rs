//! The market task's part in the journal (ARCHITECTURE.md §20): what a leader
//! writes with each batch, how a follower follows it, and a promotion.

use super::{Duty, MarketTask, QueueClock};
use crate::engine::{Command, EngineError, Event};
use crate::market::journal::{self, Step};
use crate::market::restore;
use chrono::Utc;

/// At most this many of a follower's digests wait for the leader's.
const WAITING_CHECKS: usize = 4;

/// A follower's digest of its engine at a digest row, hashed off the task,
/// and the leader's once known.
pub(super) struct DigestCheck {
    seq: i64,
    ours: tokio::task::JoinHandle<String>,
    leader: Option<String>,
}

/// The journal row a batch appended.
pub(super) struct Written {
    pub(super) seq: i64,
    pub(super) epoch: i64,
}

impl MarketTask {
    /// A follower's engine, brought to the journal's end, becomes the
    /// leader's; the leader-only state (balances seen, market history, the
    /// demand log's cursor) is read afresh, as after a rebuild.
    pub(super) async fn promote(&mut self) {
        let before = self.journal.status.restores();
        self.catch_up().await;
        if self.journal.status.restores() != before {
            // Catching up restored the engine, and with it the rest.
            return;
        }
        self.balances.forget();
        self.history.forget();
        self.journal.unwritten.clear();
        self.queue = QueueClock::waiting_in(&self.engine, self.queue.histogram.clone());
        match journal::owed_at(&self.db, self.journal.seq).await {
            Ok(owed) => self.owed = owed,
            Err(e) => {
                tracing::error!(error = ?e, "failed to read what the last batch owes; restoring the engine");
                self.rebuild().await;
                return;
            }
        }
        match restore::demand_cursor(&self.db, &self.engine).await {
            Ok(cursor) => self.demand = cursor,
            Err(e) => {
                tracing::error!(error = ?e, "failed to read the demand log; restoring the engine");
                self.rebuild().await;
            }
        }
    }

    /// Applies the journal after this replica's engine, row by row, until
    /// none is left. A gap (the rows it needs were trimmed) or a digest
    /// that does not match the leader's restores the engine.
    pub(super) async fn catch_up(&mut self) {
        // Wall time, not the market's clock: lag is the replica's, not the market's.
        self.journal.status.behind(Utc::now().timestamp_millis());
        loop {
            let entries = match journal::after(&self.db, self.journal.seq).await {
                Ok(entries) => entries,
                Err(e) => {
                    tracing::error!(error = ?e, "failed to read the journal; restoring the engine");
                    self.rebuild().await;
                    return;
                }
            };
            if entries.is_empty() {
                self.journal.status.caught_up();
                self.check_digests().await;
                return;
            }
            for entry in entries {
                if entry.seq != self.journal.seq + 1 {
                    tracing::warn!(
                        applied = self.journal.seq,
                        next = entry.seq,
                        "the journal this replica needs was trimmed; restoring the engine"
                    );
                    self.rebuild().await;
                    return;
                }
                journal::apply(&mut self.engine, &entry.steps);
                let lag_ms = Utc::now().timestamp_millis() - entry.at_ms;
                #[allow(clippy::cast_precision_loss)]
                self.journal.row_lag.observe(lag_ms.max(0) as f64 / 1000.0);
                self.journal.seq = entry.seq;
                self.journal.status.applied(entry.seq, entry.epoch);
                // A row the leader hashes its engine at (its digest may
                // still be pending).
                if let Some(digest) = entry.digest {
                    let snapshot = self.engine.snapshot();
                    self.journal.checks.push(DigestCheck {
                        seq: entry.seq,
                        ours: tokio::task::spawn_blocking(move || journal::digest_of(snapshot)),
                        leader: Some(digest).filter(|d| d != journal::DIGEST_PENDING),
                    });
                }
            }
        }
    }

    /// Compares each of this follower's digests whose hash is done with the
    /// leader's, once the leader wrote it; a mismatch restores the engine.
    async fn check_digests(&mut self) {
        let mut waiting = Vec::new();
        for mut check in std::mem::take(&mut self.journal.checks) {
            if !check.ours.is_finished() {
                waiting.push(check);
                continue;
            }
            let leader = match check.leader.take() {
                Some(digest) => digest,
                None => match journal::leader_digest(&self.db, check.seq).await {
                    Ok(Some(Some(digest))) => digest,
                    // Trimmed: nothing to compare with any more.
                    Ok(Some(None)) => continue,
                    Ok(None) | Err(_) => {
                        waiting.push(check);
                        continue;
                    }
                },
            };
            let Ok(ours) = (&mut check.ours).await else {
                continue;
            };
            self.journal.status.checked();
            if ours != leader {
                self.journal.status.mismatched();
                tracing::error!(
                    seq = check.seq,
                    leader = %leader,
                    ours = %ours,
                    "this replica's engine differs from the leader's; restoring it"
                );
                self.rebuild().await;
                return;
            }
        }
        // A digest the leader never wrote (it stopped) is given up.
        let excess = waiting.len().saturating_sub(WAITING_CHECKS);
        waiting.drain(..excess);
        self.journal.checks = waiting;
    }

    /// Hashes the leader's engine as the last digest row left it, off the
    /// task, and keeps the digest in that row; on a snapshot row, keeps the
    /// snapshot too (which trims the journal), also off the batch's path.
    pub(super) fn send_digest(&mut self) {
        let Some((seq, snapshot)) = self.journal.digest_due.take() else {
            return;
        };
        let keep_snapshot = std::mem::take(&mut self.journal.snapshot_due);
        let digest_row = std::mem::take(&mut self.journal.hash_due);
        let at_ms = self.config.clock.now().timestamp_millis();
        let db = self.db.clone();
        tokio::spawn(async move {
            let work = tokio::task::spawn_blocking(move || {
                let state = keep_snapshot.then(|| serde_json::to_string(&snapshot));
                let digest = digest_row.then(|| journal::digest_of(snapshot));
                (state, digest)
            });
            let Ok((state, digest)) = work.await else {
                return;
            };
            if let Some(digest) = digest {
                if let Err(e) = journal::keep_digest(&db, seq, &digest).await {
                    tracing::warn!(error = ?e, seq, "failed to keep the journal's digest");
                }
            }
            let kept = match state {
                Some(Ok(state)) => journal::keep_snapshot(&db, seq, at_ms, state).await,
                Some(Err(e)) => Err(e.into()),
                None => Ok(()),
            };
            if let Err(e) = kept {
                tracing::warn!(error = ?e, seq, "failed to keep the journal's snapshot");
            }
        });
    }

    /// Applies `command` to the engine, and keeps it for the batch's
    /// journal row: every change to a leader's engine goes through here.
    pub(super) fn step(&mut self, ts: i64, command: Command) -> Result<Vec<Event>, EngineError> {
        self.journal.unwritten.push(Step {
            at: ts,
            command: command.clone(),
        });
        self.engine.apply(ts, command)
    }

    /// Adds the batch's journal row to its final statements: what the engine
    /// applied since the last row. On a digest or snapshot row it takes the
    /// engine's snapshot for [`MarketTask::send_digest`] after the commit.
    pub(super) fn journal_row(
        &mut self,
        writes: &mut crate::db::Writes<'_>,
        owed: &[crate::market::writer::Followup],
    ) -> anyhow::Result<Written> {
        let seq = self.journal.seq + 1;
        // Wall time just before the commit, not the batch's market time:
        // followers measure their lag from it (`gpuex_journal_row_lag_seconds`).
        let at_ms = Utc::now().timestamp_millis();
        let epoch = match self.duty {
            Duty::Leading { fence: Some(epoch) } => epoch,
            _ => 0,
        };
        let commands = journal::encode(&self.journal.unwritten)?;
        let snapshot_row = seq % self.config.journal_snapshot_every == 0;
        let digest_row = seq % journal::DIGEST_EVERY == 0
            && at_ms - self.journal.last_digest_ms >= journal::DIGEST_SPACING_MS;
        if digest_row {
            self.journal.last_digest_ms = at_ms;
        }
        if digest_row || snapshot_row {
            // Hashed and encoded after the commit, off the batch's path.
            self.journal.digest_due = Some((seq, self.engine.snapshot()));
            self.journal.snapshot_due = snapshot_row;
            self.journal.hash_due = digest_row;
        }
        let row = journal::Append {
            seq,
            epoch,
            at_ms,
            commands,
            owed: journal::encode_owed(owed)?,
            digest: digest_row,
        };
        journal::push_append(writes, row);
        // Written or not, these are in the row or the engine is rebuilt.
        self.journal.unwritten.clear();
        Ok(Written { seq, epoch })
    }
}
