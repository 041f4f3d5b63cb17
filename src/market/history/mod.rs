//! Spot market history (ARCHITECTURE.md §9): each clearing rolled into 1-minute,
//! 1-hour and 1-day buckets of the clearing index, the unit prices and the
//! units won, and `GET /v1/market/history` to read them.

mod bucket;
mod routes;
mod store;

pub use bucket::{roll, Bucket, Clearing, Interval, Ohlc};
pub use routes::router;
pub use store::{HistoryRows, MarketHistory};
