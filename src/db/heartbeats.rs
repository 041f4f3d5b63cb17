//! Nodes' heartbeats, written behind (issue 38, BENCHMARKS.md "The whole
//! market at fleet scale"): the leader keeps each node's latest metrics and
//! beat time in memory and writes every changed node in one statement per
//! flush, instead of one `UPDATE nodes` per beat.
//!
//! Who reads `last_heartbeat_at` and `metrics_json` sees the newest beat:
//! - node views overlay what is not written yet ([`Heartbeats::latest`]);
//! - the watchdog and the market's billing and node-loss settling flush
//!   first ([`Heartbeats::flush`]), so the rows they read are current;
//! - the flusher writes the rest every [`FLUSH_EVERY`], and the server
//!   flushes once more on shutdown.
//!
//! A beat stays in memory until a flush that wrote it commits, so a failed
//! flush loses nothing and a reader never misses a beat being written.
//! Flushes take turns: one that returns has written every beat recorded
//! before it began.

use super::{Db, Tx, TxInner, INSERT_CHUNK};
use anyhow::Context;
use chrono::{DateTime, SubsecRound, Utc};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use uuid::Uuid;

/// How often the flusher writes the beats recorded since its last pass:
/// the most a row lags its node's last beat while nothing flushes sooner.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// A node's latest beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beat {
    /// The GPUs' metrics, as `nodes.metrics_json` holds them.
    pub metrics_json: String,
    pub at: DateTime<Utc>,
}

/// The beats not written yet. Cheap to clone.
#[derive(Clone, Default)]
pub struct Heartbeats {
    pending: Arc<Mutex<HashMap<Uuid, Beat>>>,
    /// One flush at a time, so one that returns has waited for any under way.
    flushing: Arc<tokio::sync::Mutex<()>>,
}

impl Heartbeats {
    /// Keeps `node`'s beat for the next flush; an older one than what is
    /// kept (a late request) changes nothing.
    pub fn record(&self, node: Uuid, metrics_json: String, at: DateTime<Utc>) {
        // What PostgreSQL keeps: a view shows the same time before the
        // flush and after it.
        let at = at.trunc_subsecs(6);
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        match pending.get_mut(&node) {
            Some(kept) if kept.at > at => {}
            Some(kept) => *kept = Beat { metrics_json, at },
            None => {
                pending.insert(node, Beat { metrics_json, at });
            }
        }
    }

    /// `node`'s beat not yet written, if any.
    pub fn latest(&self, node: Uuid) -> Option<Beat> {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&node)
            .cloned()
    }

    /// How many nodes have a beat not yet written.
    pub fn unwritten(&self) -> usize {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Writes every beat recorded so far, in one transaction; how many.
    pub async fn flush(&self, db: &Db) -> anyhow::Result<usize> {
        let _turn = self.flushing.lock().await;
        let mut beats: Vec<(Uuid, Beat)> = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(node, beat)| (*node, beat.clone()))
            .collect();
        if beats.is_empty() {
            return Ok(0);
        }
        // The same order in every flush, so two writers of the same rows
        // on PostgreSQL lock them in one order.
        beats.sort_unstable_by_key(|(node, _)| *node);
        // PostgreSQL takes every beat in one statement (three arrays);
        // SQLite binds each value, within its limit on binds.
        let rows_per_statement = match db.pool {
            super::Pool::Postgres(_) => beats.len(),
            super::Pool::Sqlite(_) => INSERT_CHUNK,
        };
        let mut tx = db.begin().await?;
        for chunk in beats.chunks(rows_per_statement) {
            write(&mut tx, chunk).await?;
        }
        tx.commit().await?;
        // Forget what was written unless a newer beat came meanwhile.
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        for (node, beat) in &beats {
            if pending.get(node).is_some_and(|kept| kept.at == beat.at) {
                pending.remove(node);
            }
        }
        Ok(beats.len())
    }

    /// Flushes every [`FLUSH_EVERY`] until the database closes.
    pub fn spawn_flusher(&self, db: Db) -> tokio::task::JoinHandle<()> {
        let beats = self.clone();
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(FLUSH_EVERY);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                if super::dispatch!(db, pool => pool.is_closed()) {
                    break;
                }
                if let Err(e) = beats.flush(&db).await {
                    tracing::warn!(error = ?e, unwritten = beats.unwritten(), "failed to write nodes' heartbeats");
                }
            }
        })
    }
}

/// One statement for `beats`. On PostgreSQL a row whose beat is already
/// newer (written by a replica that led before this one) keeps it; SQLite
/// has one process, whose flushes take turns.
async fn write(tx: &mut Tx<'_>, beats: &[(Uuid, Beat)]) -> anyhow::Result<()> {
    match &mut tx.inner {
        TxInner::Postgres(t) => {
            let ids: Vec<Uuid> = beats.iter().map(|(node, _)| *node).collect();
            let metrics: Vec<&str> = beats.iter().map(|(_, b)| b.metrics_json.as_str()).collect();
            let times: Vec<DateTime<Utc>> = beats.iter().map(|(_, b)| b.at).collect();
            sqlx::query(
                "UPDATE nodes AS n SET metrics_json = b.metrics_json, last_heartbeat_at = b.at \
                 FROM UNNEST($1::uuid[], $2::text[], $3::timestamptz[]) AS b(id, metrics_json, at) \
                 WHERE n.id = b.id AND (n.last_heartbeat_at IS NULL OR n.last_heartbeat_at <= b.at)",
            )
            .bind(&ids)
            .bind(&metrics)
            .bind(&times)
            .execute(&mut **t)
            .await
            .map(|_| ())
        }
        TxInner::Sqlite(t) => {
            // SQLite has no arrays: a VALUES list, whose columns SQLite
            // names column1, column2, column3.
            let rows: Vec<String> = (0..beats.len())
                .map(|i| format!("(${}, ${}, ${})", 3 * i + 1, 3 * i + 2, 3 * i + 3))
                .collect();
            let sql = format!(
                "UPDATE nodes SET metrics_json = b.column2, last_heartbeat_at = b.column3 \
                 FROM (VALUES {}) AS b WHERE nodes.id = b.column1",
                rows.join(", ")
            );
            let mut query = sqlx::query(&sql);
            for (node, beat) in beats {
                query = query
                    .bind(*node)
                    .bind(beat.metrics_json.as_str())
                    .bind(beat.at);
            }
            query.execute(t.begun().await?).await.map(|_| ())
        }
    }
    .context("failed to write nodes' heartbeats")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_beat_does_not_replace_a_newer_one_and_times_keep_microseconds() {
        let beats = Heartbeats::default();
        let node = Uuid::now_v7();
        let at = DateTime::from_timestamp(1_800_000_000, 123_456_789).expect("a time");
        beats.record(node, "[1]".into(), at);
        let kept = beats.latest(node).expect("kept");
        assert_eq!(kept.at.timestamp_subsec_nanos(), 123_456_000);
        // A request that took longer arrives after a newer one.
        beats.record(node, "[0]".into(), at - chrono::Duration::seconds(1));
        assert_eq!(beats.latest(node), Some(kept.clone()));
        beats.record(node, "[2]".into(), at + chrono::Duration::seconds(5));
        assert_eq!(
            beats.latest(node).map(|b| b.metrics_json),
            Some("[2]".into())
        );
        assert_eq!(beats.unwritten(), 1);
        assert_eq!(beats.latest(Uuid::now_v7()), None);
    }
}
