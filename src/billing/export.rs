//! `GET /v1/billing/export`: charge lines as FOCUS 1.2 CSV or JSON, or
//! gpuex's plain CSV, streamed a keyset page at a time so memory stays flat
//! whatever the size. The same request gives the same bytes: rows come in
//! line-id order and nothing in them depends on when they were asked for.

use super::focus::{self, COLUMNS, PLAIN_COLUMNS};
use super::lines::{self, Scope};
use crate::app::AppState;
use crate::auth::{Caller, Role};
use crate::db::Db;
use crate::error::{ApiError, Problem, Query};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export))
}

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
pub enum Format {
    /// FinOps FOCUS 1.2 columns, CSV.
    #[serde(rename = "focus-csv")]
    FocusCsv,
    /// FinOps FOCUS 1.2 columns, a JSON array of objects.
    #[serde(rename = "focus-json")]
    FocusJson,
    /// gpuex's own columns, one row per charge line, CSV.
    #[serde(rename = "csv")]
    Csv,
}

impl Format {
    fn content_type(self) -> &'static str {
        match self {
            Format::FocusCsv | Format::Csv => "text/csv; charset=utf-8",
            Format::FocusJson => "application/json",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::FocusJson => "json",
            _ => "csv",
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `focus-csv` (default), `focus-json` or `csv`.
    #[param(inline)]
    pub format: Option<Format>,
    /// Lines whose period starts at or after this time (RFC 3339; default: the beginning).
    pub from: Option<DateTime<Utc>>,
    /// Lines whose period starts before this time (RFC 3339; default: no end).
    pub to: Option<DateTime<Utc>>,
}

/// The `[from, to)` a query asks for, in seconds.
pub fn window(
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
) -> Result<(i64, i64), ApiError> {
    let from = from.map_or(0, |t| t.timestamp());
    let to = to.map_or(i64::from(i32::MAX) * 8, |t| t.timestamp());
    if to <= from {
        return Err(ApiError::field("query.to", "must be after `from`"));
    }
    Ok((from, to))
}

/// Stream the caller's charge lines (an admin's: everyone's) as FinOps FOCUS 1.2.
#[utoipa::path(get, path = "/v1/billing/export", tag = "billing", security(("bearer" = [])),
    params(ExportQuery),
    responses(
        (status = 200, description = "The lines, streamed: CSV, or (focus-json) a JSON array of FOCUS rows", content((String = "text/csv"), (Vec<serde_json::Value> = "application/json"))),
        (status = 401, description = "Not authenticated", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Node tokens have no charges", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
    ))]
async fn export(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let (from, to) = window(q.from, q.to)?;
    let format = q.format.unwrap_or(Format::FocusCsv);
    let scope = if caller.role == Role::Admin {
        Scope::All
    } else {
        Scope::Buyer(caller.id)
    };
    let body = Body::from_stream(stream(
        state.db.clone(),
        scope,
        from,
        to,
        format,
        state.settings.currency.clone(),
    ));
    Ok((
        [
            (header::CONTENT_TYPE, format.content_type().to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"gpuex-charges.{}\"",
                    format.extension()
                ),
            ),
        ],
        body,
    )
        .into_response())
}

enum Step {
    Header,
    Page { after: i64, first: bool },
    Done,
}

/// The export as a stream of chunks, one per page of lines.
pub fn stream(
    db: Db,
    scope: Scope,
    from: i64,
    to: i64,
    format: Format,
    currency: String,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    // Fused: the compression layer polls the body once more after its end,
    // and a bare `unfold` panics when polled past `None`.
    futures::stream::StreamExt::fuse(futures::stream::unfold(Step::Header, move |step| {
        let db = db.clone();
        let currency = currency.clone();
        async move {
            match step {
                Step::Header => {
                    let head = match format {
                        Format::FocusCsv => focus::csv_header(&COLUMNS),
                        Format::Csv => focus::csv_header(&PLAIN_COLUMNS),
                        Format::FocusJson => "[".to_owned(),
                    };
                    Some((
                        Ok(Bytes::from(head)),
                        Step::Page {
                            after: 0,
                            first: true,
                        },
                    ))
                }
                Step::Page { after, first } => {
                    let rows = match lines::page(&db, scope, from, to, after, lines::PAGE).await {
                        Ok(rows) => rows,
                        Err(e) => {
                            tracing::error!(error = %e, "export failed");
                            return Some((Err(std::io::Error::other(e.to_string())), Step::Done));
                        }
                    };
                    let mut out = String::with_capacity(rows.len() * 900);
                    let mut first = first;
                    for line in &rows {
                        render(&mut out, line, format, &currency, &mut first);
                    }
                    let next = match rows.last() {
                        Some(last) if rows.len() as i64 == lines::PAGE => Step::Page {
                            after: last.id,
                            first,
                        },
                        _ => {
                            if format == Format::FocusJson {
                                out.push_str("\n]\n");
                            }
                            Step::Done
                        }
                    };
                    Some((Ok(Bytes::from(out)), next))
                }
                Step::Done => None,
            }
        }
    }))
}

/// Appends one line's rows in `format`.
pub fn render(
    out: &mut String,
    line: &lines::ChargeLine,
    format: Format,
    currency: &str,
    first: &mut bool,
) {
    match format {
        Format::FocusCsv => {
            for row in focus::rows(line, currency) {
                focus::csv_row(out, &row);
            }
        }
        Format::Csv => focus::csv_row(out, &focus::plain_row(line)),
        Format::FocusJson => {
            for row in focus::rows(line, currency) {
                out.push_str(if *first { "\n" } else { ",\n" });
                *first = false;
                focus::json_row(out, &COLUMNS, &row);
            }
        }
    }
}

/// Writes the whole export to `w`, through the same stream the endpoint
/// serves (for tools and the benchmark). Returns the bytes written.
pub async fn write_all(
    db: Db,
    scope: Scope,
    from: i64,
    to: i64,
    format: Format,
    currency: String,
    mut w: impl std::io::Write,
) -> anyhow::Result<u64> {
    let mut s = std::pin::pin!(stream(db, scope, from, to, format, currency));
    let mut written = 0u64;
    while let Some(chunk) = s.next().await {
        let chunk = chunk?;
        w.write_all(&chunk)?;
        written += chunk.len() as u64;
    }
    w.flush()?;
    Ok(written)
}
