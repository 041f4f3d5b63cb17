//! `GET /v1/market/history`: the spot clearing index and unit prices per
//! interval, read from the buckets the market task keeps.

use super::bucket::{Bucket, Interval, Ohlc};
use super::store;
use crate::error::{ApiError, Json, Problem, Query};
use crate::market::MarketState;
use axum::extract::{FromRef, State};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    MarketState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(history))
}

/// The most intervals one request may span.
pub const MAX_INTERVALS: i64 = 1000;
/// How far back `from` reaches when not given.
const DEFAULT_SPAN_S: i64 = 24 * 3600;
/// The longest GPU model or region name a query may give.
const MAX_NAME: usize = 64;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// The GPU model, as `GET /v1/catalog/gpus` names it.
    #[param(min_length = 1, max_length = 64)]
    pub gpu_model: String,
    /// The region.
    #[param(min_length = 1, max_length = 64)]
    pub region: String,
    /// The first interval is the one holding `from` (default: 24 hours
    /// before `to`, or 1,000 intervals before it at `1m`).
    pub from: Option<DateTime<Utc>>,
    /// The end, exclusive (default: now). At most 1,000 intervals after `from`.
    pub to: Option<DateTime<Utc>>,
    /// The bucket length (default `1h`).
    #[param(inline)]
    pub interval: Option<Interval>,
}

/// Open, high, low and close of the unit prices a winner at the clearing
/// index paid, per unit-hour.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPrices {
    pub tflops_h: Ohlc,
    pub vram_h: Ohlc,
}

/// Units won at the interval's clearings.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryVolume {
    /// TFLOPS units.
    #[schema(value_type = String)]
    pub tflops: Decimal,
    /// 4 GB VRAM units.
    #[schema(value_type = String)]
    pub vram: Decimal,
}

/// One interval of one market: the clearing index (× list) and prices.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPoint {
    /// The interval's start (UTC, on a whole minute, hour or day).
    pub start: DateTime<Utc>,
    #[schema(value_type = String)]
    pub open: Decimal,
    #[schema(value_type = String)]
    pub high: Decimal,
    #[schema(value_type = String)]
    pub low: Decimal,
    #[schema(value_type = String)]
    pub close: Decimal,
    pub prices: HistoryPrices,
    pub volume: HistoryVolume,
}

impl From<Bucket> for HistoryPoint {
    fn from(b: Bucket) -> Self {
        let Ohlc {
            open,
            high,
            low,
            close,
        } = b.index;
        HistoryPoint {
            start: DateTime::from_timestamp(b.start, 0).unwrap_or_default(),
            open,
            high,
            low,
            close,
            prices: HistoryPrices {
                tflops_h: b.tflops_h,
                vram_h: b.vram_h,
            },
            volume: HistoryVolume {
                tflops: b.won.tflops_h,
                vram: b.won.vram_h,
            },
        }
    }
}

/// A checked history request, in engine seconds: buckets starting in `[from, to)`.
#[derive(Debug, PartialEq, Eq)]
struct Span {
    interval: Interval,
    from: i64,
    to: i64,
}

impl Span {
    fn parse(q: &HistoryQuery, now: DateTime<Utc>) -> Result<Span, ApiError> {
        for (field, value) in [
            ("query.gpu_model", &q.gpu_model),
            ("query.region", &q.region),
        ] {
            if value.is_empty() || value.chars().count() > MAX_NAME {
                return Err(ApiError::field(field, "must be 1 to 64 characters"));
            }
        }
        let interval = q.interval.unwrap_or(Interval::Hour);
        let step = interval.seconds();
        let to = q.to.unwrap_or(now);
        // Whole seconds, rounded up: buckets start on whole seconds.
        let to_s = to.timestamp() + i64::from(to.timestamp_subsec_nanos() > 0);
        let from_s = match q.from {
            Some(from) if from >= to => {
                return Err(ApiError::field("query.from", "must be before `to`"))
            }
            Some(from) => from.timestamp(),
            // Whole intervals back from the one holding `to`: counting back
            // from `to` itself would begin mid-interval and, rounded down,
            // span one interval more than the limit.
            None => {
                let intervals = (DEFAULT_SPAN_S / step).clamp(1, MAX_INTERVALS);
                interval.start_of(to_s - 1) - step * (intervals - 1)
            }
        };
        let from_s = interval.start_of(from_s);
        let intervals = (to_s - from_s + step - 1) / step;
        if intervals > MAX_INTERVALS {
            return Err(ApiError::field(
                "query.from",
                format!(
                    "spans {intervals} intervals of {}; at most {MAX_INTERVALS} per request",
                    interval.as_str()
                ),
            ));
        }
        Ok(Span {
            interval,
            from: from_s,
            to: to_s,
        })
    }
}

/// The spot clearing index and unit prices of one market per interval,
/// oldest first. A market that never cleared, or one that does not exist,
/// has no history: an empty list.
#[utoipa::path(get, path = "/v1/market/history", tag = "market", params(HistoryQuery),
    responses(
        (status = 200, description = "Intervals with at least one clearing, oldest first; at most 1,000", body = [HistoryPoint]),
        (status = 422, description = "A missing market, an unknown interval, `from` not before `to`, or more than 1,000 intervals", body = Problem, content_type = "application/problem+json"),
    ))]
async fn history(
    State(state): State<MarketState>,
    Query(q): Query<HistoryQuery>,
) -> Result<Json<Vec<HistoryPoint>>, ApiError> {
    let span = Span::parse(&q, state.settings.clock.now())?;
    let buckets = store::range(
        &state.db,
        &q.gpu_model,
        &q.region,
        span.interval,
        span.from,
        span.to,
    )
    .await?;
    Ok(Json(buckets.into_iter().map(HistoryPoint::from).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(from: Option<&str>, to: Option<&str>, interval: Option<Interval>) -> HistoryQuery {
        let at = |s: &str| s.parse::<DateTime<Utc>>().expect("a time");
        HistoryQuery {
            gpu_model: "A100-SXM4-80GB".into(),
            region: "eu-west".into(),
            from: from.map(at),
            to: to.map(at),
            interval,
        }
    }

    #[test]
    fn the_span_starts_at_the_bucket_holding_from_and_ends_before_to() {
        let q = query(
            Some("2026-12-01T10:30:10Z"),
            Some("2026-12-01T12:00:00.5Z"),
            None,
        );
        let span = Span::parse(&q, Utc::now()).expect("valid");
        assert_eq!(span.interval, Interval::Hour);
        assert_eq!(span.from % 3600, 0);
        assert_eq!(span.to % 3600, 1);
    }

    #[test]
    fn the_default_span_is_a_day_or_a_thousand_minutes() {
        let now = "2026-12-01T12:00:00Z".parse().expect("a time");
        let hours = Span::parse(&query(None, None, None), now).expect("valid");
        assert_eq!(hours.to - hours.from, 24 * 3600);
        let minutes = Span::parse(&query(None, None, Some(Interval::Minute)), now).expect("valid");
        assert_eq!(minutes.to - minutes.from, 1000 * 60);
    }

    #[test]
    fn the_default_span_between_interval_starts_is_still_within_the_limit() {
        let now = "2026-12-01T12:00:30.25Z".parse().expect("a time");
        let minutes = Span::parse(&query(None, None, Some(Interval::Minute)), now).expect("valid");
        assert_eq!((minutes.to - minutes.from + 59) / 60, MAX_INTERVALS);
        assert_eq!(minutes.from % 60, 0);
        let hours = Span::parse(&query(None, None, None), now).expect("valid");
        assert_eq!((hours.to - hours.from + 3599) / 3600, 24);
    }

    #[test]
    fn more_than_a_thousand_intervals_or_from_after_to_is_refused() {
        let wide = query(
            Some("2026-01-01T00:00:00Z"),
            Some("2026-12-01T00:00:00Z"),
            None,
        );
        assert!(Span::parse(&wide, Utc::now()).is_err());
        let days = query(
            Some("2026-01-01T00:00:00Z"),
            Some("2026-12-01T00:00:00Z"),
            Some(Interval::Day),
        );
        assert!(Span::parse(&days, Utc::now()).is_ok());
        let back = query(
            Some("2026-12-01T00:00:00Z"),
            Some("2026-12-01T00:00:00Z"),
            None,
        );
        assert!(Span::parse(&back, Utc::now()).is_err());
    }
}
