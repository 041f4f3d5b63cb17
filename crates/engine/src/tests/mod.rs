//! Engine tests: one per rule (names read as sentences), property tests over
//! random command sequences, determinism and restore.

mod auction_memo;
mod bounds;
mod clearing_steps;
mod convert;
mod cuda;
mod follow_the_sun;
mod forecast;
mod helpers;
mod market;
mod max_price;
mod node_loss;
mod order_types;
mod prediction;
mod props;
mod rebalance;
mod resale;
mod rules;
mod spot_and_preemption;
