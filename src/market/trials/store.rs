//! The `trials` table: the request and which order ran which shape.

use crate::db::{dispatch, Db};
use anyhow::Context;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Trials a list answers with, newest first.
pub const LISTED: i64 = 50;

/// One shape's run as kept: its order, or why none was placed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeptRun {
    pub shape: String,
    pub order_id: Option<Uuid>,
    pub refused: Option<(String, String)>,
}

/// A kept trial.
#[derive(Debug, Clone)]
pub struct KeptTrial {
    pub id: Uuid,
    pub request: super::TrialRequest,
    pub runs: Vec<KeptRun>,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    request_json: String,
    runs_json: String,
    created_at: DateTime<Utc>,
}

fn kept(row: Row) -> anyhow::Result<KeptTrial> {
    Ok(KeptTrial {
        id: row.id,
        request: serde_json::from_str(&row.request_json).context("a trial's request")?,
        runs: serde_json::from_str(&row.runs_json).context("a trial's runs")?,
        created_at: row.created_at,
    })
}

/// Keeps a trial before its orders are placed, so none is placed without it.
pub async fn insert(db: &Db, buyer: Uuid, trial: &KeptTrial) -> anyhow::Result<()> {
    let request = serde_json::to_string(&trial.request)?;
    let runs = serde_json::to_string(&trial.runs)?;
    dispatch!(db, pool => {
        sqlx::query(
            "INSERT INTO trials (id, buyer_id, request_json, runs_json, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(trial.id)
        .bind(buyer)
        .bind(&request)
        .bind(&runs)
        .bind(trial.created_at)
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
    })
    .context("failed to keep a trial")?;
    Ok(())
}

/// Records which orders ran the trial's shapes.
pub async fn set_runs(db: &Db, id: Uuid, runs: &[KeptRun]) -> anyhow::Result<()> {
    let runs = serde_json::to_string(runs)?;
    dispatch!(db, pool => {
        sqlx::query("UPDATE trials SET runs_json = $1 WHERE id = $2")
            .bind(&runs)
            .bind(id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
    })
    .context("failed to record a trial's runs")?;
    Ok(())
}

/// One of `buyer`'s trials.
pub async fn get(db: &Db, buyer: Uuid, id: Uuid) -> anyhow::Result<Option<KeptTrial>> {
    let row: Option<Row> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, request_json, runs_json, created_at FROM trials \
             WHERE id = $1 AND buyer_id = $2",
        )
        .bind(id)
        .bind(buyer)
        .fetch_optional(pool)
        .await
    })
    .context("failed to read a trial")?;
    row.map(kept).transpose()
}

/// `buyer`'s trials, newest first.
pub async fn list(db: &Db, buyer: Uuid) -> anyhow::Result<Vec<KeptTrial>> {
    let sql = format!(
        "SELECT id, request_json, runs_json, created_at FROM trials \
         WHERE buyer_id = $1 ORDER BY created_at DESC, id DESC LIMIT {LISTED}"
    );
    let rows: Vec<Row> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(buyer).fetch_all(pool).await
    })
    .context("failed to read trials")?;
    rows.into_iter().map(kept).collect()
}
