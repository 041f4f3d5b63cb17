//! The matching engine (DESIGN §5): a pure, synchronous library. Commands in,
//! events out; no IO, no clock, no randomness.

pub mod placement;
pub mod types;
