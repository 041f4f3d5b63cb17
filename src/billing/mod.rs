//! Money: the double-entry ledger, wallets and holds (DESIGN §8).

pub mod charges;
pub mod ledger;
mod routes;

pub use routes::router;
