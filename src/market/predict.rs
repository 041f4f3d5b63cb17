//! Duration prediction (ARCHITECTURE.md §17): how long a new lease will likely run,
//! from its buyer's ended leases, computed when the order is placed and
//! handed to the engine on the order (`OrderSpec::predicted_duration`), so
//! the engine stays pure and a restored engine keeps it.
//!
//! The basis, first that has history: ended leases of the same buyer with
//! the same (non-empty) tags; else with the same command; else every ended
//! lease of the buyer (`fallback`); else `none`. The prediction is the
//! median of the most recent [`SAMPLES`] of them: a lease's duration is from
//! its start to its end, the time it held its slice. Only leases whose
//! workload ended on its own terms count (released, expired, or the agent
//! reported it done): a preempted or failed lease says nothing of how long
//! the work takes.

use std::collections::BTreeMap;

use serde::Deserialize;
use uuid::Uuid;

use crate::db::{dispatch, Db};
use crate::engine::{DurationPrediction, PredictionBasis};

/// Ended leases a prediction takes the median of, newest first.
pub const SAMPLES: usize = 50;

/// Ended leases of the buyer read per prediction, newest first: tags and
/// commands are matched among these.
const HISTORY: i64 = 1000;

/// The part of an order's stored request the prediction reads.
#[derive(Deserialize)]
struct StoredRequest {
    #[serde(default)]
    command: Option<String>,
}

/// One ended lease of the buyer: its order's tags and command, and how long it held.
struct Ended {
    tags: BTreeMap<String, String>,
    command: Option<String>,
    seconds: i64,
}

/// The prediction for a new order of `buyer`'s with these tags and command.
pub async fn predict(
    db: &Db,
    buyer: Uuid,
    tags: &BTreeMap<String, String>,
    command: Option<&str>,
) -> anyhow::Result<DurationPrediction> {
    let rows: Vec<(String, String, i64, i64)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT o.tags_json, o.request_json, l.starts_at, l.ended_at \
             FROM leases l JOIN orders o ON o.id = l.order_id \
             WHERE l.buyer_id = $1 AND l.state = 'ended' AND l.ended_at IS NOT NULL \
             AND l.end_reason IN ('released', 'expired', 'agent_ended') \
             ORDER BY l.ended_at DESC LIMIT $2",
        )
        .bind(buyer)
        .bind(HISTORY)
        .fetch_all(pool)
        .await
    })?;
    let history: Vec<Ended> = rows
        .into_iter()
        .map(|(tags_json, request_json, starts_at, ended_at)| Ended {
            tags: serde_json::from_str(&tags_json).unwrap_or_default(),
            command: serde_json::from_str::<StoredRequest>(&request_json)
                .ok()
                .and_then(|r| r.command),
            seconds: (ended_at - starts_at).max(0),
        })
        .collect();
    Ok(from_history(&history, tags, command))
}

/// The prediction from ended leases, newest first.
fn from_history(
    history: &[Ended],
    tags: &BTreeMap<String, String>,
    command: Option<&str>,
) -> DurationPrediction {
    let matches = |basis: PredictionBasis, e: &Ended| match basis {
        PredictionBasis::Tags => !tags.is_empty() && e.tags == *tags,
        PredictionBasis::Command => command.is_some() && e.command.as_deref() == command,
        _ => true,
    };
    for basis in [
        PredictionBasis::Tags,
        PredictionBasis::Command,
        PredictionBasis::Fallback,
    ] {
        let seconds: Vec<i64> = history
            .iter()
            .filter(|e| matches(basis, e))
            .take(SAMPLES)
            .map(|e| e.seconds)
            .collect();
        if let Some(median) = median(seconds.clone()) {
            return DurationPrediction {
                seconds: Some(median),
                basis,
                samples: u32::try_from(seconds.len()).unwrap_or(u32::MAX),
            };
        }
    }
    DurationPrediction::none()
}

/// The median (the mean of the middle two for an even count), `None` when empty.
fn median(mut v: Vec<i64>) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        v[mid - 1] + (v[mid] - v[mid - 1]) / 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(tags: &[(&str, &str)], command: Option<&str>, seconds: i64) -> Ended {
        Ended {
            tags: tags
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            command: command.map(str::to_owned),
            seconds,
        }
    }

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn same_tags_come_first_then_the_same_command_then_every_lease() {
        let history = [
            ended(&[("job", "train")], Some("a"), 100),
            ended(&[("job", "train")], Some("b"), 300),
            ended(&[("job", "eval")], Some("c"), 40),
            ended(&[], Some("c"), 60),
        ];
        let p = from_history(&history, &tags(&[("job", "train")]), Some("c"));
        assert_eq!(
            (p.seconds, p.basis, p.samples),
            (Some(200), PredictionBasis::Tags, 2)
        );
        let p = from_history(&history, &tags(&[("job", "other")]), Some("c"));
        assert_eq!(
            (p.seconds, p.basis, p.samples),
            (Some(50), PredictionBasis::Command, 2)
        );
        let p = from_history(&history, &BTreeMap::new(), Some("zzz"));
        assert_eq!(
            (p.seconds, p.basis, p.samples),
            (Some(80), PredictionBasis::Fallback, 4)
        );
        assert_eq!(
            from_history(&[], &tags(&[("job", "train")]), Some("a")),
            DurationPrediction::none()
        );
    }

    #[test]
    fn empty_tags_and_no_command_match_nothing_but_the_fallback() {
        let history = [
            ended(&[], None, 10),
            ended(&[], None, 30),
            ended(&[], None, 20),
        ];
        let p = from_history(&history, &BTreeMap::new(), None);
        assert_eq!((p.seconds, p.basis), (Some(20), PredictionBasis::Fallback));
    }

    #[test]
    fn the_median_takes_only_the_most_recent_samples() {
        let mut history: Vec<Ended> = (0..SAMPLES).map(|_| ended(&[], Some("x"), 10)).collect();
        history.extend((0..SAMPLES).map(|_| ended(&[], Some("x"), 1000)));
        let p = from_history(&history, &BTreeMap::new(), Some("x"));
        assert_eq!((p.seconds, p.samples), (Some(10), SAMPLES as u32));
    }
}
