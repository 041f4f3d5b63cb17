//! `Idempotency-Key`: the same key with the same body returns the first
//! result; the same key with a different body is refused (422).
//!
//! The stored response is written in the same transaction as the effect, so a
//! retry can never see the effect without its response, or the reverse.

use crate::db::{dispatch_tx, Tx};
use crate::error::ApiError;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

pub const HEADER: &str = "idempotency-key";

/// A validated idempotency key with the hash of the request it came with.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IdempotencyKey {
    pub key: String,
    pub request_hash: String,
}

impl IdempotencyKey {
    /// Reads the header, if present; `body` is the canonical request being made.
    pub fn from_headers(headers: &HeaderMap, body: &[u8]) -> Result<Option<Self>, ApiError> {
        let Some(value) = headers.get(HEADER) else {
            return Ok(None);
        };
        let key = value
            .to_str()
            .ok()
            .filter(|k| !k.is_empty() && k.len() <= 255 && k.chars().all(|c| c.is_ascii_graphic()))
            .ok_or_else(|| {
                ApiError::field(
                    "header.Idempotency-Key",
                    "must be 1 to 255 visible ASCII characters",
                )
            })?;
        Ok(Some(IdempotencyKey {
            key: key.to_owned(),
            request_hash: hex::encode(Sha256::digest(body)),
        }))
    }
}

/// A response stored under a key.
pub struct Stored {
    pub status: StatusCode,
    pub body: serde_json::Value,
}

/// Why a key's stored response cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IdempotencyError {
    #[error("this Idempotency-Key was used with a different request body")]
    KeyReused,
    #[error(transparent)]
    Storage(#[from] anyhow::Error),
}

impl From<sqlx::Error> for IdempotencyError {
    fn from(e: sqlx::Error) -> Self {
        IdempotencyError::Storage(e.into())
    }
}

impl From<IdempotencyError> for ApiError {
    fn from(e: IdempotencyError) -> Self {
        match e {
            IdempotencyError::KeyReused => {
                ApiError::refused("idempotency_key_reused", e.to_string())
            }
            IdempotencyError::Storage(e) => ApiError::Internal(e),
        }
    }
}

/// The stored response for this key, if the same request was made before.
pub async fn lookup(
    tx: &mut Tx<'_>,
    user: Uuid,
    scope: &str,
    key: &IdempotencyKey,
) -> Result<Option<Stored>, IdempotencyError> {
    let row: Option<(String, i32, String)> = dispatch_tx!(tx, conn => {
        sqlx::query_as(
            "SELECT request_hash, status, body FROM idempotency_keys \
             WHERE user_id = $1 AND scope = $2 AND key = $3",
        )
        .bind(user)
        .bind(scope)
        .bind(&key.key)
        .fetch_optional(conn)
        .await
    })?;
    let Some((hash, status, body)) = row else {
        return Ok(None);
    };
    if hash != key.request_hash {
        return Err(IdempotencyError::KeyReused);
    }
    let status = u16::try_from(status)
        .ok()
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    let body = serde_json::from_str(&body).map_err(|e| IdempotencyError::Storage(e.into()))?;
    Ok(Some(Stored { status, body }))
}

/// Stores the response of the first request made with this key.
pub async fn store(
    tx: &mut Tx<'_>,
    user: Uuid,
    scope: &str,
    key: &IdempotencyKey,
    status: StatusCode,
    body: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let body = serde_json::to_string(body).map_err(|e| ApiError::Internal(e.into()))?;
    dispatch_tx!(tx, conn => {
        sqlx::query(
            "INSERT INTO idempotency_keys (user_id, scope, key, request_hash, status, body, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(user)
        .bind(scope)
        .bind(&key.key)
        .bind(&key.request_hash)
        .bind(i32::from(status.as_u16()))
        .bind(body)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
    })?;
    Ok(())
}
