//! `/v1/agent/*`: the server side of the agent protocol (ARCHITECTURE.md §7,
//! `crates/wire/src/protocol/README.md`). Every request carries a node token; the node id
//! is the agent id.

use super::store::{self, LeaseRow, NodeStatus, Registration};
use super::usage_bounds::{self, Held};
use super::{inventory, NodesState};
use crate::auth::{Caller, Role, RouterState};
use crate::engine::placement::Slot;
use crate::engine::{Command, LeaseState};
use crate::error::responses::{InvalidFields, MalformedJson, NotANodeToken, UnknownNodeToken};
use crate::error::{ApiError, FieldError, Json, Problem};
use crate::ids::LeaseId;
use crate::market::pull_secrets::PullSecrets;
use crate::protocol::{
    AgentPlacement, Assignment, AssignmentAction, BackendKind, CheckpointPlan, HeartbeatRequest,
    HeartbeatResponse, HeldUnits, HostLimits, LeaseReport, LeaseRunState, Partition, RefusedUsage,
    RegisterRequest, RegisterResponse, UsageAck, UsageBatch,
};
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use chrono::DateTime;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    NodesState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(heartbeat))
        .routes(routes!(usage))
}

/// The node behind the agent's token, which must be an agent's.
pub(crate) async fn agent_node(
    state: &NodesState,
    caller: &Caller,
) -> Result<store::NodeRow, ApiError> {
    caller.require(&[Role::Agent])?;
    store::get(&state.db, caller.id)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("this node no longer exists".into()))
}

fn check_agent_id(caller: &Caller, agent_id: Uuid) -> Result<(), ApiError> {
    if agent_id == caller.id {
        Ok(())
    } else {
        Err(ApiError::field(
            "agent_id",
            "is not the node this token belongs to",
        ))
    }
}

/// Register the node's inventory (replacing the declared one).
///
/// A node whose GPUs changed under live leases is quarantined: cordoned until
/// its provider uncordons it; the leases on the changed GPUs end. A
/// re-inventory that changes the node's models or GPU count puts it under
/// review: cordoned until an admin accepts it (`PUT /v1/admin/nodes/{id}`).
/// The `simulated` backend is refused (403 `simulated_backend_refused`)
/// unless an admin marked the node simulated. A lost node registering again
/// comes back online.
#[utoipa::path(post, path = "/v1/agent/register", tag = "agent", operation_id = "agent_register", security(("bearer" = [])),
    request_body(content = RegisterRequest, description = "The node's inventory (crates/wire/src/protocol/README.md)"),
    responses(
        (status = 200, description = "Registered", body = RegisterResponse),
        MalformedJson,
        UnknownNodeToken,
        (status = 403, description = "Not a node token, or the `simulated` backend on a node not marked simulated (`simulated_backend_refused`)", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
    ))]
async fn register(
    State(state): State<NodesState>,
    caller: Caller,
    Json(req): Json<RegisterRequest>,
) -> Result<Json<RegisterResponse>, ApiError> {
    let node = agent_node(&state, &caller).await?;
    let too_large = req.out_of_bounds();
    if !too_large.is_empty() {
        return Err(ApiError::Invalid(
            too_large
                .into_iter()
                .map(|field| FieldError::new(field, "must be at most 1099511627776 MiB"))
                .collect(),
        ));
    }
    if req.backend == BackendKind::Simulated && !node.simulated {
        // A simulated fleet would sell GPUs that do not exist: only a node an
        // admin marked simulated (the demo, tests, load tests) may use it.
        return Err(ApiError::Refused {
            status: StatusCode::FORBIDDEN,
            code: "simulated_backend_refused",
            detail: format!(
                "backend `simulated` is refused: node {} is not marked simulated \
                 (an admin marks it with PUT /v1/admin/nodes/{{id}} {{\"simulated\": true}})",
                node.id
            ),
        });
    }
    // A re-inventory that changes what the node sells goes to a person first.
    let review = node
        .inventory_json
        .as_deref()
        .and_then(|raw| serde_json::from_str::<RegisterRequest>(raw).ok())
        .and_then(|previous| inventory::inventory_change(&previous, &req));
    let spec = inventory::registered_spec(&node.spec, &req);
    let live = store::live_leases(&state.db, node.id).await?;
    let was_lost = node.status == NodeStatus::Lost;
    let broken = if was_lost {
        Vec::new()
    } else {
        inventory::leases_broken_by(&node.spec, &spec, &live)
    };
    let quarantined = node.quarantined || !broken.is_empty();
    let cordoned = node.cordoned || quarantined || review.is_some();
    let new_status = if quarantined {
        NodeStatus::Quarantined
    } else {
        NodeStatus::Online
    };
    if let Some(reason) = &review {
        tracing::warn!(node = %node.id, %reason, "re-inventory changed the node: under review");
    }
    if !broken.is_empty() {
        tracing::warn!(node = %node.id, leases = ?broken, "GPUs changed under live leases: node quarantined");
    }
    let inventory_json = serde_json::to_string(&req).map_err(anyhow::Error::from)?;
    let now = state.settings.clock.now();
    store::register(
        &state.db,
        node.id,
        &Registration {
            spec: &spec,
            inventory_json: &inventory_json,
            status: new_status,
            cordoned,
            quarantined,
            review: review.as_deref(),
        },
        now,
    )
    .await?;
    state.cache.forget(node.id);
    if cordoned {
        // Cordon first, so nothing lands on the new inventory in between.
        let _ = state
            .market
            .command(Command::Cordon {
                node: node.id,
                cordoned: true,
            })
            .await;
    }
    state.market.command(Command::UpsertNode(spec)).await?;
    if cordoned {
        state
            .market
            .command(Command::Cordon {
                node: node.id,
                cordoned: true,
            })
            .await?;
    }
    let last_usage_seq = store::last_usage_seq(&state.db, node.id)
        .await?
        .and_then(|s| u64::try_from(s).ok());
    Ok(Json(RegisterResponse {
        agent_id: node.id,
        server_time: now,
        heartbeat_interval_s: u32::try_from(state.settings.heartbeat_interval_s).unwrap_or(5),
        node_timeout_s: u32::try_from(state.settings.node_timeout_s).unwrap_or(30),
        last_usage_seq,
        quarantined: (!broken.is_empty() || node.quarantined).then(|| {
            if broken.is_empty() {
                "the node is quarantined; its provider must uncordon it".to_owned()
            } else {
                format!(
                    "the GPUs of {} live lease(s) changed; the node is quarantined until its provider uncordons it",
                    broken.len()
                )
            }
        }),
    }))
}

/// Per-GPU metrics in; the assignments to carry out back.
#[utoipa::path(post, path = "/v1/agent/heartbeat", tag = "agent", security(("bearer" = [])),
    request_body(content = HeartbeatRequest, description = "Metrics and the leases the agent runs (crates/wire/src/protocol/README.md)"),
    responses(
        (status = 200, description = "What to change", body = HeartbeatResponse),
        MalformedJson,
        UnknownNodeToken,
        NotANodeToken,
        (status = 409, description = "Not registered, or declared lost: register again", body = Problem, content_type = "application/problem+json"),
        InvalidFields,
    ))]
async fn heartbeat(
    State(state): State<NodesState>,
    caller: Caller,
    Json(req): Json<HeartbeatRequest>,
) -> Result<Json<HeartbeatResponse>, ApiError> {
    caller.require(&[Role::Agent])?;
    let node = caller.id;
    // From memory: every beat asks, and every change to it forgets it (`cache`).
    let standing = state
        .cache
        .standing(&state.db, node)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("this node no longer exists".into()))?;
    check_agent_id(&caller, req.agent_id)?;
    if !standing.registered || standing.status == NodeStatus::Lost {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "register_again",
            detail: "this node is not registered (or was declared lost): register again".into(),
        });
    }
    let now = state.settings.clock.now();
    let metrics_json = serde_json::to_string(&req.gpus).map_err(anyhow::Error::from)?;
    if state.cluster.is_leader() {
        // Written behind, with every other node's beats (`db::heartbeats`).
        state.heartbeats.record(node, metrics_json, now);
    } else {
        // The leader's billing and watchdog read the row: a follower's
        // memory would be out of their sight.
        store::heartbeat(&state.db, node, &metrics_json, now).await?;
    }
    state.metrics.observe_heartbeat(node, &req.gpus);
    let listed: BTreeMap<Uuid, LeaseRunState> =
        req.leases.iter().map(|l| (l.lease_id, l.state)).collect();
    // The usual beat changes nothing: the leading engine's leases say so
    // without reading their rows (`market::live_leases`).
    let settled = state
        .market
        .live_leases()
        .of_node(node)
        .is_some_and(|live| nothing_to_change(&live, &listed, &req.leases));
    let assignments = if settled {
        Vec::new()
    } else {
        let live = store::live_leases(&state.db, node).await?;
        assignments(&live, &listed, &req.leases, &state.pull_secrets, now)
    };
    Ok(Json(HeartbeatResponse {
        server_time: now,
        heartbeat_interval_s: u32::try_from(state.settings.heartbeat_interval_s).unwrap_or(5),
        assignments,
    }))
}

/// What a live lease in `state` needs of an agent that runs it as
/// `on_agent` (`None`: it does not run it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    Start,
    Preempt,
}

fn needs(state: LeaseState, on_agent: Option<LeaseRunState>) -> Option<Needs> {
    match (state, on_agent) {
        (LeaseState::Provisioning | LeaseState::Running, None) => Some(Needs::Start),
        (LeaseState::Preempting, Some(LeaseRunState::Provisioning | LeaseRunState::Running)) => {
            Some(Needs::Preempt)
        }
        _ => None,
    }
}

/// Whether the agent must stop a lease it reports as `state` that is not
/// live (any more, or on this node).
fn stops(state: LeaseRunState) -> bool {
    !matches!(state, LeaseRunState::Ended | LeaseRunState::Stopping)
}

/// Whether an agent that reports `reports` (`listed` by id) has nothing to
/// change, with `live` the node's live leases and their states: what
/// [`assignments`] would answer empty for.
fn nothing_to_change(
    live: &[(Uuid, LeaseState)],
    listed: &BTreeMap<Uuid, LeaseRunState>,
    reports: &[LeaseReport],
) -> bool {
    let live_ids: BTreeSet<Uuid> = live.iter().map(|(id, _)| *id).collect();
    live.iter()
        .all(|(id, state)| needs(*state, listed.get(id).copied()).is_none())
        && reports
            .iter()
            .all(|r| live_ids.contains(&r.lease_id) || !stops(r.state))
}

/// The assignments for an agent that reports `reports` (`listed` by id),
/// with `live` the node's live leases.
fn assignments(
    live: &[LeaseRow],
    listed: &BTreeMap<Uuid, LeaseRunState>,
    reports: &[LeaseReport],
    secrets: &PullSecrets,
    now: DateTime<chrono::Utc>,
) -> Vec<Assignment> {
    let mut assignments = Vec::new();
    for lease in live {
        let action = match needs(lease.state, listed.get(&lease.id).copied()) {
            Some(Needs::Start) => start_action(lease, secrets),
            Some(Needs::Preempt) => {
                let preempt_at = lease
                    .record
                    .preempt_at
                    .and_then(|t| DateTime::from_timestamp(t, 0))
                    .unwrap_or(now);
                Some(AssignmentAction::Preempt { preempt_at })
            }
            None => None,
        };
        if let Some(action) = action {
            assignments.push(Assignment {
                lease_id: lease.id,
                action,
            });
        }
    }
    let live_ids: BTreeSet<Uuid> = live.iter().map(|l| l.id).collect();
    for report in reports {
        if !live_ids.contains(&report.lease_id) && stops(report.state) {
            assignments.push(Assignment {
                lease_id: report.lease_id,
                action: AssignmentAction::Stop,
            });
        }
    }
    assignments
}

/// The `start` for a lease: its placement, the order's command and env, its end.
fn start_action(row: &LeaseRow, secrets: &PullSecrets) -> Option<AssignmentAction> {
    let lease = &row.record;
    let first = lease.placement.gpus.first()?;
    let partition = match &first.slot {
        Slot::Whole => Partition::Whole,
        Slot::Mig { profile, start, .. } => Partition::Mig {
            profile: profile.clone(),
            start: *start,
        },
        Slot::Shared { milli, memory_mb } => Partition::Shared {
            milli: *milli,
            memory_mb: *memory_mb,
        },
    };
    let request: serde_json::Value = serde_json::from_str(&row.request_json).unwrap_or_default();
    let command = request["command"].as_str().map(str::to_owned);
    let env = request["env"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    // Validated when the order was placed; one that no longer parses (an
    // older row) runs without artifacts rather than not at all.
    let artifacts = request
        .get("artifacts")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
        .unwrap_or_default();
    let image = request["image"].as_str().map(str::to_owned);
    let network = request["network"].as_bool().unwrap_or(false);
    // Validated when the order was placed (`market::orders`).
    let checkpoint = request["checkpoint"]["every_s"]
        .as_u64()
        .and_then(|s| u32::try_from(s).ok())
        .map(|every_s| CheckpointPlan {
            path: request["checkpoint"]["path"]
                .as_str()
                .unwrap_or(crate::protocol::DEFAULT_CHECKPOINT_PATH)
                .to_owned(),
            every_s,
            restore: request["on_interrupt"] == "resume",
        });
    // A row that does not open (the secrets key was changed) pulls without
    // credentials: a private image then fails to pull, and says why.
    let registry_auth = row.pull_secret.as_deref().and_then(|sealed| {
        let opened = secrets.open(row.order_id, sealed);
        if opened.is_none() {
            tracing::warn!(lease_id = %row.id, "the order's registry credentials do not open");
        }
        opened
    });
    let units = lease.placement.units;
    Some(AssignmentAction::Start {
        placement: AgentPlacement {
            gpus: lease
                .placement
                .gpus
                .iter()
                .map(|g| u32::from(g.index))
                .collect(),
            partition,
        },
        command,
        env,
        end_at: row.ends_at.and_then(|t| DateTime::from_timestamp(t, 0)),
        held: Some(HeldUnits {
            tflops: units.tflops_h,
            vram_gb: units.vram_h * Decimal::from(crate::catalog::UNIT_VRAM_GB),
        }),
        artifacts,
        image,
        network,
        limits: Some(HostLimits {
            cpu_milli: lease.placement.cpu_milli,
            memory_mib: lease.placement.memory_mib,
        }),
        checkpoint,
        registry_auth,
    })
}

/// A lease of this node, or 404.
pub(crate) async fn node_lease(
    state: &NodesState,
    node: Uuid,
    id: LeaseId,
) -> Result<LeaseRow, ApiError> {
    store::lease(&state.db, id.uuid())
        .await?
        .filter(|l| l.node_id == node)
        .ok_or_else(|| ApiError::NotFound(format!("no lease {id} on this node")))
}

/// A usage batch, applied once per `(agent_id, seq)`; a duplicate is acknowledged again.
#[utoipa::path(post, path = "/v1/agent/usage", tag = "agent", operation_id = "agent_usage", security(("bearer" = [])),
    request_body(content = UsageBatch, description = "Metered usage, numbered (crates/wire/src/protocol/README.md)"),
    responses(
        (status = 200, description = "Acknowledged; `duplicate` when applied before. Records beyond what their lease holds times their interval are refused on their own (named in `refused`; the rest is stored) and the node is marked for review", body = UsageAck),
        MalformedJson,
        UnknownNodeToken,
        NotANodeToken,
        (status = 422, description = "Invalid fields, each named", body = Problem, content_type = "application/problem+json"),
    ))]
async fn usage(
    State(state): State<NodesState>,
    caller: Caller,
    Json(batch): Json<UsageBatch>,
) -> Result<Json<UsageAck>, ApiError> {
    let node = agent_node(&state, &caller).await?;
    check_agent_id(&caller, batch.agent_id)?;
    let mut errors = Vec::new();
    if batch.seq == 0 || i64::try_from(batch.seq).is_err() {
        errors.push(FieldError::new("seq", "must be a positive integer"));
    }
    let ids: Vec<Uuid> = batch
        .records
        .iter()
        .map(|r| r.lease_id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ours = store::leases_on_node(&state.db, node.id, &ids).await?;
    let mut held = BTreeMap::new();
    for id in &ours {
        if let Some(row) = store::lease(&state.db, *id).await? {
            held.insert(*id, Held::of(&row));
        }
    }
    for (i, r) in batch.records.iter().enumerate() {
        let at = |f: &str| format!("records[{i}].{f}");
        if !ours.contains(&r.lease_id) {
            errors.push(FieldError::new(
                at("lease_id"),
                "no such lease on this node",
            ));
        }
        if r.interval_end < r.interval_start {
            errors.push(FieldError::new(
                at("interval_end"),
                "must not be before interval_start",
            ));
        }
        if r.tflops_s < Decimal::ZERO {
            errors.push(FieldError::new(at("tflops_s"), "must not be negative"));
        }
        if r.vram_gb_s < Decimal::ZERO {
            errors.push(FieldError::new(at("vram_gb_s"), "must not be negative"));
        }
        if r.mean_utilization
            .is_some_and(|u| u < Decimal::ZERO || u > Decimal::ONE)
        {
            errors.push(FieldError::new(
                at("mean_utilization"),
                "must be between 0 and 1",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    // Out of bounds is judged per record, not per batch: the agent drops a
    // batch answered 422, which would lose the node's honest records too.
    let mut refused = Vec::new();
    for (i, r) in batch.records.iter().enumerate() {
        let lease_held = held.get(&r.lease_id).copied().flatten();
        for (field, reason) in usage_bounds::check(i, r, lease_held) {
            refused.push(RefusedUsage {
                index: i,
                lease_id: r.lease_id,
                field,
                reason,
            });
        }
    }
    let refused_at: BTreeSet<usize> = refused.iter().map(|r| r.index).collect();
    let review = refused.first().map(|r| {
        format!(
            "usage out of bounds for lease {} ({}: {})",
            r.lease_id, r.field, r.reason
        )
    });
    if let Some(reason) = &review {
        tracing::warn!(node = %node.id, seq = batch.seq, refused = refused.len(), "{reason}; node marked for review");
    }
    let applied = store::apply_usage(
        &state.db,
        &batch,
        &refused_at,
        review.as_deref(),
        state.settings.clock.now(),
    )
    .await?;
    Ok(Json(UsageAck {
        seq: batch.seq,
        duplicate: !applied,
        refused,
    }))
}
