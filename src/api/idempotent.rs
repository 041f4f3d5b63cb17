//! `Idempotency-Key` on the creating POSTs whose handlers do not keep their
//! answer themselves (ARCHITECTURE.md §19): API keys, webhooks, nodes, billing
//! adjustments, resale listings, conversions and trials. (Orders and admin credits
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
//! the kept answer is sealed (ChaCha20-Poly1305, a key derived from the
//! caller's key) and the row holds a hash of the key, never the key: only a
//! retry that sends the key can read it, and a row changed in the database
//! fails to open rather than replaying altered bytes.
//!
//! A claim whose request never answered (the server stopped between the
//! work and keeping its answer) is given up after [`STALE_CLAIM_S`]: a retry
//! then runs, as it would under a fresh key, instead of answering 409 for
//! ever.

use crate::auth::{AuthState, Caller};
use crate::config::Settings;
use crate::db::{dispatch, Db};
use crate::error::ApiError;
use crate::idempotency::{IdempotencyKey, HEADER};
use axum::body::Body;
use axum::extract::{FromRef, FromRequestParts, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use uuid::Uuid;

/// The routes this middleware makes idempotent, as the router names them.
pub const ROUTES: &[&str] = &[
    "/v1/api-keys",
    "/v1/webhooks",
    "/v1/nodes",
    "/v1/admin/billing/adjustments",
    "/v1/resale-listings",
    "/v1/leases/{id}/convert",
    "/v1/trials",
];

/// A claim whose request has not answered yet (a status no answer has).
const PENDING: i32 = 0;

/// How long a pending claim may wait for its answer: far beyond any
/// request's timeout, so only a request whose server stopped is that old.
pub const STALE_CLAIM_S: i64 = 600;

/// The bytes of a ChaCha20-Poly1305 nonce, kept before the sealed answer.
const NONCE_BYTES: usize = 12;

/// What the middleware uses: the store that keeps answers, and what tells
/// whose key a request's is.
#[derive(Clone)]
pub struct IdempotentState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub auth: AuthState,
}

impl FromRef<IdempotentState> for AuthState {
    fn from_ref(state: &IdempotentState) -> AuthState {
        state.auth.clone()
    }
}

/// Middleware: see the module documentation.
pub async fn idempotent(
    State(state): State<IdempotentState>,
    req: Request,
    next: Next,
) -> Response {
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
    async fn take(&self, state: &IdempotentState, now: DateTime<Utc>) -> Result<Taken, ApiError> {
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
        let row: Option<(String, i32, String, DateTime<Utc>)> = dispatch!(state.db, pool => {
            sqlx::query_as(
                "SELECT request_hash, status, body, created_at FROM idempotency_keys \
                 WHERE user_id = $1 AND scope = $2 AND key = $3",
            )
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .fetch_optional(pool)
            .await
        })?;
        let Some((hash, status, body, claimed_at)) = row else {
            // Given up between the two statements: this request may run.
            return Box::pin(self.take(state, now)).await;
        };
        if status == PENDING && now - claimed_at > chrono::Duration::seconds(STALE_CLAIM_S) {
            // Its request never answered: the server stopped mid-way.
            if self.give_up_stale(state, claimed_at).await? {
                return Box::pin(self.take(state, now)).await;
            }
        }
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
                let body = self
                    .open(&body)
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
    async fn keep(
        &self,
        state: &IdempotentState,
        status: StatusCode,
        body: &str,
    ) -> anyhow::Result<()> {
        let sealed = self.seal(body.as_bytes())?;
        dispatch!(state.db, pool => {
            sqlx::query(
                "UPDATE idempotency_keys SET status = $1, body = $2 \
                 WHERE user_id = $3 AND scope = $4 AND key = $5",
            )
            .bind(i32::from(status.as_u16()))
            .bind(&sealed)
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(())
    }

    /// Removes a claim left pending since `claimed_at` (only that one: a
    /// retry racing this one may already have claimed the key afresh).
    async fn give_up_stale(
        &self,
        state: &IdempotentState,
        claimed_at: DateTime<Utc>,
    ) -> anyhow::Result<bool> {
        let removed = dispatch!(state.db, pool => {
            sqlx::query(
                "DELETE FROM idempotency_keys WHERE user_id = $1 AND scope = $2 \
                 AND key = $3 AND status = $4 AND created_at = $5",
            )
            .bind(self.user)
            .bind(&self.scope)
            .bind(&self.stored_key)
            .bind(PENDING)
            .bind(claimed_at)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(removed == 1)
    }

    /// Releases a claim whose request was refused.
    async fn give_up(&self, state: &IdempotentState) -> anyhow::Result<()> {
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
    /// The cipher of this claim's kept answer: its key is a SHA-256 of the
    /// caller's Idempotency-Key, user and scope, so no two claims share one.
    fn cipher(&self) -> ChaCha20Poly1305 {
        let key = Sha256::new()
            .chain_update(b"gpuex idempotent answer")
            .chain_update(self.key.key.as_bytes())
            .chain_update(self.user.as_bytes())
            .chain_update(self.scope.as_bytes())
            .finalize();
        ChaCha20Poly1305::new(&key)
    }

    /// The answer sealed under a fresh nonce, as hex: nonce, then ciphertext.
    fn seal(&self, plain: &[u8]) -> anyhow::Result<String> {
        let nonce: [u8; NONCE_BYTES] = rand::random();
        let sealed = self
            .cipher()
            .encrypt(&Nonce::from(nonce), plain)
            .map_err(|_| anyhow::anyhow!("an answer could not be sealed"))?;
        Ok(hex::encode([nonce.as_slice(), &sealed].concat()))
    }

    /// The kept answer, or `None` when it does not open under this claim's
    /// key (never for a retry that sent the same key and body).
    fn open(&self, stored: &str) -> Option<String> {
        let bytes = hex::decode(stored).ok()?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().ok()?;
        let plain = self.cipher().decrypt(&Nonce::from(nonce), sealed).ok()?;
        String::from_utf8(plain).ok()
    }
}
