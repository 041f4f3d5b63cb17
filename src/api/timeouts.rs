//! The request time limit: `request_timeout_s` for every route but a job
//! history import, whose file may take minutes to arrive
//! (`import_timeout_s`). A request past its limit is answered a bare 408,
//! which `problem_for_bare_errors` gives its problem body.

use crate::config::Settings;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Duration;

pub async fn limit(State(settings): State<Arc<Settings>>, req: Request, next: Next) -> Response {
    let seconds =
        if req.method() == Method::POST && req.uri().path() == crate::billing::imports::PATH {
            settings.import_timeout_s
        } else {
            settings.request_timeout_s
        };
    match tokio::time::timeout(Duration::from_secs(seconds), next.run(req)).await {
        Ok(response) => response,
        Err(_) => StatusCode::REQUEST_TIMEOUT.into_response(),
    }
}
