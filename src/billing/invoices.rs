//! Invoices: one per buyer and calendar month (id `YYYY-MM`), or on demand
//! for any period (id `on-demand` with `from` and `to`). Line items group the
//! charge lines by lease, kind, mode, SKU and tags; the total is checked
//! against the ledger entries the lines point at (`ledger_total`).

use super::export::window;
use super::lines::{self, Scope};
use super::{focus, period, BillingState};
use crate::auth::{Caller, Role, RouterState};
use crate::db::Db;
use crate::error::responses::InvalidQuery;
use crate::error::{ApiError, Json, Path, Problem, Query};
use axum::extract::{FromRef, State};
use axum::http::{header, HeaderMap};
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_invoices))
        .routes(routes!(get_invoice))
}

/// One month's invoice, in a list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InvoiceSummary {
    /// `YYYY-MM`: pass to `GET /v1/billing/invoices/{id}`.
    pub id: String,
    /// The InvoiceId the FOCUS export carries.
    pub invoice_id: String,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    #[schema(schema_with = crate::bounds::money_out)]
    pub total: Decimal,
    pub currency: String,
    pub lines: u64,
}

/// One line item: lines of one lease, kind, mode, SKU and tags summed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InvoiceItem {
    /// `usage`, `reserved_used`, `reserved_unused` or `credit`.
    pub kind: String,
    pub lease_id: Option<Uuid>,
    pub mode: Option<String>,
    /// `{gpu_model}:{unit}`.
    pub sku: Option<String>,
    pub region: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Unit-hours.
    #[schema(value_type = String)]
    pub quantity: Decimal,
    #[schema(value_type = String)]
    pub unit_price: Decimal,
    #[schema(schema_with = crate::bounds::money_out)]
    pub amount: Decimal,
    /// Credits: why.
    pub memo: Option<String>,
    pub lines: u64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Invoice {
    pub id: String,
    /// The monthly InvoiceId (for `on-demand`: that of the period's first month).
    pub invoice_id: String,
    pub buyer_id: Uuid,
    pub currency: String,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    pub items: Vec<InvoiceItem>,
    /// What the lines charge, before credits.
    #[schema(schema_with = crate::bounds::money_out)]
    pub charges: Decimal,
    /// Credits (negative).
    #[schema(schema_with = crate::bounds::money_out)]
    pub credits: Decimal,
    #[schema(schema_with = crate::bounds::money_out)]
    pub total: Decimal,
    /// What the ledger moved for these lines; always equal to `total`.
    #[schema(schema_with = crate::bounds::money_out)]
    pub ledger_total: Decimal,
}

fn ts(t: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(t, 0).unwrap_or_default()
}

/// Builds the invoice of `buyer` for lines whose period starts in `[from, to)`.
pub async fn build(
    db: &Db,
    buyer: Uuid,
    id: String,
    from: i64,
    to: i64,
    currency: &str,
) -> anyhow::Result<Invoice> {
    type Key = (
        String,
        Option<Uuid>,
        Option<String>,
        Option<String>,
        Option<String>,
        String,
        String,
        Option<String>,
    );
    let mut items: BTreeMap<Key, InvoiceItem> = BTreeMap::new();
    let (mut charges, mut credits) = (Decimal::ZERO, Decimal::ZERO);
    lines::for_each(db, Scope::Buyer(buyer), from, to, |l| {
        let sku = l
            .unit
            .as_ref()
            .map(|u| format!("{}:{u}", l.gpu_model.as_deref().unwrap_or("")));
        let tags = l.tags();
        let key: Key = (
            l.kind.clone(),
            l.lease_id,
            l.mode.clone(),
            sku.clone(),
            l.region.clone(),
            serde_json::to_string(&tags).unwrap_or_default(),
            l.unit_price.0.normalize().to_string(),
            l.memo.clone(),
        );
        let item = items.entry(key).or_insert_with(|| InvoiceItem {
            kind: l.kind.clone(),
            lease_id: l.lease_id,
            mode: l.mode.clone(),
            sku,
            region: l.region.clone(),
            tags,
            quantity: Decimal::ZERO,
            unit_price: l.unit_price.0.normalize(),
            amount: Decimal::ZERO,
            memo: l.memo.clone(),
            lines: 0,
        });
        item.quantity += l.quantity.0;
        item.amount += l.amount.0;
        item.lines += 1;
        if l.amount.0.is_sign_negative() {
            credits += l.amount.0;
        } else {
            charges += l.amount.0;
        }
    })
    .await?;
    let ledger_total = lines::ledger_total(db, buyer, from, to).await?;
    Ok(Invoice {
        id,
        invoice_id: focus::invoice_id(buyer, from),
        buyer_id: buyer,
        currency: currency.to_owned(),
        period_start: ts(from),
        period_end: ts(to),
        items: items.into_values().collect(),
        charges,
        credits,
        total: charges + credits,
        ledger_total,
    })
}

/// The caller's monthly invoices, newest first.
#[utoipa::path(get, path = "/v1/billing/invoices", tag = "billing", security(("bearer" = [])),
    responses(
        (status = 200, description = "One invoice per month with charges", body = [InvoiceSummary]),
        (status = 403, description = "Node tokens have no invoices", body = Problem, content_type = "application/problem+json"),
    ))]
async fn list_invoices(
    State(state): State<BillingState>,
    caller: Caller,
) -> Result<Json<Vec<InvoiceSummary>>, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let mut months: BTreeMap<(i32, u32), (Decimal, u64)> = BTreeMap::new();
    lines::for_each(
        &state.db,
        Scope::Buyer(caller.id),
        0,
        i64::from(i32::MAX) * 8,
        |l| {
            let m = months
                .entry(period::year_month(l.period_start))
                .or_default();
            m.0 += l.amount.0;
            m.1 += 1;
        },
    )
    .await?;
    let out = months
        .into_iter()
        .rev()
        .map(|((y, m), (total, lines))| {
            let start = period::month_start(y, m);
            let (ny, nm) = period::next_month(y, m);
            InvoiceSummary {
                id: format!("{y:04}-{m:02}"),
                invoice_id: focus::invoice_id(caller.id, start),
                period_start: ts(start),
                period_end: ts(period::month_start(ny, nm)),
                total,
                currency: state.settings.currency.clone(),
                lines,
            }
        })
        .collect();
    Ok(Json(out))
}

/// What an invoice is written as (the query takes the name as text).
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
enum InvoiceFormat {
    Json,
    Html,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct InvoiceQuery {
    /// `html` for a printable page (or send `Accept: text/html`); default JSON.
    #[param(value_type = Option<InvoiceFormat>, inline)]
    pub format: Option<String>,
    /// `on-demand` invoices: the period's start (RFC 3339).
    pub from: Option<DateTime<Utc>>,
    /// `on-demand` invoices: the period's end (RFC 3339).
    pub to: Option<DateTime<Utc>>,
}

/// One invoice: `YYYY-MM` for a month, or `on-demand` with `from` and `to`.
#[utoipa::path(get, path = "/v1/billing/invoices/{id}", tag = "billing", security(("bearer" = [])),
    params(("id" = String, Path, description = "`YYYY-MM`, or `on-demand`"), InvoiceQuery),
    responses(
        (status = 200, description = "The invoice (JSON, or printable HTML)",
         content((Invoice = "application/json"), (String = "text/html"))),
        (status = 403, description = "Node tokens have no invoices", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such invoice id", body = Problem, content_type = "application/problem+json"),
        InvalidQuery,
    ))]
async fn get_invoice(
    State(state): State<BillingState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<InvoiceQuery>,
) -> Result<Response, ApiError> {
    caller.require(&[Role::Buyer, Role::Provider, Role::Admin])?;
    let (from, to) = if id == "on-demand" {
        if q.from.is_none() || q.to.is_none() {
            return Err(ApiError::field(
                "query.from",
                "an on-demand invoice needs `from` and `to`",
            ));
        }
        window(q.from, q.to)?
    } else {
        period::parse_month(&id).ok_or_else(|| {
            ApiError::NotFound(format!("no invoice `{id}`: use YYYY-MM or on-demand"))
        })?
    };
    let html = match q.format.as_deref() {
        Some("html") => true,
        Some("json") | None => headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html")),
        Some(_) => return Err(ApiError::field("query.format", "must be json or html")),
    };
    let invoice = build(&state.db, caller.id, id, from, to, &state.settings.currency).await?;
    Ok(if html {
        Html(render_html(&invoice)).into_response()
    } else {
        Json(invoice).into_response()
    })
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A printable page.
pub fn render_html(inv: &Invoice) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Invoice {id}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;width:100%}}\
         td,th{{border-bottom:1px solid #ccc;padding:4px;text-align:left}}td.n{{text-align:right}}\
         @media print{{body{{margin:0}}}}</style></head><body>\
         <h1>gpuex invoice {id}</h1><p>Buyer {buyer}<br>Period {from} to {to}<br>Currency {cur}</p>\
         <table><tr><th>Kind</th><th>Lease</th><th>Mode</th><th>SKU</th><th>Region</th><th>Tags</th>\
         <th>Quantity</th><th>Unit price</th><th>Amount</th></tr>",
        id = esc(&inv.invoice_id),
        buyer = inv.buyer_id,
        from = inv.period_start.format("%Y-%m-%d %H:%M UTC"),
        to = inv.period_end.format("%Y-%m-%d %H:%M UTC"),
        cur = esc(&inv.currency),
    );
    for item in &inv.items {
        let tags: Vec<String> = item.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&item.kind),
            item.lease_id.map(|l| l.to_string()).unwrap_or_default(),
            esc(item.mode.as_deref().unwrap_or("")),
            esc(item.sku.as_deref().or(item.memo.as_deref()).unwrap_or("")),
            esc(item.region.as_deref().unwrap_or("")),
            esc(&tags.join(", ")),
            item.quantity.normalize(),
            item.unit_price,
            item.amount,
        );
    }
    let _ = write!(
        out,
        "</table><p>Charges {}<br>Credits {}<br><strong>Total {} {}</strong></p></body></html>",
        inv.charges,
        inv.credits,
        inv.total,
        esc(&inv.currency)
    );
    out
}
