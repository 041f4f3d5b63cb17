//! `GET /v1/billing/export`: charge lines as FOCUS 1.2 CSV or JSON, or
//! gpuex's plain CSV, streamed a keyset page at a time so memory stays flat
//! whatever the size. The same request gives the same bytes: rows come in
//! line-id order and nothing in them depends on when they were asked for.

use super::cells::{self, DecimalCell, JsonCell, TimeCell};
use super::focus::{self, invoice_id};
use super::lines::{self, ChargeLine, Scope};
use super::BillingState;
use crate::auth::{Caller, Role, RouterState};
use crate::db::Db;
use crate::error::responses::InvalidQuery;
use crate::error::{ApiError, Problem, Query};
use axum::body::{Body, Bytes};
use axum::extract::{FromRef, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
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

/// [`window`], with a missing bound taken from the calendar month `now`
/// falls in: the default of the reports that read one period (usage, profile).
pub fn window_or_month(
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    now: i64,
) -> Result<(i64, i64), ApiError> {
    let (month_start, month_end) = super::period::month_bounds(now);
    window(
        from.or_else(|| DateTime::from_timestamp(month_start, 0)),
        to.or_else(|| DateTime::from_timestamp(month_end, 0)),
    )
}

/// One row of a `focus-json` export, for the document only (the rows are
/// streamed, never built as this): an object whose keys are the CSV's header.
pub struct FocusJsonRow;

impl utoipa::PartialSchema for FocusJsonRow {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder};
        ObjectBuilder::new()
            .description(Some(
                "A FOCUS 1.2 row: the columns of the CSV export by name",
            ))
            .additional_properties(Some(
                AdditionalProperties::<utoipa::openapi::schema::Schema>::FreeForm(true),
            ))
            .into()
    }
}

impl utoipa::ToSchema for FocusJsonRow {}

/// Stream the caller's charge lines (an admin's: everyone's) as FinOps FOCUS 1.2.
#[utoipa::path(get, path = "/v1/billing/export", tag = "billing", security(("bearer" = [])),
    params(ExportQuery),
    responses(
        (status = 200, description = "The lines, streamed: CSV, or (focus-json) a JSON array of FOCUS rows", content((String = "text/csv"), (Vec<FocusJsonRow> = "application/json"))),
        (status = 403, description = "Node tokens have no charges", body = Problem, content_type = "application/problem+json"),
        InvalidQuery,
    ))]
async fn export(
    State(state): State<BillingState>,
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
                        Format::FocusCsv => cells::csv_header::<focus::Row>(),
                        Format::Csv => cells::csv_header::<PlainRow>(),
                        Format::FocusJson => Ok(b"[".to_vec()),
                    };
                    let next = Step::Page {
                        after: 0,
                        first: true,
                    };
                    Some(match head {
                        Ok(head) => (Ok(Bytes::from(head)), next),
                        Err(e) => (Err(failed(e)), Step::Done),
                    })
                }
                Step::Page { after, first } => {
                    let rows = match lines::page(&db, scope, from, to, after, lines::PAGE).await {
                        Ok(rows) => rows,
                        Err(e) => return Some((Err(failed(e)), Step::Done)),
                    };
                    let mut out = Vec::with_capacity(rows.len() * 900);
                    let mut first = first;
                    if let Err(e) = render(&mut out, &rows, format, &currency, &mut first) {
                        return Some((Err(failed(e)), Step::Done));
                    }
                    let next = match rows.last() {
                        Some(last) if rows.len() as i64 == lines::PAGE => Step::Page {
                            after: last.id,
                            first,
                        },
                        _ => {
                            if format == Format::FocusJson {
                                out.extend_from_slice(b"\n]\n");
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

/// Logged here, since the client sees only a cut-off body.
fn failed(e: impl std::fmt::Display) -> std::io::Error {
    tracing::error!(error = %e, "export failed");
    std::io::Error::other(e.to_string())
}

/// Appends a page of lines' rows in `format`.
pub fn render(
    out: &mut Vec<u8>,
    lines: &[ChargeLine],
    format: Format,
    currency: &str,
    first: &mut bool,
) -> anyhow::Result<()> {
    match format {
        Format::FocusCsv => {
            let mut csv = cells::csv_writer(out);
            for line in lines {
                for row in focus::rows(line, currency) {
                    csv.serialize(row)?;
                }
            }
            csv.flush()?;
        }
        Format::Csv => {
            let mut csv = cells::csv_writer(out);
            for line in lines {
                csv.serialize(plain_row(line))?;
            }
            csv.flush()?;
        }
        Format::FocusJson => {
            for line in lines {
                for row in focus::rows(line, currency) {
                    out.extend_from_slice(if *first { b"\n" } else { b",\n" });
                    *first = false;
                    cells::write_json(out, &row)?;
                }
            }
        }
    }
    Ok(())
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

/// One line in gpuex's plain CSV format: its own view of the line.
#[derive(Debug, Default, Serialize)]
pub struct PlainRow<'a> {
    pub line_id: i64,
    pub invoice_id: String,
    pub buyer_id: Uuid,
    pub kind: &'a str,
    pub lease_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
    pub mode: Option<&'a str>,
    pub gpu_model: Option<&'a str>,
    pub region: Option<&'a str>,
    pub unit: Option<&'a str>,
    pub period_start: TimeCell,
    pub period_end: TimeCell,
    pub quantity: DecimalCell,
    pub unit_price: DecimalCell,
    pub list_unit_price: DecimalCell,
    pub amount: DecimalCell,
    pub fee: DecimalCell,
    pub tags: JsonCell<serde_json::Map<String, serde_json::Value>>,
    /// gpuex's own format has no ASCII rule: the memo as written.
    pub memo: Option<&'a str>,
    /// `primary` or `resale`, as FOCUS's `x_Source`.
    pub source: &'a str,
    /// The resale listing, as FOCUS's `x_ListingId`.
    pub listing_id: Option<Uuid>,
}

/// One line in the plain format.
pub fn plain_row(line: &ChargeLine) -> PlainRow<'_> {
    PlainRow {
        line_id: line.id,
        invoice_id: invoice_id(line.buyer_id, line.period_start),
        buyer_id: line.buyer_id,
        kind: &line.kind,
        lease_id: line.lease_id,
        order_id: line.order_id,
        mode: line.mode.as_deref(),
        gpu_model: line.gpu_model.as_deref(),
        region: line.region.as_deref(),
        unit: line.unit.as_deref(),
        period_start: TimeCell(line.period_start),
        period_end: TimeCell(line.period_end),
        quantity: DecimalCell(line.quantity.0),
        unit_price: DecimalCell(line.unit_price.0),
        list_unit_price: DecimalCell(line.list_unit_price.0),
        amount: DecimalCell(line.amount.0),
        fee: DecimalCell(line.fee.0),
        tags: focus::tags_of(line),
        memo: line.memo.as_deref(),
        source: line.source().as_str(),
        listing_id: line.listing_id,
    }
}
