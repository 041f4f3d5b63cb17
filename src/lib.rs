//! gpuex: an exchange for atomized GPU capacity.
//!
//! The pure parts live in their own crates and are re-exported here under
//! the names the server uses: `gpuex-wire` (the catalog, the agent protocol,
//! decimals, the network guard, a workload's environment), which the node
//! agent shares, and `gpuex-engine` (the matching engine). `pricing`'s rules
//! build without the server's dependencies (the `server` feature), so the
//! simulator shares them.

pub use gpuex_engine as engine;
pub use gpuex_wire::{decimal, netguard, protocol, workload_env};

#[cfg(feature = "server")]
pub mod catalog;
#[cfg(not(feature = "server"))]
pub use gpuex_wire::catalog;
pub mod pricing;

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
pub mod command_line;
#[cfg(feature = "server")]
pub mod config;
#[cfg(feature = "server")]
pub mod db;
// `gpuex demo`: in the library, not the binary, so its uses of the
// runtime, HTTP and the database share the library's compiled code (release
// builds do not share generic instances across crates).
#[cfg(feature = "server")]
pub mod demo;
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
pub mod ids;
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
/// The page size list endpoints take (`?limit=`).
#[cfg(feature = "server")]
pub mod page;

#[cfg(feature = "server")]
pub use app::serve;

#[cfg(feature = "simulate")]
pub mod simulate;
