//! The spot auction (ARCHITECTURE.md §3): sealed bids ranked by price index, placed
//! greedily, cleared at the highest losing index, floored and capped.
//!
//! Pure: the caller supplies the placement attempt, so the rule is tested on
//! its own and the engine only wires it to capacity.

use rust_decimal::Decimal;

use super::pricing::{SPOT_CAP, SPOT_FLOOR};
use super::types::OrderId;

/// A spot bid in the queue.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bid {
    pub order: OrderId,
    /// max_price ÷ list value per hour.
    pub index: Decimal,
    /// Acceptance sequence: earlier bids win ties.
    pub seq: u64,
}

/// What one clearing decided.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Bids that got capacity, in the order they were placed.
    pub winners: Vec<OrderId>,
    /// Bids that lost for lack of capacity, with their indices.
    pub losers: Vec<(OrderId, Decimal)>,
}

/// Ranks bids: highest index first, then earliest.
pub fn rank(bids: &mut [Bid]) {
    bids.sort_by(|a, b| b.index.cmp(&a.index).then(a.seq.cmp(&b.seq)));
}

/// Places bids greedily in rank order; `try_place` returns whether the bid fit
/// (and takes its capacity when it did). Bids that do not fit are skipped, not
/// the end of the auction.
pub fn run(bids: &mut [Bid], mut try_place: impl FnMut(&Bid) -> bool) -> Outcome {
    rank(bids);
    let mut out = Outcome::default();
    for bid in bids.iter() {
        if try_place(bid) {
            out.winners.push(bid.order);
        } else {
            out.losers.push((bid.order, bid.index));
        }
    }
    out
}

/// The clearing index from the indices of bids that lost for lack of
/// capacity: the highest, floored at 0.5 and capped at 0.7.
pub fn clearing_index(losing: impl IntoIterator<Item = Decimal>) -> Decimal {
    losing
        .into_iter()
        .max()
        .unwrap_or(SPOT_FLOOR)
        .clamp(SPOT_FLOOR, SPOT_CAP)
}

/// What a winner pays per hour: min(own index, clearing) × its list value.
pub fn winner_price(index: Decimal, clearing: Decimal, list_value: Decimal) -> Decimal {
    index.min(clearing) * list_value
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;
    use uuid::Uuid;

    fn bid(n: u128, index: Decimal, seq: u64) -> Bid {
        Bid {
            order: Uuid::from_u128(n),
            index,
            seq,
        }
    }

    #[test]
    fn bids_are_placed_by_index_then_time_skipping_those_that_do_not_fit() {
        let mut bids = vec![
            bid(1, dec!(0.6), 1),
            bid(2, dec!(0.9), 2),
            bid(3, dec!(0.6), 0),
            bid(4, dec!(0.8), 3),
        ];
        let mut capacity = 2;
        let out = run(&mut bids, |b| {
            // Bid 4 does not fit anywhere (too big); the others take one unit each.
            if b.order == Uuid::from_u128(4) || capacity == 0 {
                return false;
            }
            capacity -= 1;
            true
        });
        assert_eq!(out.winners, vec![Uuid::from_u128(2), Uuid::from_u128(3)]);
        assert_eq!(
            out.losers,
            vec![
                (Uuid::from_u128(4), dec!(0.8)),
                (Uuid::from_u128(1), dec!(0.6))
            ]
        );
    }

    #[test]
    fn the_clearing_index_is_the_highest_loser_floored_and_capped() {
        assert_eq!(clearing_index([dec!(0.6), dec!(0.55)]), dec!(0.6));
        assert_eq!(clearing_index([]), dec!(0.5));
        assert_eq!(clearing_index([dec!(0.3)]), dec!(0.5));
        assert_eq!(clearing_index([dec!(0.95)]), dec!(0.7));
    }

    #[test]
    fn winners_pay_the_lower_of_their_index_and_the_clearing_index() {
        assert_eq!(winner_price(dec!(0.9), dec!(0.6), dec!(10)), dec!(6.0));
        assert_eq!(winner_price(dec!(0.55), dec!(0.6), dec!(10)), dec!(5.50));
    }
}
