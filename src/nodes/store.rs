//! The `nodes`, `usage_*` and `lease_logs` queries, written once for both databases.

use super::cache::{announce, Standing};
use crate::auth::Caller;
use crate::db::{dispatch, execute_tx, Db, Text, Tx};
use crate::engine::NodeSpec;
use anyhow::Context;
use chrono::{DateTime, Utc};
pub use gpuex_api::nodes::NodeStatus;
use uuid::Uuid;

mod lease_rows;
pub use lease_rows::{
    apply_usage, last_usage_seq, lease, lease_ended_at, leases_on_node, live_leases, logs,
    put_logs, set_exit_code, set_failure, set_provisioned, LeaseRow, FAILURE_CHARS,
};

/// A node row.
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub id: Uuid,
    pub provider_id: Uuid,
    pub name: String,
    pub region: String,
    pub cordoned: bool,
    pub quarantined: bool,
    pub status: NodeStatus,
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
    Text<NodeStatus>,
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
        status: status.0,
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
        Text(NodeStatus::Declared),
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
        .filter(|n| n.status != NodeStatus::Deleted))
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
                sqlx::query_as(&sql).bind(p).bind(Text(NodeStatus::Deleted)).fetch_all(pool).await
            })
        }
        None => {
            let sql = format!(
                "SELECT {NODE_COLUMNS} FROM nodes WHERE status <> $1 ORDER BY created_at, id"
            );
            dispatch!(db, pool => sqlx::query_as(&sql).bind(Text(NodeStatus::Deleted)).fetch_all(pool).await)
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
            .bind(Text(NodeStatus::Lost))
            .bind(Text(NodeStatus::Deleted))
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
            .bind(Text(NodeStatus::Deleted))
            .fetch_all(pool)
            .await
    })?)
}

/// A node's token hash is `token_hash`: the node and where it stands.
pub async fn standing_by_token(
    db: &Db,
    token_hash: &str,
) -> anyhow::Result<Option<(Uuid, Standing)>> {
    let row: Option<(Uuid, Text<NodeStatus>, Option<DateTime<Utc>>)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT id, status, registered_at FROM nodes WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(pool)
            .await
    })
    .context("failed to look up a node token")?;
    Ok(row.map(|(id, Text(status), registered)| {
        (
            id,
            Standing {
                status,
                registered: registered.is_some(),
            },
        )
    }))
}

/// Where a node stands, deleted or not.
pub async fn standing(db: &Db, id: Uuid) -> anyhow::Result<Option<Standing>> {
    let row: Option<(Text<NodeStatus>, Option<DateTime<Utc>>)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT status, registered_at FROM nodes WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await
    })
    .context("failed to read a node's standing")?;
    Ok(row.map(|(Text(status), registered)| Standing {
        status,
        registered: registered.is_some(),
    }))
}

pub async fn set_cordon(
    tx: &mut Tx<'_>,
    id: Uuid,
    cordoned: bool,
    quarantined: bool,
    status: NodeStatus,
) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE nodes SET cordoned = $1, quarantined = $2, status = $3 WHERE id = $4",
        cordoned,
        quarantined,
        Text(status),
        id,
    )?;
    announce(tx, id).await
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
    pub status: NodeStatus,
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
        Text(reg.status),
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
    announce(&mut tx, id).await?;
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
        Text(NodeStatus::Lost),
        id,
        Text(NodeStatus::Deleted),
    )?;
    if changed > 0 {
        announce(&mut tx, id).await?;
    }
    tx.commit().await?;
    Ok(changed > 0)
}
