//! Fitting one market's per-minute demand and forecasting it: MSTL (seasonal
//! decomposition by LOESS, one period per season the history covers twice)
//! with a naive trend (the deseasonalised series' last level carried on);
//! additive damped-trend ETS when the history is too short for a season; the
//! recent mean when too few minutes had any demand. Forecasts never go below
//! zero: demand cannot.
//!
//! Why a naive trend under MSTL rather than AutoETS: a refresh fits every
//! market each minute, and AutoETS's likelihood search costs 2–15 ms a
//! market against 0.3 ms, for a 15-minute error of 2.9 % against 4.0 %
//! (BENCHMARKS.md, "Demand forecast"), both far below the last value's 17 %.
//! The seasons carry the forecast at this horizon; the trend barely moves.

use augurs::ets::AutoETS;
use augurs::mstl::MSTLModel;
use augurs::prelude::*;
use serde::Serialize;

/// How far ahead each forecast reaches, in minutes.
pub const HORIZON_MINUTES: usize = 15;

/// The seasons demand follows, in minutes: an hour (batch schedules) and a day.
pub const SEASONS: [usize; 2] = [60, 1440];
/// Fewer minutes with demand than this and the forecast is the recent mean:
/// a model fitted to a few spikes among zeros only echoes the spikes.
const MIN_FOR_ETS: usize = 12;
/// How many of the last points the fallback mean covers.
const MEAN_WINDOW: usize = 30;
/// The prediction interval's confidence.
pub const LEVEL: f64 = 0.8;

/// Which model produced a forecast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// MSTL with a naive trend.
    Mstl,
    /// Additive damped-trend ETS without seasons (history shorter than two hours).
    Ets,
    /// The mean of the last 30 minutes (too few minutes with demand, or the fit failed).
    RecentMean,
}

/// A forecast `horizon` steps ahead: the point and its interval per step.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub method: Method,
    pub point: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

/// Forecasts `history` (one value per minute, oldest first) `horizon` minutes ahead.
pub fn forecast(history: &[f64], horizon: usize) -> Prediction {
    let periods: Vec<usize> = SEASONS
        .into_iter()
        .filter(|p| history.len() >= 2 * p)
        .collect();
    let busy_minutes = history.iter().filter(|v| **v > 0.0).count();
    let fitted = if busy_minutes < MIN_FOR_ETS || history.iter().all(|v| *v == history[0]) {
        // A flat series has nothing to fit, and ETS's optimiser gains nothing on it.
        None
    } else if periods.is_empty() {
        fit_ets(history, horizon).map(|f| (Method::Ets, f))
    } else {
        fit_mstl(history, periods, horizon).map(|f| (Method::Mstl, f))
    };
    match fitted {
        Some((method, f)) if f.point.iter().all(|v| v.is_finite()) => {
            let (lower, upper) = match f.intervals {
                Some(i) if i.lower.len() == horizon && i.upper.len() == horizon => {
                    (i.lower, i.upper)
                }
                _ => (f.point.clone(), f.point.clone()),
            };
            Prediction {
                method,
                point: clamp(f.point),
                lower: clamp(lower),
                upper: clamp(upper),
            }
        }
        _ => recent_mean(history, horizon),
    }
}

fn fit_ets(history: &[f64], horizon: usize) -> Option<Forecast> {
    // Damped, so a short run of growth is not extrapolated far.
    let fitted = AutoETS::new(1, "AAN")
        .ok()?
        .damped(true)
        .ok()?
        .fit(history)
        .ok()?;
    fitted.predict(horizon, LEVEL).ok()
}

fn fit_mstl(history: &[f64], periods: Vec<usize>, horizon: usize) -> Option<Forecast> {
    let fitted = MSTLModel::naive(periods).fit(history).ok()?;
    fitted.predict(horizon, LEVEL).ok()
}

/// The mean of the last minutes, with the spread of those minutes as its interval.
fn recent_mean(history: &[f64], horizon: usize) -> Prediction {
    let recent = &history[history.len().saturating_sub(MEAN_WINDOW)..];
    let n = recent.len().max(1) as f64;
    let mean = recent.iter().sum::<f64>() / n;
    let spread = (recent.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    Prediction {
        method: Method::RecentMean,
        point: vec![mean; horizon],
        lower: vec![(mean - spread).max(0.0); horizon],
        upper: vec![mean + spread; horizon],
    }
}

fn clamp(values: Vec<f64>) -> Vec<f64> {
    values.into_iter().map(|v| v.max(0.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean absolute percentage error, over points whose actual value is not zero.
    fn mape(actual: &[f64], predicted: &[f64]) -> f64 {
        let pairs: Vec<(f64, f64)> = actual
            .iter()
            .zip(predicted)
            .filter(|(a, _)| **a != 0.0)
            .map(|(a, p)| (*a, *p))
            .collect();
        pairs.iter().map(|(a, p)| ((a - p) / a).abs()).sum::<f64>() / pairs.len() as f64
    }

    /// Demand with an hourly wave, a slow rise and a fixed pseudo-random wiggle.
    fn seasonal(minutes: usize) -> Vec<f64> {
        (0..minutes)
            .map(|t| {
                let phase = (t % 60) as f64 / 60.0 * std::f64::consts::TAU;
                let wiggle = ((t * 7919) % 13) as f64 / 13.0 - 0.5;
                200.0 + 0.05 * t as f64 + 120.0 * phase.sin() + 10.0 * wiggle
            })
            .collect()
    }

    #[test]
    fn a_seasonal_series_is_forecast_better_than_its_last_value() {
        let series = seasonal(6 * 60 + 15);
        let (history, actual) = series.split_at(6 * 60);
        let p = forecast(history, 15);
        assert_eq!(p.method, Method::Mstl);
        let last = vec![*history.last().unwrap(); 15];
        let (model, baseline) = (mape(actual, &p.point), mape(actual, &last));
        println!("MAPE over 15 minutes: MSTL {model:.4}, last value {baseline:.4}");
        assert!(
            model < baseline,
            "MSTL {model} against last value {baseline}"
        );
        assert!(p.lower.iter().zip(&p.point).all(|(l, x)| l <= x));
        assert!(p.upper.iter().zip(&p.point).all(|(u, x)| u >= x));
    }

    #[test]
    fn short_or_flat_histories_fall_back_and_forecasts_are_never_negative() {
        let p = forecast(&[3.0, 5.0, 4.0], 15);
        assert_eq!(p.method, Method::RecentMean);
        assert_eq!(p.point, vec![4.0; 15]);
        assert_eq!(forecast(&[], 5).point, vec![0.0; 5]);
        assert_eq!(forecast(&[7.0; 200], 3).point, vec![7.0; 3]);
        // A steep fall would extrapolate below zero.
        let falling: Vec<f64> = (0..60).map(|t| (600 - 10 * t) as f64).collect();
        let p = forecast(&falling, 15);
        assert_eq!(p.method, Method::Ets);
        assert!(p.point.iter().chain(&p.lower).all(|v| *v >= 0.0), "{p:?}");
    }
}
