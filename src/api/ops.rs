//! Ops endpoints (no `/v1` prefix): health, readiness, metrics.

use crate::auth::tokens::hash_secret;
use crate::cluster::Cluster;
use crate::config::Settings;
use crate::db::Db;
use crate::error::{ApiError, Problem};
use crate::market::MarketHandle;
use crate::metrics::Metrics;
use axum::extract::{FromRef, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What the ops endpoints use: readiness asks the database and the market,
/// the metrics endpoint refreshes the gauges it shows.
#[derive(Clone)]
pub struct OpsState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub cluster: Cluster,
    pub market: MarketHandle,
    pub metrics: Arc<Metrics>,
}

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    OpsState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`
    pub status: String,
}

/// A ready replica, and its part in the market (ARCHITECTURE.md §12).
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ok`
    pub status: String,
    /// `leader` (runs the engine), `follower` (hands engine commands to the
    /// leader) or `detached` (no leader is known to it yet: engine commands
    /// answer 503 with `Retry-After` until one is).
    pub role: String,
    /// The leader's term this replica last saw in the journal (0 on SQLite,
    /// where one process always leads).
    pub epoch: i64,
    /// The last journal row this replica's engine includes (ARCHITECTURE.md §20).
    pub applied_seq: i64,
    /// How long this replica has been behind rows the leader announced, in
    /// milliseconds; 0 when caught up. Past [`LAG_LIMIT_MS`] it is not ready.
    pub lag_ms: i64,
}

/// A follower further behind than this is not ready: its reads are stale.
pub const LAG_LIMIT_MS: i64 = 10_000;

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "ops",
    responses((status = 200, description = "Alive", body = Health)))]
async fn healthz() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
    })
}

/// Readiness: the database answers and the market task is alive; says
/// whether this replica leads the market or follows.
#[utoipa::path(get, path = "/readyz", tag = "ops",
    responses(
        (status = 200, description = "Ready, with this replica's role", body = Readiness),
        (status = 503, description = "The database is unreachable or the market is not running", body = Problem, content_type = "application/problem+json"),
    ))]
async fn readyz(State(state): State<OpsState>) -> Response {
    let not_ready = |detail: &str| {
        ApiError::Refused {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "not_ready",
            detail: detail.into(),
        }
        .into_response()
    };
    if !state.db.ping().await {
        return not_ready("the database is unreachable");
    }
    if !market_answers(&state.market).await {
        return not_ready("the market task is not running");
    }
    let role = state.cluster.role();
    if let crate::cluster::Role::Detached { why } = role {
        // It would serve reads, but every engine command would wait for a
        // leader: let the load balancer send them elsewhere meanwhile.
        return not_ready(&format!("not in the market's election: {why}"));
    }
    let journal = state.market.journal();
    let lag_ms = journal.lag_ms(chrono::Utc::now().timestamp_millis());
    if lag_ms > LAG_LIMIT_MS {
        return not_ready(&format!(
            "this replica is {lag_ms} ms behind the market's journal (at most {LAG_LIMIT_MS})"
        ));
    }
    axum::Json(Readiness {
        status: "ok".into(),
        role: role.name().into(),
        epoch: journal.epoch(),
        applied_seq: journal.applied_seq(),
        lag_ms,
    })
    .into_response()
}

/// How long the market task may take to answer a readiness probe.
const MARKET_ANSWERS_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// A read goes through the engine task's own queue: it answers only while
/// that task is alive and not stuck.
async fn market_answers(market: &crate::market::MarketHandle) -> bool {
    let read = tokio::time::timeout(MARKET_ANSWERS_WITHIN, market.read(|_| ())).await;
    matches!(read, Ok(Ok(())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::MarketHandle;
    use tokio::sync::mpsc;

    #[tokio::test]
    async fn a_market_whose_task_is_gone_is_not_ready() {
        let (tx, rx) = mpsc::channel(1);
        drop(rx);
        assert!(
            !market_answers(&MarketHandle {
                tx,
                journal: Default::default(),
                live: Default::default(),
            })
            .await
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_market_whose_task_is_stuck_is_not_ready() {
        // The task holds its queue but never answers.
        let (tx, _rx) = mpsc::channel(1);
        assert!(
            !market_answers(&MarketHandle {
                tx,
                journal: Default::default(),
                live: Default::default(),
            })
            .await
        );
    }
}

/// Prometheus metrics in text format, for the bearer of `--metrics-token`.
#[utoipa::path(get, path = "/metrics", tag = "ops",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Prometheus text format", body = String, content_type = "text/plain"),
        (status = 401, description = "Not the metrics token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Metrics are off (no --metrics-token)", body = Problem, content_type = "application/problem+json"),
    ))]
async fn metrics(State(state): State<OpsState>, headers: HeaderMap) -> Response {
    // They name every node and show each GPU's load: not for the public.
    let Some(expected) = state.settings.metrics_token.as_deref() else {
        return ApiError::NotFound("metrics are off; start the server with --metrics-token".into())
            .into_response();
    };
    let given = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    // Comparing digests keeps the comparison's timing from revealing the token.
    if given.map(hash_secret) != Some(hash_secret(expected)) {
        return ApiError::Unauthorized(
            "/metrics needs Authorization: Bearer <the --metrics-token>".into(),
        )
        .into_response();
    }
    state
        .metrics
        .leader
        .set(i64::from(state.cluster.is_leader()));
    state.metrics.set_journal(
        state.market.journal(),
        chrono::Utc::now().timestamp_millis(),
    );
    if let Ok(stats) = state.market.read(crate::market::book::market_stats).await {
        state.metrics.set_market(&stats);
    }
    crate::metrics::endpoint(State(state.metrics.clone()))
        .await
        .into_response()
}
