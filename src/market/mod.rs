//! The market: the task that owns the matching engine, and the order, lease
//! and market-data routes (DESIGN §4, §5, §9).

mod handle;
mod persist;
pub mod restore;
mod task;

pub use handle::{MarketError, MarketHandle, OrderMeta};
pub use persist::{mode_str, state_str};
pub use task::{start, MarketConfig};
