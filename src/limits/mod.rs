//! Request limits for the whole API: every request counts against its client
//! address, an authenticated one also against its caller, and registrations
//! have a budget of their own per address. Answers carry `RateLimit-Limit`,
//! `RateLimit-Remaining` and `RateLimit-Reset`; a refusal is 429 with
//! `Retry-After`. The buckets are `governor`'s GCRA: a burst, then a steady rate.

pub mod client;
pub mod store;

use crate::auth::tokens::{self, JwtKeys};
use crate::config::Settings;
use crate::error::ApiError;
use axum::extract::{FromRef, FromRequestParts, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::{StateInformationMiddleware, StateSnapshot};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{NotUntil, Quota, RateLimiter};
use ipnet::IpNet;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Whom a request is counted against besides its address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Subject {
    /// A user with a valid access token: one budget however many tokens it holds.
    User(Uuid),
    /// An API key or node token, by its stored hash.
    Secret(String),
}

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// How often (in checks) idle buckets are dropped, so memory stays bounded.
const PRUNE_EVERY: u64 = 4096;

/// The client address of a request, after `--trusted-proxies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// What the limits use: the limiters, and the keys that tell an access
/// token's user without a database trip.
#[derive(Clone)]
pub struct LimitsState {
    pub limits: Arc<Limits>,
    pub keys: Arc<JwtKeys>,
}

impl<S> FromRequestParts<S> for ClientAddr
where
    LimitsState: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if let Some(addr) = parts.extensions.get::<ClientAddr>() {
            return Ok(*addr);
        }
        Ok(ClientAddr(client::client_addr(
            client::peer_of(parts),
            &parts.headers,
            &LimitsState::from_ref(state).limits.trusted,
        )))
    }
}

/// The API's limiters.
pub struct Limits {
    caller: Keyed<Subject>,
    address: Keyed<IpAddr>,
    registrations: RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, DefaultClock>,
    checks: AtomicU64,
    pub(crate) trusted: Vec<IpNet>,
}

fn quota(per_second: u32, burst: u32) -> Quota {
    let per_second = NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::per_second(per_second).allow_burst(burst)
}

impl Limits {
    pub fn from_settings(settings: &Settings) -> Limits {
        let per_hour = NonZeroU32::new(settings.register_per_hour).unwrap_or(NonZeroU32::MIN);
        Limits {
            caller: RateLimiter::keyed(quota(settings.rate_limit_rps, settings.rate_limit_burst))
                .with_middleware::<StateInformationMiddleware>(),
            address: RateLimiter::keyed(quota(
                settings.rate_limit_address_rps,
                settings.rate_limit_address_burst,
            ))
            .with_middleware::<StateInformationMiddleware>(),
            registrations: RateLimiter::keyed(Quota::per_hour(per_hour)),
            checks: AtomicU64::new(0),
            trusted: settings.trusted_proxies.clone(),
        }
    }

    /// Counts a request; `Err` when one of its buckets is empty.
    fn check(&self, addr: IpAddr, subject: Option<&Subject>) -> Result<Budget, Refusal> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            self.caller.retain_recent();
            self.address.retain_recent();
            self.registrations.retain_recent();
        }
        let by_address = check(&self.address, &addr)?;
        match subject {
            Some(subject) => Ok(by_address.tighter(check(&self.caller, subject)?)),
            None => Ok(by_address),
        }
    }

    /// Counts a registration from `addr` (each one hashes a password).
    pub fn registration(&self, addr: IpAddr) -> Result<(), ApiError> {
        self.registrations.check_key(&addr).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.registrations.clock().now());
            ApiError::TooManyRequests {
                retry_after_s: whole_seconds(wait).max(1),
            }
        })
    }
}

fn check<K: Hash + Eq + Clone>(limiter: &Keyed<K>, key: &K) -> Result<Budget, Refusal> {
    match limiter.check_key(key) {
        Ok(snapshot) => Ok(Budget::of(&snapshot)),
        Err(not_until) => Err(Refusal::of(&not_until, limiter.clock().now())),
    }
}

fn whole_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// What a caller has left, for the `RateLimit-*` headers.
#[derive(Debug, Clone, Copy)]
struct Budget {
    limit: u32,
    remaining: u32,
    /// Seconds until the whole burst is available again.
    reset_s: u64,
}

impl Budget {
    fn of(snapshot: &StateSnapshot) -> Budget {
        let quota = snapshot.quota();
        let limit = quota.burst_size().get();
        let remaining = snapshot.remaining_burst_capacity();
        let used = limit.saturating_sub(remaining);
        Budget {
            limit,
            remaining,
            reset_s: whole_seconds(quota.replenish_interval().saturating_mul(used)),
        }
    }

    fn tighter(self, other: Budget) -> Budget {
        if other.remaining < self.remaining {
            other
        } else {
            self
        }
    }

    fn write(&self, headers: &mut HeaderMap) {
        for (name, value) in [
            ("ratelimit-limit", u64::from(self.limit)),
            ("ratelimit-remaining", u64::from(self.remaining)),
            ("ratelimit-reset", self.reset_s),
        ] {
            headers.insert(HeaderName::from_static(name), HeaderValue::from(value));
        }
    }
}

/// An empty bucket.
#[derive(Debug, Clone, Copy)]
struct Refusal {
    limit: u32,
    retry_after_s: u64,
    reset_s: u64,
}

impl Refusal {
    fn of<P: governor::clock::Reference>(not_until: &NotUntil<P>, now: P) -> Refusal {
        let quota = not_until.quota();
        let limit = quota.burst_size().get();
        let wait = not_until.wait_time_from(now);
        let refill = quota
            .replenish_interval()
            .saturating_mul(limit.saturating_sub(1));
        Refusal {
            limit,
            retry_after_s: whole_seconds(wait).max(1),
            reset_s: whole_seconds(wait + refill).max(1),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = ApiError::TooManyRequests {
            retry_after_s: self.retry_after_s,
        }
        .into_response();
        Budget {
            limit: self.limit,
            remaining: 0,
            reset_s: self.reset_s,
        }
        .write(response.headers_mut());
        response
    }
}

/// The caller a bearer credential names, without a database trip: an access
/// token by its verified subject, a key or node token by its hash. A bad
/// credential counts only against its address (and is refused later).
fn subject_of(headers: &HeaderMap, keys: &JwtKeys) -> Option<Subject> {
    let token = headers
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")?
        .trim();
    if token.starts_with(tokens::API_KEY_PREFIX) || token.starts_with(tokens::NODE_TOKEN_PREFIX) {
        return Some(Subject::Secret(tokens::hash_secret(token)));
    }
    keys.verify(token).map(|claims| Subject::User(claims.sub))
}

/// Probes and scrapes are not the API: an orchestrator must always reach them.
fn unlimited(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics")
}

/// Middleware: counts the request, refuses it with 429 or adds the headers.
pub async fn limit(State(state): State<LimitsState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    if unlimited(parts.uri.path()) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let addr = client::client_addr(
        client::peer_of(&parts),
        &parts.headers,
        &state.limits.trusted,
    );
    parts.extensions.insert(ClientAddr(addr));
    let subject = subject_of(&parts.headers, &state.keys);
    match state.limits.check(addr, subject.as_ref()) {
        Ok(budget) => {
            let mut response = next.run(Request::from_parts(parts, body)).await;
            budget.write(response.headers_mut());
            response
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// Adds the 429 answer and the `RateLimit-*` headers to every limited
/// operation of the OpenAPI document.
pub fn document(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::{ContentBuilder, ObjectBuilder, Ref, ResponseBuilder, Type};
    let integer = |description: &str| {
        HeaderBuilder::new()
            .schema(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0)),
            )
            .description(Some(description))
            .build()
    };
    let too_many = ResponseBuilder::new()
        .description("Too many requests from this caller or address")
        .content(
            "application/problem+json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .header(
            "Retry-After",
            integer("Seconds until a request is accepted again"),
        )
        .header("RateLimit-Limit", integer("Requests allowed at once"))
        .header("RateLimit-Remaining", integer("Always 0 here"))
        .header(
            "RateLimit-Reset",
            integer("Seconds until the whole budget is back"),
        )
        .build();
    // The shared error responses (`api::contract`) may have documented the
    // 429 already, with its example: it gains the headers.
    let responses = &mut openapi
        .components
        .get_or_insert_with(Default::default)
        .responses;
    match responses.get_mut("TooManyRequests") {
        Some(utoipa::openapi::RefOr::T(documented)) => documented.headers.extend(too_many.headers),
        _ => {
            responses.insert("TooManyRequests".to_owned(), too_many.into());
        }
    }
    let reference = Ref::new("#/components/responses/TooManyRequests");
    for (path, item) in openapi.paths.paths.iter_mut() {
        if unlimited(path) {
            continue;
        }
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            operation
                .responses
                .responses
                .entry("429".to_owned())
                .or_insert_with(|| reference.clone().into());
        }
    }
}
