//! Trials (DESIGN §22): a buyer's workload run once per GPU shape at the
//! on-demand price, to find the smallest slice it runs on before buying.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Where a trial stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialState {
    /// Some shape is still waiting or running.
    Running,
    /// Every shape passed, failed or was refused.
    Done,
}

/// Where one shape's run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Its lease is being set up.
    Pending,
    Running,
    /// The workload exited 0 within `duration_s`.
    Passed,
    /// It exited otherwise, was stopped at `duration_s`, or its lease failed.
    Failed,
    /// No slice of the shape could be placed (`reason` says why).
    Refused,
}

/// One shape of a trial.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrialRun {
    /// As asked: `mig-1g.10gb`, `shared-250`, `whole`.
    pub shape: String,
    pub state: RunState,
    /// The order placed for it (absent when refused).
    pub order_id: Option<Uuid>,
    pub lease_id: Option<Uuid>,
    /// The slice it got, as the lease holds it (`mig 1g.10gb`, `shared 250`,
    /// `whole`): the market gives the cheapest adequate slice, which is the
    /// shape asked unless none of it was free.
    pub placed: Option<String>,
    pub exit_code: Option<i32>,
    /// The most GPU memory the workload held, in MB, as the agent measured
    /// it (on the simulated backend: its host memory, which stands in).
    pub peak_vram_mb: Option<u64>,
    /// The median of the slice's utilization over the run's usage records, 0–1.
    #[schema(value_type = Option<String>)]
    pub gpu_util_p50: Option<Decimal>,
    /// The lease's on-demand price.
    #[schema(value_type = Option<String>)]
    pub price_per_hour: Option<Decimal>,
    /// Why it failed or was refused (a reason code, or the lease's end reason).
    pub reason: Option<String>,
}

/// The smallest shape that passed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SmallestPassed {
    pub shape: String,
    #[schema(value_type = String)]
    pub price_per_hour: Decimal,
}

/// A trial and each shape's run.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrialView {
    pub id: Uuid,
    pub state: TrialState,
    pub gpu_model: String,
    pub command: String,
    pub image: Option<String>,
    pub duration_s: u32,
    pub runs: Vec<TrialRun>,
    /// The cheapest shape that passed, by its price per hour; absent until one has.
    pub smallest_passed: Option<SmallestPassed>,
    pub created_at: DateTime<Utc>,
}

/// A page of trials, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrialList {
    pub trials: Vec<TrialView>,
}
