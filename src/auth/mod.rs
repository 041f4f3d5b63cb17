//! Accounts and access: registration, login (JWT), API keys, and the `Caller`
//! extractor every protected handler takes.

mod admin;
mod email;
mod password;
mod rate_limit;
mod routes;
pub mod sessions;
pub(crate) mod store;
pub mod tokens;

pub use rate_limit::LoginLimiter;
pub use routes::{router, ApiKeyCreated, UserView};
pub use store::{bootstrap_admin, create_user, load_or_create_jwt_secret, UserRow};

use crate::config::Settings;
use crate::db::Db;
use crate::error::ApiError;
use crate::limits::Limits;
use crate::market::MarketHandle;
use crate::metrics::Metrics;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
pub use gpuex_api::auth::Role;
use std::sync::Arc;
use tokens::JwtKeys;
use uuid::Uuid;

/// The paths node tokens may call (ARCHITECTURE.md §7).
const AGENT_PATH_PREFIX: &str = "/v1/agent/";

/// How a caller proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// An access token from `POST /v1/auth/login`.
    AccessToken,
    /// A `gpx_` API key.
    ApiKey,
    /// A `gpn_` node token.
    NodeToken,
}

/// The authenticated caller of a request.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub id: Uuid,
    pub role: Role,
    pub via: Credential,
    /// When the credential stops being good (an access token's `exp`);
    /// `None` for keys and node tokens, which last until revoked.
    pub expires_at: Option<i64>,
}

impl Caller {
    /// Refuses callers whose role is not among `roles` (403).
    pub fn require(&self, roles: &[Role]) -> Result<(), ApiError> {
        if roles.contains(&self.role) {
            Ok(())
        } else {
            let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            Err(ApiError::Forbidden(format!(
                "this endpoint is for {} callers; you are {}",
                names.join(" or "),
                self.role
            )))
        }
    }

    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

/// What the [`Caller`] extractor checks credentials against; any router
/// state that can give one authenticates its callers.
#[derive(Clone)]
pub struct AuthState {
    pub db: Db,
    pub keys: Arc<JwtKeys>,
    /// Node tokens, answered from memory.
    pub node_tokens: crate::nodes::NodeCache,
}

/// What the account routes use: sessions are signed with `keys`,
/// registrations counted by `limits`, failed logins slowed by
/// `login_limiter`, and a role change takes nodes out of the `market`.
#[derive(Clone)]
pub struct AccountsState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub keys: Arc<JwtKeys>,
    pub limits: Arc<Limits>,
    pub login_limiter: Arc<LoginLimiter>,
    pub market: MarketHandle,
    pub metrics: Arc<Metrics>,
    /// Forgets the nodes a provider's role change revokes.
    pub node_cache: crate::nodes::NodeCache,
}

/// What every router asks of the application's state: handlers are given
/// clones of it across tasks, and [`Caller`] authenticates against the
/// [`AuthState`] it yields. Any state that gives an `AuthState` is one.
pub trait RouterState: Clone + Send + Sync + 'static {
    fn auth(&self) -> AuthState;
}

impl<S> RouterState for S
where
    S: Clone + Send + Sync + 'static,
    AuthState: FromRef<S>,
{
    fn auth(&self) -> AuthState {
        AuthState::from_ref(self)
    }
}

impl<S: RouterState> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let state = state.auth();
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| ApiError::Unauthorized("missing Authorization: Bearer token".into()))?;
        let token = header
            .strip_prefix("Bearer ")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                ApiError::Unauthorized("expected Authorization: Bearer <token>".into())
            })?;
        if token.starts_with(tokens::NODE_TOKEN_PREFIX) {
            let hash = tokens::hash_secret(token);
            let caller = crate::nodes::caller_by_node_token(&state.db, &state.node_tokens, &hash)
                .await?
                .ok_or_else(|| ApiError::Unauthorized("unknown node token".into()))?;
            // A node token is good for the agent protocol and nothing else.
            if !parts.uri.path().starts_with(AGENT_PATH_PREFIX) {
                return Err(ApiError::Forbidden(
                    "node tokens may only call /v1/agent/*".into(),
                ));
            }
            return Ok(caller);
        }
        if token.starts_with(tokens::API_KEY_PREFIX) {
            let hash = tokens::hash_secret(token);
            return store::caller_by_api_key(&state.db, &hash)
                .await?
                .ok_or_else(|| ApiError::Unauthorized("unknown API key".into()));
        }
        let claims = state
            .keys
            .verify(token)
            .ok_or_else(|| ApiError::Unauthorized("invalid or expired token".into()))?;
        // A token says what the account was when it was issued; the account
        // may since have been deleted or given another role, and its session
        // may have ended (logout, a reused refresh token, a role change).
        match sessions::account_of(&state.db, claims.sub, claims.sid).await? {
            None => Err(ApiError::Unauthorized(
                "the account no longer exists".into(),
            )),
            Some((role, _)) if role != claims.role => Err(ApiError::Unauthorized(
                "the account's role changed since this token was issued; log in again".into(),
            )),
            Some((_, false)) => Err(ApiError::Unauthorized(
                "this session has ended; log in again".into(),
            )),
            Some((role, true)) => Ok(Caller {
                id: claims.sub,
                role,
                via: Credential::AccessToken,
                expires_at: Some(claims.exp),
            }),
        }
    }
}
