//! `/v1/trials` (DESIGN §22): a workload run once per GPU shape, each an
//! on-demand order of `duration_s` at most 600 s, to find the smallest
//! slice it runs on before buying. On the simulated backend the agent
//! limits the workload's memory to its slice's GPU memory, so a workload
//! that allocates more than its slice fails there as it would on a GPU.

mod shapes;
mod store;
mod view;

use super::order_request::OrderRequest;
use super::MarketState;
use crate::auth::{Caller, Role, RouterState};
use crate::catalog::RegionChoice;
use crate::error::responses::{MalformedJson, NotABuyer};
use crate::error::{ApiError, FieldError, Json, Problem};
use crate::ids::{PathId, TrialId};
use crate::pricing::Mode;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use gpuex_api::trials::{TrialList, TrialView};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use store::{KeptRun, KeptTrial};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// How long each shape runs when the trial does not say.
pub const DEFAULT_DURATION_S: u32 = 300;
/// The most a trial's run may last (issue 40: 10 minutes each).
pub const MAX_DURATION_S: u32 = 600;
/// The most shapes one trial tries.
pub const MAX_SHAPES: usize = 8;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    MarketState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(create_trial, list_trials))
        .routes(routes!(get_trial))
}

/// A trial: what to run, and on which shapes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrialRequest {
    /// The shell command the agent runs on each shape.
    #[schema(min_length = 1, max_length = 8192, pattern = r"\S")]
    pub command: String,
    /// The OCI image a `container` launcher runs the command in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        min_length = 1,
        max_length = 512,
        pattern = "^[A-Za-z0-9][A-Za-z0-9._/:@-]*$"
    )]
    pub image: Option<String>,
    /// Environment for the command, as on an order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = super::order_request::env_schema)]
    pub env: Option<BTreeMap<String, String>>,
    /// The GPU model whose shapes are tried, e.g. `H100-SXM5-80GB`.
    #[schema(min_length = 1, max_length = 64)]
    pub gpu_model: String,
    /// 1 to 8 distinct shapes: `mig-<profile>` (a MIG profile of the model,
    /// e.g. `mig-1g.10gb`), `shared-<thousandths>` (a soft share, e.g.
    /// `shared-250`) or `whole`.
    #[schema(min_items = 1, max_items = 8)]
    pub shapes: Vec<String>,
    /// A region, or `any` (default).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub region: RegionChoice,
    /// How long each shape may run, 60 to 600 s (default 300): one that is
    /// still running then has failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 60, maximum = 600)]
    pub duration_s: Option<u32>,
}

impl TrialRequest {
    /// The on-demand order that runs one shape, checked as any order is.
    fn order(
        &self,
        model: &gpuex_wire::catalog::GpuModel,
        shape: &str,
        trial: Uuid,
    ) -> Result<OrderRequest, String> {
        let resources = shapes::resources(model, shape)?;
        Ok(OrderRequest {
            mode: Mode::OnDemand,
            resources,
            region: self.region.clone(),
            start_at: None,
            duration_s: Some(u64::from(self.duration_s.unwrap_or(DEFAULT_DURATION_S))),
            max_price: None,
            max_wait_s: None,
            time_in_force: None,
            expires_at: None,
            count: None,
            all_or_none: None,
            min_count: None,
            qos: None,
            tags: Some(BTreeMap::from([("trial".to_owned(), trial.to_string())])),
            command: Some(self.command.clone()),
            env: self.env.clone(),
            artifacts: None,
            image: self.image.clone(),
            registry_auth: None,
            network: None,
            checkpoint: None,
            on_interrupt: None,
            webhook_url: None,
            client_order_id: None,
        })
    }

    /// Every shape's order, or every field that is wrong (nothing placed).
    fn orders(&self, trial: Uuid) -> Result<Vec<(String, OrderRequest)>, ApiError> {
        let mut errors = Vec::new();
        let duration = self.duration_s.unwrap_or(DEFAULT_DURATION_S);
        if !(60..=MAX_DURATION_S).contains(&duration) {
            errors.push(FieldError::new("duration_s", "must be between 60 and 600"));
        }
        if self.shapes.is_empty() || self.shapes.len() > MAX_SHAPES {
            errors.push(FieldError::new("shapes", "1 to 8 shapes"));
        }
        let Some(model) = gpuex_wire::catalog::lookup(&self.gpu_model) else {
            errors.push(FieldError::new(
                "gpu_model",
                format!("unknown GPU model `{}`", self.gpu_model),
            ));
            return Err(ApiError::Invalid(errors));
        };
        let mut seen = BTreeSet::new();
        let mut orders = Vec::new();
        for (i, shape) in self.shapes.iter().enumerate() {
            if !seen.insert(shape.as_str()) {
                errors.push(FieldError::new(format!("shapes[{i}]"), "asked twice"));
                continue;
            }
            match self.order(model, shape, trial) {
                Ok(order) => {
                    // The order's own checks (command, image, env) name the
                    // trial's fields; every shape's order shares them, so
                    // the first shape's say it.
                    if orders.is_empty() {
                        errors.extend(order.validate());
                    }
                    orders.push((shape.clone(), order));
                }
                Err(why) => errors.push(FieldError::new(format!("shapes[{i}]"), why)),
            }
        }
        if errors.is_empty() {
            Ok(orders)
        } else {
            Err(ApiError::Invalid(errors))
        }
    }
}

/// Start a trial: one on-demand order per shape, each running the command
/// for at most `duration_s` at the on-demand price.
#[utoipa::path(post, path = "/v1/trials", tag = "trials", security(("bearer" = [])),
    request_body = TrialRequest,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first trial")),
    responses(
        (status = 201, description = "Started: each shape's run is placed, or refused with its reason", body = TrialView),
        MalformedJson,
        NotABuyer,
        (status = 422, description = "Invalid fields: an unknown `gpu_model`, a shape it has not (`shapes[i]`), `duration_s` past 600, or the order's own checks (`image`, `env.NAME`)", body = Problem, content_type = "application/problem+json"),
    ))]
async fn create_trial(
    State(state): State<MarketState>,
    caller: Caller,
    Json(req): Json<TrialRequest>,
) -> Result<(StatusCode, Json<TrialView>), ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = Uuid::now_v7();
    let orders = req.orders(id)?;
    // Checked before the trial is kept: an order refuses an unknown region
    // as a field, which would leave the trial half placed.
    if let Some(name) = req.region.named() {
        if !state.regions.exists(&state.db, name).await? {
            return Err(ApiError::field(
                "region",
                format!("unknown region `{name}`"),
            ));
        }
    }
    let mut kept = KeptTrial {
        id,
        request: req,
        runs: orders
            .iter()
            .map(|(shape, _)| KeptRun {
                shape: shape.clone(),
                order_id: None,
                refused: None,
            })
            .collect(),
        created_at: state.settings.clock.now(),
    };
    store::insert(&state.db, caller.id, &kept).await?;
    for ((_, order), run) in orders.into_iter().zip(kept.runs.iter_mut()) {
        match super::orders::submit(&state, caller.id, None, order).await {
            Ok(placed) => run.order_id = Some(placed.id),
            Err(ApiError::Refused { code, detail, .. }) => {
                run.refused = Some((code.to_owned(), detail));
            }
            Err(e) => {
                store::set_runs(&state.db, id, &kept.runs).await?;
                return Err(e);
            }
        }
    }
    store::set_runs(&state.db, id, &kept.runs).await?;
    let view = view::trial(&state.db, caller.id, kept).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// Your trials, newest first (the last 50), each as it stands.
#[utoipa::path(get, path = "/v1/trials", tag = "trials", security(("bearer" = [])),
    responses(
        (status = 200, description = "Trials", body = TrialList),
        NotABuyer,
    ))]
async fn list_trials(
    State(state): State<MarketState>,
    caller: Caller,
) -> Result<Json<TrialList>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let mut trials = Vec::new();
    for kept in store::list(&state.db, caller.id).await? {
        trials.push(view::trial(&state.db, caller.id, kept).await?);
    }
    Ok(Json(TrialList { trials }))
}

/// A trial: each shape's exit code, peak GPU memory and utilization, whether
/// it passed, and the cheapest shape that did.
#[utoipa::path(get, path = "/v1/trials/{id}", tag = "trials", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Trial id")),
    responses(
        (status = 200, description = "The trial", body = TrialView),
        NotABuyer,
        (status = 404, description = "No such trial of yours", body = Problem, content_type = "application/problem+json"),
    ))]
async fn get_trial(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<TrialId>,
) -> Result<Json<TrialView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    let kept = store::get(&state.db, caller.id, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no trial {id} of yours")))?;
    Ok(Json(view::trial(&state.db, caller.id, kept).await?))
}
