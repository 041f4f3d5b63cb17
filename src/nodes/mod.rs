//! Capacity and its agents (ARCHITECTURE.md §7): providers' nodes and their tokens,
//! the server side of the agent protocol, lease logs, and the watchdog that
//! declares silent nodes lost.
//!
//! - [`routes`]: `/v1/nodes` for providers.
//! - [`agent`]: `/v1/agent/*` for node tokens.
//! - [`admin`]: `PUT /v1/admin/nodes/{id}`: simulated nodes, reviews.
//! - [`logs`]: `GET /v1/leases/{id}/logs` for buyers.
//! - [`checkpoints`]: orders' checkpoints, sent and fetched by agents.
//! - [`outputs`]: what workloads leave in `/outputs`, uploaded by agents, downloaded by buyers.
//! - [`inventory`]: declared and registered inventories into the engine's `NodeSpec`.
//! - [`cache`]: node tokens and standings from memory, kept in step by their writers.
//! - [`watchdog`]: node loss after `node_timeout_s` without a heartbeat.
//! - [`usage_bounds`]: what an agent may report as used, per record.
//! - [`usage_summary`]: a lease's records summed up (peak memory, median utilization).
//! - [`removal`]: deleted nodes and demoted providers' nodes: tokens revoked, leases ended as on loss.

mod admin;
mod agent;
mod assignment_reports;
pub mod cache;
pub mod checkpoints;
pub mod inventory;
mod logs;
pub mod outputs;
pub mod removal;
mod routes;
pub mod store;
mod usage_bounds;
mod usage_summary;
mod view;
pub mod watchdog;

use crate::auth::{Caller, Credential, Role, RouterState};
use crate::catalog::regions::KnownRegions;
use crate::config::Settings;
use crate::db::heartbeats::Heartbeats;
use crate::db::Db;
use crate::market::pull_secrets::PullSecrets;
use crate::market::MarketHandle;
use crate::metrics::Metrics;
use axum::extract::FromRef;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

pub use assignment_reports::FINAL_LOGS_GRACE_S;
pub use cache::NodeCache;
pub use logs::LeaseLogs;
pub use usage_summary::{lease_usage_summary, UsageSummary};
pub use view::{NodeDetail, NodeSummary};

/// What the nodes' routes, the watchdog and the outputs pruner use.
#[derive(Clone)]
pub struct NodesState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub market: MarketHandle,
    pub metrics: Arc<Metrics>,
    pub regions: KnownRegions,
    /// Opens the registry credentials a lease's start action carries.
    pub pull_secrets: PullSecrets,
    /// Where leases' outputs and checkpoints go (ARCHITECTURE.md §21).
    pub outputs: outputs::OutputStore,
    /// Node tokens and standings, answered from memory.
    pub cache: NodeCache,
    /// Heartbeats not yet written (the leader writes them behind).
    pub heartbeats: Heartbeats,
    /// Whether this replica leads: only the leader writes beats behind.
    pub cluster: crate::cluster::Cluster,
}

/// Every route of this module.
pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new()
        .merge(routes::router())
        .merge(agent::router())
        .merge(assignment_reports::router())
        .merge(admin::router())
        .merge(logs::router())
        .merge(outputs::router())
        .merge(checkpoints::router())
}

/// The agent a node token (its hash) belongs to.
pub async fn caller_by_node_token(
    db: &Db,
    cache: &NodeCache,
    token_hash: &str,
) -> anyhow::Result<Option<Caller>> {
    Ok(cache.node_of_token(db, token_hash).await?.map(|id| Caller {
        id,
        role: Role::Agent,
        via: Credential::NodeToken,
        expires_at: None,
    }))
}
