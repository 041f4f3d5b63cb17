//! The node side's lease queries: the leases an agent runs, their reports,
//! usage and logs.

use crate::db::leases::{self, AgentReported, LeaseRecord};
use crate::db::Text;
use crate::db::{dispatch, execute_tx, Db, Money};
use crate::engine::LeaseState;
use crate::protocol::{LogsUpload, UsageBatch};
use anyhow::Context;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use uuid::Uuid;

/// A lease as the node side needs it.
#[derive(Debug, Clone)]
pub struct LeaseRow {
    pub id: Uuid,
    pub node_id: Uuid,
    pub buyer_id: Uuid,
    pub state: LeaseState,
    pub device: Option<String>,
    pub ends_at: Option<i64>,
    pub record: LeaseRecord,
    /// The order's request as the buyer sent it (`command`, `env`).
    pub request_json: String,
    pub order_id: Uuid,
    /// The order's registry credentials, sealed (`market::pull_secrets`).
    pub pull_secret: Option<String>,
}

type RawLease = (
    Uuid,
    Uuid,
    Uuid,
    Text<LeaseState>,
    Option<String>,
    Option<i64>,
    String,
    String,
    Uuid,
    Option<String>,
);

const LEASE_COLUMNS: &str = "l.id, l.node_id, l.buyer_id, l.state, l.device, l.ends_at, \
     l.record_json, o.request_json, l.order_id, s.sealed FROM leases l \
     JOIN orders o ON o.id = l.order_id \
     LEFT JOIN order_pull_secrets s ON s.order_id = l.order_id";

fn lease_row(raw: RawLease) -> anyhow::Result<LeaseRow> {
    let (
        id,
        node_id,
        buyer_id,
        state,
        device,
        ends_at,
        record_json,
        request_json,
        order_id,
        pull_secret,
    ) = raw;
    Ok(LeaseRow {
        id,
        node_id,
        buyer_id,
        state: state.0,
        device,
        ends_at,
        record: LeaseRecord::parse(&record_json).with_context(|| format!("lease {id}"))?,
        request_json,
        order_id,
        pull_secret,
    })
}

/// The leases of a node that still hold (or will hold) their slice.
pub async fn live_leases(db: &Db, node: Uuid) -> anyhow::Result<Vec<LeaseRow>> {
    let sql = format!(
        "SELECT {LEASE_COLUMNS} WHERE l.node_id = $1 AND l.state NOT IN ('ended', 'failed') \
         ORDER BY l.created_at, l.id"
    );
    let raw: Vec<RawLease> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(node).fetch_all(pool).await
    })
    .context("failed to list a node's leases")?;
    raw.into_iter().map(lease_row).collect()
}

pub async fn lease(db: &Db, id: Uuid) -> anyhow::Result<Option<LeaseRow>> {
    let sql = format!("SELECT {LEASE_COLUMNS} WHERE l.id = $1");
    let raw: Option<RawLease> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(id).fetch_optional(pool).await
    })
    .context("failed to read a lease")?;
    raw.map(lease_row).transpose()
}

/// What the agent reported of `lease`, kept on its row.
pub async fn set_provisioned(
    db: &Db,
    lease: Uuid,
    device: &str,
    image_id: Option<&str>,
) -> anyhow::Result<()> {
    leases::set_reported(db, lease, AgentReported::Provisioned { device, image_id }).await
}

pub async fn set_exit_code(db: &Db, lease: Uuid, exit_code: Option<i32>) -> anyhow::Result<()> {
    leases::set_reported(db, lease, AgentReported::ExitCode(exit_code)).await
}

/// The agent's reason for failing `lease`, cut to what a lease view shows.
pub async fn set_failure(db: &Db, lease: Uuid, reason: &str) -> anyhow::Result<()> {
    let text = failure_text(reason);
    leases::set_reported(db, lease, AgentReported::Failure(&text)).await
}

/// A failure reason keeps its first [`FAILURE_CHARS`] characters: the agent
/// writes it, the buyer reads it, and the full story is in the logs.
pub const FAILURE_CHARS: usize = 1000;

fn failure_text(reason: &str) -> String {
    reason.trim().chars().take(FAILURE_CHARS).collect()
}

/// The highest usage seq applied for `agent`.
pub async fn last_usage_seq(db: &Db, agent: Uuid) -> anyhow::Result<Option<i64>> {
    Ok(dispatch!(db, pool => {
        sqlx::query_scalar("SELECT MAX(seq) FROM usage_batches WHERE agent_id = $1")
            .bind(agent)
            .fetch_one(pool)
            .await
    })?)
}

/// Applies a usage batch once: whether it was new. Only the records whose
/// index is not in `refused` are stored; when some are refused the node is
/// marked for review in the same transaction, keeping the first reason seen.
pub async fn apply_usage(
    db: &Db,
    batch: &UsageBatch,
    refused: &BTreeSet<usize>,
    review_reason: Option<&str>,
    now: DateTime<Utc>,
) -> anyhow::Result<bool> {
    let seq = i64::try_from(batch.seq).context("seq out of range")?;
    let mut tx = db.begin().await?;
    let inserted = execute_tx!(
        tx,
        "INSERT INTO usage_batches (agent_id, seq, records, applied_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (agent_id, seq) DO NOTHING",
        batch.agent_id,
        seq,
        (batch.records.len() - refused.len()) as i64,
        now,
    )
    .context("failed to record a usage batch")?;
    if inserted == 0 {
        return Ok(false);
    }
    for (_, r) in batch
        .records
        .iter()
        .enumerate()
        .filter(|(i, _)| !refused.contains(i))
    {
        // Bounded by the lease's GPU memory (usage_bounds.rs) before it gets here.
        let peak = r
            .peak_memory_mb
            .map(i64::try_from)
            .transpose()
            .context("a usage record's peak memory does not fit a BIGINT")?;
        execute_tx!(
            tx,
            "INSERT INTO usage_records (agent_id, seq, lease_id, interval_start, interval_end, \
                 tflops_s, vram_gb_s, mean_utilization, peak_memory_mb) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            batch.agent_id,
            seq,
            r.lease_id,
            r.interval_start,
            r.interval_end,
            Money(r.tflops_s),
            Money(r.vram_gb_s),
            r.mean_utilization.map(Money),
            peak,
        )
        .context("failed to insert a usage record")?;
    }
    if let Some(reason) = review_reason {
        execute_tx!(
            tx,
            "UPDATE nodes SET under_review = TRUE, review_reason = COALESCE(review_reason, $1) \
                 WHERE id = $2",
            reason,
            batch.agent_id,
        )
        .context("failed to mark a node for review")?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Stores a lease's output tail. Once `final_only` (the lease has ended), only
/// a complete tail is taken, and only over one that is not complete yet: the
/// ended lease's output is then fixed. Whether it was stored.
pub async fn put_logs(
    db: &Db,
    lease: Uuid,
    logs: &LogsUpload,
    final_only: bool,
) -> anyhow::Result<bool> {
    if final_only && !logs.complete {
        return Ok(false);
    }
    let total = i64::try_from(logs.total_bytes).unwrap_or(i64::MAX);
    // The condition sits in the statement so two uploads racing past the
    // handler's check cannot both rewrite an ended lease's output.
    let sql = if final_only {
        "INSERT INTO lease_logs (lease_id, tail, total_bytes, complete, updated_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (lease_id) DO UPDATE SET tail = excluded.tail, \
             total_bytes = excluded.total_bytes, complete = excluded.complete, updated_at = excluded.updated_at \
             WHERE lease_logs.complete = FALSE"
    } else {
        "INSERT INTO lease_logs (lease_id, tail, total_bytes, complete, updated_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (lease_id) DO UPDATE SET tail = excluded.tail, \
             total_bytes = excluded.total_bytes, complete = excluded.complete, updated_at = excluded.updated_at"
    };
    let mut tx = db.begin().await?;
    let stored = execute_tx!(tx, sql, lease, &logs.tail, total, logs.complete, logs.at,)
        .context("failed to store logs")?;
    tx.commit().await?;
    Ok(stored > 0)
}

/// When a lease ended (unix seconds), if it has.
pub async fn lease_ended_at(db: &Db, lease: Uuid) -> anyhow::Result<Option<i64>> {
    let ended: Option<Option<i64>> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT ended_at FROM leases WHERE id = $1")
            .bind(lease)
            .fetch_optional(pool)
            .await
    })
    .context("failed to read when a lease ended")?;
    Ok(ended.flatten())
}

/// The latest tail of a lease: (tail, total bytes, complete, taken at).
pub async fn logs(
    db: &Db,
    lease: Uuid,
) -> anyhow::Result<Option<(String, i64, bool, DateTime<Utc>)>> {
    Ok(dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT tail, total_bytes, complete, updated_at FROM lease_logs WHERE lease_id = $1",
        )
        .bind(lease)
        .fetch_optional(pool)
        .await
    })?)
}

/// The leases of `ids` that live on `node` (for checking usage records).
pub async fn leases_on_node(db: &Db, node: Uuid, ids: &[Uuid]) -> anyhow::Result<Vec<Uuid>> {
    let mut found = Vec::new();
    for id in ids {
        let on: Option<Uuid> = dispatch!(db, pool => {
            sqlx::query_scalar("SELECT id FROM leases WHERE id = $1 AND node_id = $2")
                .bind(id)
                .bind(node)
                .fetch_optional(pool)
                .await
        })?;
        found.extend(on);
    }
    Ok(found)
}
