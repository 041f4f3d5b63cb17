//! What `/v1/nodes` shows: a node's summary, and its GPUs with the slices
//! live leases hold and the latest heartbeat's metrics.

use super::store::{LeaseRow, NodeRow};
use crate::db::heartbeats::Heartbeats;
use crate::engine::placement::{PartitionMode, Slot};
use crate::engine::LeaseState;
use crate::protocol::{GpuMetrics, RegisterRequest};
pub use gpuex_api::nodes::NodeSummary;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// How a GPU is sold, and how a slice of it is cut.
#[derive(ToSchema)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
pub enum GpuMode {
    Mig,
    Shared,
    Whole,
}

impl From<&NodeRow> for NodeSummary {
    fn from(n: &NodeRow) -> Self {
        NodeSummary {
            id: n.id,
            provider_id: n.provider_id,
            name: n.name.clone(),
            region: n.region.clone(),
            zone: n.spec.zone.clone(),
            status: n.status,
            cordoned: n.cordoned,
            quarantined: n.quarantined,
            simulated: n.simulated,
            under_review: n.under_review,
            review_reason: n.review_reason.clone(),
            gpu_count: n.spec.gpus.len(),
            hostname: registration(n).map(|r| r.hostname),
            last_heartbeat_at: n.last_heartbeat_at,
            registered_at: n.registered_at,
            created_at: n.created_at,
        }
    }
}

/// Shows `node`'s latest beat where it is not written yet (the leader
/// writes beats behind, `db::heartbeats`).
pub(super) fn latest_beat(node: &mut NodeRow, heartbeats: &Heartbeats) {
    if let Some(beat) = heartbeats.latest(node.id) {
        if node
            .last_heartbeat_at
            .is_none_or(|written| written <= beat.at)
        {
            node.last_heartbeat_at = Some(beat.at);
            node.metrics_json = Some(beat.metrics_json);
        }
    }
}

fn registration(n: &NodeRow) -> Option<RegisterRequest> {
    serde_json::from_str(n.inventory_json.as_deref()?).ok()
}

/// A node with its GPUs.
#[derive(Debug, Serialize, ToSchema)]
pub struct NodeDetail {
    #[serde(flatten)]
    pub node: NodeSummary,
    /// Host CPU (milli-CPU) shared out to leases with the GPUs.
    pub cpu_milli: u64,
    /// Host memory (MiB).
    pub memory_mib: u64,
    /// The agent's version and backend, once registered.
    pub agent_version: Option<String>,
    pub backend: Option<String>,
    pub gpus: Vec<GpuView>,
}

/// One GPU: how it is sold, what its agent reported, and who holds which slice.
#[derive(Debug, Serialize, ToSchema)]
pub struct GpuView {
    pub index: u8,
    pub model: String,
    /// `mig`, `shared` or `whole`.
    #[schema(value_type = GpuMode)]
    pub mode: String,
    pub nvlink: Vec<u8>,
    pub uuid: Option<String>,
    pub memory_mib: Option<u64>,
    pub driver_version: Option<String>,
    /// Milli-GPU of compute held by live leases (1000 = the whole GPU).
    pub held_milli: u32,
    pub slices: Vec<SliceView>,
    /// The latest heartbeat's sample: DCGM fields, MIG instances, processes.
    #[schema(value_type = Option<Object>)]
    pub metrics: Option<serde_json::Value>,
}

/// A slice of a GPU and the lease holding it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SliceView {
    pub lease_id: Uuid,
    /// The lease's state (`pending`, `provisioning`, `running`, `preempting`).
    pub state: LeaseState,
    /// `whole`, `mig` or `shared`.
    #[schema(value_type = GpuMode)]
    pub kind: String,
    /// MIG profile and first memory slice.
    pub profile: Option<String>,
    pub start: Option<u8>,
    /// Compute held, milli-GPU.
    pub milli: u32,
    /// Shared slices: GPU memory held, MB.
    pub memory_mb: Option<u64>,
    /// What the workload sees as `CUDA_VISIBLE_DEVICES`, once provisioned.
    pub device: Option<String>,
}

fn mode_str(mode: PartitionMode) -> &'static str {
    match mode {
        PartitionMode::Mig => "mig",
        PartitionMode::Shared => "shared",
        PartitionMode::Whole => "whole",
    }
}

/// The node with its GPUs, the slices `leases` hold on them and the latest metrics.
pub fn detail(node: &NodeRow, leases: &[LeaseRow]) -> NodeDetail {
    let reg = registration(node);
    let metrics: Vec<GpuMetrics> = node
        .metrics_json
        .as_deref()
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    let gpus = node
        .spec
        .gpus
        .iter()
        .map(|g| {
            let inv = reg
                .as_ref()
                .and_then(|r| r.gpus.iter().find(|i| i.index == u32::from(g.index)));
            let slices: Vec<SliceView> = leases
                .iter()
                .flat_map(|row| {
                    row.record
                        .placement
                        .gpus
                        .iter()
                        .filter(|s| s.index == g.index)
                        .map(|s| slice_view(row, &s.slot))
                })
                .collect();
            GpuView {
                index: g.index,
                model: g.model.clone(),
                mode: mode_str(g.mode).to_owned(),
                nvlink: g.nvlink.clone(),
                uuid: inv.map(|i| i.uuid.clone()),
                memory_mib: inv.map(|i| i.memory_mib),
                driver_version: inv.map(|i| i.driver_version.clone()),
                held_milli: slices.iter().map(|s| s.milli).sum(),
                slices,
                metrics: metrics
                    .iter()
                    .find(|m| m.index == u32::from(g.index))
                    .and_then(|m| serde_json::to_value(m).ok()),
            }
        })
        .collect();
    NodeDetail {
        node: NodeSummary::from(node),
        cpu_milli: node.spec.cpu_milli,
        memory_mib: node.spec.memory_mib,
        agent_version: reg.as_ref().map(|r| r.agent_version.clone()),
        backend: reg.as_ref().and_then(|r| {
            serde_json::to_value(r.backend)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
        }),
        gpus,
    }
}

fn slice_view(row: &LeaseRow, slot: &Slot) -> SliceView {
    let (kind, profile, start, memory_mb) = match slot {
        Slot::Whole => ("whole", None, None, None),
        Slot::Mig { profile, start, .. } => ("mig", Some(profile.clone()), Some(*start), None),
        Slot::Shared { memory_mb, .. } => ("shared", None, None, Some(*memory_mb)),
    };
    SliceView {
        lease_id: row.id,
        state: row.state,
        kind: kind.to_owned(),
        profile,
        start,
        milli: slot.milli(),
        memory_mb,
        device: row.device.clone(),
    }
}
