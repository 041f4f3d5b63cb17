//! Price rules (ARCHITECTURE.md §3) and the funds a lease holds (ARCHITECTURE.md §4). Every price
//! derives from the list price; all of it is `Decimal`, never a float.
#![deny(clippy::float_arithmetic)]

use rust_decimal::{Decimal, RoundingStrategy};
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};

use super::placement::{UnitPrices, Units};
use super::types::{Mode, Ts};

/// On-demand: 1.8 × list.
pub const ON_DEMAND: Decimal = dec!(1.8);
/// Reserved: 0.85 × list.
pub const RESERVED: Decimal = dec!(0.85);
/// Pooled: 1.0 × list.
pub const POOLED: Decimal = dec!(1.0);
/// The spot clearing index never goes below this…
pub const SPOT_FLOOR: Decimal = dec!(0.5);
/// …nor above this.
pub const SPOT_CAP: Decimal = dec!(0.7);
/// A reserved window starts at least this far ahead.
pub const RESERVED_LEAD_S: Ts = 3600;
/// Reserved leases hold at most this much of their window at a time.
pub const RESERVED_HOLD_S: Ts = 7 * 24 * 3600;
/// Rebalance warning when the clearing index is within this share of a bid's index.
pub const REBALANCE_WITHIN: Decimal = dec!(0.9);
/// The engine's own limits on what an order may name, far beyond the API's
/// (`bounds`): within them no product of prices, units and seconds leaves
/// `Decimal`'s range, so the engine refuses rather than overflows.
pub const MAX_PRICE_PER_HOUR: Decimal = dec!(1_000_000_000);
pub const MAX_TFLOPS: Decimal = dec!(10_000_000);
pub const MAX_LIST_PRICE: Decimal = dec!(1_000_000_000);
pub const MAX_WINDOW_S: Ts = 100 * 366 * 24 * 3600;

/// Which rule set a lease's price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum PriceRule {
    /// `multiplier` × list (on-demand 1.8, reserved 0.85, pooled 1.0).
    ListMultiple { multiplier: Decimal },
    /// Spot: min(own index, clearing index) × list.
    Spot {
        bid_index: Decimal,
        clearing_index: Decimal,
    },
}

impl PriceRule {
    /// The rule for a fixed-price mode (spot's comes from the auction).
    pub fn fixed(mode: Mode) -> PriceRule {
        let multiplier = match mode {
            Mode::OnDemand => ON_DEMAND,
            Mode::Reserved => RESERVED,
            Mode::Pooled | Mode::Spot => POOLED,
        };
        PriceRule::ListMultiple { multiplier }
    }

    /// The multiple of list actually charged.
    pub fn multiplier(&self) -> Decimal {
        match self {
            PriceRule::ListMultiple { multiplier } => *multiplier,
            PriceRule::Spot {
                bid_index,
                clearing_index,
            } => (*bid_index).min(*clearing_index),
        }
    }
}

/// Unit prices charged under `rule` for list prices `list`.
pub fn unit_prices(list: UnitPrices, rule: &PriceRule) -> UnitPrices {
    let m = rule.multiplier();
    UnitPrices {
        tflops_h: list.tflops_h * m,
        vram_h: list.vram_h * m,
    }
}

/// Price per hour of `units` at `prices`.
pub fn per_hour(units: Units, prices: UnitPrices) -> Decimal {
    units.tflops_h * prices.tflops_h + units.vram_h * prices.vram_h
}

/// A bid's price index: max_price ÷ list value, rounded half-even to 6 decimals
/// so it compares and displays exactly; `None` without a list value, or
/// when the quotient is beyond `Decimal`'s range.
pub fn price_index(max_price: Decimal, list_value: Decimal) -> Option<Decimal> {
    if list_value <= Decimal::ZERO {
        return None;
    }
    max_price
        .checked_div(list_value)
        .map(|i| i.round_dp_with_strategy(6, RoundingStrategy::MidpointNearestEven))
}

/// Money rounded the ledger's way: half-even to 6 decimals.
pub fn money(x: Decimal) -> Decimal {
    x.round_dp_with_strategy(6, RoundingStrategy::MidpointNearestEven)
}

/// The hold an accepted order needs (ARCHITECTURE.md §4): reserved, a rolling 7 days of
/// its window; on-demand and pooled, one hour; spot, one hour at max_price.
pub fn hold(
    mode: Mode,
    price_per_hour: Decimal,
    window_s: Option<Ts>,
    max_price: Option<Decimal>,
) -> Decimal {
    match mode {
        Mode::Reserved => {
            let secs = window_s.unwrap_or(0).clamp(0, RESERVED_HOLD_S);
            money(price_per_hour * Decimal::from(secs) / Decimal::from(3600))
        }
        Mode::OnDemand | Mode::Pooled => money(price_per_hour),
        Mode::Spot => money(max_price.unwrap_or(price_per_hour)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_demand_costs_one_point_eight_times_list_and_reserved_point_eight_five() {
        let list = UnitPrices {
            tflops_h: dec!(0.01),
            vram_h: dec!(0.1),
        };
        assert_eq!(
            unit_prices(list, &PriceRule::fixed(Mode::OnDemand)).tflops_h,
            dec!(0.018)
        );
        assert_eq!(
            unit_prices(list, &PriceRule::fixed(Mode::Reserved)).vram_h,
            dec!(0.085)
        );
    }

    #[test]
    fn spot_pays_the_lower_of_its_index_and_the_clearing_index() {
        let r = PriceRule::Spot {
            bid_index: dec!(0.9),
            clearing_index: dec!(0.6),
        };
        assert_eq!(r.multiplier(), dec!(0.6));
        let r = PriceRule::Spot {
            bid_index: dec!(0.55),
            clearing_index: dec!(0.6),
        };
        assert_eq!(r.multiplier(), dec!(0.55));
    }

    #[test]
    fn reserved_holds_at_most_seven_days_of_its_window() {
        let h = hold(Mode::Reserved, dec!(2), Some(30 * 24 * 3600), None);
        assert_eq!(h, dec!(336));
        assert_eq!(hold(Mode::Reserved, dec!(2), Some(1800), None), dec!(1));
        assert_eq!(hold(Mode::OnDemand, dec!(2), None, None), dec!(2));
        assert_eq!(hold(Mode::Spot, dec!(2), None, Some(dec!(1.5))), dec!(1.5));
    }
}
