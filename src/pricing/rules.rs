//! How every price derives from the list price. Pure arithmetic on `Decimal`.

use rust_decimal::{Decimal, RoundingStrategy};
use rust_decimal_macros::dec;
use serde::Serialize;

pub use crate::engine::Mode;

pub const ON_DEMAND_FACTOR: Decimal = dec!(1.8);
pub const RESERVED_FACTOR: Decimal = dec!(0.85);
pub const POOLED_FACTOR: Decimal = dec!(1.0);
pub const SPOT_FLOOR_FACTOR: Decimal = dec!(0.5);
pub const SPOT_CAP_FACTOR: Decimal = dec!(0.7);
pub const RESALE_CAP_FACTOR: Decimal = dec!(0.9);

/// Every price derived from one list price, per unit-hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct DerivedPrices {
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub list: Decimal,
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub on_demand: Decimal,
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub reserved: Decimal,
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub pooled: Decimal,
    /// The lowest price the spot auction clears at.
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub spot_floor: Decimal,
    /// The highest price the spot auction clears at.
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub spot_cap: Decimal,
    /// The most a reseller may ask for an hour starting within the hour (0.9 × on-demand).
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub resale_cap: Decimal,
    /// The most a reseller may ask for an hour starting an hour or more ahead (0.9 × reserved).
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub resale_cap_reserved: Decimal,
}

impl DerivedPrices {
    pub fn from_list(list: Decimal) -> DerivedPrices {
        // Normalized so 1.8 × 0.05 reads 0.09, not 0.090; the value is unchanged.
        DerivedPrices {
            list: list.normalize(),
            on_demand: (list * ON_DEMAND_FACTOR).normalize(),
            reserved: (list * RESERVED_FACTOR).normalize(),
            pooled: (list * POOLED_FACTOR).normalize(),
            spot_floor: (list * SPOT_FLOOR_FACTOR).normalize(),
            spot_cap: (list * SPOT_CAP_FACTOR).normalize(),
            resale_cap: (list * ON_DEMAND_FACTOR * RESALE_CAP_FACTOR).normalize(),
            resale_cap_reserved: (list * RESERVED_FACTOR * RESALE_CAP_FACTOR).normalize(),
        }
    }

    /// The fixed price of a mode; for spot, the cap (what a bid pays at most
    /// when the clearing index is at its ceiling).
    pub fn for_mode(&self, mode: Mode) -> Decimal {
        match mode {
            Mode::OnDemand => self.on_demand,
            Mode::Reserved => self.reserved,
            Mode::Pooled => self.pooled,
            Mode::Spot => self.spot_cap,
        }
    }
}

pub use gpuex_api::MONEY_SCALE;

/// Rounds a money amount once, half-even to [`MONEY_SCALE`] decimals, and
/// always shows that many so amounts line up.
pub fn round_money(amount: Decimal) -> Decimal {
    let mut rounded =
        amount.round_dp_with_strategy(MONEY_SCALE, RoundingStrategy::MidpointNearestEven);
    rounded.rescale(MONEY_SCALE);
    rounded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_price_derives_exactly_from_the_list_price() {
        let p = DerivedPrices::from_list(dec!(2.10));
        assert_eq!(p.on_demand, dec!(3.78));
        assert_eq!(p.reserved, dec!(1.785));
        assert_eq!(p.spot_floor, dec!(1.05));
        assert_eq!(p.spot_cap, dec!(1.47));
        assert_eq!(p.resale_cap, dec!(3.402));
        assert_eq!(p.resale_cap_reserved, dec!(1.6065));
    }

    #[test]
    fn money_rounds_half_to_even_at_six_decimals() {
        assert_eq!(round_money(dec!(0.0000005)), dec!(0.000000));
        assert_eq!(round_money(dec!(0.0000015)), dec!(0.000002));
        assert_eq!(round_money(dec!(0.54)).to_string(), "0.540000");
    }
}
