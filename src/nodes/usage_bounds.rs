//! Bounds on what an agent reports as used (ARCHITECTURE.md §19 "Bounds on what nodes
//! report"): a record's `tflops_s` and `vram_gb_s` are at most what its lease
//! holds times the record's interval. The agent meters exactly that (held ×
//! seconds, to the millisecond), so anything beyond is a faulty or lying
//! node; it is refused on its own, and the node is marked for review. Its
//! `peak_memory_mb` is at most the GPU memory the lease holds.

use super::store::LeaseRow;
use crate::protocol::UsageRecord;
use rust_decimal::Decimal;

/// What a lease holds, as the agent is told in its `start` (`HeldUnits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub tflops: Decimal,
    pub vram_gb: Decimal,
}

impl Held {
    /// `None` when the held VRAM in GB overflows: its records are then
    /// refused, since nothing bounds them.
    pub fn of(row: &LeaseRow) -> Option<Held> {
        let units = row.record.placement.units;
        Some(Held {
            tflops: units.tflops_h,
            vram_gb: units
                .vram_h
                .checked_mul(Decimal::from(crate::catalog::UNIT_VRAM_GB))?,
        })
    }
}

/// The relative tolerance: 1 %, for an agent's clock that steps or slews
/// within an interval.
const TOLERANCE_PERCENT: i64 = 1;
/// Plus one second of the held units, for intervals so short that the
/// relative tolerance rounds to nothing.
const TOLERANCE_S: i64 = 1;

/// The most a record over `seconds` may show of `held` units.
pub fn most(held: Decimal, seconds: Decimal) -> Option<Decimal> {
    let slack = seconds.checked_mul(Decimal::new(TOLERANCE_PERCENT, 2))?;
    let allowed_s = seconds
        .checked_add(slack)?
        .checked_add(Decimal::from(TOLERANCE_S))?;
    held.checked_mul(allowed_s)
}

/// MB (10⁶ bytes) in one GB of held GPU memory. The catalog's sizes are the
/// vendors', which are binary: an "80 GB" H100 has 80 GiB (81 559 MiB of it
/// usable, 85.5 GB), so a process may hold more than 80 000 MB of it.
fn mb_per_held_gb() -> Decimal {
    Decimal::new(1_073_741_824, 6)
}

/// The most a record's `peak_memory_mb` may be for `held_vram_gb`.
pub fn most_memory_mb(held_vram_gb: Decimal) -> Option<Decimal> {
    let mb = held_vram_gb.checked_mul(mb_per_held_gb())?;
    mb.checked_add(mb.checked_mul(Decimal::new(TOLERANCE_PERCENT, 2))?)
}

/// The record's interval in seconds, to the millisecond (what the agent meters).
fn interval_s(r: &UsageRecord) -> Decimal {
    Decimal::new((r.interval_end - r.interval_start).num_milliseconds(), 3)
}

/// `(field, reason)` for each figure of record `index` beyond its bound;
/// empty when the record is within bounds. `held` is `None` when the lease's
/// holding could not be read.
pub fn check(index: usize, r: &UsageRecord, held: Option<Held>) -> Vec<(String, String)> {
    let at = |f: &str| format!("records[{index}].{f}");
    let Some(held) = held else {
        return vec![(
            at("lease_id"),
            "the lease's held units could not be read, so no usage of it can be checked".into(),
        )];
    };
    let seconds = interval_s(r);
    let mut out = Vec::new();
    for (field, value, held, unit) in [
        ("tflops_s", r.tflops_s, held.tflops, "TFLOPS"),
        ("vram_gb_s", r.vram_gb_s, held.vram_gb, "GB of GPU memory"),
    ] {
        match most(held, seconds) {
            Some(most) if value <= most => {}
            most => out.push((
                at(field),
                format!(
                    "must be at most {}: the lease holds {} {unit} for {seconds} s \
                     (with {TOLERANCE_PERCENT} % and {TOLERANCE_S} s of tolerance)",
                    most.map_or_else(
                        || "the held units times the interval".into(),
                        |m| { m.normalize().to_string() }
                    ),
                    held.normalize(),
                ),
            )),
        }
    }
    if let Some(peak) = r.peak_memory_mb {
        match most_memory_mb(held.vram_gb) {
            Some(most) if Decimal::from(peak) <= most => {}
            most => out.push((
                at("peak_memory_mb"),
                format!(
                    "must be at most {} MB: the lease holds {} GB of GPU memory \
                     (GiB as GPUs count it, with {TOLERANCE_PERCENT} % of tolerance)",
                    most.map_or_else(|| "its held memory".into(), |m| m.floor().to_string()),
                    held.vram_gb.normalize(),
                ),
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use rust_decimal_macros::dec;
    use uuid::Uuid;

    fn record(tflops_s: Decimal, millis: i64) -> UsageRecord {
        let start = Utc.with_ymd_and_hms(2026, 11, 30, 5, 0, 0).unwrap();
        UsageRecord {
            lease_id: Uuid::nil(),
            interval_start: start,
            interval_end: start + chrono::Duration::milliseconds(millis),
            tflops_s,
            vram_gb_s: dec!(0),
            mean_utilization: None,
            peak_memory_mb: None,
        }
    }

    const HELD: Held = Held {
        tflops: dec!(424),
        vram_gb: dec!(40),
    };

    #[test]
    fn what_the_agent_meters_is_within_bounds() {
        // held × seconds, exactly as node-agent/src/agent/metering.rs forms it.
        assert!(check(0, &record(dec!(424) * dec!(10.005), 10_005), Some(HELD)).is_empty());
        assert!(check(0, &record(dec!(0), 0), Some(HELD)).is_empty());
    }

    #[test]
    fn a_figure_beyond_the_tolerance_is_refused_naming_its_field() {
        // 424 × (10.005 × 1.01 + 1) = 4708.5412
        let most = most(dec!(424), dec!(10.005)).unwrap();
        assert_eq!(most, dec!(4708.5412));
        assert!(check(3, &record(most, 10_005), Some(HELD)).is_empty());
        let refused = check(3, &record(most + dec!(0.001), 10_005), Some(HELD));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].0, "records[3].tflops_s");
        assert_eq!(
            refused[0].1,
            "must be at most 4708.5412: the lease holds 424 TFLOPS for 10.005 s \
             (with 1 % and 1 s of tolerance)"
        );
        let huge = check(0, &record(Decimal::MAX, 10_005), Some(HELD));
        assert_eq!(huge.len(), 1);
    }

    #[test]
    fn a_peak_beyond_the_leases_gpu_memory_is_refused_and_a_full_gpus_is_not() {
        // 40 GB (GiB) held: 42 949.67296 MB, + 1 % = 43 379.1696992.
        let mut r = record(dec!(0), 10_005);
        r.peak_memory_mb = Some(43_379);
        assert!(check(0, &r, Some(HELD)).is_empty());
        r.peak_memory_mb = Some(43_380);
        let refused = check(0, &r, Some(HELD));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].0, "records[0].peak_memory_mb");
        assert!(
            refused[0].1.starts_with("must be at most 43379 MB"),
            "{}",
            refused[0].1
        );
        r.peak_memory_mb = Some(u64::MAX);
        assert_eq!(check(0, &r, Some(HELD)).len(), 1);
        // A whole H100 with nearly all of its 81 559 MiB in use.
        let h100 = Held {
            tflops: dec!(989.43),
            vram_gb: dec!(80),
        };
        r.peak_memory_mb = Some(85_000);
        assert!(check(0, &r, Some(h100)).is_empty());
    }

    #[test]
    fn a_lease_that_cannot_be_read_bounds_nothing() {
        assert_eq!(
            check(0, &record(dec!(1), 1000), None)[0].0,
            "records[0].lease_id"
        );
    }
}
