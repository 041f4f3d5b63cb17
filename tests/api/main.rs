//! Integration tests: the real server over HTTP, on SQLite and PostgreSQL.

mod helpers;

mod auth;
mod billing;
mod catalog;
mod durability;
mod ledger_properties;
mod ops;
mod orders;
mod prices;
mod validation;
mod wallet;
