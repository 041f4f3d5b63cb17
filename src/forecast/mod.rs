//! The demand forecast (ARCHITECTURE.md §17): each market's on-demand and reserved
//! demand per minute, fitted every `forecast_interval_s` outside the engine
//! task and forecast 15 minutes ahead. The engine gets what the next notice
//! period is expected to ask for (`Command::SetForecast`) and keeps that much
//! idle capacity from spot; `GET /v1/market/forecast` and
//! `gpuex_forecast_units` show the forecast itself.

//!
//! [`model`] (the fit, pure floats over `augurs`) builds under the
//! `simulate` feature too, so `gpuex simulate` forecasts with the very same
//! code; the rest is the server's.

pub mod model;
#[cfg(feature = "server")]
mod refresh;

pub use model::HORIZON_MINUTES;
#[cfg(feature = "server")]
mod routes;
#[cfg(feature = "server")]
mod series;

#[cfg(feature = "server")]
pub use refresh::*;
#[cfg(feature = "server")]
pub use routes::router;
#[cfg(feature = "server")]
pub use series::{Market, MarketDemand};
