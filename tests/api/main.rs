//! Integration tests: the real server over HTTP, on SQLite and PostgreSQL.

mod fleet;
mod helpers;

mod agent;
mod auth;
mod catalog;
mod ledger_properties;
mod nodes;
mod ops;
mod prices;
mod validation;
mod wallet;
