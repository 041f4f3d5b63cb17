//! Wire types of the agent protocol (ARCHITECTURE.md §7), shared by the server and `gpuex-agent`.
//!
//! This module is the contract between the two sides. Everything is JSON over
//! HTTP; the agent authenticates every request with its node token as
//! `Authorization: Bearer <token>`. Ids are UUIDs, times RFC 3339 in UTC, and
//! usage quantities `Decimal` strings. Errors come back as problem+json; the
//! agent retries 5xx and connection errors, and drops a request answered 404
//! (the server no longer knows that lease). A report whose answer was lost is
//! sent again, so the server applies status reports and log uploads
//! idempotently, and usage batches once per `(agent_id, seq)`.
//!
//! | request | body | answer |
//! | --- | --- | --- |
//! | `POST` [`paths::REGISTER`] | [`RegisterRequest`] | [`RegisterResponse`] |
//! | `POST` [`paths::HEARTBEAT`] | [`HeartbeatRequest`] | [`HeartbeatResponse`] |
//! | `POST` [`paths::ASSIGNMENT_STATUS`] | [`StatusReport`] | `204` |
//! | `POST` [`paths::ASSIGNMENT_LOGS`] | [`LogsUpload`] | `204` |
//! | `POST` [`paths::USAGE`] | [`UsageBatch`] | [`UsageAck`] |
//!
//! Reconciliation: every heartbeat lists the leases the agent runs
//! ([`LeaseReport`]); the server answers with what to change. A `start` for a
//! lease the agent already runs is a no-op, a lease the agent runs that the
//! server does not want gets a `stop`, and a lease the server wants running
//! that the agent does not list gets its `start` again (an agent that restarted
//! after a crash kills what the old process left and runs it anew). A `stop` or
//! `preempt` for a lease the agent does not have is answered with `ended`.
//! After an outage the agent registers again and the next heartbeat reconciles
//! both sides.

mod assignment;
mod metrics;
mod register;
mod usage;

/// `name` as one URL path segment: every byte but the unreserved ones
/// percent-encoded, `/` too (an output's name travels as one segment).
pub fn path_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub use assignment::{
    AgentPlacement, Artifact, Assignment, AssignmentAction, AssignmentStatus, CheckpointPlan,
    EndReason, HeldUnits, HostLimits, LogsUpload, Partition, RegistryAuth, StatusReport,
    DEFAULT_CHECKPOINT_PATH, LOGS_TAIL_BYTES, MAX_ARTIFACTS,
};
pub use metrics::{
    DcgmField, FieldKind, GpuFields, GpuMetrics, HeartbeatRequest, HeartbeatResponse, LeaseReport,
    LeaseRunState, MigInstanceMetrics, ProcessMetrics, ScrubReport,
};
pub use register::{
    BackendKind, GpuInventory, HostInventory, MigInstanceInventory, MigMode, RegisterRequest,
    RegisterResponse,
};
pub use usage::{RefusedUsage, UsageAck, UsageBatch, UsageRecord};

/// The agent endpoints, relative to the server's base URL. Templates use the
/// `{lease_id}` syntax of axum 0.8 routes.
pub mod paths {
    use uuid::Uuid;

    /// `POST`: [`super::RegisterRequest`] → [`super::RegisterResponse`].
    pub const REGISTER: &str = "/v1/agent/register";
    /// `POST`: [`super::HeartbeatRequest`] → [`super::HeartbeatResponse`].
    pub const HEARTBEAT: &str = "/v1/agent/heartbeat";
    /// `POST`: [`super::StatusReport`] → `204 No Content`.
    pub const ASSIGNMENT_STATUS: &str = "/v1/agent/assignments/{lease_id}/status";
    /// `POST`: [`super::LogsUpload`] → `204 No Content`. The server keeps the latest
    /// tail and serves it to the buyer at `GET /v1/leases/{id}/logs`.
    pub const ASSIGNMENT_LOGS: &str = "/v1/agent/assignments/{lease_id}/logs";
    /// `POST`: [`super::UsageBatch`] → [`super::UsageAck`].
    pub const USAGE: &str = "/v1/agent/usage";

    /// [`ASSIGNMENT_STATUS`] for one lease.
    pub fn assignment_status(lease_id: Uuid) -> String {
        format!("/v1/agent/assignments/{lease_id}/status")
    }

    /// [`ASSIGNMENT_LOGS`] for one lease.
    pub fn assignment_logs(lease_id: Uuid) -> String {
        format!("/v1/agent/assignments/{lease_id}/logs")
    }
}

/// The JSON examples of `crates/wire/src/protocol/README.md` by the type each parses into,
/// the first of each type: the OpenAPI document shows them, so its examples
/// are the ones a test checks against the types.
pub fn readme_examples() -> Vec<(String, serde_json::Value)> {
    let mut found: Vec<(String, serde_json::Value)> = Vec::new();
    let mut lines = include_str!("README.md").lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .strip_prefix("<!-- ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        if lines.next() != Some("```json") {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let parsed = serde_json::from_str(&block.join("\n"));
        if let Ok(value) = parsed {
            if !found.iter().any(|(n, _)| n == name) {
                found.push((name.to_owned(), value));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests;
