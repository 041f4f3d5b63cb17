//! `POST /v1/agent/usage`: metered consumption, sent in numbered batches.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A batch of usage records. `seq` grows by one per batch and survives agent
/// restarts; the server applies each `(agent_id, seq)` once and acknowledges a
/// duplicate without applying it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageBatch {
    pub agent_id: Uuid,
    /// Monotonic per agent, starting at 1.
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 9_223_372_036_854_775_807_u64)
    )]
    pub seq: u64,
    pub records: Vec<UsageRecord>,
}

/// What one lease consumed over one interval (FOCUS ConsumedQuantity).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageRecord {
    pub lease_id: Uuid,
    pub interval_start: DateTime<Utc>,
    pub interval_end: DateTime<Utc>,
    /// Standard TFLOPS held × seconds.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::decimal::DecimalInput))]
    pub tflops_s: Decimal,
    /// GB of GPU memory held × seconds.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::decimal::DecimalInput))]
    pub vram_gb_s: Decimal,
    /// Mean utilization of the slice over the interval, 0–1; `None` when the
    /// backend cannot measure it (e.g. per MIG instance on some drivers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::decimal::DecimalInput>))]
    pub mean_utilization: Option<Decimal>,
    /// The most memory the lease's workload held during the interval, MB
    /// (10⁶ bytes): on real GPUs the GPU memory of its processes, on the
    /// simulated backend its host memory (which stands in for it). `None`
    /// when the agent could not see it, or predates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_mb: Option<u64>,
}

/// The server's answer to a usage batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageAck {
    /// The batch acknowledged; the agent deletes it from its spool.
    pub seq: u64,
    /// `true` when this `(agent_id, seq)` had been applied before.
    pub duplicate: bool,
    /// Records refused on their own (the rest of the batch was stored): a
    /// figure beyond what the lease holds times the interval. The node is
    /// then marked for review. Absent when none was refused, so agents that
    /// predate it read the answer unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedUsage>,
}

/// One record of a batch that was not stored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RefusedUsage {
    /// The record's place in `records` (from 0).
    pub index: usize,
    pub lease_id: Uuid,
    /// The figure out of bounds, e.g. `records[2].tflops_s`.
    pub field: String,
    pub reason: String,
}
