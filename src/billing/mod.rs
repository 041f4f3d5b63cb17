//! Money: the double-entry ledger, wallets and holds, charge lines, invoices,
//! cost by tag, budgets, provider earnings, FOCUS 1.2 exports (ARCHITECTURE.md §3, §4, §8),
//! the capacity profile and the TCO calculator (§17).
#![deny(clippy::float_arithmetic)]

mod account;
pub mod adjustments;
pub mod balances;
pub mod budgets;
pub mod cells;
pub mod charges;
pub mod earnings;
pub mod export;
pub mod focus;
mod holds;
pub mod invoices;
pub mod ledger;
pub mod lines;
mod period;
pub mod profile;
pub mod refund;
mod routes;
#[doc(hidden)]
pub mod scenario;
pub mod settle;
pub mod tco;
pub mod usage;

pub use account::Account;

use crate::app::AppState;
use utoipa_axum::router::OpenApiRouter;

/// Every billing route.
pub fn router() -> OpenApiRouter<AppState> {
    routes::router()
        .merge(export::router())
        .merge(invoices::router())
        .merge(usage::router())
        .merge(budgets::router())
        .merge(earnings::router())
        .merge(adjustments::router())
        .merge(profile::router())
        .merge(tco::router())
}
