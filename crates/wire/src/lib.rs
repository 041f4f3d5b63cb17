//! What gpuex's server, node agent, CLI and simulator share: the GPU catalog
//! and its units, the ids the API names, the agent protocol, exact decimals as the API reads them,
//! the network guard and a workload's environment. Pure data and pure
//! functions: no runtime, no IO, no database.
//!
//! The `openapi` feature derives the types' OpenAPI schemas for the server;
//! the agent builds without it.

pub mod catalog;
pub mod decimal;
pub mod ids;
pub mod netguard;
pub mod protocol;
pub mod workload_env;
