//! The naive reference placement: try every slice of every GPU of every node.
//! Slow on purpose and written without the fast path's options and indexes, so
//! tests can check that the fast placement finds a slot exactly when one exists.

use super::host::host_take;
use super::nvlink::connected;
use super::request::{Placement, PlacementRequest, Slot};
use super::view::{model_at, take, CapacityView, GpuView, NodeView, PartitionMode};
use super::Policy;
use crate::types::Isolation;
use gpuex_wire::catalog::GpuModel;

/// Whether any slot on `view` can hold `req` under `policy`'s hard rules.
pub fn feasible(view: &CapacityView, req: &PlacementRequest, policy: &Policy) -> bool {
    view.nodes()
        .iter()
        .any(|n| node_feasible(view, n, req, policy))
}

fn usable_gpu(
    view: &CapacityView,
    node: &NodeView,
    req: &PlacementRequest,
    policy: &Policy,
    model: u8,
) -> bool {
    req.models.contains(model)
        && (!policy.require_price || view.price(node.region, model).is_some())
        && req.milli_per_gpu(model_at(model)).is_some()
}

/// Whether any slot on `node` can hold `req` under `policy`'s hard rules.
fn node_feasible(
    view: &CapacityView,
    node: &NodeView,
    req: &PlacementRequest,
    policy: &Policy,
) -> bool {
    if node.cordoned
        || req.node.is_some_and(|n| n != node.id)
        || req.region.is_some_and(|r| r != node.region)
        || !req.accepts_cuda(node.cuda)
    {
        return false;
    }
    let n = req.gpus.max(1);
    if n > 1 {
        return gpu_set_feasible(view, node, req, policy, n);
    }
    node.gpus
        .iter()
        .any(|g| gpu_feasible(view, node, req, policy, g))
}

/// Whether some set of `n` idle GPUs of `node` can hold a multi-GPU `req`.
fn gpu_set_feasible(
    view: &CapacityView,
    node: &NodeView,
    req: &PlacementRequest,
    policy: &Policy,
    n: u8,
) -> bool {
    if !matches!(req.isolation, Isolation::Any | Isolation::Whole) {
        return false;
    }
    // Every subset of the node's GPUs of one (model, mode).
    let count = node.gpus.len().min(20);
    for set in 0u32..(1 << count) {
        if set.count_ones() != u32::from(n) {
            continue;
        }
        let chosen: Vec<_> = node
            .gpus
            .iter()
            .enumerate()
            .filter(|(i, _)| set & (1 << i) != 0)
            .map(|(_, g)| g)
            .collect();
        if set_holds(view, node, req, policy, &chosen, n) {
            return true;
        }
    }
    false
}

/// Whether the `n` GPUs `chosen` of `node` are idle and alike and can hold `req`.
fn set_holds(
    view: &CapacityView,
    node: &NodeView,
    req: &PlacementRequest,
    policy: &Policy,
    chosen: &[&GpuView],
    n: u8,
) -> bool {
    let first = chosen[0];
    let model = model_at(first.model);
    let ok = chosen.iter().all(|g| {
        g.model == first.model
            && g.mode == first.mode
            && matches!(g.mode, PartitionMode::Whole | PartitionMode::Shared)
            && g.free.is_idle(model, g.mode)
    });
    if !ok || !usable_gpu(view, node, req, policy, first.model) {
        return false;
    }
    let Some(milli) = req.milli_per_gpu(model) else {
        return false;
    };
    if milli > 1000 || req.memory_per_gpu() > model.memory_mb() {
        return false;
    }
    let mask = chosen.iter().fold(0u32, |m, g| m | 1 << g.index);
    let peers = |i: u32| node.nvlink_peers(i);
    if req.nvlink && !connected(mask, &peers) {
        return false;
    }
    host_take(req, node, 1000 * u32::from(n), policy).is_some()
}

/// Whether some slot of the GPU `g` of `node` can hold a single-GPU `req`.
fn gpu_feasible(
    view: &CapacityView,
    node: &NodeView,
    req: &PlacementRequest,
    policy: &Policy,
    g: &GpuView,
) -> bool {
    if !usable_gpu(view, node, req, policy, g.model) {
        return false;
    }
    let model = model_at(g.model);
    let Some(milli) = req.milli_per_gpu(model) else {
        return false;
    };
    let mem = req.memory_per_gpu();
    if milli > 1000 || mem > model.memory_mb() {
        return false;
    }
    gpu_slots(g.mode, req.isolation, model, milli, mem)
        .into_iter()
        .any(|slot| {
            take(g.free, g.mode, &slot, model).is_some()
                && host_take(req, node, slot.milli(), policy).is_some()
        })
}

/// Every slot a request of `isolation`, `milli` and `mem` could take on a GPU in `mode`.
fn gpu_slots(
    mode: PartitionMode,
    isolation: Isolation,
    model: &GpuModel,
    milli: u32,
    mem: u64,
) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::new();
    match (mode, isolation) {
        (PartitionMode::Shared, Isolation::Any | Isolation::Shared) => slots.push(Slot::Shared {
            milli,
            memory_mb: mem,
        }),
        (PartitionMode::Shared, Isolation::Whole)
        | (PartitionMode::Whole, Isolation::Any | Isolation::Whole) => slots.push(Slot::Whole),
        (PartitionMode::Mig, Isolation::Any | Isolation::Mig) => {
            for p in model.mig.map_or(&[][..], |l| l.profiles) {
                if u32::from(p.compute_slices) * 1000 < milli * 7 || p.memory_mb() < mem {
                    continue;
                }
                for &s in p.starts {
                    slots.push(Slot::Mig {
                        profile: p.name.to_owned(),
                        start: s,
                        mask: p.slice_mask(s),
                        compute: p.compute_slices,
                    });
                }
            }
        }
        _ => {}
    }
    slots
}

/// Whether `p` is a legal answer to `req` on `view`: the right kind of GPU,
/// region, node and isolation, and it fits. Used to check the fast path's answers.
pub fn valid(view: &CapacityView, req: &PlacementRequest, p: &Placement) -> bool {
    let Some(node) = view.node(p.node) else {
        return false;
    };
    if node.cordoned
        || req.region.is_some_and(|r| r != node.region)
        || req.node.is_some_and(|n| n != node.id)
        || !req.accepts_cuda(node.cuda)
    {
        return false;
    }
    if !req.models.contains(p.model) || p.gpus.len() != usize::from(req.gpus.max(1)) {
        return false;
    }
    let model = model_at(p.model);
    let Some(milli) = req.milli_per_gpu(model) else {
        return false;
    };
    let mut v = view.clone();
    if v.allocate(p).is_err() {
        return false;
    }
    p.gpus.iter().all(|gs| {
        let held_mem = match &gs.slot {
            Slot::Whole => model.memory_mb(),
            Slot::Mig { profile, .. } => model
                .mig
                .and_then(|l| l.profile(profile))
                .map_or(0, |p| p.memory_mb()),
            Slot::Shared { memory_mb, .. } => *memory_mb,
        };
        gs.slot.milli() >= milli.min(1000) && held_mem >= req.memory_per_gpu()
    })
}
