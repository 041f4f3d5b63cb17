//! Prices (ARCHITECTURE.md §3): list prices per (region, GPU model, unit) set by the
//! admin, every other price derived from them, and quotes.
#![deny(clippy::float_arithmetic)]

mod rules;

pub use rules::{round_money, DerivedPrices, Mode, MONEY_SCALE, ON_DEMAND_FACTOR, RESERVED_FACTOR};

#[cfg(feature = "server")]
pub mod quotes;
#[cfg(feature = "server")]
mod routes;
#[cfg(feature = "server")]
pub mod store;
#[cfg(feature = "server")]
pub use routes::{router, PricingState};
