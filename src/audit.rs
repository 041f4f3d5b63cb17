//! The admin audit log: who changed prices, credits and cordons, and when.

use crate::db::{dispatch_tx, Tx};
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
    dispatch_tx!(tx, conn => {
        sqlx::query(
            "INSERT INTO audit_log (actor_id, action, target, details, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(actor)
        .bind(action)
        .bind(target)
        .bind(details.to_string())
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
    })?;
    Ok(())
}
