//! The one error type of the HTTP API, rendered as RFC 9457 `application/problem+json`.
//!
//! Handlers return `Result<_, ApiError>`; domain outcomes map to HTTP here, once.
//! 5xx details are logged and never shown to the caller.

pub mod responses;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;
use utoipa::ToSchema;

/// One input field that was wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FieldError {
    /// The field's path in the request, e.g. `resources.tflops` or `query.limit`.
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A problem document (RFC 9457).
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// A stable machine-readable code, e.g. `insufficient_funds`.
    pub code: String,
    /// Each bad field, for validation problems.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not JSON, or not the JSON this endpoint takes.
    #[error("malformed request: {detail}")]
    Malformed {
        detail: String,
        errors: Vec<FieldError>,
    },
    /// Well-formed input whose fields are missing or out of range.
    #[error("invalid fields")]
    Invalid(Vec<FieldError>),
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("conflict: {0}")]
    Conflict(String),
    /// A request the domain refuses, with a stable code (e.g. `insufficient_funds`).
    #[error("{code}: {detail}")]
    Refused {
        status: StatusCode,
        code: &'static str,
        detail: String,
    },
    #[error("too many requests")]
    TooManyRequests { retry_after_s: u64 },
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Invalid(vec![FieldError::new(field, message)])
    }

    pub fn refused(code: &'static str, detail: impl Into<String>) -> Self {
        ApiError::Refused {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code,
            detail: detail.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Malformed { .. } => StatusCode::BAD_REQUEST,
            ApiError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Refused { status, .. } => *status,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(err) if database_unreachable(err) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            ApiError::Malformed { .. } => "malformed_request",
            ApiError::Invalid(_) => "validation_error",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Refused { code, .. } => code,
            ApiError::TooManyRequests { .. } => "too_many_requests",
            ApiError::Internal(err) if database_unreachable(err) => "database_unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }

    pub fn to_problem(&self) -> Problem {
        let status = self.status();
        let (detail, errors) = match self {
            ApiError::Malformed { detail, errors } => (detail.clone(), errors.clone()),
            ApiError::Invalid(errors) => {
                let names: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
                (
                    format!("invalid fields: {}", names.join(", ")),
                    errors.clone(),
                )
            }
            ApiError::Unauthorized(d)
            | ApiError::Forbidden(d)
            | ApiError::NotFound(d)
            | ApiError::Conflict(d) => (d.clone(), vec![]),
            ApiError::Refused { detail, .. } => (detail.clone(), vec![]),
            ApiError::TooManyRequests { retry_after_s } => (
                format!("too many requests; retry in {retry_after_s} s"),
                vec![],
            ),
            ApiError::Internal(err) if database_unreachable(err) => (
                "the database cannot be reached from this replica; retry shortly".to_owned(),
                vec![],
            ),
            ApiError::Internal(_) => ("an internal error occurred".to_owned(), vec![]),
        };
        let code = self.code();
        Problem {
            kind: format!("https://gpuex.dev/problems/{}", code.replace('_', "-")),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail,
            code: code.to_owned(),
            errors,
        }
    }
}

/// Whether `err` comes from the database being out of reach (a dropped or
/// refused connection, a pool that timed out, a server shutting down) rather
/// than from the request: a replica cut off from its database answers 503
/// with `Retry-After`, like one caught in a failover, so clients retry
/// elsewhere (ARCHITECTURE.md §12).
fn database_unreachable(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|cause| match cause.downcast_ref::<sqlx::Error>() {
            Some(
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::WorkerCrashed,
            ) => true,
            // Connection exceptions (08...) and the server shutting down (57P0x).
            Some(sqlx::Error::Database(db)) => db
                .code()
                .is_some_and(|code| code.starts_with("08") || code.starts_with("57P0")),
            _ => false,
        })
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::Internal(err.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Internal(err) if database_unreachable(err) => {
                tracing::warn!(error = ?err, "request failed: the database is out of reach");
            }
            ApiError::Internal(err) => tracing::error!(error = ?err, "request failed"),
            _ => {}
        }
        let problem = self.to_problem();
        let mut response = (self.status(), axum::Json(problem)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let ApiError::TooManyRequests { retry_after_s } = self {
            if let Ok(value) = HeaderValue::from_str(&retry_after_s.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        } else if self.status() == StatusCode::SERVICE_UNAVAILABLE {
            // A failover or a restart: a second is about what it takes.
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// A JSON body whose deserialization errors name the offending field.
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_json_media_type);
        if !is_json {
            return Err(ApiError::Refused {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                code: "unsupported_media_type",
                detail: "expected a body with Content-Type: application/json".into(),
            });
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| {
                if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::Refused {
                        status: StatusCode::PAYLOAD_TOO_LARGE,
                        code: "payload_too_large",
                        detail: "the request body is too large".into(),
                    }
                } else {
                    ApiError::Malformed {
                        detail: e.body_text(),
                        errors: vec![],
                    }
                }
            })?;
        parse_json(&bytes).map(Json)
    }
}

/// `application/json` or `application/…+json`, parameters aside. Media types
/// are case-insensitive (RFC 9110 §8.3.1), so `APPLICATION/JSON` is JSON too.
fn is_json_media_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default().trim();
    let essence = essence.to_ascii_lowercase();
    match essence.strip_prefix("application/") {
        Some(subtype) => subtype == "json" || subtype.ends_with("+json"),
        None => false,
    }
}

/// Parses `bytes` as `T`, turning serde's error into a problem naming the field.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = serde_path_to_error::deserialize::<_, T>(&mut de);
    let parsed = match parsed {
        Ok(value) => match de.end() {
            Ok(()) => match nul_in_json(bytes) {
                Some(field) => return Err(nul_refused(field)),
                None => Ok(value),
            },
            Err(e) => {
                return Err(ApiError::Malformed {
                    detail: format!(
                        "the body is not valid JSON: {}",
                        strip_position(&e.to_string())
                    ),
                    errors: vec![FieldError::new(
                        "body",
                        "trailing characters after the JSON value",
                    )],
                })
            }
        },
        Err(e) => Err(e),
    };
    let parsed = match parsed {
        Err(err)
            if err
                .inner()
                .to_string()
                .starts_with("invalid type: floating point") =>
        {
            match integral_floats_as_integers(bytes) {
                Some(value) => match serde_path_to_error::deserialize::<_, T>(value) {
                    Ok(value) => match nul_in_json(bytes) {
                        Some(field) => return Err(nul_refused(field)),
                        None => Ok(value),
                    },
                    Err(again) => Err(again),
                },
                None => Err(err),
            }
        }
        other => other,
    };
    match parsed {
        Ok(value) => Ok(value),
        Err(err) => {
            let inner = err.inner();
            let message = inner.to_string();
            let mut path = err.path().to_string();
            if path == "." {
                path = missing_field_name(&message).unwrap_or_else(|| "body".to_owned());
            } else if let Some(missing) = missing_field_name(&message) {
                path = format!("{path}.{missing}");
            }
            let message = strip_position(&message);
            if inner.is_syntax() || inner.is_eof() {
                Err(ApiError::Malformed {
                    detail: format!("the body is not valid JSON: {message}"),
                    errors: vec![FieldError::new("body", message)],
                })
            } else {
                Err(ApiError::Invalid(vec![FieldError::new(path, message)]))
            }
        }
    }
}

/// `bytes` as JSON with every integral float (`2.0`) written as an integer,
/// when it holds one. JSON has one number type, and JSON Schema counts `2.0`
/// as an integer, but serde refuses a float for an integer field.
fn integral_floats_as_integers(bytes: &[u8]) -> Option<serde_json::Value> {
    fn walk(value: &mut serde_json::Value, changed: &mut bool) {
        match value {
            serde_json::Value::Number(n) if n.is_f64() => {
                let Some(f) = n.as_f64() else { return };
                if f.fract() != 0.0 {
                    return;
                }
                // Integral and in range, so the casts are exact.
                let integer = if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                    serde_json::Value::from(f as u64)
                } else if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
                    serde_json::Value::from(f as i64)
                } else {
                    return;
                };
                *value = integer;
                *changed = true;
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, changed)),
            serde_json::Value::Object(fields) => fields.values_mut().for_each(|v| walk(v, changed)),
            _ => {}
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let mut changed = false;
    walk(&mut value, &mut changed);
    changed.then_some(value)
}

/// PostgreSQL's text cannot hold U+0000, and SQLite's can: input with it is
/// refused on both, so that a request stores the same text on either or is
/// refused on both, instead of failing on one with a 500.
fn nul_refused(field: String) -> ApiError {
    ApiError::Invalid(vec![FieldError::new(
        field,
        "must not contain the NUL character (U+0000)",
    )])
}

/// Where a parsed JSON body holds a U+0000 in a string or a key, as
/// serde_path_to_error names fields (`gpus[0].model`). JSON can only spell
/// U+0000 as `\u0000`, so bodies without those six bytes, nearly all, are
/// never walked.
fn nul_in_json(bytes: &[u8]) -> Option<String> {
    memchr::memmem::find(bytes, br"\u0000")?;
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    nul_path(&value, "").map(|path| match path.is_empty() {
        true => "body".to_owned(),
        false => path,
    })
}

/// The path under `path` to the first string holding a U+0000, or to the
/// object with such a key.
fn nul_path(value: &serde_json::Value, path: &str) -> Option<String> {
    match value {
        serde_json::Value::String(text) => text.contains('\0').then(|| path.to_owned()),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_path(item, &format!("{path}[{i}]"))),
        serde_json::Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            if key.contains('\0') {
                return Some(path.to_owned());
            }
            match path.is_empty() {
                true => nul_path(item, key),
                false => nul_path(item, &format!("{path}.{key}")),
            }
        }),
        _ => None,
    }
}

fn missing_field_name(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_owned())
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Query parameters whose errors name the offending parameter.
pub struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        if let Some((name, _)) = form_urlencoded::parse(query.as_bytes())
            .find(|(name, value)| name.contains('\0') || value.contains('\0'))
        {
            let field = match name.contains('\0') {
                true => "query".to_owned(),
                false => format!("query.{name}"),
            };
            return Err(nul_refused(field));
        }
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize::<_, T>(de)
            .map(Query)
            .map_err(|err| {
                let message = err.inner().to_string();
                let field = missing_field_name(&message).unwrap_or_else(|| err.path().to_string());
                let field = if field == "." {
                    "query".to_owned()
                } else {
                    format!("query.{field}")
                };
                ApiError::Invalid(vec![FieldError::new(field, message)])
            })
    }
}

/// Path parameters whose errors are problems naming the parameter. axum's own
/// extractor answers a percent-encoded id that is not UTF-8 (`/v1/orders/%FF`)
/// with a bare 400 text/plain.
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::path::ErrorKind;
        use axum::extract::rejection::PathRejection;
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(PathRejection::FailedToDeserializePathParams(err)) => {
                let (field, message) = match err.kind() {
                    ErrorKind::InvalidUtf8InPathParam { key } => {
                        (format!("path.{key}"), "is not valid UTF-8".to_owned())
                    }
                    ErrorKind::ParseErrorAtKey { key, .. }
                    | ErrorKind::DeserializeError { key, .. } => {
                        (format!("path.{key}"), err.body_text())
                    }
                    _ => ("path".to_owned(), err.body_text()),
                };
                Err(ApiError::Malformed {
                    detail: format!("bad path parameter: {message}"),
                    errors: vec![FieldError::new(field, message)],
                })
            }
            Err(other) => Err(ApiError::Internal(anyhow::anyhow!(
                "path parameters unavailable: {}",
                other.body_text()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_database_out_of_reach_answers_503_with_retry_after_and_anything_else_500() {
        let cut: anyhow::Result<()> =
            Err(sqlx::Error::PoolTimedOut).context("failed to read an account's role");
        let response = ApiError::from(cut.unwrap_err()).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let io = ApiError::from(sqlx::Error::Io(refused));
        assert_eq!(io.to_problem().code, "database_unavailable");
        let bug = ApiError::Internal(anyhow::anyhow!("an engine invariant broke"));
        assert_eq!(bug.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(bug.to_problem().code, "internal_error");
    }
}

#[cfg(test)]
mod integral_float_tests {
    use super::*;

    /// The contract check sent this `seq`: an integer written as a float, at a
    /// magnitude where a float's last place is 0.25. Parsed to the nearest
    /// float it is the integer; a best-effort parse that lands one place off
    /// (2129781543790439.25) would refuse a schema-valid body.
    #[test]
    fn a_large_integral_float_is_read_exactly() {
        #[derive(serde::Deserialize)]
        struct Batch {
            seq: u64,
        }
        for (body, seq) in [
            (
                &br#"{"seq": 2129781543790439.0}"#[..],
                2_129_781_543_790_439_u64,
            ),
            (br#"{"seq": 9007199254740992.0}"#, 9_007_199_254_740_992),
            (br#"{"seq": 1e3}"#, 1000),
        ] {
            match parse_json::<Batch>(body) {
                Ok(batch) => assert_eq!(batch.seq, seq),
                Err(e) => panic!("{}: {:?}", String::from_utf8_lossy(body), e.to_problem()),
            }
        }
        assert!(parse_json::<Batch>(br#"{"seq": 2129781543790439.25}"#).is_err());
    }
}
