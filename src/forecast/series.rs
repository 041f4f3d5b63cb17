//! Each market's primary demand per minute, from the orders table: the
//! standard TFLOPS on-demand and reserved orders asked for, by the minute they
//! arrived, in the (model, region) they were placed in, or named when they
//! found no capacity. Orders for any model or region that were not placed
//! belong to no one market and are left out.

use crate::catalog::RegionChoice;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::prelude::ToPrimitive;
use serde::Deserialize;

use crate::db::leases::LeaseRecord;
use crate::db::{dispatch, Db};
use crate::engine::placement::Slot;

/// A market: (GPU model, region).
pub type Market = (String, String);

/// The part of an order's request the series reads.
#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    region: RegionChoice,
    resources: RequestResources,
}

#[derive(Deserialize)]
struct RequestResources {
    /// A number or a decimal string, as the API takes it.
    tflops: Option<serde_json::Value>,
    gpu_model: Option<String>,
}

type OrderRow = (
    DateTime<Utc>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A market's primary demand over the history read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MarketDemand {
    /// TFLOPS asked per minute, oldest first.
    pub by_minute: Vec<f64>,
    /// TFLOPS asked in all.
    pub tflops: f64,
    /// MIG instances placed, by profile.
    pub mig_instances: BTreeMap<String, u32>,
}

impl MarketDemand {
    /// The MIG instances of each profile that `expected_tflops` of demand
    /// like the history's would take: each profile keeps its share of the
    /// orders per TFLOPS asked. Rounded to the nearest instance.
    pub fn mig_instances_for(&self, expected_tflops: f64) -> BTreeMap<String, u32> {
        if self.tflops <= 0.0 || expected_tflops <= 0.0 {
            return BTreeMap::new();
        }
        self.mig_instances
            .iter()
            .filter_map(|(profile, &n)| {
                let expected = (f64::from(n) * expected_tflops / self.tflops).round();
                // Bounded by the 7 instances a GPU holds times a generous fleet.
                let instances = expected.clamp(0.0, 1.0e6) as u32;
                (instances > 0).then(|| (profile.clone(), instances))
            })
            .collect()
    }
}

/// `minutes` values per market, oldest first, the last for the minute
/// before `until`'s.
pub async fn demand_by_minute(
    db: &Db,
    until: DateTime<Utc>,
    minutes: u32,
) -> anyhow::Result<BTreeMap<Market, MarketDemand>> {
    let end = until.timestamp().div_euclid(60) * 60;
    let start = end - i64::from(minutes) * 60;
    let since = DateTime::from_timestamp(start, 0).unwrap_or(until);
    let before = DateTime::from_timestamp(end, 0).unwrap_or(until);
    let rows: Vec<OrderRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT o.created_at, o.request_json, l.gpu_model, l.region, l.record_json \
             FROM orders o LEFT JOIN leases l ON l.id = o.lease_id \
             WHERE o.created_at >= $1 AND o.created_at < $2 AND o.mode IN ('on_demand', 'reserved')",
        )
        .bind(since)
        .bind(before)
        .fetch_all(pool)
        .await
    })?;
    let len = minutes as usize;
    let mut series: BTreeMap<Market, MarketDemand> = BTreeMap::new();
    for (created_at, request_json, lease_model, lease_region, lease_json) in rows {
        let Ok(request) = serde_json::from_str::<Request>(&request_json) else {
            continue;
        };
        let lease = lease_json.as_deref().map(LeaseRecord::parse).transpose()?;
        let placed = lease
            .as_ref()
            .and_then(|l| l.placement.asked.tflops_h.to_f64());
        let market = match (lease_model, lease_region) {
            (Some(model), Some(region)) => (model, region),
            _ => match (request.resources.gpu_model, request.region) {
                (Some(model), RegionChoice::Named(region)) => (model, region),
                _ => continue,
            },
        };
        // An unplaced order's TFLOPS are at its own precision; FP16, the
        // standard, is what nearly every order asks in.
        let asked = request.resources.tflops.and_then(|t| match t {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        });
        let Some(tflops) = placed.or(asked) else {
            continue;
        };
        let minute = (created_at.timestamp() - start).div_euclid(60);
        let Ok(at) = usize::try_from(minute) else {
            continue;
        };
        if at >= len {
            continue;
        }
        let demand = series.entry(market).or_insert_with(|| MarketDemand {
            by_minute: vec![0.0; len],
            ..MarketDemand::default()
        });
        demand.by_minute[at] += tflops;
        demand.tflops += tflops;
        for gpu in lease.iter().flat_map(|l| &l.placement.gpus) {
            if let Slot::Mig { profile, .. } = &gpu.slot {
                *demand.mig_instances.entry(profile.clone()).or_insert(0) += 1;
            }
        }
    }
    Ok(series)
}
