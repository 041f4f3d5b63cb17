//! Integration tests: the real server over HTTP, on SQLite and PostgreSQL.

mod fleet;
mod helpers;

mod agent;
mod agent_process;
mod auth;
mod billing;
mod catalog;
mod contract;
mod durability;
mod ledger_properties;
mod nodes;
mod ops;
mod orders;
mod prices;
mod storage;
mod validation;
mod wallet;
