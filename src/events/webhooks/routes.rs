//! `POST/GET /v1/webhooks`, `DELETE /v1/webhooks/{id}`,
//! `GET /v1/webhooks/{id}/deliveries` and `POST /v1/webhooks/secret`.

use super::history::{self, DeliveryView};
use super::store::{self, Webhook};
use super::{address, sign};
use crate::auth::{Caller, Role, RouterState};
use crate::db::Db;
use crate::error::responses::{InvalidQuery, MalformedJson};
use crate::error::{ApiError, FieldError, Json, Problem, Query};
use crate::events::{EventType, EventsState};
use crate::ids::{PathId, WebhookId};
use crate::page::{self, Limit};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    EventsState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(create_webhook, list_webhooks))
        .routes(routes!(delete_webhook))
        .routes(routes!(webhook_deliveries))
        .routes(routes!(rotate_secret))
}

/// Who may have webhooks: every account, not the agents.
const OWNERS: &[Role] = &[Role::Buyer, Role::Provider, Role::Admin];

/// Endpoints an account may have.
pub const MAX_WEBHOOKS: i64 = 20;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhook {
    /// Where events are POSTed: http(s), resolving to public addresses only
    /// (unless the server allows private ones).
    #[schema(max_length = 2048, pattern = "^https?://")]
    pub url: String,
    /// Only these event types; absent or `null`: all of them.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 32, value_type = Option<Vec<EventType>>)]
    pub events: Option<Vec<String>>,
}

/// A new endpoint, with its secret: shown only here.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// Verifies `Gpuex-Signature`: `whsec_` and 64 hex digits.
    pub secret: String,
}

/// The event types asked for, or the field that is wrong.
fn event_types(raw: Option<&[String]>) -> Result<Option<Vec<EventType>>, ApiError> {
    let Some(raw) = raw else { return Ok(None) };
    if raw.is_empty() || raw.len() > 32 {
        return Err(ApiError::field(
            "events",
            "give 1 to 32 event types, or leave it out for all",
        ));
    }
    let mut types = Vec::new();
    let mut errors = Vec::new();
    for (i, name) in raw.iter().enumerate() {
        match name.parse::<EventType>() {
            Ok(t) if !types.contains(&t) => types.push(t),
            Ok(_) => {}
            Err(_) => errors.push(FieldError::new(
                format!("events[{i}]"),
                format!("unknown event type `{name}`"),
            )),
        }
    }
    if errors.is_empty() {
        Ok(Some(types))
    } else {
        Err(ApiError::Invalid(errors))
    }
}

/// Checks a webhook URL as `field`: http(s), and public unless allowed.
pub async fn checked_url(allow_private: bool, raw: &str, field: &str) -> Result<(), ApiError> {
    address::check(raw, allow_private)
        .await
        .map(|_| ())
        .map_err(|e| ApiError::field(field, e.to_string()))
}

/// Adds an endpoint for the caller's events (ARCHITECTURE.md §15). Each delivery is
/// a POST of the event, as `GET /v1/events` shows it, with
/// `Gpuex-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
/// `Gpuex-Event-Id` and `Gpuex-Event-Type`; anything but a 2xx is retried
/// with backoff for 24 h. At least once: dedupe by event id.
#[utoipa::path(post, path = "/v1/webhooks", tag = "events", security(("bearer" = [])),
    request_body = NewWebhook,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first answer; another body with it is 422 `idempotency_key_reused`; while the first is under way, 409 `idempotency_key_in_use`")),
    responses(
        (status = 201, description = "Created; the secret is shown only now", body = CreatedWebhook),
        MalformedJson,
        (status = 403, description = "Node tokens have no webhooks", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`too_many_webhooks`: the account has 20 already", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid `url` (not http(s), too long, unresolvable or private) or `events`", body = Problem, content_type = "application/problem+json"),
    ))]
async fn create_webhook(
    State(state): State<EventsState>,
    caller: Caller,
    Json(req): Json<NewWebhook>,
) -> Result<(StatusCode, Json<CreatedWebhook>), ApiError> {
    caller.require(OWNERS)?;
    let events = event_types(req.events.as_deref())?;
    checked_url(state.settings.webhook_allow_private, &req.url, "url").await?;
    let webhook = Webhook {
        id: Uuid::now_v7(),
        url: req.url,
        events,
        created_at: Utc::now(),
    };
    let secret = sign::new_secret();
    if !store::create(&state.db, caller.id, &webhook, &secret, MAX_WEBHOOKS).await? {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "too_many_webhooks",
            detail: format!("an account has at most {MAX_WEBHOOKS} webhooks; delete one first"),
        });
    }
    Ok((
        StatusCode::CREATED,
        Json(CreatedWebhook { webhook, secret }),
    ))
}

/// The caller's endpoints, oldest first (their secrets are not shown).
#[utoipa::path(get, path = "/v1/webhooks", tag = "events", security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's webhooks (at most 20)", body = [Webhook]),
        (status = 403, description = "Node tokens have no webhooks", body = Problem, content_type = "application/problem+json"),
    ))]
async fn list_webhooks(
    State(state): State<EventsState>,
    caller: Caller,
) -> Result<Json<Vec<Webhook>>, ApiError> {
    caller.require(OWNERS)?;
    Ok(Json(store::list(&state.db, caller.id).await?))
}

/// Deletes one of the caller's endpoints; its pending deliveries stop.
#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "events", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Webhook id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "Node tokens have no webhooks", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such webhook of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn delete_webhook(
    State(state): State<EventsState>,
    caller: Caller,
    PathId(id): PathId<WebhookId>,
) -> Result<StatusCode, ApiError> {
    caller.require(OWNERS)?;
    if store::delete(&state.db, caller.id, id.uuid()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound("no such webhook".into()))
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Only deliveries older than this id (`next_before` of the previous page).
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Limit<100, 20>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryPage {
    /// Newest first.
    pub items: Vec<DeliveryView>,
    /// Pass as `before` for the next page; `null` on the last.
    pub next_before: Option<i64>,
}

/// An endpoint's deliveries, newest first, each with its attempts.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "events", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Webhook id"), DeliveriesQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = DeliveryPage),
        (status = 403, description = "Node tokens have no webhooks", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such webhook of the caller's", body = Problem, content_type = "application/problem+json"),
        InvalidQuery,
    ))]
async fn webhook_deliveries(
    State(state): State<EventsState>,
    caller: Caller,
    PathId(id): PathId<WebhookId>,
    Query(q): Query<DeliveriesQuery>,
) -> Result<Json<DeliveryPage>, ApiError> {
    caller.require(OWNERS)?;
    let id = id.uuid();
    if !store::owns(&state.db, caller.id, id).await? {
        return Err(ApiError::NotFound("no such webhook".into()));
    }
    let before = match q.before {
        Some(b) if b < 1 => return Err(ApiError::field("query.before", "must be 1 or more")),
        Some(b) => b,
        None => i64::MAX,
    };
    let limit = q.limit.get();
    let mut items = history::deliveries(&state.db, id, before, limit + 1).await?;
    let next_before = page::next_cursor(&mut items, limit, |d| d.id);
    Ok(Json(DeliveryPage { items, next_before }))
}

/// The account's default secret: it signs what an order's `webhook_url` gets.
#[derive(Debug, Serialize, ToSchema)]
pub struct DefaultSecret {
    /// `whsec_` and 64 hex digits; shown only now.
    pub secret: String,
    pub created_at: DateTime<Utc>,
}

/// Creates or rotates the account's default secret, which signs the
/// deliveries to orders' `webhook_url`s, and shows it once. After a
/// rotation, every delivery is signed with the new secret.
#[utoipa::path(post, path = "/v1/webhooks/secret", tag = "events", security(("bearer" = [])),
    responses(
        (status = 201, description = "The new secret, shown only now", body = DefaultSecret),
        (status = 403, description = "Node tokens have no webhooks", body = Problem, content_type = "application/problem+json"),
    ))]
async fn rotate_secret(
    State(state): State<EventsState>,
    caller: Caller,
) -> Result<(StatusCode, Json<DefaultSecret>), ApiError> {
    caller.require(OWNERS)?;
    let secret = sign::new_secret();
    let created_at = Utc::now();
    store::set_default_secret(&state.db, caller.id, &secret, created_at).await?;
    Ok((
        StatusCode::CREATED,
        Json(DefaultSecret { secret, created_at }),
    ))
}

/// For `POST /v1/orders`: refuses a `webhook_url` that is private, or that
/// nothing could sign because the account has no default secret yet.
pub async fn check_order_webhook(
    db: &Db,
    allow_private: bool,
    user: Uuid,
    url: &str,
) -> Result<(), ApiError> {
    checked_url(allow_private, url, "webhook_url").await?;
    if store::default_secret(db, user).await?.is_none() {
        return Err(ApiError::field(
            "webhook_url",
            "the account has no webhook secret to sign deliveries with: call POST /v1/webhooks/secret first",
        ));
    }
    Ok(())
}
