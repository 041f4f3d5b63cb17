//! The matching engine (ARCHITECTURE.md §5): a pure, synchronous library. Commands in,
//! events out; no IO, no clock, no randomness. One task owns an [`Engine`]
//! and applies commands one at a time.
//!
//! ```text
//! let mut engine = Engine::new(EngineConfig::default());
//! engine.apply(now, Command::SetRegion { name, timezone })?;     // IANA zone: off-peak hours
//! engine.apply(now, Command::SetPrices(rows))?;
//! engine.apply(now, Command::UpsertNode(spec))?;
//! let events = engine.apply(now, Command::Place(PlaceOrder { order_id, buyer, funds_available, spec }))?;
//! let events = engine.apply(now, Command::Tick)?;                 // every second or so
//! let quote = engine.quote(&spec)?;                               // POST /v1/quotes
//! let book = engine.market_book();                                // GET /v1/market/book
//! engine.validate()?;                                             // invariants (tests)
//! let rows = engine.snapshot();                                   // what the server persists
//! let engine = Engine::restore(EngineConfig::default(), rows)?;   // after a restart
//! ```
//!
//! # Contract with the server
//!
//! - `now` is unix seconds, passed with every command; an earlier `now` than
//!   one already seen counts as the latest. Whatever fell due (ends, notices,
//!   pending leases becoming ready, waiting orders expiring) runs first, in
//!   time order, with each event stamped with the instant it fell due — so
//!   after downtime the first command catches up on all of it.
//! - Order ids come from the caller; lease ids are [`lease_id`]`(order, fill_no)`.
//! - Refusals of orders are events ([`Event::OrderRejected`] with a
//!   [`RejectReason`]); `Err(EngineError)` means the command named something
//!   unknown (an order, lease or node) or asked an impossible transition, and
//!   changed nothing.
//! - Funds: `PlaceOrder::funds_available` is what the wallet can hold; each
//!   [`Lease`] carries the `hold` it needs (ARCHITECTURE.md §4). When a renewal fails,
//!   send [`Command::FundsExhausted`].
//! - Persistence: after each command, upsert the rows of
//!   [`Engine::changed_leases`] (re-read with [`Engine::lease`]; `None` means
//!   it ended, as its `LeaseEnded` event says) and of
//!   [`Engine::changed_orders`] (re-read with [`Engine::open_order`]; `None`:
//!   no longer open). Nothing else changes a lease or an open order — the
//!   property tests keep rows this way and check them against the engine after
//!   every step. On start, build a [`Snapshot`] from those rows plus nodes,
//!   regions, list prices and the last clearing indices (from `PriceChanged`),
//!   and call [`Engine::restore`]; it validates the result. An engine restored
//!   mid-run emits exactly the events the original would have (tested).
//!
//! # Modules
//!
//! - [`placement`]: the pure placement over a capacity view (shared with `gpuex simulate`).
//! - [`calendar`]: bookings per GPU and slice range; nothing promised twice.
//! - [`auction`]: the spot auction rule; `spot.rs` wires it to capacity and
//!   `spot_steps.rs` runs a clearing a step a tick.
//! - [`preemption`]: who makes way for whom, after notice.
//! - [`pricing`]: list multiples, spot index, holds.
//! - [`commands`], [`events`], [`reject`], [`lease`], [`orders`]: the engine's interface.
//! - [`convert`]: mode changes of a running lease (spot → on-demand → reserved).
//! - [`quote`]: quotes and the market book, read-only.
//! - [`restore`]: snapshot rows in, the same engine out; `validate.rs`: the invariants.

mod apply;
pub mod auction;
mod booking;
pub mod calendar;
pub mod commands;
pub mod convert;
mod core;
mod early_start;
pub mod events;
mod fill;
pub mod forecast;
mod gang;
pub mod lease;
mod listings;
mod live_leases;
mod nodes;
mod offpeak;
pub mod orders;
mod place_order;
pub mod placement;
pub mod preemption;
pub mod pricing;
pub mod quote;
mod rebalance;
pub mod reject;
pub mod resale;
mod resolve;
pub mod restore;
mod spot;
mod spot_memo;
mod spot_state;
mod spot_steps;
mod timers;
pub mod types;
mod validate;

#[cfg(test)]
mod tests;

pub use commands::{AgentReport, Command, GpuSpec, ListPrice, NodeSpec, PlaceOrder};
pub use convert::{Conversion, ConversionRefused, ConvertTo, ReservedWindow};
pub use core::{lease_id, Engine, EngineConfig, EngineError};
pub use events::{Event, FillReport, ListingEnd, RebalanceReason};
pub use forecast::{DemandForecast, ProfileDemand};
pub use lease::{EndReason, Lease, LeaseState, NoticeReason};
pub use quote::{MarketBook, MarketLevel, Quote};
pub use reject::RejectReason;
pub use resale::{ListResale, Listing, ListingRefusal, ResaleSource};
pub use restore::{ClearingRow, EngineMeta, NodeRow, RegionRow, Snapshot};
pub use spot_state::ClearingRun;
pub use types::{
    DurationPrediction, Gang, Isolation, ListingId, Mode, OrderSpec, PredictionBasis, Priority,
    Qos, RegionChoice, Resources, Ts,
};
pub use validate::Invariant;
