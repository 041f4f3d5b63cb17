//! `/v1/orders`: place, list, read, fills, cancel.

use super::handle::{MarketError, OrderMeta};
use super::views::{self, OrderState, OrderView};
use crate::api::Limit;
use crate::app::AppState;
use crate::auth::{Caller, Role};
use crate::engine::{self, Command, Event, PlaceOrder};
use crate::error::{ApiError, FieldError, Json, Path, Problem, Query};
use crate::idempotency::IdempotencyKey;
use crate::pricing::quotes::{self, Resources};
use crate::pricing::Mode;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(place_order, list_orders))
        .routes(routes!(get_order, cancel_order))
        .routes(routes!(order_fills))
}

/// How urgently a pooled order must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Qos {
    /// Never waits; preempted after batch work.
    Realtime,
    Batch,
}

/// An order (ARCHITECTURE.md §4).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderRequest {
    pub mode: Mode,
    pub resources: Resources,
    /// A region name, or `any` (default): the engine picks, cheapest first.
    #[serde(default)]
    pub region: Option<String>,
    /// Reserved: the window's start, a whole hour (e.g. `14:00:00Z`) at
    /// least 1 h ahead; off the hour gets 422 naming `start_at`.
    #[serde(default)]
    pub start_at: Option<DateTime<Utc>>,
    /// Window length, 60 s to 366 days; absent on on-demand and spot means until released.
    #[serde(default)]
    #[schema(minimum = 60, maximum = 31622400)]
    pub duration_s: Option<u64>,
    /// The most the whole order pays per hour: required for spot (its bid);
    /// on every other mode the order is never filled above it (refused with
    /// `max_price_exceeded`, or waiting within `max_wait_s`).
    #[serde(default, deserialize_with = "crate::decimal::money_option")]
    #[schema(value_type = Option<crate::bounds::PricePerHour>)]
    pub max_price: Option<Decimal>,
    /// How long to wait for capacity (default 0: refused at once; at most 7 days).
    #[serde(default)]
    #[schema(maximum = 604800)]
    pub max_wait_s: Option<u64>,
    #[serde(default)]
    pub qos: Option<Qos>,
    /// Cost-allocation tags, e.g. `{"business_line": "ads"}`.
    #[serde(default)]
    #[schema(schema_with = tags_schema)]
    pub tags: Option<BTreeMap<String, String>>,
    /// A shell command the agent runs on the slice.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 8192, pattern = r"\S")]
    pub command: Option<String>,
    /// Environment for the command: shell variable names, at most 64. Names
    /// of loader and runtime hooks (`LD_*`, `DYLD_*`, `MALLOC_*`, `GCONV_PATH`,
    /// `GLIBC_TUNABLES`, `BASH_ENV`, `ENV`, `IFS`, `NODE_OPTIONS`,
    /// `PYTHONSTARTUP`, `PERL5OPT` and the like) get 422 naming `env.NAME`.
    #[serde(default)]
    #[schema(schema_with = env_schema)]
    pub env: Option<BTreeMap<String, String>>,
    /// Files fetched into the workload's working folder before it starts,
    /// each checked against its SHA-256 (ARCHITECTURE.md §13); at most 16.
    #[serde(default)]
    #[schema(max_items = 16)]
    pub artifacts: Option<Vec<crate::protocol::Artifact>>,
    /// The OCI image a `container` launcher runs the command in, e.g.
    /// `docker.io/pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime`.
    #[serde(default)]
    #[schema(
        min_length = 1,
        max_length = 512,
        pattern = "^[A-Za-z0-9][A-Za-z0-9._/:@-]*$"
    )]
    pub image: Option<String>,
    /// The buyer's credentials for `image`'s registry: kept sealed apart
    /// from the order, handed only to the agent that pulls the image for
    /// this order's leases, and never shown again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_auth: Option<crate::protocol::RegistryAuth>,
    /// Whether the workload may use the network; without it the `sandbox` and
    /// `container` launchers give it none (default false).
    #[serde(default)]
    pub network: Option<bool>,
    /// The workload's checkpoint (ARCHITECTURE.md §21): the agent sends its
    /// checkpoint folder every `every_s` and when the workload ends; needs
    /// a `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointRequest>,
    /// When a lease of the order is preempted or its node lost and the order
    /// is placed again: `restart` from nothing (default), or `resume` with
    /// the last checkpoint in place (needs `checkpoint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_interrupt: Option<OnInterrupt>,
    /// Receives the order's and lease's notices.
    #[serde(default)]
    #[schema(max_length = 2048, pattern = "^https?://")]
    pub webhook_url: Option<String>,
    /// The buyer's own id for the order, unique per buyer.
    #[serde(default)]
    pub client_order_id: Option<String>,
}

const MAX_WAIT_S: u64 = 7 * 24 * 3600;

/// An order's `checkpoint`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointRequest {
    /// Where a container sees the checkpoint folder (default `/checkpoint`):
    /// an absolute path of letters, digits, `_ . -` parts, not `/work`,
    /// `/outputs` or a system folder. Other launchers tell the workload
    /// where it is in `$GPUEX_CHECKPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 2, max_length = 256, pattern = "^(/[A-Za-z0-9_.-]+)+$")]
    pub path: Option<String>,
    /// Seconds between uploads, 1 to 86 400.
    #[schema(minimum = 1, maximum = 86400)]
    pub every_s: u32,
}

/// What an interrupted order's next lease starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnInterrupt {
    Restart,
    Resume,
}

/// Folders a checkpoint may not be mounted over in a container.
const RESERVED_PATHS: [&str; 9] = [
    "/work", "/outputs", "/tmp", "/proc", "/dev", "/sys", "/etc", "/usr", "/bin",
];

fn checkpoint_path_is_valid(path: &str) -> bool {
    let parts_ok = path.len() <= 256
        && path.starts_with('/')
        && path[1..].split('/').all(|part| {
            !part.is_empty()
                && part.chars().any(|c| c != '.')
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        });
    let reserved = RESERVED_PATHS
        .iter()
        .any(|r| path == *r || path.starts_with(&format!("{r}/")))
        || path.starts_with("/.gpuex");
    parts_ok && !reserved
}

/// `tags` as `validate` checks them: at most 20, keys 1–63 of a-z, 0-9,
/// `_ - . : /`, values 1–256 bytes.
fn tags_schema() -> utoipa::openapi::schema::Object {
    let value = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .min_length(Some(1))
        .max_length(Some(256));
    optional_string_map("^[A-Za-z0-9_.:/-]{1,63}$", value, 20)
}

/// `env` as `validate` checks it: at most 64 shell variable names of at
/// most 128 characters, values at most 4096 bytes.
fn env_schema() -> utoipa::openapi::schema::Object {
    let value = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .max_length(Some(4096));
    optional_string_map("^[A-Za-z_][A-Za-z0-9_]{0,127}$", value, 64)
}

/// An object or null: at most `max` keys matching `key_pattern`, each to a `value`.
fn optional_string_map(
    key_pattern: &str,
    value: utoipa::openapi::schema::ObjectBuilder,
    max: usize,
) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(
            [Type::Object, Type::Null]
                .into_iter()
                .collect::<SchemaType>(),
        )
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(key_pattern)),
        ))
        .additional_properties(Some(value))
        .max_properties(Some(max))
        .build()
}

fn check_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/'))
}

impl OrderRequest {
    /// Field checks that need no database; the window rules come from quotes.
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = self.resources.validate_shape("resources");
        match self.max_price {
            None if self.mode == Mode::Spot => errors.push(FieldError::new(
                "max_price",
                "a spot order needs a max_price",
            )),
            None => {}
            Some(price) => errors.extend(crate::bounds::PRICE_PER_HOUR.check("max_price", price)),
        }
        if let Some(d) = self.duration_s {
            if !(quotes::MIN_DURATION_S..=quotes::MAX_DURATION_S).contains(&d) {
                errors.push(FieldError::new(
                    "duration_s",
                    "must be between 60 s and 366 days",
                ));
            }
        }
        if self.max_wait_s.is_some_and(|w| w > MAX_WAIT_S) {
            errors.push(FieldError::new("max_wait_s", "must be at most 7 days"));
        }
        if self.qos == Some(Qos::Realtime) && self.max_wait_s.is_some_and(|w| w > 0) {
            errors.push(FieldError::new("max_wait_s", "realtime orders never wait"));
        }
        if let Some(tags) = &self.tags {
            if tags.len() > 20 {
                errors.push(FieldError::new("tags", "at most 20 tags"));
            }
            for (k, v) in tags {
                if !check_name(k, 63) {
                    errors.push(FieldError::new(
                        format!("tags.{k}"),
                        "keys are 1–63 of a-z, 0-9, _ - . : /",
                    ));
                } else if v.is_empty() || v.len() > 256 {
                    errors.push(FieldError::new(
                        format!("tags.{k}"),
                        "values are 1–256 characters",
                    ));
                }
            }
        }
        if self
            .command
            .as_ref()
            .is_some_and(|c| c.trim().is_empty() || c.len() > 8192)
        {
            errors.push(FieldError::new("command", "must be 1 to 8192 characters"));
        }
        if let Some(env) = &self.env {
            if env.len() > 64 {
                errors.push(FieldError::new("env", "at most 64 variables"));
            }
            for (k, v) in env {
                // The agent refuses the same names: one rule for both sides.
                if let Err(why) = crate::workload_env::check_name(k) {
                    errors.push(FieldError::new(format!("env.{k}"), why.to_string()));
                } else if v.len() > 4096 {
                    errors.push(FieldError::new(
                        format!("env.{k}"),
                        "values are at most 4096 characters",
                    ));
                } else if v.contains('\0') {
                    // No environment can carry a NUL: it would cut the value.
                    errors.push(FieldError::new(
                        format!("env.{k}"),
                        "values cannot contain NUL",
                    ));
                }
            }
        }
        if let Some(artifacts) = &self.artifacts {
            if artifacts.len() > crate::protocol::MAX_ARTIFACTS {
                errors.push(FieldError::new("artifacts", "at most 16 artifacts"));
            }
            let mut paths = std::collections::BTreeSet::new();
            for (i, a) in artifacts.iter().enumerate() {
                let http = a.url.starts_with("http://") || a.url.starts_with("https://");
                if !http || a.url.len() > 2048 || a.url.chars().any(char::is_whitespace) {
                    errors.push(FieldError::new(
                        format!("artifacts[{i}].url"),
                        "must be an http(s) URL of at most 2048 characters",
                    ));
                }
                if !crate::protocol::Artifact::sha256_is_valid(&a.sha256) {
                    errors.push(FieldError::new(
                        format!("artifacts[{i}].sha256"),
                        "must be 64 hex digits",
                    ));
                }
                if !crate::protocol::Artifact::path_is_safe(&a.path) {
                    errors.push(FieldError::new(
                        format!("artifacts[{i}].path"),
                        "must be a relative path of 1–255 characters (letters, digits, _ . -), no name only dots",
                    ));
                } else if !paths.insert(a.path.as_str()) {
                    errors.push(FieldError::new(
                        format!("artifacts[{i}].path"),
                        "two artifacts have this path",
                    ));
                }
            }
        }
        if let Some(image) = &self.image {
            let ok = !image.is_empty()
                && image.len() <= 512
                && image.starts_with(|c: char| c.is_ascii_alphanumeric())
                && image.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | ':' | '@' | '-')
                });
            if !ok {
                errors.push(FieldError::new(
                    "image",
                    "must be an image reference of 1–512 characters",
                ));
            }
        }
        if let Some(auth) = &self.registry_auth {
            if self.image.is_none() {
                errors.push(FieldError::new(
                    "registry_auth",
                    "needs an `image` to pull with it",
                ));
            }
            if let Err((field, why)) = auth.check() {
                errors.push(FieldError::new(format!("registry_auth.{field}"), why));
            }
        }
        if let Some(checkpoint) = &self.checkpoint {
            if self.command.is_none() {
                errors.push(FieldError::new(
                    "checkpoint",
                    "needs a `command` to checkpoint",
                ));
            }
            if !(1..=86_400).contains(&checkpoint.every_s) {
                errors.push(FieldError::new(
                    "checkpoint.every_s",
                    "must be between 1 and 86400",
                ));
            }
            if checkpoint
                .path
                .as_deref()
                .is_some_and(|p| !checkpoint_path_is_valid(p))
            {
                errors.push(FieldError::new(
                    "checkpoint.path",
                    "must be an absolute path of letters, digits, `_ . -` parts, not /work, /outputs or a system folder",
                ));
            }
        }
        if self.on_interrupt == Some(OnInterrupt::Resume) && self.checkpoint.is_none() {
            errors.push(FieldError::new(
                "on_interrupt",
                "`resume` needs a `checkpoint` to resume from",
            ));
        }
        if let Some(url) = &self.webhook_url {
            let ok =
                (url.starts_with("https://") || url.starts_with("http://")) && url.len() <= 2048;
            if !ok {
                errors.push(FieldError::new("webhook_url", "must be an http(s) URL"));
            }
        }
        if self
            .client_order_id
            .as_ref()
            .is_some_and(|c| !check_name(c, 64))
        {
            errors.push(FieldError::new(
                "client_order_id",
                "must be 1–64 of a-z, 0-9, _ - . : /",
            ));
        }
        errors
    }

    /// What the engine needs of this order.
    pub(crate) fn spec(
        &self,
        start_at: Option<DateTime<Utc>>,
        region: Option<String>,
    ) -> engine::OrderSpec {
        engine::OrderSpec {
            mode: self.mode,
            resources: self.resources.to_engine(),
            region,
            node: None,
            start_at: start_at.map(|t| t.timestamp()),
            duration_s: self.duration_s.and_then(|d| i64::try_from(d).ok()),
            max_price: self.max_price,
            max_wait_s: self.max_wait_s.and_then(|w| i64::try_from(w).ok()),
            qos: match self.qos {
                Some(Qos::Realtime) => engine::Qos::Realtime,
                _ => engine::Qos::Batch,
            },
            predicted_duration: None,
        }
    }
}

/// Place an order. Filled at once, waiting for capacity (`max_wait_s`), or
/// refused with a reason code.
#[utoipa::path(post, path = "/v1/orders", tag = "orders", security(("bearer" = [])),
    request_body = OrderRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first result")),
    responses(
        (status = 201, description = "Accepted: filled, or waiting for capacity", body = OrderView),
        (status = 400, description = "Malformed JSON", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a buyer", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`duplicate_client_order_id`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields (`webhook_url` also when it resolves to a private address, or when the account has no webhook secret yet: `POST /v1/webhooks/secret` first), or refused: `insufficient_funds`, `no_capacity`, `below_floor`, `reserved_too_soon`, `unknown_model`, `unknown_precision`, `unsatisfiable_resources`, `node_cordoned`, `idempotency_key_reused`, `budget_exceeded`, `max_price_exceeded` (the price per hour, named in `detail`, is above `max_price`: on every mode, ARCHITECTURE.md §22); `start_at` off the whole hour on a reserved order", body = Problem, content_type = "application/problem+json"),
    ))]
async fn place_order(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Json(mut req): Json<OrderRequest>,
) -> Result<(StatusCode, Json<OrderView>), ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let errors = req.validate();
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    if let Some(price) = req.max_price.as_mut() {
        crate::bounds::PRICE_PER_HOUR.take("max_price", price);
    }
    // Before the market task: an order whose notices could not be sent,
    // or could reach a private address, is refused whole.
    if let Some(url) = &req.webhook_url {
        crate::events::webhooks::check_order_webhook(&state, caller.id, url).await?;
    }
    let now = state.settings.clock.now();
    let start_at = match req.mode {
        Mode::Reserved => Some(quotes::window(req.mode, req.start_at, req.duration_s, now)?.0),
        _ => {
            if req
                .start_at
                .is_some_and(|s| s > now + chrono::Duration::seconds(60))
            {
                return Err(ApiError::field(
                    "start_at",
                    "only reserved orders start in the future",
                ));
            }
            None
        }
    };
    let region = req.region.clone().filter(|r| r != "any");
    if let Some(name) = &region {
        if !state.regions.exists(&state.db, name).await? {
            return Err(ApiError::field(
                "region",
                format!("unknown region `{name}`"),
            ));
        }
    }
    // The credentials are kept apart (below), never in the stored request.
    let registry_auth = req.registry_auth.take();
    // One serialization serves the stored request, the reply and the retry
    // fingerprint (equal requests give equal bytes).
    let request =
        serde_json::value::to_raw_value(&req).map_err(|e| ApiError::Internal(e.into()))?;
    // The stored request leaves credentials out; a retry with other ones is
    // another request all the same.
    let fingerprint = match &registry_auth {
        None => request.get().as_bytes().to_vec(),
        Some(auth) => [
            request.get().as_bytes(),
            &state.pull_secrets.fingerprint(auth),
        ]
        .concat(),
    };
    let idempotency = IdempotencyKey::from_headers(&headers, &fingerprint)?;
    // Budgets (ARCHITECTURE.md §4): refuse an order that would take a tag's monthly
    // budget over its limit, before it reaches the engine.
    if let Some(tags) = req.tags.as_ref().filter(|t| !t.is_empty()) {
        let estimate = crate::billing::budgets::estimate(
            &state.db,
            req.mode,
            &req.resources,
            region.as_deref(),
            req.duration_s,
            req.max_price,
        )
        .await?;
        crate::billing::budgets::check_order(&state.db, caller.id, tags, estimate, now).await?;
    }
    let mut spec = req.spec(start_at, region.clone());
    // ARCHITECTURE.md §17: the lease's likely duration from the buyer's history, for
    // placement to line up ends; an order's own `duration_s` needs none.
    if spec.duration_s.is_none() {
        let no_tags = BTreeMap::new();
        let tags = req.tags.as_ref().unwrap_or(&no_tags);
        let prediction =
            super::predict::predict(&state.db, caller.id, tags, req.command.as_deref())
                .await
                .map_err(ApiError::Internal)?;
        spec.predicted_duration = prediction.seconds.is_some().then_some(prediction);
    }
    let order_id = Uuid::now_v7();
    let command = Command::Place(PlaceOrder {
        order_id,
        buyer: caller.id,
        funds_available: Decimal::ZERO,
        spec,
    });
    let tags = serde_json::value::to_raw_value(req.tags.as_ref().unwrap_or(&BTreeMap::new()))
        .map_err(|e| ApiError::Internal(e.into()))?;
    let region = region.unwrap_or_else(|| "any".into());
    let meta = OrderMeta {
        client_order_id: req.client_order_id.clone(),
        request_json: request.get().to_owned(),
        tags_json: tags.get().to_owned(),
        region: region.clone(),
        idempotency,
    };
    // Kept before the market sees the order: its lease may start at once.
    if let Some(auth) = &registry_auth {
        super::pull_secrets::keep(&state.db, &state.pull_secrets, order_id, auth, now).await?;
    }
    let started = std::time::Instant::now();
    let placed = state.market.place(command, meta).await;
    let refused = match &placed {
        Ok(committed) => committed
            .events
            .iter()
            .any(|e| matches!(e, Event::OrderRejected { order_id: id, .. } if *id == order_id)),
        Err(_) => true,
    };
    if refused && registry_auth.is_some() {
        super::pull_secrets::forget(&state.db, order_id).await?;
    }
    let committed = match placed {
        Ok(committed) => committed,
        Err(MarketError::AlreadyPlaced(id)) => {
            let view = views::order(&state.db, caller.id, id).await?;
            return Ok((StatusCode::CREATED, Json(view)));
        }
        Err(e) => return Err(e.into()),
    };
    state.metrics.observe_scheduling(started.elapsed());
    if let Some((reason, message)) = committed.events.iter().find_map(|e| match e {
        Event::OrderRejected {
            order_id: id,
            reason,
            message,
            ..
        } if *id == order_id => Some((*reason, message.clone())),
        _ => None,
    }) {
        return Err(ApiError::refused(
            reason.code(),
            format!("order {order_id} was refused: {message}"),
        ));
    }
    // The task says how the row was committed; only when it had to write the
    // row early (another command of its batch needed it) is it read back.
    let view = match committed.order {
        Some(row) => OrderView {
            id: order_id,
            client_order_id: req.client_order_id,
            mode: req.mode,
            state: row.state,
            region,
            request,
            tags,
            reject_reason: row.reject_reason,
            reject_message: row.reject_message,
            attempts: row.lease_id.into_iter().collect(),
            lease_id: row.lease_id,
            resumed_from: None,
            created_at: committed.at,
            updated_at: committed.at,
        },
        None => views::order(&state.db, caller.id, order_id).await?,
    };
    Ok((StatusCode::CREATED, Json(view)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OrderQuery {
    /// `open`, `filled`, `cancelled`, `rejected` or `expired`.
    #[param(inline)]
    pub state: Option<OrderState>,
    /// `on_demand`, `reserved`, `spot` or `pooled`.
    #[param(inline)]
    pub mode: Option<Mode>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 50>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderPage {
    pub items: Vec<OrderView>,
    pub next_cursor: Option<Uuid>,
}

/// The caller's orders, newest first.
#[utoipa::path(get, path = "/v1/orders", tag = "orders", security(("bearer" = [])),
    params(OrderQuery),
    responses(
        (status = 200, description = "A page of orders", body = OrderPage),
        (status = 403, description = "Not a buyer", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
    ))]
async fn list_orders(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<OrderQuery>,
) -> Result<Json<OrderPage>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let limit = q.limit.get();
    let filter = views::OrderFilter {
        buyer: caller.id,
        state: q.state,
        mode: q.mode,
        cursor: q.cursor,
        limit,
    };
    let mut items = views::orders(&state.db, &filter).await?;
    let next_cursor = if items.len() > limit as usize {
        items.truncate(limit as usize);
        items.last().map(|o| o.id)
    } else {
        None
    };
    Ok(Json(OrderPage { items, next_cursor }))
}

fn parse_id(raw: &str, what: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(format!("no such {what}")))
}

/// One of the caller's orders.
#[utoipa::path(get, path = "/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Order id")),
    responses(
        (status = 200, description = "The order", body = OrderView),
        (status = 403, description = "Not a buyer", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such order of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_order(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<OrderView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    Ok(Json(
        views::order(&state.db, caller.id, parse_id(&id, "order")?).await?,
    ))
}

/// Cancel an open order. A filled order is ended by releasing its lease.
#[utoipa::path(delete, path = "/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Order id")),
    responses(
        (status = 200, description = "Cancelled", body = OrderView),
        (status = 403, description = "Not a buyer", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such order of the caller's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_cancellable`: filled, rejected or already ended", body = Problem, content_type = "application/problem+json"),
    ))]
async fn cancel_order(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<OrderView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = parse_id(&id, "order")?;
    let view = views::order(&state.db, caller.id, id).await?;
    if view.state != OrderState::Open {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "not_cancellable",
            detail: format!("the order is {}; release its lease instead", view.state),
        });
    }
    // An order filled since the view was read is refused as `not_cancellable`.
    state
        .market
        .command(Command::Cancel { order_id: id })
        .await?;
    Ok(Json(views::order(&state.db, caller.id, id).await?))
}

/// One fill of an order: the lease, its price and why.
#[derive(Debug, Serialize, ToSchema)]
pub struct FillView {
    pub lease_id: Uuid,
    /// Sources considered, the price rule, clearing index, units and why this slice.
    #[schema(value_type = Object)]
    pub report: serde_json::Value,
    /// The lease's mode conversions since the fill, oldest first.
    pub conversions: Vec<super::views::ConversionView>,
    pub created_at: DateTime<Utc>,
}

/// How each fill of the order was matched (auditable).
#[utoipa::path(get, path = "/v1/orders/{id}/fills", tag = "orders", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Order id")),
    responses(
        (status = 200, description = "Fill reports", body = [FillView]),
        (status = 403, description = "Not a buyer", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such order of the caller's", body = Problem, content_type = "application/problem+json"),
    ))]
async fn order_fills(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Vec<FillView>>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = parse_id(&id, "order")?;
    views::order(&state.db, caller.id, id).await?;
    Ok(Json(views::fills(&state.db, id).await?))
}
