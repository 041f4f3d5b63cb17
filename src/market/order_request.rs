//! The body of `POST /v1/orders` and its checks: every field a buyer sends,
//! refused with the field named before anything reaches the market.

pub use super::order_type::{OrderType, TimeInForce};
use crate::catalog::RegionChoice;
use crate::engine::{self};
use crate::error::FieldError;
use crate::pricing::quotes::{self, Resources};
use crate::pricing::Mode;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

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
    #[schema(value_type = Option<String>)]
    pub region: RegionChoice,
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
    /// How long to wait for capacity (default 0: refused at once; at most
    /// 7 days). `time_in_force` says the same in traders' terms; give one.
    #[serde(default)]
    #[schema(maximum = 604800)]
    pub max_wait_s: Option<u64>,
    /// `gtc` (wait up to 7 days), `ioc` (what fills now), `fok` (every unit
    /// now or nothing) or `gtt` (wait until `expires_at`). On-demand and
    /// batch pooled orders may wait; reserved and realtime take `ioc` or
    /// `fok`; spot bids stay in the auction until cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_in_force: Option<TimeInForce>,
    /// With `gtt`: when the order stops waiting, within 7 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// Identical units, each its own lease (default 1, at most 64;
    /// on-demand and pooled). They are placed together on capacity free at
    /// the time: at least `min_count` of them, or all with `all_or_none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 64)]
    pub count: Option<u32>,
    /// Every unit together or none (a gang); `fok` implies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_or_none: Option<bool>,
    /// The fewest units worth placing (default 1), at most `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 64)]
    pub min_count: Option<u32>,
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

pub(super) const MAX_WAIT_S: u64 = 7 * 24 * 3600;

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
pub(super) fn env_schema() -> utoipa::openapi::schema::Object {
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
    pub(super) fn validate(&self) -> Vec<FieldError> {
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
        errors.extend(self.validate_order_type());
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

    /// What the engine needs of this order; `wait_s` from [`OrderRequest::wait_s`].
    pub(crate) fn spec(
        &self,
        start_at: Option<DateTime<Utc>>,
        wait_s: Option<u64>,
    ) -> engine::OrderSpec {
        engine::OrderSpec {
            mode: self.mode,
            resources: self.resources.to_engine(),
            region: self.region.clone(),
            node: None,
            start_at: start_at.map(|t| t.timestamp()),
            duration_s: self.duration_s.and_then(|d| i64::try_from(d).ok()),
            max_price: self.max_price,
            max_wait_s: wait_s.and_then(|w| i64::try_from(w).ok()),
            qos: match self.qos {
                Some(Qos::Realtime) => engine::Qos::Realtime,
                _ => engine::Qos::Batch,
            },
            predicted_duration: None,
            gang: self.gang(),
        }
    }
}
