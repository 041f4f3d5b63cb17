//! Node loss (ARCHITECTURE.md §7): a node whose agent has been silent for
//! `node_timeout_s` (since its last heartbeat, or its registration) is lost.
//! Its row says `lost` (the market's restore skips it) and the engine ends or
//! re-places its leases; charges stop at the last heartbeat.
//!
//! Silence is counted from this server's start at the earliest: while the
//! server itself was down, its agents could not reach it.

use super::store::{self, NodeRow};
use super::NodesState;
use crate::db::dispatch;
use crate::engine::Command;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Starts the watchdog; it stops when the database closes.
pub fn spawn(state: NodesState) -> tokio::task::JoinHandle<()> {
    let timeout_s = state.settings.node_timeout_s.max(1);
    // Check a few times per timeout, at most every 5 s.
    let every = Duration::from_millis((timeout_s as u64 * 1000 / 3).clamp(200, 5000));
    let started_at = state.settings.clock.now();
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            if closed(&state) {
                break;
            }
            if let Err(e) = check(&state, started_at, state.settings.clock.now()).await {
                if closed(&state) {
                    break;
                }
                tracing::warn!(error = ?e, "node watchdog pass failed");
            }
        }
    })
}

fn closed(state: &NodesState) -> bool {
    dispatch!(state.db, pool => pool.is_closed())
}

/// When the node last showed it is alive.
fn last_sign_of_life(node: &NodeRow) -> Option<DateTime<Utc>> {
    node.last_heartbeat_at.max(node.registered_at)
}

/// One pass: marks nodes silent since `started_at` (or longer) lost and tells
/// the engine; refreshes the node gauges.
pub async fn check(
    state: &NodesState,
    started_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let timeout = chrono::Duration::seconds(state.settings.node_timeout_s.max(1));
    // The rows must say the latest beats: the leader keeps them in memory
    // for up to a second (`db::heartbeats`).
    state.heartbeats.flush(&state.db).await?;
    for node in store::watched(&state.db).await? {
        let Some(seen) = last_sign_of_life(&node).map(|t| t.max(started_at)) else {
            continue;
        };
        if now - seen < timeout {
            continue;
        }
        if store::mark_lost(&state.db, node.id).await? {
            state.cache.forget(node.id);
            tracing::warn!(node = %node.id, last_seen = %seen, "node lost: no heartbeat within the timeout");
            if let Err(e) = state
                .market
                .command(Command::NodeLost { node: node.id })
                .await
            {
                tracing::warn!(node = %node.id, error = %e, "the engine did not take the node loss");
            }
            state.metrics.forget_node(node.id);
        }
    }
    state
        .metrics
        .set_node_counts(&store::count_by_status(&state.db).await?);
    Ok(())
}
