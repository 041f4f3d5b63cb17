//! The `profile_imports` table: one row per import, written whole in one
//! transaction with its Idempotency-Key's answer.

use crate::db::{dispatch, dispatch_tx, Db, Tx};
use anyhow::Context;
use chrono::{DateTime, Utc};
use gpuex_api::billing::CapacityProfile;
use gpuex_api::imports::{
    ConcurrencyPoint, ImportFormat, ProfileImport, ProfileImportDetail, RejectedRow,
};
use uuid::Uuid;

/// Imports a list answers with, newest first.
pub const LISTED: i64 = 100;

const COLUMNS: &str = "id, format, created_at, job_rows, skipped, rejected_count, rejected, \
    defaulted_model_rows, default_gpu_model, from_at, to_at, bytes";

/// A row as read; a list reads no profile or series (`NULL` and `[]`).
#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    format: String,
    created_at: DateTime<Utc>,
    job_rows: i64,
    skipped: i64,
    rejected_count: i64,
    rejected: String,
    defaulted_model_rows: i64,
    default_gpu_model: String,
    from_at: Option<DateTime<Utc>>,
    to_at: Option<DateTime<Utc>>,
    bytes: i64,
    profile: Option<String>,
    concurrency: String,
}

fn count(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn view(row: &Row) -> anyhow::Result<ProfileImport> {
    Ok(ProfileImport {
        id: row.id,
        format: ImportFormat::parse(&row.format).context("an import of an unknown format")?,
        created_at: row.created_at,
        rows: count(row.job_rows),
        skipped: count(row.skipped),
        rejected_count: count(row.rejected_count),
        rejected: serde_json::from_str::<Vec<RejectedRow>>(&row.rejected)
            .context("an import's rejected rows are not JSON")?,
        defaulted_model_rows: count(row.defaulted_model_rows),
        default_gpu_model: row.default_gpu_model.clone(),
        from: row.from_at,
        to: row.to_at,
        bytes: count(row.bytes),
    })
}

fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Writes an import inside the caller's transaction.
pub async fn insert(
    tx: &mut Tx<'_>,
    buyer: Uuid,
    detail: &ProfileImportDetail,
) -> anyhow::Result<()> {
    let i = &detail.import;
    let rejected = serde_json::to_string(&i.rejected)?;
    let profile = detail
        .profile
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    let concurrency = serde_json::to_string(&detail.concurrency)?;
    dispatch_tx!(tx, conn => {
        sqlx::query(
            "INSERT INTO profile_imports (id, buyer_id, format, created_at, job_rows, skipped, \
             rejected_count, rejected, defaulted_model_rows, default_gpu_model, from_at, to_at, \
             bytes, profile, concurrency) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(i.id)
        .bind(buyer)
        .bind(i.format.as_str())
        .bind(i.created_at)
        .bind(signed(i.rows))
        .bind(signed(i.skipped))
        .bind(signed(i.rejected_count))
        .bind(&rejected)
        .bind(signed(i.defaulted_model_rows))
        .bind(&i.default_gpu_model)
        .bind(i.from)
        .bind(i.to)
        .bind(signed(i.bytes))
        .bind(&profile)
        .bind(&concurrency)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
    })
    .context("failed to store an import")?;
    Ok(())
}

/// The caller's imports, newest first.
pub async fn list(db: &Db, buyer: Uuid) -> anyhow::Result<Vec<ProfileImport>> {
    let sql = format!(
        "SELECT {COLUMNS}, NULL AS profile, '[]' AS concurrency FROM profile_imports \
         WHERE buyer_id = $1 ORDER BY created_at DESC, id DESC LIMIT {LISTED}"
    );
    let rows: Vec<Row> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(buyer).fetch_all(pool).await
    })
    .context("failed to read imports")?;
    rows.iter().map(view).collect()
}

/// One of the caller's imports with its profile and series; `None` when
/// there is no such import of theirs.
pub async fn get(db: &Db, buyer: Uuid, id: Uuid) -> anyhow::Result<Option<ProfileImportDetail>> {
    let sql = format!(
        "SELECT {COLUMNS}, profile, concurrency FROM profile_imports \
         WHERE id = $1 AND buyer_id = $2"
    );
    let found: Option<Row> = dispatch!(db, pool => {
        sqlx::query_as(&sql).bind(id).bind(buyer).fetch_optional(pool).await
    })
    .context("failed to read an import")?;
    let Some(row) = found else {
        return Ok(None);
    };
    Ok(Some(ProfileImportDetail {
        import: view(&row)?,
        profile: row
            .profile
            .map(|p| serde_json::from_str::<CapacityProfile>(&p))
            .transpose()
            .context("an import's profile is not JSON")?,
        concurrency: serde_json::from_str::<Vec<ConcurrencyPoint>>(&row.concurrency)
            .context("an import's concurrency is not JSON")?,
    }))
}

/// Deletes one of the caller's imports; false when there was none.
pub async fn delete(db: &Db, buyer: Uuid, id: Uuid) -> anyhow::Result<bool> {
    let deleted = dispatch!(db, pool => {
        sqlx::query("DELETE FROM profile_imports WHERE id = $1 AND buyer_id = $2")
            .bind(id)
            .bind(buyer)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
    })
    .context("failed to delete an import")?;
    Ok(deleted > 0)
}
