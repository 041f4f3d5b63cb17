//! A trial as the API shows it: each shape's run read from its order, its
//! lease and the usage the agent reported for it.

use super::store::{KeptRun, KeptTrial};
use crate::db::Db;
use crate::error::ApiError;
use crate::market::views;
use gpuex_api::market::{LeaseState, LeaseView, OrderState};
use gpuex_api::trials::{RunState, SmallestPassed, TrialRun, TrialState, TrialView};
use uuid::Uuid;

/// The end reason of a workload that exited by itself.
const EXITED: &str = "agent_ended";

/// `trial` as it stands now.
pub async fn trial(db: &Db, buyer: Uuid, trial: KeptTrial) -> Result<TrialView, ApiError> {
    let mut runs = Vec::with_capacity(trial.runs.len());
    for kept in &trial.runs {
        runs.push(run(db, buyer, kept).await?);
    }
    let done = runs.iter().all(|r| {
        matches!(
            r.state,
            RunState::Passed | RunState::Failed | RunState::Refused
        )
    });
    let smallest_passed = runs
        .iter()
        .filter(|r| r.state == RunState::Passed)
        .filter_map(|r| Some((r.price_per_hour?, &r.shape)))
        .min_by_key(|(price, _)| *price)
        .map(|(price_per_hour, shape)| SmallestPassed {
            shape: shape.clone(),
            price_per_hour,
        });
    Ok(TrialView {
        id: trial.id,
        state: if done {
            TrialState::Done
        } else {
            TrialState::Running
        },
        gpu_model: trial.request.gpu_model,
        command: trial.request.command,
        image: trial.request.image,
        duration_s: trial
            .request
            .duration_s
            .unwrap_or(super::DEFAULT_DURATION_S),
        runs,
        smallest_passed,
        created_at: trial.created_at,
    })
}

fn empty(shape: &str, state: RunState) -> TrialRun {
    TrialRun {
        shape: shape.to_owned(),
        state,
        order_id: None,
        lease_id: None,
        placed: None,
        exit_code: None,
        peak_vram_mb: None,
        gpu_util_p50: None,
        price_per_hour: None,
        reason: None,
    }
}

async fn run(db: &Db, buyer: Uuid, kept: &KeptRun) -> Result<TrialRun, ApiError> {
    let Some(order_id) = kept.order_id else {
        let mut r = empty(&kept.shape, RunState::Refused);
        r.reason = Some(
            kept.refused
                .as_ref()
                .map_or_else(|| "not_placed".to_owned(), |(code, _)| code.clone()),
        );
        return Ok(r);
    };
    let order = views::order(db, buyer, order_id).await?;
    let mut r = empty(&kept.shape, RunState::Pending);
    r.order_id = Some(order_id);
    if matches!(
        order.state,
        OrderState::Rejected | OrderState::Expired | OrderState::Cancelled
    ) {
        r.state = RunState::Refused;
        r.reason = Some(
            order
                .reject_reason
                .unwrap_or_else(|| order.state.to_string()),
        );
        return Ok(r);
    }
    let Some(lease_id) = order.lease_ids.first().copied().or(order.lease_id) else {
        return Ok(r);
    };
    let lease = views::lease(db, buyer, lease_id).await?;
    let usage = crate::nodes::lease_usage_summary(db, lease_id)
        .await
        .map_err(ApiError::Internal)?;
    r.lease_id = Some(lease_id);
    r.placed = placed(&lease);
    r.exit_code = lease.exit_code;
    r.price_per_hour = Some(lease.price_per_hour);
    r.peak_vram_mb = usage.peak_memory_mb;
    r.gpu_util_p50 = usage.utilization_p50;
    (r.state, r.reason) = outcome(&lease);
    Ok(r)
}

/// Passed (exited 0 by itself), failed and why, or still under way.
fn outcome(lease: &LeaseView) -> (RunState, Option<String>) {
    match lease.state {
        LeaseState::Pending | LeaseState::Provisioning => (RunState::Pending, None),
        LeaseState::Running | LeaseState::Preempting => (RunState::Running, None),
        LeaseState::Ended | LeaseState::Failed => {
            let reason = lease.end_reason.clone();
            match (lease.exit_code, reason.as_deref()) {
                (Some(0), Some(EXITED)) => (RunState::Passed, None),
                (Some(code), Some(EXITED)) => (RunState::Failed, Some(format!("exit_code {code}"))),
                (_, Some("expired")) => (
                    RunState::Failed,
                    Some("still running at duration_s".to_owned()),
                ),
                (_, _) => (
                    RunState::Failed,
                    lease
                        .failure
                        .clone()
                        .or(reason)
                        .or(Some("ended".to_owned())),
                ),
            }
        }
    }
}

/// The slice a lease holds, in the shapes' words: `mig 1g.10gb`,
/// `shared 250`, `whole` (from its first GPU; a trial asks for one).
fn placed(lease: &LeaseView) -> Option<String> {
    let slot = lease.placement.get("gpus")?.get(0)?.get("slot")?;
    match slot.get("kind")?.as_str()? {
        "whole" => Some("whole".to_owned()),
        "mig" => Some(format!("mig {}", slot.get("profile")?.as_str()?)),
        "shared" => Some(format!("shared {}", slot.get("milli")?)),
        _ => None,
    }
}
