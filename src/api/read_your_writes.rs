//! Reading one's own writes on any replica (ARCHITECTURE.md §20). Every successful
//! write answers `Gpuex-Seq: N`, the journal row its effects are in (or
//! after); a request with `Gpuex-Min-Seq: N` is answered only once this
//! replica's engine includes row N: it waits up to [`WAIT`], then answers
//! 503 with `Retry-After`, so a client that goes to another replica, or to
//! a follower after a write the leader applied, never reads the past.

use crate::cluster::ClusterState;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// The journal row a write's effects are in, on its answer.
pub const SEQ: HeaderName = HeaderName::from_static("gpuex-seq");

/// The journal row a request's answer must include.
pub const MIN_SEQ: HeaderName = HeaderName::from_static("gpuex-min-seq");

/// How long a request waits for its replica to apply `Gpuex-Min-Seq`.
pub const WAIT: Duration = Duration::from_secs(2);

pub async fn read_your_writes(
    State(state): State<ClusterState>,
    request: Request,
    next: Next,
) -> Response {
    let min_seq = match request.headers().get(&MIN_SEQ).map(parse_seq) {
        None => None,
        Some(Some(seq)) => Some(seq),
        Some(None) => {
            return ApiError::Refused {
                status: StatusCode::BAD_REQUEST,
                code: "invalid_header",
                detail: "Gpuex-Min-Seq must be a journal sequence: a whole number, 0 or more"
                    .into(),
            }
            .into_response()
        }
    };
    if let Some(seq) = min_seq {
        if !state.market.journal().wait_for(seq, WAIT).await {
            return ApiError::Refused {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "replica_behind",
                detail: format!(
                    "this replica has not applied journal row {seq} yet (it is at {}); retry",
                    state.market.journal().applied_seq()
                ),
            }
            .into_response();
        }
    }
    let writes = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let mut response = next.run(request).await;
    if writes && response.status().is_success() {
        let seq = committed_seq(&state).await;
        if let Ok(value) = HeaderValue::from_str(&seq.to_string()) {
            response.headers_mut().insert(SEQ, value);
        }
    }
    response
}

fn parse_seq(value: &HeaderValue) -> Option<i64> {
    value
        .to_str()
        .ok()?
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|seq| *seq >= 0)
}

/// The last row committed: the leader wrote it (and its engine is there
/// the moment it commits); a follower's write went through the leader,
/// which committed before answering, so the journal already holds it.
async fn committed_seq(state: &ClusterState) -> i64 {
    let applied = state.market.journal().applied_seq();
    if state.cluster.is_leader() {
        return applied;
    }
    let last: Result<Option<i64>, sqlx::Error> = crate::db::dispatch!(state.db, pool => {
        sqlx::query_scalar("SELECT MAX(seq) FROM journal").fetch_one(pool).await
    });
    last.ok().flatten().unwrap_or(0).max(applied)
}
