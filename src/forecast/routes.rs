//! `GET /v1/market/forecast`: the latest demand forecast per market.

use super::model::{Method, LEVEL};
use super::{Forecasts, HORIZON_MINUTES};
use crate::error::responses::InvalidQuery;
use crate::error::{ApiError, Json, Query};
use axum::extract::{FromRef, State};
use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Forecasts: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(forecast))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ForecastQuery {
    /// Only this GPU model, as `GET /v1/catalog/gpus` names it.
    #[param(min_length = 1, max_length = 64)]
    pub gpu_model: Option<String>,
    /// Only this region.
    #[param(min_length = 1, max_length = 64)]
    pub region: Option<String>,
}

/// One forecast minute.
#[derive(Debug, Serialize, ToSchema)]
pub struct ForecastPoint {
    /// The minute's start.
    pub at: DateTime<Utc>,
    /// Standard TFLOPS on-demand and reserved orders are expected to ask for.
    pub tflops: f64,
    /// The prediction interval's bounds (see `level`).
    pub lower: f64,
    pub upper: f64,
}

/// One market's forecast.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarketForecastView {
    pub gpu_model: String,
    pub region: String,
    /// The model that produced it.
    pub method: Method,
    /// Minutes of order history it was fitted on.
    pub history_minutes: u32,
    /// Standard TFLOPS of idle capacity the spot auction leaves for primary
    /// orders: the forecast over the preemption notice period.
    #[schema(value_type = String)]
    pub spot_holdback_tflops: Decimal,
    /// The MIG instances among that demand, by profile (each profile's share
    /// of the history's orders): MIG placement keeps room for them.
    pub mig_instances: Vec<ProfileInstances>,
    pub points: Vec<ForecastPoint>,
}

/// MIG instances of one profile expected within the notice period.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileInstances {
    /// e.g. `3g.40gb`.
    pub profile: String,
    pub instances: u32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ForecastView {
    /// When the forecast was last refitted; absent before the first refresh.
    pub generated_at: Option<DateTime<Utc>>,
    /// Minutes ahead each market is forecast.
    pub horizon_minutes: u32,
    /// The prediction intervals' confidence.
    pub level: f64,
    /// Markets with on-demand or reserved orders in the fitted history.
    pub markets: Vec<MarketForecastView>,
}

/// The demand forecast per (GPU model, region): on-demand and reserved
/// demand per minute, 15 minutes ahead, refitted every minute.
#[utoipa::path(get, path = "/v1/market/forecast", tag = "market",
    params(ForecastQuery),
    responses(
        (status = 200, description = "The latest forecast", body = ForecastView),
        InvalidQuery,
    ))]
async fn forecast(
    State(forecasts): State<Forecasts>,
    Query(q): Query<ForecastQuery>,
) -> Result<Json<ForecastView>, ApiError> {
    for (field, value) in [
        ("query.gpu_model", &q.gpu_model),
        ("query.region", &q.region),
    ] {
        if value
            .as_ref()
            .is_some_and(|v| v.is_empty() || v.chars().count() > 64)
        {
            return Err(ApiError::field(field, "must be 1 to 64 characters"));
        }
    }
    let board = forecasts.latest();
    let markets = board
        .markets
        .iter()
        .filter(|((model, region), _)| {
            q.gpu_model.as_ref().is_none_or(|m| m == model)
                && q.region.as_ref().is_none_or(|r| r == region)
        })
        .map(|((gpu_model, region), f)| {
            let p = &f.prediction;
            let points = (0..p.point.len())
                .map(|i| ForecastPoint {
                    at: f.from + Duration::minutes(i64::try_from(i).unwrap_or(0)),
                    tflops: p.point[i],
                    lower: p.lower.get(i).copied().unwrap_or(p.point[i]),
                    upper: p.upper.get(i).copied().unwrap_or(p.point[i]),
                })
                .collect();
            MarketForecastView {
                gpu_model: gpu_model.clone(),
                region: region.clone(),
                method: p.method,
                history_minutes: f.history_minutes,
                spot_holdback_tflops: f.holdback_tflops,
                mig_instances: f
                    .mig_instances
                    .iter()
                    .map(|(profile, &instances)| ProfileInstances {
                        profile: profile.clone(),
                        instances,
                    })
                    .collect(),
                points,
            }
        })
        .collect();
    Ok(Json(ForecastView {
        generated_at: board.generated_at,
        horizon_minutes: HORIZON_MINUTES as u32,
        level: LEVEL,
        markets,
    }))
}
