//! The `nodes`, `usage_*` and `lease_logs` queries, written once for both databases.

use crate::auth::{Caller, Role};
use crate::db::leases::{self, AgentReported, LeaseRecord};
use crate::db::Text;
use crate::db::{dispatch, execute_tx, Db, Money, Tx};
use crate::engine::{LeaseState, NodeSpec};
use crate::protocol::{LogsUpload, UsageBatch};
use anyhow::Context;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use uuid::Uuid;

/// Node statuses as stored (the market's restore skips `lost`).
pub mod status {
    /// Created; no agent has registered yet.
    pub const DECLARED: &str = "declared";
    /// Its agent registered and heartbeats.
    pub const ONLINE: &str = "online";
    /// Silent for `node_timeout_s`; its leases were ended or moved.
    pub const LOST: &str = "lost";
    /// Its GPUs changed under live leases; cordoned until a person looks.
    pub const QUARANTINED: &str = "quarantined";
    /// Deleted by its provider or an admin (`DELETE /v1/nodes/{id}`): its
    /// token is revoked and no view shows it; the row stays for its leases'
    /// history.
    pub const DELETED: &str = "deleted";
}

/// A node row.
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub id: Uuid,
    pub provider_id: Uuid,
    pub name: String,
    pub region: String,
    pub cordoned: bool,
    pub quarantined: bool,
    pub status: String,
    pub spec: NodeSpec,
    pub inventory_json: Option<String>,
    pub metrics_json: Option<String>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub registered_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// An admin allowed this node the simulated backend.
    pub simulated: bool,
    /// For a person to look at: a re-inventory changed its models or GPU
    /// count (cordoned until an admin accepts), or its agent reported usage
    /// beyond what a lease holds (ARCHITECTURE.md §19).
    pub under_review: bool,
    pub review_reason: Option<String>,
}

type RawNode = (
    Uuid,
    Uuid,
    String,
    String,
    bool,
    bool,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    DateTime<Utc>,
    bool,
    bool,
    Option<String>,
);

const NODE_COLUMNS: &str =
    "id, provider_id, name, region, cordoned, quarantined, status, spec_json, \
     inventory_json, metrics_json, last_heartbeat_at, registered_at, created_at, simulated, \
     under_review, review_reason";

fn node_row(raw: RawNode) -> anyhow::Result<NodeRow> {
    let (
        id,
        provider_id,
        name,
        region,
        cordoned,
        quarantined,
        status,
        spec,
        inv,
        metrics,
        hb,
        reg,
        created,
        simulated,
        under_review,
        review_reason,
    ) = raw;
    Ok(NodeRow {
        id,
        provider_id,
        name,
        region,
        cordoned,
        quarantined,
        status,
        spec: serde_json::from_str(&spec).context("corrupt node spec")?,
        inventory_json: inv,
        metrics_json: metrics,
        last_heartbeat_at: hb,
        registered_at: reg,
        created_at: created,
        simulated,
        under_review,
        review_reason,
    })
}

/// What a new node row holds.
pub struct NewNode<'a> {
    pub id: Uuid,
    pub provider_id: Uuid,
    pub name: &'a str,
    pub region: &'a str,
    pub token_hash: &'a str,
    pub spec: &'a NodeSpec,
}

pub async fn insert(tx: &mut Tx<'_>, node: &NewNode<'_>, now: DateTime<Utc>) -> anyhow::Result<()> {
    let spec = serde_json::to_string(node.spec)?;
    execute_tx!(
        tx,
        "INSERT INTO nodes (id, provider_id, name, region, token_hash, status, spec_json, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        node.id,
        node.provider_id,
        node.name,
        node.region,
        node.token_hash,
        status::DECLARED,
        spec,
        now,
    )
    .context("failed to insert a node")?;
    Ok(())
}

/// A node that has not been deleted.
pub async fn get(db: &Db, id: Uuid) -> anyhow::Result<Option<NodeRow>> {
    Ok(get_any(db, id)
        .await?
        .filter(|n| n.status != status::DELETED))
}

/// A node, deleted or not.
pub async fn get_any(db: &Db, id: Uuid) -> anyhow::Result<Option<NodeRow>> {
    let sql = format!("SELECT {NODE_COLUMNS} FROM nodes WHERE id = $1");
    let raw: Option<RawNode> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(id).fetch_optional(pool).await
    })
    .context("failed to read a node")?;
    raw.map(node_row).transpose()
}

/// The node if `caller` may see it: its provider, or an admin.
pub async fn visible(db: &Db, caller: &Caller, id: Uuid) -> anyhow::Result<Option<NodeRow>> {
    Ok(get(db, id)
        .await?
        .filter(|n| caller.is_admin() || n.provider_id == caller.id))
}

/// Every node of `provider`, or every node for `None`; deleted ones left out.
pub async fn list(db: &Db, provider: Option<Uuid>) -> anyhow::Result<Vec<NodeRow>> {
    let raw: Vec<RawNode> = match provider {
        Some(p) => {
            let sql = format!(
                "SELECT {NODE_COLUMNS} FROM nodes WHERE provider_id = $1 AND status <> $2 \
                 ORDER BY created_at, id"
            );
            dispatch!(db, pool => {
                sqlx::query_as(&sql).bind(p).bind(status::DELETED).fetch_all(pool).await
            })
        }
        None => {
            let sql = format!(
                "SELECT {NODE_COLUMNS} FROM nodes WHERE status <> $1 ORDER BY created_at, id"
            );
            dispatch!(db, pool => sqlx::query_as(&sql).bind(status::DELETED).fetch_all(pool).await)
        }
    }
    .context("failed to list nodes")?;
    raw.into_iter().map(node_row).collect()
}

/// Nodes an agent has registered for and that are neither lost nor
/// deleted: the ones that can go silent.
pub async fn watched(db: &Db) -> anyhow::Result<Vec<NodeRow>> {
    let sql = format!(
        "SELECT {NODE_COLUMNS} FROM nodes WHERE registered_at IS NOT NULL AND status <> $1 \
         AND status <> $2"
    );
    let raw: Vec<RawNode> = dispatch!(db, pool => {
        sqlx::query_as(&sql)
            .bind(status::LOST)
            .bind(status::DELETED)
            .fetch_all(pool)
            .await
    })
    .context("failed to list watched nodes")?;
    raw.into_iter().map(node_row).collect()
}

/// Node counts by status, deleted nodes left out.
pub async fn count_by_status(db: &Db) -> anyhow::Result<Vec<(String, i64)>> {
    Ok(dispatch!(db, pool => {
        sqlx::query_as("SELECT status, COUNT(*) FROM nodes WHERE status <> $1 GROUP BY status")
            .bind(status::DELETED)
            .fetch_all(pool)
            .await
    })?)
}

/// The agent of a node token, if the token is known.
pub async fn caller_by_token(db: &Db, token_hash: &str) -> anyhow::Result<Option<Caller>> {
    let id: Option<Uuid> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT id FROM nodes WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(pool)
            .await
    })
    .context("failed to look up a node token")?;
    Ok(id.map(|id| Caller {
        id,
        role: Role::Agent,
        via: crate::auth::Credential::NodeToken,
        expires_at: None,
    }))
}

pub async fn set_cordon(
    tx: &mut Tx<'_>,
    id: Uuid,
    cordoned: bool,
    quarantined: bool,
    status: &str,
) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE nodes SET cordoned = $1, quarantined = $2, status = $3 WHERE id = $4",
        cordoned,
        quarantined,
        status,
        id,
    )?;
    Ok(())
}

/// Marks a node simulated or not (an admin's call).
pub async fn set_simulated(tx: &mut Tx<'_>, id: Uuid, simulated: bool) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE nodes SET simulated = $1 WHERE id = $2",
        simulated,
        id,
    )?;
    Ok(())
}

/// Ends a review: the node is uncordoned unless it is also quarantined.
pub async fn accept_review(tx: &mut Tx<'_>, id: Uuid) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE nodes SET under_review = $1, review_reason = NULL, cordoned = quarantined \
             WHERE id = $2",
        false,
        id,
    )?;
    Ok(())
}

/// What a registration changes on the node row.
pub struct Registration<'a> {
    pub spec: &'a NodeSpec,
    pub inventory_json: &'a str,
    pub status: &'a str,
    pub cordoned: bool,
    pub quarantined: bool,
    /// Why the node went under review with this registration, if it did.
    pub review: Option<&'a str>,
}

pub async fn register(
    db: &Db,
    id: Uuid,
    reg: &Registration<'_>,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let spec = serde_json::to_string(reg.spec)?;
    let mut tx = db.begin().await?;
    execute_tx!(
        tx,
        "UPDATE nodes SET spec_json = $1, inventory_json = $2, status = $3, cordoned = $4, \
             quarantined = $5, registered_at = $6 WHERE id = $7",
        spec,
        reg.inventory_json,
        reg.status,
        reg.cordoned,
        reg.quarantined,
        now,
        id,
    )
    .context("failed to register a node")?;
    if let Some(reason) = reg.review {
        execute_tx!(
            tx,
            "UPDATE nodes SET under_review = $1, review_reason = $2 WHERE id = $3",
            true,
            reason,
            id,
        )
        .context("failed to put a node under review")?;
    }
    tx.commit().await
}

pub async fn heartbeat(
    db: &Db,
    id: Uuid,
    metrics_json: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let mut tx = db.begin().await?;
    execute_tx!(
        tx,
        "UPDATE nodes SET metrics_json = $1, last_heartbeat_at = $2 WHERE id = $3",
        metrics_json,
        now,
        id,
    )
    .context("failed to store a heartbeat")?;
    tx.commit().await
}

/// Marks a node lost unless it already is (or was deleted); whether this
/// call did it.
pub async fn mark_lost(db: &Db, id: Uuid) -> anyhow::Result<bool> {
    let mut tx = db.begin().await?;
    let changed = execute_tx!(
        tx,
        "UPDATE nodes SET status = $1 WHERE id = $2 AND status <> $1 AND status <> $3",
        status::LOST,
        id,
        status::DELETED,
    )?;
    tx.commit().await?;
    Ok(changed > 0)
}

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
        execute_tx!(
            tx,
            "INSERT INTO usage_records (agent_id, seq, lease_id, interval_start, interval_end, \
                 tflops_s, vram_gb_s, mean_utilization) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            batch.agent_id,
            seq,
            r.lease_id,
            r.interval_start,
            r.interval_end,
            Money(r.tflops_s),
            Money(r.vram_gb_s),
            r.mean_utilization.map(Money),
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
