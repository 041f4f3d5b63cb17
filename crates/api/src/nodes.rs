//! Nodes, and what a lease leaves behind: its logs and outputs.

use chrono::{DateTime, Utc};
use gpuex_wire::catalog::text_names;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Where a node stands; rows keep the name as text (the market's restore
/// skips `lost` and `deleted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// Created; no agent has registered yet.
    Declared,
    /// Its agent registered and heartbeats.
    Online,
    /// Silent for `node_timeout_s`; its leases were ended or moved.
    Lost,
    /// Its GPUs changed under live leases; cordoned until a person looks.
    Quarantined,
    /// Deleted by its provider or an admin (`DELETE /v1/nodes/{id}`): its
    /// token is revoked and no view shows it (so it is never serialized);
    /// the row stays for its leases' history.
    #[serde(skip)]
    Deleted,
}

text_names!(NodeStatus {
    Declared => "declared",
    Online => "online",
    Lost => "lost",
    Quarantined => "quarantined",
    Deleted => "deleted",
});

/// A node as listed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct NodeSummary {
    pub id: Uuid,
    pub provider_id: Uuid,
    pub name: String,
    pub region: String,
    /// Its failure domain within the region, if the provider named one.
    pub zone: Option<String>,
    /// `declared` (no agent yet), `online`, `lost` or `quarantined`.
    pub status: NodeStatus,
    /// No new placements while cordoned.
    pub cordoned: bool,
    /// The GPUs changed under live leases; cleared by uncordoning.
    pub quarantined: bool,
    /// An admin allowed this node the `simulated` agent backend.
    pub simulated: bool,
    /// For a person to look at: a re-inventory changed its models or GPU
    /// count (cordoned until an admin accepts with `PUT /v1/admin/nodes/{id}`),
    /// or its agent reported usage beyond what a lease holds times the
    /// interval (ARCHITECTURE.md §19; those records were refused).
    pub under_review: bool,
    /// What put the node under review first.
    pub review_reason: Option<String>,
    /// GPUs gpuex sells on this node.
    pub gpu_count: usize,
    /// The host name the agent registered with.
    pub hostname: Option<String>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub registered_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A workload's output tail.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LeaseLogs {
    pub lease_id: Uuid,
    /// The last at most 64 KiB of stdout and stderr, interleaved.
    pub tail: String,
    /// Bytes the workload wrote in all (more than the tail when output was dropped).
    pub total_bytes: i64,
    /// Whether the workload finished, so this tail is final.
    pub complete: bool,
    /// When the agent took the tail; absent before the first upload.
    pub updated_at: Option<DateTime<Utc>>,
}

/// One file a lease's workload left in `/outputs`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LeaseOutput {
    /// Its path under `/outputs`, e.g. `model/weights.bin`.
    pub name: String,
    /// Bytes.
    pub size: i64,
    /// Hex SHA-256 of its bytes (also sent as `X-Checksum-Sha256` on download).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub sha256: String,
    /// When its node last uploaded it.
    pub stored_at: DateTime<Utc>,
    /// When it is removed (`stored_at` plus the retention).
    pub expires_at: DateTime<Utc>,
}

/// A lease's outputs and the terms they are kept on.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LeaseOutputs {
    pub lease_id: Uuid,
    pub outputs: Vec<LeaseOutput>,
    /// Bytes in all.
    pub total_bytes: i64,
    /// The most a lease's outputs may weigh in all, in bytes.
    pub max_bytes: u64,
    /// Days each output is kept after it was stored.
    pub retention_days: u32,
    /// What keeping them costs per GB-month (money string); `0`: included
    /// in the lease's price.
    #[schema(value_type = String, example = "0")]
    pub storage_price_per_gb_month: Decimal,
}
