//! The fast placement's walk over one option's bucket: each node the free
//! summary allows, each node state scored once, the best candidate kept.

use std::collections::HashMap;

use uuid::Uuid;

use super::bound::{count_unscored, OptBound};
use super::fast::{Kind, Opt};
use super::host::host_take;
use super::nvlink::{idle_gpus, pick_gpu_set};
use super::request::EndHint;
use super::request::PlacementRequest;
use super::score::{end_term, rank, ScoreKind, Scorer};
use super::view::{model_at, CapacityView, GpuFree, GpuView, NodeView};
use super::{DemandMix, Policy, Walk};
use gpuex_wire::catalog::{GpuModel, MigProfile};

/// Lower is better; compared field by field: not off-peak, then the
/// candidate's [`Cand::key`], node id, GPU and slot.
pub(super) type Key = (bool, [i64; 4], Uuid, u32);

/// The best candidate so far: where, and what it would hold.
pub(super) struct Best {
    pub(super) key: Key,
    pub(super) opt: usize,
    pub(super) node: u32,
    pub(super) pick: Pick,
    pub(super) frag_delta: i64,
    pub(super) partly_used: bool,
    pub(super) links: u32,
    pub(super) cpu: u64,
    pub(super) mem: u64,
    pub(super) extends_s: Option<i64>,
}

/// One scan over the cheapest options' buckets: the best candidate found so
/// far and how many candidates were scored to find it.
pub(super) struct Scan<'a, 'v> {
    view: &'v CapacityView,
    req: &'a PlacementRequest,
    mix: &'a DemandMix,
    policy: &'a Policy,
    /// The best candidate over every option scanned so far.
    pub(super) best: Option<Best>,
    /// Candidates scored over every option, for [`super::Why`].
    pub(super) scored: u32,
    /// The GPU set a multi-GPU request takes, per (bucket, hardware, idle
    /// GPUs): nodes of one hardware with the same GPUs idle offer the same
    /// set, so the NVLink search runs once per shape, not once per node.
    gpu_sets: HashMap<(u32, u32, u32), Option<(u32, u32)>>,
}

impl<'a, 'v> Scan<'a, 'v> {
    pub(super) fn new(
        view: &'v CapacityView,
        req: &'a PlacementRequest,
        mix: &'a DemandMix,
        policy: &'a Policy,
    ) -> Scan<'a, 'v> {
        Scan {
            view,
            req,
            mix,
            policy,
            best: None,
            scored: 0,
            gpu_sets: HashMap::new(),
        }
    }

    /// Finds the best candidate of `opt`'s bucket. Each node state with room
    /// for the request is scored once, at its lowest-id node (the one the
    /// final tie-break would take of equals); [`Walk::EveryNode`] visits every
    /// node of the bucket instead and must choose the same.
    pub(super) fn option(&mut self, opt: &Opt<'v>, opt_idx: usize) {
        let b = opt.bucket;
        let scorer = self.mix.take_scorer(b.model, b.mode);
        self.scan_option(opt, opt_idx, &scorer);
        self.mix.return_scorer(b.model, b.mode, scorer);
    }

    fn scan_option(&mut self, opt: &Opt<'v>, opt_idx: usize, scorer: &Scorer) {
        let b = opt.bucket;
        if let Some(id) = self.req.node {
            let pinned = self
                .view
                .position_of(id)
                .filter(|pos| b.nodes.binary_search(pos).is_ok());
            self.walk(opt, opt_idx, scorer, pinned.into_iter());
            return;
        }
        if self.policy.walk == Walk::EveryNode {
            self.walk(opt, opt_idx, scorer, b.nodes.iter().copied());
            return;
        }
        self.states(opt, opt_idx, scorer);
    }

    /// Visits the states of `opt`'s bucket with room for the request, least
    /// room first: tight states, which pack best, set a good best candidate
    /// early, and a state whose bound is behind it is counted, not scored.
    fn states(&mut self, opt: &Opt<'v>, opt_idx: usize, scorer: &Scorer) {
        let total_weight = self.mix.total_weight();
        let multi_gpu = matches!(opt.kind, Kind::Whole) && opt.need.gpus > 1;
        let hint = self.req.ends;
        let view = self.view;
        let bound = OptBound::new(opt, scorer, total_weight, self.policy);
        let b = opt.bucket;
        let states = view.states();
        let room = opt.held_milli.min(1000);
        let (by_room, by_share) = match share_memory(opt) {
            0 => (Some(states.with_room(b.position, room)), None),
            memory => (None, Some(states.with_share_room(b.position, room, memory))),
        };
        for state in by_room
            .into_iter()
            .flatten()
            .chain(by_share.into_iter().flatten())
        {
            let Some(&first) = state.members.first() else {
                continue;
            };
            // The driver is part of a state's hardware, so its members agree;
            // read before counting, as a walk never counts a node it refuses.
            // Only a request that names a version pays for the node's read.
            let driver_refused = self.req.min_cuda.is_some()
                && view
                    .node_at(first)
                    .is_some_and(|n| !self.req.accepts_cuda(n.cuda));
            if driver_refused {
                continue;
            }
            let twins = u32::try_from(state.members.len()).unwrap_or(u32::MAX);
            let at = (opt, scorer, self.req, self.policy);
            if let Some(per_node) =
                count_unscored(bound.as_ref(), self.best.as_ref(), state.card.as_ref(), at)
            {
                self.scored = self.scored.saturating_add(per_node.saturating_mul(twins));
                continue;
            }

            let Some(node) = view.node_at(first) else {
                continue;
            };
            if !might_hold(node, opt) {
                continue;
            }
            let ends_differ = hint.is_some() && !node.summary.all_idle && !multi_gpu;
            if ends_differ && state.members.len() > 1 {
                // Predicted ends are not part of a state: score each member.
                self.walk(opt, opt_idx, scorer, state.members.iter().copied());
                continue;
            }
            let Some((cpu, mem)) = host_take(self.req, node, opt.held_milli, self.policy) else {
                continue;
            };
            let at = Site {
                opt,
                opt_idx,
                node,
                pos: first,
                cpu,
                mem,
            };
            if multi_gpu {
                let before = self.scored;
                self.gpu_set(&at);
                self.scored = before + (self.scored - before).saturating_mul(twins);
                continue;
            }
            let local = node_candidates(&at, scorer, total_weight, self.policy, hint);
            self.scored = self
                .scored
                .saturating_add(local.candidates.saturating_mul(twins));
            if let Some(c) = local.best {
                at.consider(&mut self.best, c);
            }
        }
    }

    /// Visits each node at `positions` in `opt`'s bucket and keeps the best candidate.
    fn walk(
        &mut self,
        opt: &Opt<'v>,
        opt_idx: usize,
        scorer: &Scorer,
        positions: impl Iterator<Item = u32>,
    ) {
        let need = opt.need;
        let total_weight = self.mix.total_weight();
        // Nodes in the same state score the same but for their id, the last
        // tie-break: each state is scored once. Recent states catch the common
        // case, runs of idle (or equally filled) twins, at a compare per node.
        let mut recent: [Option<(&NodeView, Twin)>; TWINS_KEPT] = [None; TWINS_KEPT];
        let mut next_slot = 0;
        let multi_gpu = matches!(opt.kind, Kind::Whole) && need.gpus > 1;
        let hint = self.req.ends;
        for pos in positions {
            let Some(node) = self.view.node_at(pos) else {
                continue;
            };
            if node.cordoned || !might_hold(node, opt) || !self.req.accepts_cuda(node.cuda) {
                continue;
            }
            // A twin takes the same host share and offers the same candidates.
            let twin = if multi_gpu {
                None
            } else {
                recent
                    .iter()
                    .flatten()
                    .find(|(seen, _)| same_state(seen, node, hint.is_some()))
                    .map(|&(_, twin)| twin)
            };
            let host = match twin {
                Some(twin) => Some(twin.host),
                None => host_take(self.req, node, opt.held_milli, self.policy),
            };
            let Some((cpu, mem)) = host else {
                continue;
            };
            let at = Site {
                opt,
                opt_idx,
                node,
                pos,
                cpu,
                mem,
            };
            if multi_gpu {
                self.gpu_set(&at);
                continue;
            }
            let local = match twin {
                Some(twin) => twin,
                None => {
                    let local = node_candidates(&at, scorer, total_weight, self.policy, hint);
                    recent[next_slot] = Some((node, local));
                    next_slot = (next_slot + 1) % TWINS_KEPT;
                    local
                }
            };
            self.scored += local.candidates;
            if let Some(c) = local.best {
                at.consider(&mut self.best, c);
            }
        }
    }

    /// Scores the best NVLink set of idle GPUs a multi-GPU request can take at `at`.
    fn gpu_set(&mut self, at: &Site) {
        let need = at.opt.need;
        let node = at.node;
        let idle = idle_gpus(node, at.opt.bucket);
        let shape = (at.opt.bucket.position, node.hardware, idle);
        let found = match self.gpu_sets.get(&shape) {
            Some(found) => *found,
            None => {
                let found = pick_gpu_set(node, idle, need.gpus, self.req.nvlink);
                // Hardware 0: not interned, so not known to match another node.
                if node.hardware != 0 {
                    self.gpu_sets.insert(shape, found);
                }
                found
            }
        };
        let Some((set, links)) = found else {
            return;
        };
        let idle_left = i64::from(node.summary.idle_gpus) - i64::from(need.gpus);
        let nv = if self.policy.prefer_nvlink {
            -i64::from(links)
        } else {
            0
        };
        // A set takes idle GPUs only: the predicted-end term is the same for every one.
        let key = match self.policy.score {
            ScoreKind::FirstFit => [0; 4],
            ScoreKind::WorstFit => [nv, 0, -idle_left, 0],
            _ => [nv, 0, idle_left, 0],
        };
        self.scored += 1;
        at.consider(
            &mut self.best,
            Cand {
                key,
                tie: set,
                pick: Pick::Set(set),
                frag_delta: 0,
                partly_used: idle_left > 0,
                links,
                extends_s: None,
            },
        );
    }
}

/// The memory a share needs on one GPU (0 for other kinds: a MIG instance's
/// memory is its slices', a whole GPU is idle).
fn share_memory(opt: &Opt) -> u64 {
    match opt.kind {
        Kind::Share => opt.need.memory_mb,
        _ => 0,
    }
}

/// Whether `node`'s free summary leaves room for `opt` at all.
fn might_hold(node: &NodeView, opt: &Opt) -> bool {
    let (need, held_milli) = (opt.need, opt.held_milli);
    match opt.kind {
        Kind::Share => {
            node.summary.max_free_milli >= held_milli
                && node.summary.max_free_memory_mb >= need.memory_mb
        }
        Kind::Mig(_) => node.summary.max_free_milli >= held_milli,
        Kind::Whole => node.summary.idle_gpus >= need.gpus,
    }
}

/// Every single-GPU candidate at `at`, scored by what it does to the
/// fragmentation of its GPU and of the host's share of the node.
fn node_candidates(
    at: &Site,
    scorer: &Scorer,
    total_weight: u64,
    policy: &Policy,
    hint: Option<EndHint>,
) -> Twin {
    let (node, opt) = (at.node, at.opt);
    let b = opt.bucket;
    let model = model_at(b.model);
    let mut local = Twin {
        best: None,
        candidates: 0,
        host: (at.cpu, at.mem),
    };
    let node_free: u32 = node.gpus.iter().map(|g| g.free.free_milli(g.mode)).sum();
    // The host's share of fragmentation before, to charge each candidate
    // what taking `cpu` does to the node's remaining GPUs.
    let host_before =
        i64::try_from(scorer.host_frag(u64::from(node_free), node.cpu_free)).unwrap_or(i64::MAX);
    let on_node = OnNode {
        scorer,
        total_weight,
        policy,
        hint,
        node_free,
        host_before,
        cpu_after: node.cpu_free - at.cpu,
    };
    for g in node
        .gpus
        .iter()
        .filter(|g| g.model == b.model && g.mode == b.mode)
    {
        gpu_candidates(&on_node, &mut local, g, opt, model);
    }
    local
}

/// What scoring a candidate on one node reads: the scorer and policy, the
/// node's free milli-GPU and the host's share of fragmentation.
struct OnNode<'s> {
    scorer: &'s Scorer,
    total_weight: u64,
    policy: &'s Policy,
    hint: Option<EndHint>,
    /// Free milli-GPU over the node's GPUs before the lease.
    node_free: u32,
    /// The host's share of fragmentation before the lease.
    host_before: i64,
    /// The host's free CPU once the lease takes its share.
    cpu_after: u64,
}

/// Offers to `local` every slot of the GPU `g` that `opt` can take.
fn gpu_candidates(on: &OnNode, local: &mut Twin, g: &GpuView, opt: &Opt, model: &GpuModel) {
    let need = opt.need;
    let partly_used = !g.free.is_idle(model, g.mode);
    let mut try_after = |after: GpuFree, pick: Pick, tie: u32| {
        local.offer(on.score(g, partly_used, after, pick, tie));
    };
    match opt.kind {
        Kind::Share => {
            if g.free.milli >= need.milli && g.free.memory_mb >= need.memory_mb {
                let after = GpuFree {
                    milli: g.free.milli - need.milli,
                    memory_mb: g.free.memory_mb - need.memory_mb,
                    ..g.free
                };
                try_after(after, Pick::Share(g.index), 0);
            }
        }
        Kind::Whole => {
            if g.free.is_idle(model, g.mode) {
                let after = GpuFree {
                    milli: 0,
                    memory_mb: 0,
                    mig_mask: 0,
                    mig_compute: 0,
                };
                try_after(after, Pick::Whole(g.index), 0);
            }
        }
        Kind::Mig(p) => {
            if g.free.mig_compute < p.compute_slices {
                return;
            }
            for &s in p.starts {
                let mask = p.slice_mask(s);
                if g.free.mig_mask & mask != mask {
                    continue;
                }
                let after = GpuFree {
                    mig_mask: g.free.mig_mask & !mask,
                    mig_compute: g.free.mig_compute - p.compute_slices,
                    ..g.free
                };
                // Among equal scores, higher starts keep slice 0 (big profiles) free.
                try_after(after, Pick::Mig(g.index, p, s), 255 - u32::from(s));
            }
        }
    }
}

impl OnNode<'_> {
    /// The candidate that leaves `g` free as `after`, keyed by the fragmentation
    /// it adds, its predicted-end term and packing.
    fn score(&self, g: &GpuView, partly_used: bool, after: GpuFree, pick: Pick, tie: u32) -> Cand {
        let scorer = self.scorer;
        // Only for GPUs that can hold the request: most cannot.
        let before = i64::try_from(scorer.frag(&g.free)).unwrap_or(i64::MAX);
        let node_after = self.node_free - (g.free.free_milli(g.mode) - after.free_milli(g.mode));
        let host_after = i64::try_from(scorer.host_frag(u64::from(node_after), self.cpu_after))
            .unwrap_or(i64::MAX);
        let delta = i64::try_from(scorer.frag(&after)).unwrap_or(i64::MAX) - before
            + (host_after - self.host_before);
        let (k0, k1, k2) = rank(
            self.policy.score,
            delta,
            self.total_weight,
            partly_used,
            after.free_milli(g.mode),
            node_after,
        );
        let (end, extends_s) = match self.hint {
            Some(h) => {
                let (term, extends) = end_term(&g.ends, h);
                (term, Some(extends))
            }
            None => (0, None),
        };
        Cand {
            key: [k0, end, k1, k2],
            tie: u32::from(g.index) << 8 | tie,
            pick,
            frag_delta: delta,
            partly_used,
            links: 0,
            extends_s,
        }
    }
}

/// How many recently scored node states a scan compares each node against.
const TWINS_KEPT: usize = 4;

/// A node state's best candidate, how many it scored, and its host share.
#[derive(Clone, Copy)]
struct Twin {
    best: Option<Cand>,
    candidates: u32,
    /// The host CPU and memory a lease takes there.
    host: (u64, u64),
}

impl Twin {
    fn offer(&mut self, c: Cand) {
        self.candidates += 1;
        // On one node the global key differs only in these fields.
        if self.best.is_none_or(|b| (c.key, c.tie) < (b.key, b.tie)) {
            self.best = Some(c);
        }
    }
}

/// Whether two nodes would offer the same candidates to a request (with
/// `ends`: one with a predicted end, which also reads the GPUs' predicted
/// ends). Idle twins are told by their summaries: reading every node's GPUs
/// was most of a scan over a mostly idle fleet.
fn same_state(a: &NodeView, b: &NodeView, ends: bool) -> bool {
    let same_host = a.cpu_milli == b.cpu_milli
        && a.memory_mib == b.memory_mib
        && a.cpu_free == b.cpu_free
        && a.memory_free == b.memory_free;
    if !same_host {
        return false;
    }
    if a.idle_twin_of(b) {
        debug_assert!(
            a.gpus.len() == b.gpus.len()
                && a.gpus
                    .iter()
                    .zip(&b.gpus)
                    .all(|(x, y)| x.same_state(y, false)),
            "idle nodes of one hardware differ"
        );
        // Idle GPUs hold no lease, so no predicted end either.
        return !ends || a.gpus.iter().chain(&b.gpus).all(|g| g.ends.is_empty());
    }
    a.gpus.len() == b.gpus.len()
        && a.gpus
            .iter()
            .zip(&b.gpus)
            .all(|(x, y)| x.same_state(y, ends))
}

/// Where a candidate would land: the option, the node, its host share.
struct Site<'a, 'v> {
    opt: &'a Opt<'v>,
    opt_idx: usize,
    node: &'v NodeView,
    pos: u32,
    cpu: u64,
    mem: u64,
}

impl Site<'_, '_> {
    fn consider(&self, best: &mut Option<Best>, c: Cand) {
        let key: Key = (!self.opt.offpeak, c.key, self.node.id, c.tie);
        if best.as_ref().is_none_or(|bb| key < bb.key) {
            *best = Some(Best {
                key,
                opt: self.opt_idx,
                node: self.pos,
                pick: c.pick,
                frag_delta: c.frag_delta,
                partly_used: c.partly_used,
                links: c.links,
                cpu: self.cpu,
                mem: self.mem,
                extends_s: c.extends_s,
            });
        }
    }
}

/// What a candidate would take, cheap to copy while scanning.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pick {
    Share(u8),
    Whole(u8),
    Mig(u8, &'static MigProfile, u8),
    /// Whole GPUs, a bit mask of indices.
    Set(u32),
}

/// A scored candidate.
#[derive(Clone, Copy)]
struct Cand {
    /// Fragmentation step, predicted-end term, then packing (see [`rank`]
    /// and [`end_term`]); lower is better.
    key: [i64; 4],
    tie: u32,
    pick: Pick,
    frag_delta: i64,
    partly_used: bool,
    links: u32,
    extends_s: Option<i64>,
}
