//! The HTTP surface: merges each domain's router, adds the ops endpoints, the
//! OpenAPI document and the middleware stack. Domain logic lives elsewhere.

mod contract;
mod dashboard;
mod headers;
mod idempotent;
mod ops;
mod read_your_writes;
mod timeouts;

pub use idempotent::STALE_CLAIM_S;

pub use ops::OpsState;

use crate::app::AppState;
use crate::auth::AuthState;
use crate::cluster::ClusterState;
use crate::limits::LimitsState;
use axum::extract::{DefaultBodyLimit, FromRef, Request};
use axum::http::{header, HeaderName, HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::time::Duration;
use tower_http::compression::predicate::{DefaultPredicate, Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;

/// Answers smaller than this are not compressed: under about a kilobyte
/// gzip saves a few hundred bytes at the price of a deflate stream.
const COMPRESS_ABOVE_BYTES: u16 = 1024;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa::Modify;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "gpuex",
        description = "An exchange for atomized GPU capacity: standard TFLOPS-hours and 4GB-VRAM-hours, \
                       on-demand, reserved and spot. Errors are application/problem+json.",
        license(name = "Apache-2.0")
    ),
    modifiers(&BearerAuth),
    tags(
        (name = "auth", description = "Accounts, tokens and API keys"),
        (name = "wallet", description = "Wallet, ledger and credits"),
        (name = "catalog", description = "GPU models and regions"),
        (name = "prices", description = "List prices, derived prices and quotes"),
        (name = "orders", description = "Orders: on-demand, reserved and spot"),
        (name = "leases", description = "Leases: slices of GPUs held for a window"),
        (name = "market", description = "Spot book and market figures"),
        (name = "events", description = "What happened to the caller's orders, leases and money: a page, a stream, webhooks"),
        (name = "nodes", description = "Providers' nodes: inventory, slices, cordons"),
        (name = "agent", description = "The node agent protocol (node tokens only)"),
        (name = "ops", description = "Health, readiness, metrics and this document"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT or gpx_ API key")
                    .build(),
            ),
        );
    }
}

fn documented_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(<ApiDoc as utoipa::OpenApi>::openapi())
        .merge(crate::auth::router())
        .merge(crate::billing::router())
        .merge(crate::catalog::router())
        .merge(crate::pricing::router())
        .merge(crate::market::router())
        .merge(crate::events::router())
        .merge(crate::events::webhooks::router())
        .merge(crate::nodes::router())
        .merge(crate::audit::router())
        .merge(crate::forecast::router())
        .merge(crate::cluster::replicas::router())
        .merge(ops::router())
}

/// The OpenAPI document, built from the code.
pub fn openapi() -> OpenApi {
    documented_parts().1
}

/// The routes and their document, with what the middleware adds to every
/// answer: the shared error responses and the request limits.
fn documented_parts() -> (axum::Router<AppState>, OpenApi) {
    let (routes, spec) = documented_routes().split_for_parts();
    let mut spec = contract::complete(spec);
    crate::limits::document(&mut spec);
    (routes, spec)
}

/// The OpenAPI document as the pretty JSON kept in `openapi/openapi.json`.
pub fn openapi_json() -> String {
    let mut json = openapi().to_pretty_json().unwrap_or_default();
    json.push('\n');
    json
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The full application router with its middleware.
pub fn router(state: AppState) -> Router {
    let (routes, spec) = documented_parts();
    let settings = state.settings.clone();
    let metrics = state.metrics.clone();
    let spec_json = serde_json::to_value(&spec).unwrap_or_default();
    Router::new()
        .merge(routes)
        .route(
            "/openapi.json",
            axum::routing::get(move || async move { axum::Json(spec_json.clone()) }),
        )
        .merge(SwaggerUi::new("/docs").config(utoipa_swagger_ui::Config::from("/openapi.json")))
        // The dashboard's files and client-side routes; an unknown API path
        // still answers problem+json 404.
        .fallback(dashboard::fallback)
        // Inside the limits: a replayed answer still counts as a request.
        .layer(middleware::from_fn_with_state(
            idempotent::IdempotentState {
                db: state.db.clone(),
                settings: state.settings.clone(),
                auth: AuthState::from_ref(&state),
            },
            idempotent::idempotent,
        ))
        // Outside the kept answers, so a replayed write says its row too.
        .layer(middleware::from_fn_with_state(
            ClusterState::from_ref(&state),
            read_your_writes::read_your_writes,
        ))
        .layer(middleware::from_fn_with_state(
            LimitsState::from_ref(&state),
            crate::limits::limit,
        ))
        .merge(crate::cluster::forward::router())
        .with_state(state)
        .layer(middleware::from_fn_with_state(
            metrics,
            crate::metrics::track,
        ))
        .layer(DefaultBodyLimit::max(settings.body_limit))
        .layer(middleware::from_fn_with_state(
            settings.clone(),
            timeouts::limit,
        ))
        // Outside the timeout, so that its bare 408 gets a problem body too.
        .layer(middleware::from_fn(problem_for_bare_errors))
        // Small answers go as they are: gzip of a heartbeat's few hundred
        // bytes cost more CPU than the bytes it saved (issue 38).
        .layer(
            CompressionLayer::new()
                .compress_when(DefaultPredicate::new().and(SizeAbove::new(COMPRESS_ABOVE_BYTES))),
        )
        .layer(cors(&settings.cors_origins))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
            let request_id = req
                .headers()
                .get(REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            tracing::info_span!("request", method = %req.method(), uri = %req.uri(), request_id)
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(middleware::from_fn(headers::security_headers))
}

fn cors(origins: &[String]) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("idempotency-key"),
            read_your_writes::MIN_SEQ,
        ])
        // So a browser client can see its budget and when to retry.
        .expose_headers([
            header::RETRY_AFTER,
            HeaderName::from_static("ratelimit-limit"),
            HeaderName::from_static("ratelimit-remaining"),
            HeaderName::from_static("ratelimit-reset"),
            read_your_writes::SEQ,
        ])
        .max_age(Duration::from_secs(3600));
    if origins.iter().any(|o| o == "*") {
        layer.allow_origin(AllowOrigin::any())
    } else {
        let list: Vec<HeaderValue> = origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o.trim()).ok())
            .collect();
        layer.allow_origin(list)
    }
}

/// Errors produced below the handlers (405, 408, 413 …) come without a body;
/// give them the same problem+json shape as everything else.
async fn problem_for_bare_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let has_body = response.headers().contains_key(header::CONTENT_TYPE);
    if !status.is_client_error() && !status.is_server_error() || has_body {
        return response;
    }
    let mut rebuilt = contract::bare(status).into_response();
    for (name, value) in response.headers() {
        if name != header::CONTENT_LENGTH && name != header::CONTENT_TYPE {
            rebuilt.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rebuilt
}
