//! Integration tests: the real server over HTTP, on SQLite and PostgreSQL.

mod fleet;
mod helpers;
mod sse;

mod agent;
mod agent_process;
mod auth;
mod billing;
mod bounds;
mod catalog;
mod cli;
mod contract;
mod convert;
mod dashboard;
mod durability;
mod events;
mod follow_the_sun;
mod ledger_properties;
mod limits;
mod market_history;
mod market_metrics;
mod nodes;
mod ops;
mod orders;
mod prices;
mod readme;
mod resale;
mod spot_funds;
mod storage;
mod validation;
mod wallet;
mod webhook_durability;
mod webhook_input;
mod webhooks;
