//! The matching engine (DESIGN §5): a pure, synchronous library. Commands in,
//! events out; no IO, no clock, no randomness.
//!
//! ```text
//! let mut engine = Engine::new(EngineConfig::default());
//! let events = engine.apply(now, Command::UpsertNode(spec))?;
//! let events = engine.apply(now, Command::Place(PlaceOrder { order_id, buyer, funds_available, spec }))?;
//! let events = engine.apply(now, Command::Tick)?;            // every second or so
//! engine.validate()?;                                         // invariants (tests)
//! let rows = engine.snapshot();                               // what to persist
//! let engine = Engine::restore(EngineConfig::default(), rows)?;   // after a restart
//! ```
//!
//! - [`placement`]: the pure placement over a capacity view (shared with `gpuex simulate`).
//! - [`calendar`]: bookings per GPU and slice range; nothing promised twice.
//! - [`auction`]: the spot auction rule; `spot.rs` wires it to capacity.
//! - [`preemption`]: who makes way for whom, after notice.
//! - [`pricing`]: list multiples, spot index, holds.
//! - [`commands`], [`events`], [`reject`]: the engine's interface.
//! - [`restore`]: snapshot rows in, the same engine out.

mod apply;
pub mod auction;
pub mod calendar;
pub mod commands;
mod core;
pub mod events;
pub mod lease;
mod nodes;
pub mod orders;
mod place_order;
pub mod placement;
pub mod preemption;
pub mod pricing;
pub mod reject;
pub mod restore;
mod spot;
mod timers;
pub mod types;
mod validate;

#[cfg(test)]
mod tests;

pub use commands::{AgentReport, Command, GpuSpec, ListPrice, NodeSpec, PlaceOrder};
pub use core::{lease_id, Engine, EngineConfig, EngineError};
pub use events::{Event, FillReport};
pub use lease::{EndReason, Lease, LeaseState, NoticeReason};
pub use reject::RejectReason;
pub use restore::{ClearingRow, NodeRow, RegionRow, Snapshot};
pub use types::{Isolation, Mode, OrderSpec, Priority, Qos, Resources, Ts};
pub use validate::Invariant;
