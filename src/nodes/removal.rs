//! Taking nodes off the market for good (ARCHITECTURE.md §19 "Tokens"): a node
//! deleted by its provider or an admin, and every node of a provider who
//! loses the provider role. The node token is revoked in the same
//! transaction as the change, so the agent's next request gets 401; then the
//! engine ends the node's leases exactly as for a lost node (`NodeLost`):
//! on-demand and reserved leases are re-placed where possible, charges stop
//! at the node's last sign of life, what was charged past it is refunded by
//! reversing those charges, and the buyer's holds are released. Nothing else
//! is half-changed.

use super::cache::announce;
use super::store::NodeStatus;
use crate::db::{dispatch_tx, execute_tx, Text, Tx};
use crate::engine::{Command, EngineError};
use crate::market::{MarketError, MarketHandle};
use crate::metrics::Metrics;
use anyhow::Context;
use uuid::Uuid;

/// What a revoked node's `token_hash` becomes: no SHA-256 hex digest equals
/// it, and it stays unique as the column requires.
fn revoked_token(node: Uuid) -> String {
    format!("revoked:{node}")
}

/// Marks `node` deleted and revokes its token, in `tx`.
pub async fn delete(tx: &mut Tx<'_>, node: Uuid) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE nodes SET status = $1, cordoned = $2, token_hash = $3 WHERE id = $4",
        Text(NodeStatus::Deleted),
        true,
        revoked_token(node),
        node,
    )
    .context("failed to delete a node")?;
    announce(tx, node).await
}

/// Revokes the tokens of every node of `provider`, in `tx`, and marks those
/// not deleted lost (cordoned): their agents can no longer report, so their
/// leases cannot go on. Answers the lost ones, for the engine to end (those
/// it ended before it no longer knows).
pub async fn revoke_provider(tx: &mut Tx<'_>, provider: Uuid) -> anyhow::Result<Vec<Uuid>> {
    let nodes: Vec<(Uuid, Text<NodeStatus>)> = dispatch_tx!(tx, conn => {
        sqlx::query_as("SELECT id, status FROM nodes WHERE provider_id = $1")
            .bind(provider)
            .fetch_all(conn)
            .await
    })
    .context("failed to list a provider's nodes")?;
    let mut to_end = Vec::new();
    for (node, Text(was)) in nodes {
        let now_status = match was {
            NodeStatus::Deleted => NodeStatus::Deleted,
            _ => {
                to_end.push(node);
                NodeStatus::Lost
            }
        };
        execute_tx!(
            tx,
            "UPDATE nodes SET status = $1, cordoned = $2, token_hash = $3 WHERE id = $4",
            Text(now_status),
            true,
            revoked_token(node),
            node,
        )
        .context("failed to revoke a node token")?;
        announce(tx, node).await?;
    }
    Ok(to_end)
}

/// Ends `node` in the market as a lost node. A node the engine no longer
/// holds (already ended by an earlier attempt, or lost) is not an error, so
/// a repeated request finishes what a failed one left.
pub async fn end_in_market(
    market: &MarketHandle,
    metrics: &Metrics,
    node: Uuid,
) -> Result<(), MarketError> {
    match market.command(Command::NodeLost { node }).await {
        Ok(_) | Err(MarketError::Engine(EngineError::UnknownNode(_))) => {
            metrics.forget_node(node);
            Ok(())
        }
        Err(e) => Err(e),
    }
}
