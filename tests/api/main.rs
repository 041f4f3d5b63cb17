//! Integration tests: the real server over HTTP, on SQLite and PostgreSQL.

mod fleet;
mod helpers;
#[path = "../support/require.rs"]
mod require;
mod sse;
#[path = "../support/uid_pool.rs"]
mod uid_pool;

mod agent;
mod agent_artifacts;
mod agent_process;
mod agent_security;
mod audit;
mod auth;
mod billing;
mod bounds;
mod capacity;
mod catalog;
mod cli;
mod connections;
mod contract;
mod convert;
mod dashboard;
mod durability;
mod early_exit;
mod events;
mod file_modes;
mod final_logs;
mod follow_the_sun;
mod forecast;
mod internal_calls;
mod ledger_properties;
mod limits;
mod market_history;
mod market_metrics;
mod node_removal;
mod node_trust;
mod nodes;
mod ops;
mod order_env;
mod orders;
mod prediction;
mod prices;
mod readme;
mod rebalance;
mod resale;
mod scale_out;
mod sessions;
mod spot_funds;
mod storage;
mod validation;
mod wallet;
mod webhook_durability;
mod webhook_input;
mod webhooks;
