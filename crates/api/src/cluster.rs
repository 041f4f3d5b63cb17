//! The replicas of a cluster as an admin sees them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One replica as it last said it stood.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplicaView {
    pub id: Uuid,
    /// Where the other replicas reach it (`--advertise-url`).
    pub url: String,
    /// `leader`, `follower` or `detached`.
    pub role: String,
    /// The leader's term it last saw in the journal.
    pub epoch: i64,
    /// The last journal row its engine includes.
    pub applied_seq: i64,
    /// How long it had been behind rows the leader announced, in milliseconds.
    pub lag_ms: i64,
    pub started_at: DateTime<Utc>,
    /// When it last wrote its row.
    pub seen_at: DateTime<Utc>,
    /// Not heard from for more than 10 s: stopped, or cut off from the database.
    pub silent: bool,
    /// The replica that answered this request.
    pub answering: bool,
}
