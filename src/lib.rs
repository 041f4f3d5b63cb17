//! gpuex: an exchange for atomized GPU capacity.
//!
//! `catalog`, `protocol` and `engine` are pure and build without the server's
//! dependencies, so the node agent and the simulator share them.

pub mod catalog;
pub mod engine;
pub mod protocol;
#[cfg(feature = "simulate")]
pub mod simulate;
