//! gpuex: an exchange for atomized GPU capacity.
//!
//! `catalog`, `protocol`, `engine`, `netguard`, `workload_env` and `pricing`'s
//! rules are pure and build without the server's dependencies (the `server`
//! feature), so the node agent and the simulator share them.

pub mod catalog;
pub mod decimal;
pub mod engine;
pub mod netguard;
pub mod pricing;
pub mod protocol;
pub mod workload_env;

#[cfg(feature = "server")]
pub mod api;
#[cfg(feature = "server")]
pub mod app;
#[cfg(feature = "server")]
pub mod audit;
#[cfg(feature = "server")]
pub mod auth;
#[cfg(feature = "server")]
pub mod billing;
#[cfg(feature = "server")]
pub mod bounds;
#[cfg(feature = "server")]
pub mod clock;
#[cfg(feature = "server")]
pub mod cluster;
#[cfg(feature = "server")]
mod columns;
#[cfg(feature = "server")]
pub mod config;
#[cfg(feature = "server")]
pub mod db;
#[cfg(feature = "server")]
pub mod error;
#[cfg(feature = "server")]
pub mod events;
#[cfg(any(feature = "server", feature = "simulate"))]
pub mod forecast;
#[cfg(feature = "server")]
pub mod httpd;
#[cfg(feature = "server")]
pub mod idempotency;
#[cfg(feature = "server")]
pub mod limits;
#[cfg(feature = "server")]
pub mod market;
#[cfg(feature = "server")]
pub mod metrics;
#[cfg(feature = "server")]
pub mod nodes;
#[cfg(feature = "server")]
pub mod owner_only;

#[cfg(feature = "server")]
pub use app::serve;

#[cfg(feature = "simulate")]
pub mod simulate;
