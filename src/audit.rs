//! The admin audit log: who changed prices, credits and cordons, and when.

use crate::db::{execute_tx, Tx};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Records an admin action in the caller's transaction, so the log and the
/// change commit together.
pub async fn record(
    tx: &mut Tx<'_>,
    actor: Uuid,
    action: &str,
    target: &str,
    details: serde_json::Value,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    execute_tx!(
        tx,
        "INSERT INTO audit_log (actor_id, action, target, details, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        actor,
        action,
        target,
        details.to_string(),
        now,
    )?;
    Ok(())
}
