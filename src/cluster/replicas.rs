//! Every replica's standing, for the admin (ARCHITECTURE.md §20): each replica
//! writes its own row of `replicas` every [`EVERY`] (its address, its part
//! in the election, how far its engine has applied the journal, its lag),
//! and `GET /v1/admin/replicas` lists those heard from in the last hour,
//! saying which have gone silent and which one answered.

use super::ClusterState;
use crate::auth::{Caller, Role, RouterState};
use crate::db::{dispatch, Db};
use crate::error::responses::NotAnAdmin;
use crate::error::ApiError;
use axum::extract::{FromRef, State};
use axum::Json;
use chrono::{DateTime, Utc};
pub use gpuex_api::cluster::ReplicaView;
use std::time::Duration;
use tokio::task::JoinHandle;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// How often a replica writes its row.
pub const EVERY: Duration = Duration::from_secs(2);

/// A replica not heard from for longer is shown as silent.
pub const SILENT_AFTER_S: i64 = 10;

/// A replica not heard from for longer is no longer listed.
const FORGOTTEN_AFTER_S: i64 = 3600;

/// Who this replica is, for its row.
#[derive(Debug, Clone)]
pub struct Me {
    pub id: Uuid,
    /// Where the other replicas reach it.
    pub url: String,
    pub started_at: DateTime<Utc>,
}

impl Me {
    pub fn new(url: String) -> Me {
        Me {
            id: Uuid::now_v7(),
            url,
            started_at: Utc::now(),
        }
    }
}

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    ClusterState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(list_replicas))
}

/// Writes this replica's row every [`EVERY`] until aborted.
pub fn spawn(state: ClusterState) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = report(&state).await {
                tracing::warn!(error = ?e, "failed to write this replica's standing");
            }
            tokio::time::sleep(EVERY).await;
        }
    })
}

/// Writes this replica's row as it stands now, and forgets replicas long gone.
async fn report(state: &ClusterState) -> anyhow::Result<()> {
    let me = state.cluster.me();
    let journal = state.market.journal();
    let now = Utc::now();
    let role = state.cluster.role();
    dispatch!(state.db, pool => {
        sqlx::query(
            "INSERT INTO replicas (id, url, role, epoch, applied_seq, lag_ms, started_at, seen_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO UPDATE SET \
             url = excluded.url, role = excluded.role, epoch = excluded.epoch, \
             applied_seq = excluded.applied_seq, lag_ms = excluded.lag_ms, seen_at = excluded.seen_at",
        )
        .bind(me.id.to_string())
        .bind(&me.url)
        .bind(role.name())
        .bind(journal.epoch())
        .bind(journal.applied_seq())
        .bind(journal.lag_ms(now.timestamp_millis()))
        .bind(me.started_at)
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ())
    })?;
    let forgotten = now - chrono::Duration::seconds(FORGOTTEN_AFTER_S);
    dispatch!(state.db, pool => {
        sqlx::query("DELETE FROM replicas WHERE seen_at < $1").bind(forgotten).execute(pool).await.map(|_| ())
    })?;
    Ok(())
}

/// Removes this replica's row (it is stopping).
pub async fn forget(db: &Db, me: &Me) {
    let _ = dispatch!(db, pool => {
        sqlx::query("DELETE FROM replicas WHERE id = $1").bind(me.id.to_string()).execute(pool).await.map(|_| ())
    });
}

type ReplicaRow = (
    String,
    String,
    String,
    i64,
    i64,
    i64,
    DateTime<Utc>,
    DateTime<Utc>,
);

/// The replicas heard from in the last hour: those still heard from first,
/// the leader first among them (a silent one's role is the last it wrote).
#[utoipa::path(get, path = "/v1/admin/replicas", tag = "ops", security(("bearer" = [])),
    responses(
        (status = 200, description = "Every replica's standing, as it last wrote it", body = Vec<ReplicaView>),
        NotAnAdmin,
    ))]
async fn list_replicas(
    State(state): State<ClusterState>,
    caller: Caller,
) -> Result<Json<Vec<ReplicaView>>, ApiError> {
    caller.require(&[Role::Admin])?;
    // The answering replica's own row is as of now.
    report(&state).await?;
    let rows: Vec<ReplicaRow> = dispatch!(state.db, pool => {
        sqlx::query_as(
            "SELECT id, url, role, epoch, applied_seq, lag_ms, started_at, seen_at FROM replicas",
        )
        .fetch_all(pool)
        .await
    })?;
    let now = Utc::now();
    let me = state.cluster.me().id;
    let mut replicas = Vec::with_capacity(rows.len());
    for (id, url, role, epoch, applied_seq, lag_ms, started_at, seen_at) in rows {
        let id: Uuid = id
            .parse()
            .map_err(|e| anyhow::anyhow!("replica row {id}: {e}"))?;
        replicas.push(ReplicaView {
            id,
            url,
            role,
            epoch,
            applied_seq,
            lag_ms,
            started_at,
            seen_at,
            silent: (now - seen_at).num_seconds() > SILENT_AFTER_S,
            answering: id == me,
        });
    }
    replicas.sort_by_key(|r| {
        let rank = match r.role.as_str() {
            "leader" => 0,
            "follower" => 1,
            _ => 2,
        };
        (r.silent, rank, r.started_at)
    });
    Ok(Json(replicas))
}
