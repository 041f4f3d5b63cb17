//! The server's refresher: series from the orders table, fits off the async
//! threads, the board `GET /v1/market/forecast` reads, and the engine's holdback.

use super::{model, series, Market, MarketDemand, HORIZON_MINUTES};

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;

use crate::config::Settings;
use crate::db::Db;
use crate::engine::{Command, DemandForecast, ProfileDemand};
use crate::market::MarketHandle;
use crate::metrics::Metrics;
use model::Prediction;

/// One market's latest forecast.
#[derive(Debug, Clone)]
pub struct MarketForecast {
    pub prediction: Prediction,
    /// The first forecast minute.
    pub from: DateTime<Utc>,
    pub history_minutes: u32,
    /// What the engine keeps from spot: the forecast over the notice period.
    pub holdback_tflops: Decimal,
    /// The MIG instances among that demand, by profile, that MIG placement
    /// keeps room for.
    pub mig_instances: BTreeMap<String, u32>,
}

/// The latest refresh: every market's forecast, shared with the routes.
#[derive(Debug, Default)]
pub struct Board {
    pub generated_at: Option<DateTime<Utc>>,
    pub markets: BTreeMap<Market, MarketForecast>,
}

/// The board behind a lock: a refresh replaces it whole.
#[derive(Debug, Clone, Default)]
pub struct Forecasts(Arc<RwLock<Arc<Board>>>);

impl Forecasts {
    pub fn latest(&self) -> Arc<Board> {
        match self.0.read() {
            Ok(board) => board.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn replace(&self, board: Board) {
        let board = Arc::new(board);
        match self.0.write() {
            Ok(mut slot) => *slot = board,
            Err(poisoned) => *poisoned.into_inner() = board,
        }
    }
}

/// What the refresher uses: it reads the orders, and publishes to the
/// board, the gauge and the engine.
#[derive(Clone)]
pub struct ForecastState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub metrics: Arc<Metrics>,
    pub forecasts: Forecasts,
    pub market: MarketHandle,
}

/// Starts the refresher; it stops when the database closes.
pub fn spawn(state: ForecastState) -> Option<tokio::task::JoinHandle<()>> {
    let every = state.settings.forecast_interval_s;
    if every == 0 {
        return None;
    }
    Some(tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_secs(every));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            if crate::db::dispatch!(state.db, pool => pool.is_closed()) {
                break;
            }
            if let Err(e) = refresh(&state).await {
                tracing::warn!(error = %e, "demand forecast refresh failed");
            }
        }
    }))
}

/// One refresh: read the series, fit every market off the async threads,
/// publish the board and the gauge, and hand the engine its holdback.
pub async fn refresh(state: &ForecastState) -> anyhow::Result<()> {
    let now = state.settings.clock.now();
    let minutes = state.settings.forecast_history_minutes;
    let series = series::demand_by_minute(&state.db, now, minutes).await?;
    let notice_minutes = usize::try_from(state.settings.preempt_notice_s.max(1))
        .unwrap_or(usize::MAX)
        .div_ceil(60)
        .clamp(1, HORIZON_MINUTES);
    let from = DateTime::from_timestamp(now.timestamp().div_euclid(60) * 60, 0).unwrap_or(now);
    let markets =
        tokio::task::spawn_blocking(move || fit_all(series, minutes, from, notice_minutes)).await?;
    state.metrics.forecast_units.reset();
    for ((model, region), f) in &markets {
        let next = f.prediction.point.first().copied().unwrap_or(0.0);
        state
            .metrics
            .forecast_units
            .with_label_values(&[model.as_str(), region.as_str()])
            .set(next);
    }
    let holdback = markets
        .iter()
        .map(|((gpu_model, region), f)| DemandForecast {
            gpu_model: gpu_model.clone(),
            region: region.clone(),
            tflops: f.holdback_tflops,
            mig_profiles: f
                .mig_instances
                .iter()
                .map(|(profile, &instances)| ProfileDemand {
                    profile: profile.clone(),
                    instances,
                })
                .collect(),
        })
        .collect();
    state.forecasts.replace(Board {
        generated_at: Some(now),
        markets,
    });
    state.market.command(Command::SetForecast(holdback)).await?;
    Ok(())
}

fn fit_all(
    series: BTreeMap<Market, MarketDemand>,
    history_minutes: u32,
    from: DateTime<Utc>,
    notice_minutes: usize,
) -> BTreeMap<Market, MarketForecast> {
    series
        .into_iter()
        .map(|(market, demand)| {
            let prediction = model::forecast(&demand.by_minute, HORIZON_MINUTES);
            let expected: f64 = prediction.point.iter().take(notice_minutes).sum();
            let mig_instances = demand.mig_instances_for(expected);
            // Whole TFLOPS are precise enough for holding capacity back.
            let holdback_tflops = Decimal::from_f64(expected.round()).unwrap_or_default();
            let forecast = MarketForecast {
                prediction,
                from,
                history_minutes,
                holdback_tflops,
                mig_instances,
            };
            (market, forecast)
        })
        .collect()
}
