//! A lease's share of its node's host CPU and memory: the fast placement, the
//! adequacy check and the naive reference all take it from here, so the three
//! agree on what a slice of a GPU brings with it.

use super::request::PlacementRequest;
use super::view::NodeView;
use super::Policy;

/// What placement reads of a node's host: its size, what is free, and how
/// many GPUs its host is shared among. A node state keeps a copy, so a scan
/// can check the host without reading the node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Host {
    pub(super) cpu_milli: u64,
    pub(super) memory_mib: u64,
    pub(super) cpu_free: u64,
    pub(super) memory_free: u64,
    pub(super) gpus: u64,
}

impl Host {
    pub(super) fn of(node: &NodeView) -> Host {
        Host {
            cpu_milli: node.cpu_milli,
            memory_mib: node.memory_mib,
            cpu_free: node.cpu_free,
            memory_free: node.memory_free,
            gpus: u64::try_from(node.gpus.len()).unwrap_or(u64::MAX),
        }
    }
}

/// The host CPU (milli) and memory (MiB) that holding `held_milli` of `node`'s
/// GPUs brings: the same fraction of the host as of its GPUs.
pub(super) fn host_share(node: &NodeView, held_milli: u32) -> (u64, u64) {
    share_of(&Host::of(node), held_milli)
}

fn share_of(host: &Host, held_milli: u32) -> (u64, u64) {
    let gpus = host.gpus.max(1) * 1000;
    // In u64 whenever the product fits: a 128-bit division per node showed in profiles.
    let share = |total: u64| match total.checked_mul(u64::from(held_milli)) {
        Some(product) => product / gpus,
        None => u64::try_from(u128::from(total) * u128::from(held_milli) / u128::from(gpus))
            .unwrap_or(u64::MAX),
    };
    (share(host.cpu_milli), share(host.memory_mib))
}

/// Host CPU and memory a lease takes on `node` when it holds `held_milli`:
/// what it asks, or its share; `None` when that is over the policy's cap or
/// more than the node has free.
pub(super) fn host_take(
    req: &PlacementRequest,
    node: &NodeView,
    held_milli: u32,
    policy: &Policy,
) -> Option<(u64, u64)> {
    take_of(req, &Host::of(node), held_milli, policy)
}

/// [`host_take`] on a node's [`Host`].
pub(super) fn take_of(
    req: &PlacementRequest,
    host: &Host,
    held_milli: u32,
    policy: &Policy,
) -> Option<(u64, u64)> {
    let (cpu_share, mem_share) = share_of(host, held_milli);
    let cpu = req.cpu_milli.unwrap_or(cpu_share);
    let mem = req.memory_mib.unwrap_or(mem_share);
    if let Some(cap) = policy.host_cap_factor {
        if cpu > cpu_share.saturating_mul(cap) || mem > mem_share.saturating_mul(cap) {
            return None;
        }
    }
    (host.cpu_free >= cpu && host.memory_free >= mem).then_some((cpu, mem))
}

/// Whether what `req` asks of the host stays under the policy's cap on `node`
/// when it holds `held_milli`, the node's free host aside. Without a cap a
/// lease may ask up to the whole host.
pub(super) fn host_within_cap(
    req: &PlacementRequest,
    node: &NodeView,
    held_milli: u32,
    policy: &Policy,
) -> bool {
    let (cpu_share, mem_share) = host_share(node, held_milli);
    let cap = |share: u64, total: u64| {
        policy
            .host_cap_factor
            .map_or(total, |f| share.saturating_mul(f).min(total))
    };
    req.cpu_milli
        .is_none_or(|c| c <= cap(cpu_share, node.cpu_milli))
        && req
            .memory_mib
            .is_none_or(|m| m <= cap(mem_share, node.memory_mib))
}
