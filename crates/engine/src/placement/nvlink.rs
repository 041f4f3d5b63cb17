//! The NVLink search for multi-GPU requests: which idle GPUs of one node to
//! take together, most links first, and whether a set is one connected group.

use super::view::{model_at, Bucket, NodeView};

/// Picks `n` idle GPUs of the bucket's model and mode on `node`, most NVLink
/// links first (greedy from every seed; exhaustive when NVLink is required and
/// greedy failed). Returns the set as a bit mask of GPU indices and its links.
pub(super) fn pick_gpu_set(
    node: &NodeView,
    idle: u32,
    n: u8,
    require_nvlink: bool,
) -> Option<(u32, u32)> {
    if idle.count_ones() < u32::from(n) {
        return None;
    }
    let peers = |i: u32| node.nvlink_peers(i);
    let links_of = |set: u32| -> u32 {
        (0..32)
            .filter(|i| set & (1 << i) != 0)
            .map(|i| (peers(i) & set).count_ones())
            .sum::<u32>()
            / 2
    };
    let mut best: Option<(u32, u32)> = None;
    for seed in (0..32).filter(|i| idle & (1 << i) != 0) {
        let mut set = 1u32 << seed;
        let mut connected = true;
        while set.count_ones() < u32::from(n) {
            let mut pick: Option<(u32, u32)> = None;
            for c in (0..32).filter(|i| idle & !set & (1 << i) != 0) {
                let l = (peers(c) & set).count_ones();
                if pick.is_none_or(|(_, bl)| l > bl) {
                    pick = Some((c, l));
                }
            }
            let Some((c, l)) = pick else { break };
            connected &= l > 0;
            set |= 1 << c;
        }
        if require_nvlink && !connected {
            continue;
        }
        let links = links_of(set);
        if best.is_none_or(|(_, bl)| links > bl) {
            best = Some((set, links));
        }
    }
    if best.is_none() && require_nvlink {
        best = exhaustive_connected(idle, n, &peers).map(|s| (s, links_of(s)));
    }
    best
}

/// The idle GPUs of the bucket's model and mode on `node`, as a bit mask of indices.
pub(super) fn idle_gpus(node: &NodeView, b: &Bucket) -> u32 {
    let model = model_at(b.model);
    node.gpus
        .iter()
        .filter(|g| {
            g.model == b.model && g.mode == b.mode && g.free.is_idle(model, g.mode) && g.index < 32
        })
        .fold(0, |m, g| m | 1 << g.index)
}

/// The first NVLink-connected subset of `idle` with `n` GPUs, trying all.
pub(super) fn exhaustive_connected(idle: u32, n: u8, peers: &dyn Fn(u32) -> u32) -> Option<u32> {
    let bits: Vec<u32> = (0..32).filter(|i| idle & (1 << i) != 0).collect();
    if bits.len() > 16 {
        return None;
    }
    (0u32..(1 << bits.len()))
        .filter(|s| s.count_ones() == u32::from(n))
        .map(|s| {
            bits.iter()
                .enumerate()
                .filter(|(j, _)| s & (1 << j) != 0)
                .fold(0, |m, (_, &b)| m | 1 << b)
        })
        .find(|&set| connected(set, peers))
}

/// Whether the GPUs of `set` form one NVLink-connected group.
pub(super) fn connected(set: u32, peers: &dyn Fn(u32) -> u32) -> bool {
    let Some(first) = (0..32).find(|i| set & (1 << i) != 0) else {
        return false;
    };
    let mut seen = 1u32 << first;
    loop {
        let grow = (0..32)
            .filter(|i| seen & (1 << i) != 0)
            .fold(seen, |m, i| m | (peers(i) & set));
        if grow == seen {
            return seen == set;
        }
        seen = grow;
    }
}
