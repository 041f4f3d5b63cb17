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
mod charging;
pub mod earnings;
pub mod export;
pub mod focus;
mod holds;
pub mod imports;
pub mod invoices;
pub mod ledger;
pub mod lines;
mod period;
pub mod profile;
pub mod refund;
mod routes;
mod running;
#[doc(hidden)]
pub mod scenario;
pub mod settle;
pub mod tco;
pub mod usage;

pub use account::Account;

use crate::auth::RouterState;
use crate::config::Settings;
use crate::db::Db;
use crate::engine::Command;
use crate::error::ApiError;
use crate::events::NewEvent;
use axum::extract::FromRef;
use futures::future::BoxFuture;
use std::collections::BTreeSet;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

/// What billing's routes and its budget watcher use.
#[derive(Clone)]
pub struct BillingState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub market: Arc<dyn MarketPort>,
}

/// What billing asks of the market. Billing does not import the market
/// (ARCHITECTURE.md, "The layers"): the market implements this, and the
/// server hands it over.
pub trait MarketPort: Send + Sync {
    /// The regions where `model` has capacity now (the TCO calculator's).
    fn supplied_regions(
        &self,
        model: &'static str,
    ) -> BoxFuture<'_, Result<BTreeSet<String>, ApiError>>;

    /// Applies `command`, writing `tell` with its changes (a budget notice).
    fn command_telling(
        &self,
        command: Command,
        tell: Vec<NewEvent>,
    ) -> BoxFuture<'_, anyhow::Result<()>>;
}

/// Every billing route.
pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    BillingState: FromRef<S>,
{
    routes::router()
        .merge(export::router())
        .merge(invoices::router())
        .merge(usage::router())
        .merge(budgets::router())
        .merge(earnings::router())
        .merge(adjustments::router())
        .merge(profile::router())
        .merge(imports::router())
        .merge(tco::router())
}
