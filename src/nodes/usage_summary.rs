//! What a lease's usage records say about its workload as a whole (issue 40
//! §2: a trial reports, per GPU shape, the peak GPU memory and the median
//! utilization that the agent measured).

use crate::db::{dispatch, Db, Money};
use anyhow::Context;
use rust_decimal::Decimal;
use uuid::Uuid;

/// A lease's usage records, summed up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSummary {
    /// The most memory its workload held in any interval, MB (10⁶ bytes);
    /// `None` when no record carries it.
    pub peak_memory_mb: Option<u64>,
    /// The median of its records' mean utilization, 0–1 (the mean of the
    /// two middle ones for an even count); `None` when no record carries it.
    pub utilization_p50: Option<Decimal>,
    /// How many records it has.
    pub records: u64,
}

/// The summary of `lease_id`'s usage records as stored so far.
pub async fn lease_usage_summary(db: &Db, lease_id: Uuid) -> anyhow::Result<UsageSummary> {
    type Row = (Option<Money>, Option<i64>);
    let rows: Vec<Row> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT mean_utilization, peak_memory_mb FROM usage_records WHERE lease_id = $1",
        )
        .bind(lease_id)
        .fetch_all(pool)
        .await
    })
    .context("failed to read a lease's usage records")?;
    let records = rows.len() as u64;
    // Stored peaks went through the bounds (never negative); a negative one
    // written by hand says nothing.
    let peak_memory_mb = rows
        .iter()
        .filter_map(|(_, p)| p.and_then(|p| u64::try_from(p).ok()))
        .max();
    let utilizations: Vec<Decimal> = rows
        .into_iter()
        .filter_map(|(u, _)| u.map(|m| m.0))
        .collect();
    Ok(UsageSummary {
        peak_memory_mb,
        utilization_p50: median(utilizations),
        records,
    })
}

/// The median of `values`; `None` when there are none.
fn median(mut values: Vec<Decimal>) -> Option<Decimal> {
    values.sort_unstable();
    let mid = values.len() / 2;
    match values.len() {
        0 => None,
        n if n % 2 == 1 => values.get(mid).copied(),
        _ => {
            let (low, high) = (values.get(mid - 1)?, values.get(mid)?);
            // Both are 0–1 as the bounds require, so the sum cannot overflow.
            low.checked_add(*high).map(|s| s / Decimal::TWO)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn the_median_is_the_middle_one_or_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![]), None);
        assert_eq!(
            median(vec![dec!(0.9), dec!(0.1), dec!(0.5)]),
            Some(dec!(0.5))
        );
        assert_eq!(
            median(vec![dec!(0.9), dec!(0.1), dec!(0.5), dec!(0.2)]),
            Some(dec!(0.35))
        );
    }
}
