//! The roll-up of spot clearings into fixed intervals: pure, so the rule is
//! tested on its own and the market task only keeps the current buckets.

use crate::engine::placement::{UnitPrices, Units};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The length of one history bucket. Buckets start on whole UTC minutes,
/// hours and days.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
pub enum Interval {
    #[serde(rename = "1m")]
    Minute,
    #[serde(rename = "1h")]
    Hour,
    #[serde(rename = "1d")]
    Day,
}

impl Interval {
    /// Every interval: each clearing is rolled into one bucket of each.
    pub const ALL: [Interval; 3] = [Interval::Minute, Interval::Hour, Interval::Day];

    pub fn seconds(self) -> i64 {
        match self {
            Interval::Minute => 60,
            Interval::Hour => 3600,
            Interval::Day => 86_400,
        }
    }

    /// The start of the bucket holding `ts` (engine seconds).
    pub fn start_of(self, ts: i64) -> i64 {
        ts.div_euclid(self.seconds()) * self.seconds()
    }

    /// The name stored and shown: `1m`, `1h`, `1d`.
    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Minute => "1m",
            Interval::Hour => "1h",
            Interval::Day => "1d",
        }
    }
}

/// One market's result at one clearing, as the engine reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clearing {
    pub gpu_model: String,
    pub region: String,
    pub clearing_index: Decimal,
    pub unit_prices: UnitPrices,
    pub won: Units,
    pub at: i64,
}

/// Open, high, low and close of one figure over a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Ohlc {
    #[schema(value_type = String)]
    pub open: Decimal,
    #[schema(value_type = String)]
    pub high: Decimal,
    #[schema(value_type = String)]
    pub low: Decimal,
    #[schema(value_type = String)]
    pub close: Decimal,
}

impl Ohlc {
    /// A bucket's first value.
    pub fn first(x: Decimal) -> Ohlc {
        Ohlc {
            open: x,
            high: x,
            low: x,
            close: x,
        }
    }

    /// The figure after one more value.
    pub fn then(self, x: Decimal) -> Ohlc {
        Ohlc {
            open: self.open,
            high: self.high.max(x),
            low: self.low.min(x),
            close: x,
        }
    }
}

/// One interval of one market: the clearing index, the unit prices and the
/// units won by every clearing that fell in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Engine seconds at which the interval starts.
    pub start: i64,
    pub index: Ohlc,
    pub tflops_h: Ohlc,
    pub vram_h: Ohlc,
    pub won: Units,
    /// Clearings rolled in; one on a quiet tick that changed nothing
    /// (`MarketHistory::absorbs`) is not rolled, so this is a lower bound
    /// and not shown.
    pub auctions: i64,
}

impl Bucket {
    /// A bucket opened by `c`.
    pub fn opened(start: i64, c: &Clearing) -> Bucket {
        Bucket {
            start,
            index: Ohlc::first(c.clearing_index),
            tflops_h: Ohlc::first(c.unit_prices.tflops_h),
            vram_h: Ohlc::first(c.unit_prices.vram_h),
            won: c.won,
            auctions: 1,
        }
    }

    /// The bucket after `c`, one more clearing in the same interval. Units
    /// are bounded by the fleet; a sum past `Decimal`'s range saturates
    /// rather than fail the market's batch.
    pub fn then(self, c: &Clearing) -> Bucket {
        let add = |a: Decimal, b: Decimal| a.checked_add(b).unwrap_or(Decimal::MAX);
        Bucket {
            start: self.start,
            index: self.index.then(c.clearing_index),
            tflops_h: self.tflops_h.then(c.unit_prices.tflops_h),
            vram_h: self.vram_h.then(c.unit_prices.vram_h),
            won: Units {
                tflops_h: add(self.won.tflops_h, c.won.tflops_h),
                vram_h: add(self.won.vram_h, c.won.vram_h),
            },
            auctions: self.auctions.saturating_add(1),
        }
    }
}

/// The `interval` bucket after clearing `c`, given the market's current
/// one: the same interval rolls on, a later one opens afresh. A clearing
/// stamped before the current bucket (the wall clock stepped back) counts
/// in the current one, so a stored bucket is never reopened.
pub fn roll(current: Option<Bucket>, interval: Interval, c: &Clearing) -> Bucket {
    let start = interval.start_of(c.at);
    match current {
        Some(b) if b.start >= start => b.then(c),
        _ => Bucket::opened(start, c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn clearing(at: i64, index: Decimal, won_tflops: Decimal) -> Clearing {
        Clearing {
            gpu_model: "A100-SXM4-80GB".into(),
            region: "eu-west".into(),
            clearing_index: index,
            unit_prices: UnitPrices {
                tflops_h: index * dec!(0.01),
                vram_h: index * dec!(0.1),
            },
            won: Units {
                tflops_h: won_tflops,
                vram_h: won_tflops * dec!(2),
            },
            at,
        }
    }

    /// Rolls `clearings` one by one, as the market task does.
    fn rolled(interval: Interval, clearings: &[Clearing]) -> Vec<Bucket> {
        let mut done: Vec<Bucket> = Vec::new();
        let mut current = None;
        for c in clearings {
            let next = roll(current, interval, c);
            if let Some(prev) = current.filter(|p: &Bucket| p.start != next.start) {
                done.push(prev);
            }
            current = Some(next);
        }
        done.extend(current);
        done
    }

    #[test]
    fn buckets_start_on_whole_minutes_hours_and_days() {
        let ts = 1_700_000_123;
        assert_eq!(Interval::Minute.start_of(ts), 1_700_000_100);
        assert_eq!(Interval::Hour.start_of(ts), 1_699_999_200);
        assert_eq!(Interval::Day.start_of(ts), 1_699_920_000);
        assert_eq!(Interval::Minute.start_of(-1), -60);
    }

    #[test]
    fn a_bucket_keeps_the_first_the_extremes_and_the_last_and_adds_the_volume() {
        let t = 1_700_000_100;
        let bucket = rolled(
            Interval::Minute,
            &[
                clearing(t, dec!(0.6), dec!(10)),
                clearing(t + 10, dec!(0.7), dec!(0)),
                clearing(t + 20, dec!(0.5), dec!(5)),
                clearing(t + 30, dec!(0.55), dec!(1)),
            ],
        );
        assert_eq!(bucket.len(), 1);
        let b = bucket[0];
        assert_eq!(
            b.index,
            Ohlc {
                open: dec!(0.6),
                high: dec!(0.7),
                low: dec!(0.5),
                close: dec!(0.55)
            }
        );
        assert_eq!(b.tflops_h.high, dec!(0.007));
        assert_eq!(b.vram_h.low, dec!(0.05));
        assert_eq!(b.won.tflops_h, dec!(16));
        assert_eq!(b.won.vram_h, dec!(32));
        assert_eq!(b.auctions, 4);
    }

    #[test]
    fn a_later_interval_opens_a_new_bucket_and_coarser_intervals_agree_with_finer_ones() {
        let t = 1_700_000_100;
        let clearings: Vec<Clearing> = (0..30)
            .map(|i| {
                let index = dec!(0.5) + Decimal::from(i % 7) * dec!(0.03);
                clearing(t + i * 25, index, Decimal::from(i % 3))
            })
            .collect();
        let minutes = rolled(Interval::Minute, &clearings);
        let hours = rolled(Interval::Hour, &clearings);
        assert!(minutes.len() > 1);
        assert!(minutes.windows(2).all(|w| w[0].start < w[1].start));
        let total = |bs: &[Bucket]| bs.iter().map(|b| b.won.tflops_h).sum::<Decimal>();
        assert_eq!(total(&minutes), total(&hours));
        for h in &hours {
            let inside: Vec<&Bucket> = minutes
                .iter()
                .filter(|m| Interval::Hour.start_of(m.start) == h.start)
                .collect();
            assert_eq!(h.index.open, inside[0].index.open);
            assert_eq!(h.index.close, inside[inside.len() - 1].index.close);
            assert_eq!(
                h.index.high,
                inside.iter().map(|m| m.index.high).max().unwrap()
            );
            assert_eq!(
                h.index.low,
                inside.iter().map(|m| m.index.low).min().unwrap()
            );
            assert_eq!(h.auctions, inside.iter().map(|m| m.auctions).sum::<i64>());
        }
        for b in minutes.iter().chain(&hours) {
            for o in [b.index, b.tflops_h, b.vram_h] {
                assert!(o.low <= o.open && o.open <= o.high);
                assert!(o.low <= o.close && o.close <= o.high);
            }
        }
    }

    #[test]
    fn a_clearing_stamped_before_the_current_bucket_counts_in_it() {
        let t = 1_700_000_100;
        let b = roll(
            None,
            Interval::Minute,
            &clearing(t + 60, dec!(0.6), dec!(1)),
        );
        let after = roll(
            Some(b),
            Interval::Minute,
            &clearing(t + 59, dec!(0.5), dec!(1)),
        );
        assert_eq!(after.start, b.start);
        assert_eq!(after.index.low, dec!(0.5));
        assert_eq!(after.auctions, 2);
    }
}
