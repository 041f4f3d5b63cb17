//! `Idempotency-Key` on the creating POSTs whose handlers do not keep their
//! answer themselves (DESIGN §19): API keys, webhooks, nodes, billing
//! adjustments, resale listings and conversions. (Orders and admin credits
//! store theirs in the same transaction as their effect; see
//! `crate::idempotency`.)
//!
//! The first request with a key claims it before its handler runs, so a
//! concurrent retry cannot run the handler a second time (it is answered 409
//! `idempotency_key_in_use`); a successful answer is then kept under the key
//! and replayed byte for byte to every retry with the same body; a different
//! body is 422 `idempotency_key_reused`. A refused request gives the key up,
//! so the same request can be retried once what refused it has changed.
//! Keys are per caller and per path: the same key on two leases is two keys.
//!
//! Some of these answers carry a secret shown only once (an API key, a node
//! token, a webhook secret) that the server otherwise keeps only hashed. So
//! the kept answer is sealed with the caller's key, and the row holds a hash
//! of the key, never the key: only a retry that sends the key can read it.

use crate::app::AppState;
use crate::auth::Caller;
use crate::db::dispatch;
use crate::error::ApiError;
use crate::idempotency::{IdempotencyKey, HEADER};
use axum::body::Body;
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The routes this middleware makes idempotent, as the router names them.
pub const ROUTES: &[&str] = &[
    "/v1/api-keys",
    "/v1/webhooks",
    "/v1/nodes",
    "/v1/admin/billing/adjustments",
    "/v1/resale-listings",
    "/v1/leases/{id}/convert",
];

/// A claim whose request has not answered yet (a status no answer has).
const PENDING: i32 = 0;

/// Middleware: see the module documentation.
pub async fn idempotent(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let keyed = req.method() == Method::POST
        && req.headers().contains_key(HEADER)
        && req
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|p| ROUTES.contains(&p.as_str()));
    if !keyed {
        return next.run(req).await;
    }
    let (mut parts, body) = req.into_parts();
    // A caller the handler would refuse anyway gets that answer, unkept.
    let Ok(caller) = Caller::from_request_parts(&mut parts, &state).await else {
        return next.run(Request::from_parts(parts, body)).await;
    };
    let Ok(bytes) = axum::body::to_bytes(body, state.settings.body_limit).await else {
        return ApiError::Refused {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "body_too_large",
            detail: format!("the body is over {} bytes", state.settings.body_limit),
        }
        .into_response();
    };
    let key = match IdempotencyKey::from_headers(&parts.headers, &bytes) {
        Ok(Some(key)) => key,
        Ok(None) => {
            return next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(e) => return e.into_response(),
    };
    let claim = Claim {
        user: caller.id,
        scope: format!("POST {}", parts.uri.path()),
        stored_key: hex::encode(Sha256::digest(key.key.as_bytes())),
        key,
    };
    let now = state.settings.clock.now();
    match claim.take(&state, now).await {
        Ok(Taken::Fresh) => {}
        Ok(Taken::Replay { status, body }) => return replay(status, body),
        Err(e) => return e.into_response(),
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if !response.status().is_success() {
        if let Err(e) = claim.give_up(&state).await {
            tracing::warn!(error = ?e, "an idempotency claim was not given up");
        }
        return response;
    }
    let (head, body) = response.into_parts();
    // Answers here are small JSON documents; the bound only guards memory.
    let Ok(body) = axum::body::to_bytes(body, 16 * 1024 * 1024).await else {
        return ApiError::Internal(anyhow::anyhow!("an answer could not be read to keep"))
            .into_response();
    };
    let text = String::from_utf8_lossy(&body).into_owned();
    if let Err(e) = claim.keep(&state, head.status, &text).await {
        // The effect happened; the caller gets its answer. A retry then
        // finds the claim still pending and is told so, never re-run.
        tracing::warn!(error = ?e, "an idempotent answer was not kept");
    }
    Response::from_parts(head, Body::from(body))
}

fn replay(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One caller's key on one path.
struct Claim {
    user: Uuid,
    scope: String,
    key: IdempotencyKey,
    /// What the row keeps of the key: its hash.
    stored_key: String,
}

enum Taken {
    /// The key is new: the handler runs.
    Fresh,
    /// The same request answered before: its answer.
    Replay { status: StatusCode, body: String },
}

impl Claim {
    /// Claims the key, or returns what it already holds.
    async fn take(&self, state: &AppState, now: DateTime<Utc>) -> Result<Taken, ApiError> {
        let inserted = dispatch!(state.db, pool => {
            sqlx::query(
                "INSERT INTO idempotency_keys (user_id, scope, key, request_hash, status, body, created_at) \
                 VALUES ($1, $2, $3, $4, $5, '', $6) ON CONFLICT DO NOTHING",
            )
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .bind(&self.key.request_hash)
            .bind(PENDING)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        if inserted == 1 {
            return Ok(Taken::Fresh);
        }
        let row: Option<(String, i32, String)> = dispatch!(state.db, pool => {
            sqlx::query_as(
                "SELECT request_hash, status, body FROM idempotency_keys \
                 WHERE user_id = $1 AND scope = $2 AND key = $3",
            )
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .fetch_optional(pool)
            .await
        })?;
        let Some((hash, status, body)) = row else {
            // Given up between the two statements: this request may run.
            return Box::pin(self.take(state, now)).await;
        };
        if hash != self.key.request_hash {
            return Err(ApiError::refused(
                "idempotency_key_reused",
                "this Idempotency-Key was used with a different request body",
            ));
        }
        let status = u16::try_from(status)
            .ok()
            .and_then(|s| StatusCode::from_u16(s).ok());
        match status {
            Some(status) if status.is_success() => {
                let body = hex::decode(&body)
                    .map(|sealed| self.seal(&sealed))
                    .ok()
                    .and_then(|plain| String::from_utf8(plain).ok())
                    .ok_or_else(|| anyhow::anyhow!("a kept answer does not open"))?;
                Ok(Taken::Replay { status, body })
            }
            _ => Err(ApiError::Refused {
                status: StatusCode::CONFLICT,
                code: "idempotency_key_in_use",
                detail: "a request with this Idempotency-Key is still under way; retry shortly"
                    .into(),
            }),
        }
    }

    /// Keeps the answer under the key.
    async fn keep(&self, state: &AppState, status: StatusCode, body: &str) -> anyhow::Result<()> {
        dispatch!(state.db, pool => {
            sqlx::query(
                "UPDATE idempotency_keys SET status = $1, body = $2 \
                 WHERE user_id = $3 AND scope = $4 AND key = $5",
            )
            .bind(i32::from(status.as_u16()))
            .bind(hex::encode(self.seal(body.as_bytes())))
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(())
    }

    /// Releases a claim whose request was refused.
    async fn give_up(&self, state: &AppState) -> anyhow::Result<()> {
        dispatch!(state.db, pool => {
            sqlx::query(
                "DELETE FROM idempotency_keys \
                 WHERE user_id = $1 AND scope = $2 AND key = $3 AND status = $4",
            )
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .bind(PENDING)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(())
    }
}

impl Claim {
    /// Seals or opens a kept answer (the same XOR both ways): a keystream of
    /// HMAC-SHA256 blocks under the caller's key, over this claim's user,
    /// scope and the block's number, so no two rows share a stream.
    fn seal(&self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len());
        for (n, chunk) in data.chunks(32).enumerate() {
            let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(self.key.key.as_bytes()) else {
                // HMAC takes keys of any length; this is never reached.
                return Vec::new();
            };
            mac.update(self.user.as_bytes());
            mac.update(self.scope.as_bytes());
            mac.update(&(n as u64).to_be_bytes());
            let block = mac.finalize().into_bytes();
            out.extend(chunk.iter().zip(block.iter()).map(|(d, k)| d ^ k));
        }
        out
    }
}
