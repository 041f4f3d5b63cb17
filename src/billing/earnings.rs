//! `GET /v1/provider/earnings`: what buyers paid for a provider's capacity,
//! by node, GPU model, mode and period, the platform fee, what is left, and
//! the payable balance.

use super::export::window;
use super::lines::{self, Scope, Source};
use super::{period, BillingState};
use crate::auth::{Caller, Role, RouterState};
use crate::db::{dispatch, Money};
use crate::error::responses::InvalidQuery;
use crate::error::{ApiError, Json, Problem, Query};
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
pub use gpuex_api::billing::{Earnings, EarningsGroup};
use rust_decimal::Decimal;
use serde::Deserialize;
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(earnings))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EarningsQuery {
    /// Lines whose period starts at or after this time (default: the beginning).
    pub from: Option<DateTime<Utc>>,
    /// Lines whose period starts before this time (default: no end).
    pub to: Option<DateTime<Utc>>,
    /// `month` (default) or `day`.
    #[param(value_type = Option<EarningsPeriod>, inline)]
    pub period: Option<String>,
}

/// How earnings are summed up (the query takes the name as text).
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
enum EarningsPeriod {
    Month,
    Day,
}

/// The caller's earnings as a provider (an admin's: every provider's).
#[utoipa::path(get, path = "/v1/provider/earnings", tag = "providers", security(("bearer" = [])),
    params(EarningsQuery),
    responses(
        (status = 200, description = "Earnings by node, GPU model, mode and period", body = Earnings),
        (status = 403, description = "Not a provider", body = Problem, content_type = "application/problem+json"),
        InvalidQuery,
    ))]
async fn earnings(
    State(state): State<BillingState>,
    caller: Caller,
    Query(q): Query<EarningsQuery>,
) -> Result<Json<Earnings>, ApiError> {
    caller.require(&[Role::Provider, Role::Admin])?;
    let (from, to) = window(q.from, q.to)?;
    let daily = match q.period.as_deref() {
        None | Some("month") => false,
        Some("day") => true,
        Some(_) => return Err(ApiError::field("query.period", "must be month or day")),
    };
    let scope = if caller.role == Role::Admin {
        Scope::All
    } else {
        Scope::Provider(caller.id)
    };
    type Key = (Option<Uuid>, Option<String>, Option<String>, String);
    let mut groups: BTreeMap<Key, EarningsGroup> = BTreeMap::new();
    lines::for_each(&state.db, scope, from, to, |l| {
        // A resold lease pays its seller, not the provider, who was paid by
        // the seller's own reservation: counting it too would pay the hours twice.
        if l.provider_id.is_none() || l.source() == Source::Resale {
            return;
        }
        let period = if daily {
            period::day(l.period_start)
        } else {
            let (y, m) = period::year_month(l.period_start);
            format!("{y:04}-{m:02}")
        };
        let key: Key = (
            l.node_id,
            l.gpu_model.clone(),
            l.mode.clone(),
            period.clone(),
        );
        let g = groups.entry(key).or_insert_with(|| EarningsGroup {
            node_id: l.node_id,
            gpu_model: l.gpu_model.clone(),
            mode: l.mode.clone(),
            period,
            gross: Decimal::ZERO,
            platform_fee: Decimal::ZERO,
            net: Decimal::ZERO,
            lines: 0,
        });
        g.gross += l.amount.0;
        g.platform_fee += l.fee.0;
        g.net += l.amount.0 - l.fee.0;
        g.lines += 1;
    })
    .await?;
    let groups: Vec<EarningsGroup> = groups.into_values().collect();
    let payable: Option<Money> = dispatch!(state.db, pool => {
        sqlx::query_scalar("SELECT balance FROM accounts WHERE code = $1")
            .bind(super::Account::Payable(caller.id))
            .fetch_optional(pool)
            .await
    })?;
    Ok(Json(Earnings {
        currency: state.settings.currency.clone(),
        gross: groups.iter().map(|g| g.gross).sum(),
        platform_fee: groups.iter().map(|g| g.platform_fee).sum(),
        net: groups.iter().map(|g| g.net).sum(),
        groups,
        payable_balance: payable.map_or(Decimal::ZERO, |m| m.0),
    }))
}
