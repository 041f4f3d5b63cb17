//! `/v1/auth/register`, `/v1/auth/login`, `/v1/api-keys`, `/v1/me`; refresh
//! and logout are in [`super::sessions`].

use super::email::Email;
use super::sessions::{self, TokenResponse};
use super::{password, store, tokens, AccountsState, Caller, Credential, Role, RouterState};
use crate::error::responses::{InvalidFields, MalformedJson};
use crate::error::{ApiError, FieldError, Json, Problem};
use crate::ids::{ApiKeyId, PathId};
use crate::limits::{ClientAddr, LimitsState};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
pub use gpuex_api::auth::{ApiKeyCreated, UserView};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    AccountsState: FromRef<S>,
    LimitsState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(login))
        .routes(routes!(create_api_key, list_api_keys))
        .routes(routes!(delete_api_key))
        .routes(routes!(me))
        .merge(sessions::router())
        .merge(super::admin::router())
}

const MIN_PASSWORD: usize = 12;
const MAX_PASSWORD: usize = 256;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// Login name; stored lower-case.
    #[schema(max_length = 254, pattern = r"^[^@\s]+@[^.\s][^\s]*\.[^\s]*$")]
    pub email: String,
    /// At least 12 characters.
    #[schema(min_length = 12, max_length = 256)]
    pub password: String,
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub name: String,
    /// `buyer` or `provider` (admins are bootstrapped, not registered).
    #[schema(value_type = RegisteredRole)]
    pub role: String,
}

/// The roles anyone may register as; the body takes the name as text.
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
enum RegisteredRole {
    Buyer,
    Provider,
}

/// A registration that has been checked field by field.
struct NewUser {
    email: String,
    password: String,
    name: String,
    role: Role,
}

impl TryFrom<RegisterRequest> for NewUser {
    type Error = ApiError;

    fn try_from(req: RegisterRequest) -> Result<Self, ApiError> {
        let mut errors = Vec::new();
        let email = Email::parse(&req.email)
            .map(|e| e.as_str().to_owned())
            .unwrap_or_else(|e| {
                errors.push(e);
                String::new()
            });
        let chars = req.password.chars().count();
        if chars < MIN_PASSWORD {
            errors.push(FieldError::new(
                "password",
                format!("must be at least {MIN_PASSWORD} characters"),
            ));
        } else if chars > MAX_PASSWORD {
            errors.push(FieldError::new(
                "password",
                format!("must be at most {MAX_PASSWORD} characters"),
            ));
        }
        let name = req.name.trim().to_owned();
        if name.is_empty() || name.chars().count() > 100 {
            errors.push(FieldError::new("name", "must be 1 to 100 characters"));
        }
        let role = match req.role.as_str() {
            "buyer" => Some(Role::Buyer),
            "provider" => Some(Role::Provider),
            _ => {
                errors.push(FieldError::new("role", "must be `buyer` or `provider`"));
                None
            }
        };
        match role {
            Some(role) if errors.is_empty() => Ok(NewUser {
                email,
                password: req.password,
                name,
                role,
            }),
            _ => Err(ApiError::Invalid(errors)),
        }
    }
}

impl From<store::UserRow> for UserView {
    fn from(u: store::UserRow) -> Self {
        UserView {
            id: u.id,
            email: u.email,
            name: u.name,
            role: u.role,
            created_at: u.created_at,
        }
    }
}

/// Create an account (buyer or provider).
#[utoipa::path(post, path = "/v1/auth/register", tag = "auth",
    request_body = RegisterRequest,
    responses(
        (status = 201, description = "Registered", body = UserView),
        MalformedJson,
        (status = 409, description = "Email already registered", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
        (status = 429, description = "Too many registrations from this address", body = Problem, content_type = "application/problem+json"),
    ))]
async fn register(
    State(state): State<AccountsState>,
    ClientAddr(addr): ClientAddr,
    Json(req): Json<RegisterRequest>,
) -> Result<(StatusCode, Json<UserView>), ApiError> {
    let new = NewUser::try_from(req)?;
    state.limits.registration(addr)?;
    let hash = password::hash(new.password).await?;
    let user = store::create_user(
        &state.db,
        &new.email,
        &new.name,
        new.role,
        &hash,
        &state.settings.currency,
        Utc::now(),
    )
    .await?
    .ok_or_else(|| ApiError::Conflict("an account with this email already exists".into()))?;
    Ok((StatusCode::CREATED, Json(user.into())))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    #[schema(min_length = 1, pattern = r"\S")]
    pub email: String,
    #[schema(min_length = 1)]
    pub password: String,
}

/// Exchange email and password for a short-lived access token and a
/// refresh token (a new session).
#[utoipa::path(post, path = "/v1/auth/login", tag = "auth",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Logged in", body = TokenResponse),
        MalformedJson,
        (status = 401, description = "Wrong email or password", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
        (status = 429, description = "Too many failed attempts", body = Problem, content_type = "application/problem+json"),
    ))]
async fn login(
    State(state): State<AccountsState>,
    ClientAddr(addr): ClientAddr,
    Json(req): Json<LoginRequest>,
) -> Result<Json<TokenResponse>, ApiError> {
    let email = req.email.trim().to_lowercase();
    if email.is_empty() {
        return Err(ApiError::field("email", "must not be empty"));
    }
    if req.password.is_empty() {
        return Err(ApiError::field("password", "must not be empty"));
    }
    let attempt = state
        .login_limiter
        .reserve(&email, addr)
        .map_err(|retry_after_s| ApiError::TooManyRequests { retry_after_s })?;
    let user = store::user_by_email(&state.db, &email).await?;
    let verified = match &user {
        Some(u) => password::verify(req.password, u.password_hash.clone()).await?,
        None => false,
    };
    let Some(user) = user.filter(|_| verified) else {
        return Err(ApiError::Unauthorized("wrong email or password".into()));
    };
    attempt.succeeded();
    Ok(Json(
        sessions::open(&state, user.id, user.role, Utc::now()).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKeyRequest {
    /// A label for the key, e.g. `ci`.
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub name: String,
}

/// Create an API key for the caller (usable as `Authorization: Bearer gpx_…`).
#[utoipa::path(post, path = "/v1/api-keys", tag = "auth",
    request_body = CreateApiKeyRequest,
    security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first answer; another body with it is 422 `idempotency_key_reused`; while the first is under way, 409 `idempotency_key_in_use`")),
    responses(
        (status = 201, description = "Created; the key is shown only now", body = ApiKeyCreated),
        MalformedJson,
        (status = 403, description = "Node tokens and API keys cannot create keys", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
    ))]
async fn create_api_key(
    State(state): State<AccountsState>,
    caller: Caller,
    Json(req): Json<CreateApiKeyRequest>,
) -> Result<(StatusCode, Json<ApiKeyCreated>), ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    // A key that could mint keys would outlive its own revocation through them.
    if caller.via == Credential::ApiKey {
        return Err(ApiError::Forbidden(
            "an API key cannot create API keys; use an access token from /v1/auth/login".into(),
        ));
    }
    let name = req.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::field("name", "must be 1 to 100 characters"));
    }
    let (key, prefix) = tokens::new_api_key();
    let now = Utc::now();
    let id = store::insert_api_key(
        &state.db,
        caller.id,
        caller.role,
        &name,
        &prefix,
        &tokens::hash_secret(&key),
        now,
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(ApiKeyCreated {
            id,
            name,
            key,
            prefix,
            created_at: now,
        }),
    ))
}

/// The caller's own account.
#[utoipa::path(get, path = "/v1/me", tag = "auth",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = UserView),
        (status = 403, description = "Node tokens have no account", body = Problem, content_type = "application/problem+json"),
    ))]
async fn me(
    State(state): State<AccountsState>,
    caller: Caller,
) -> Result<Json<UserView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let user = store::user_by_id(&state.db, caller.id)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("the account no longer exists".into()))?;
    Ok(Json(user.into()))
}

/// An API key, without the key itself.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyView {
    pub id: Uuid,
    pub name: String,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
}

/// The caller's API keys.
#[utoipa::path(get, path = "/v1/api-keys", tag = "auth",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's keys", body = [ApiKeyView]),
        (status = 403, description = "Node tokens have no keys", body = Problem, content_type = "application/problem+json"),
    ))]
async fn list_api_keys(
    State(state): State<AccountsState>,
    caller: Caller,
) -> Result<Json<Vec<ApiKeyView>>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let keys = store::api_keys_of(&state.db, caller.id).await?;
    Ok(Json(
        keys.into_iter()
            .map(|(id, name, prefix, created_at)| ApiKeyView {
                id,
                name,
                prefix,
                created_at,
            })
            .collect(),
    ))
}

/// Revoke one of the caller's API keys.
#[utoipa::path(delete, path = "/v1/api-keys/{id}", tag = "auth",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The key's id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 403, description = "Node tokens have no keys", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such key of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn delete_api_key(
    State(state): State<AccountsState>,
    caller: Caller,
    PathId(id): PathId<ApiKeyId>,
) -> Result<StatusCode, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    if store::delete_api_key(&state.db, caller.id, id.uuid()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound("no such API key".into()))
    }
}
