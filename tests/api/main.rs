//! Integration tests: the real server over HTTP, on SQLite and PostgreSQL.

mod helpers;

mod auth;
mod catalog;
mod ledger_properties;
mod ops;
mod prices;
mod validation;
mod wallet;
