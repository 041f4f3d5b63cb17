//! Sessions of the CLI and the dashboard (ARCHITECTURE.md §19): a login opens one and
//! answers a short-lived access token with a refresh token. `POST
//! /v1/auth/refresh` swaps a refresh token for a new pair, and each refresh
//! token works once: a used one shown again can only be a copy, so the whole
//! session is revoked (reuse detection). `POST /v1/auth/logout` revokes the
//! session. Access tokens name their session (`sid`), and the `Caller`
//! extractor refuses them once it is revoked, so a revocation takes effect on
//! the next request, not when the access token expires.

use super::{tokens, AccountsState, Role, RouterState};
use crate::db::{dispatch, dispatch_tx, execute_tx, Db, Tx};
use crate::error::responses::MalformedJson;
use crate::error::{ApiError, Json, Problem};
use anyhow::Context;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
pub use gpuex_api::auth::TokenResponse;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    AccountsState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(refresh))
        .routes(routes!(logout))
}

/// Why a session was revoked, kept with it.
#[derive(Debug, Clone, Copy)]
pub enum RevokeReason {
    Logout,
    /// A refresh token was used a second time.
    Reuse,
    /// An admin changed the account's role.
    RoleChanged,
}

impl RevokeReason {
    fn as_str(self) -> &'static str {
        match self {
            RevokeReason::Logout => "logout",
            RevokeReason::Reuse => "refresh_token_reuse",
            RevokeReason::RoleChanged => "role_changed",
        }
    }
}

/// Opens a session for `user` and answers its first token pair.
pub async fn open(
    state: &AccountsState,
    user: Uuid,
    role: Role,
    now: DateTime<Utc>,
) -> Result<TokenResponse, ApiError> {
    let session = Uuid::now_v7();
    let mut tx = state.db.begin().await?;
    execute_tx!(
        tx,
        "INSERT INTO auth_sessions (id, user_id, created_at) VALUES ($1, $2, $3)",
        session,
        user,
        now,
    )
    .context("failed to open a session")?;
    let pair = issue_pair(state, &mut tx, user, role, session, now).await?;
    tx.commit().await?;
    Ok(pair)
}

/// A new refresh token stored in `tx`, with an access token for the session.
async fn issue_pair(
    state: &AccountsState,
    tx: &mut Tx<'_>,
    user: Uuid,
    role: Role,
    session: Uuid,
    now: DateTime<Utc>,
) -> Result<TokenResponse, ApiError> {
    let refresh_token = tokens::new_refresh_token();
    let ttl = i64::try_from(state.settings.refresh_token_ttl_s).unwrap_or(i64::MAX);
    let refresh_expires_at = now
        .checked_add_signed(chrono::Duration::seconds(ttl))
        .context("refresh token expiry out of range")?;
    execute_tx!(
        tx,
        "INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        tokens::hash_secret(&refresh_token),
        session,
        now,
        refresh_expires_at,
    )
    .context("failed to store a refresh token")?;
    let (access_token, expires_at) = state.keys.issue(user, role, Some(session), now)?;
    Ok(TokenResponse {
        access_token,
        token_type: "Bearer".into(),
        expires_in: state.settings.token_ttl_s,
        expires_at,
        refresh_token,
        refresh_expires_at,
    })
}

/// A refresh token sent to refresh or logout.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshRequest {
    /// The `gpr_…` token of the last login or refresh.
    #[schema(min_length = 5, max_length = 200, pattern = "^gpr_")]
    pub refresh_token: String,
}

impl RefreshRequest {
    /// The token's stored form, once it looks like one.
    fn hash(&self) -> Result<String, ApiError> {
        let token = self.refresh_token.trim();
        if token.len() <= tokens::REFRESH_TOKEN_PREFIX.len()
            || token.len() > 200
            || !token.starts_with(tokens::REFRESH_TOKEN_PREFIX)
        {
            return Err(ApiError::field(
                "refresh_token",
                "must be the `gpr_…` refresh token of a login or refresh",
            ));
        }
        Ok(tokens::hash_secret(token))
    }
}

/// Swap a refresh token for a new access token and refresh token.
///
/// Each refresh token works once. Showing one that was already used revokes
/// its whole session (every token of it stops working): only a stolen copy
/// or a client that lost track of its own token does that.
#[utoipa::path(post, path = "/v1/auth/refresh", tag = "auth",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "A new pair; the refresh token sent is used up", body = TokenResponse),
        MalformedJson,
        (status = 401, description = "Unknown, expired, used or revoked refresh token", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Not a refresh token", body = Problem, content_type = "application/problem+json"),
    ))]
async fn refresh(
    State(state): State<AccountsState>,
    Json(req): Json<RefreshRequest>,
) -> Result<Json<TokenResponse>, ApiError> {
    let hash = req.hash()?;
    let now = Utc::now();
    let mut tx = state.db.begin().await?;
    let Some(found) = find(&mut tx, &hash).await? else {
        return Err(ApiError::Unauthorized("unknown refresh token".into()));
    };
    if found.revoked {
        return Err(ApiError::Unauthorized(
            "this session was revoked; log in again".into(),
        ));
    }
    // A used token again, or one used by a concurrent request first.
    let reused = found.used
        || execute_tx!(
            tx,
            "UPDATE refresh_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL",
            now,
            &hash,
        )? == 0;
    if reused {
        revoke_session(&mut tx, found.session, RevokeReason::Reuse, now).await?;
        tx.commit().await?;
        tracing::warn!(session = %found.session, user = %found.user, "refresh token reused; session revoked");
        return Err(ApiError::Unauthorized(
            "this refresh token was already used; the session is revoked, log in again".into(),
        ));
    }
    if found.expires_at <= now {
        return Err(ApiError::Unauthorized(
            "the refresh token has expired; log in again".into(),
        ));
    }
    let pair = issue_pair(&state, &mut tx, found.user, found.role, found.session, now).await?;
    tx.commit().await?;
    Ok(Json(pair))
}

/// End a session: its refresh token and every access token it issued stop working.
///
/// Idempotent: an unknown or already revoked token answers 204 as well.
#[utoipa::path(post, path = "/v1/auth/logout", tag = "auth",
    request_body = RefreshRequest,
    responses(
        (status = 204, description = "The session is revoked"),
        MalformedJson,
        (status = 422, description = "Not a refresh token", body = Problem, content_type = "application/problem+json"),
    ))]
async fn logout(
    State(state): State<AccountsState>,
    Json(req): Json<RefreshRequest>,
) -> Result<StatusCode, ApiError> {
    let hash = req.hash()?;
    let now = Utc::now();
    let mut tx = state.db.begin().await?;
    if let Some(found) = find(&mut tx, &hash).await? {
        revoke_session(&mut tx, found.session, RevokeReason::Logout, now).await?;
    }
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A refresh token with its session and account.
struct Found {
    session: Uuid,
    user: Uuid,
    role: Role,
    expires_at: DateTime<Utc>,
    used: bool,
    revoked: bool,
}

async fn find(tx: &mut Tx<'_>, hash: &str) -> Result<Option<Found>, ApiError> {
    type Raw = (
        Uuid,
        Uuid,
        String,
        DateTime<Utc>,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
    );
    let raw: Option<Raw> = dispatch_tx!(tx, conn => {
        sqlx::query_as(
            "SELECT t.session_id, s.user_id, u.role, t.expires_at, t.used_at, s.revoked_at \
             FROM refresh_tokens t JOIN auth_sessions s ON s.id = t.session_id \
             JOIN users u ON u.id = s.user_id WHERE t.token_hash = $1",
        )
        .bind(hash)
        .fetch_optional(conn)
        .await
    })
    .context("failed to look up a refresh token")?;
    let Some((session, user, role, expires_at, used_at, revoked_at)) = raw else {
        return Ok(None);
    };
    Ok(Some(Found {
        session,
        user,
        role: Role::parse(&role).context("unknown role in users")?,
        expires_at,
        used: used_at.is_some(),
        revoked: revoked_at.is_some(),
    }))
}

async fn revoke_session(
    tx: &mut Tx<'_>,
    session: Uuid,
    reason: RevokeReason,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    execute_tx!(
        tx,
        "UPDATE auth_sessions SET revoked_at = $1, revoked_reason = $2 \
             WHERE id = $3 AND revoked_at IS NULL",
        now,
        reason.as_str(),
        session,
    )
    .context("failed to revoke a session")?;
    Ok(())
}

/// Revokes every open session of `user` in `tx`.
pub async fn revoke_all_of(
    tx: &mut Tx<'_>,
    user: Uuid,
    reason: RevokeReason,
    now: DateTime<Utc>,
) -> anyhow::Result<u64> {
    execute_tx!(
        tx,
        "UPDATE auth_sessions SET revoked_at = $1, revoked_reason = $2 \
             WHERE user_id = $3 AND revoked_at IS NULL",
        now,
        reason.as_str(),
        user,
    )
    .context("failed to revoke an account's sessions")
}

/// The current role of account `user`, and whether `session` (when the
/// token names one) still stands; `None` once the account is gone. One query:
/// it runs on every request made with an access token.
pub async fn account_of(
    db: &Db,
    user: Uuid,
    session: Option<Uuid>,
) -> anyhow::Result<Option<(Role, bool)>> {
    let Some(session) = session else {
        let role = super::store::role_of(db, user).await?;
        return Ok(role.map(|role| (role, true)));
    };
    let row: Option<(String, Option<Uuid>, Option<DateTime<Utc>>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT u.role, s.id, s.revoked_at FROM users u \
             LEFT JOIN auth_sessions s ON s.id = $2 AND s.user_id = u.id WHERE u.id = $1",
        )
        .bind(user)
        .bind(session)
        .fetch_optional(pool)
        .await
    })
    .context("failed to read an account's role")?;
    let Some((role, found, revoked_at)) = row else {
        return Ok(None);
    };
    let role = Role::parse(&role).context("unknown role in users")?;
    let open = found.is_some() && revoked_at.is_none();
    Ok(Some((role, open)))
}
