//! The indexed placement the engine and the simulator run: price the
//! (region, model, mode, profile) options a request can use, then walk only
//! the cheapest options' buckets, skipping nodes by their free summary.

use rust_decimal::Decimal;
use uuid::Uuid;

use super::request::{GpuSlot, Placement, PlacementRequest, Slot, Units, Why};
use super::score::{rank, ScoreKind, Scorer};
use super::view::{model_at, Bucket, CapacityView, GpuFree, NodeView, PartitionMode};
use super::{DemandMix, Policy};
use crate::catalog::{GpuModel, MigProfile, COMPUTE_SLICES};
use crate::engine::types::Isolation;

/// What a request would hold in one bucket.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Share,
    Mig(&'static MigProfile),
    Whole,
}

/// One priced way to serve the request.
struct Opt<'v> {
    bucket: &'v Bucket,
    kind: Kind,
    cost: Option<Decimal>,
    units: Units,
    offpeak: bool,
}

/// The request's needs on one model.
#[derive(Clone, Copy)]
struct Need {
    milli: u32,
    memory_mb: u64,
    gpus: u8,
}

/// The kinds a request may take on a GPU of this mode.
fn kinds_for(req: &PlacementRequest, mode: PartitionMode) -> (bool, bool, bool) {
    // (share, mig, whole)
    if req.gpus > 1 {
        let ok = matches!(req.isolation, Isolation::Any | Isolation::Whole)
            && matches!(mode, PartitionMode::Whole | PartitionMode::Shared);
        return (false, false, ok);
    }
    match (req.isolation, mode) {
        (Isolation::Any | Isolation::Shared, PartitionMode::Shared) => (true, false, false),
        (Isolation::Any | Isolation::Mig, PartitionMode::Mig) => (false, true, false),
        (Isolation::Any | Isolation::Whole, PartitionMode::Whole) => (false, false, true),
        (Isolation::Whole, PartitionMode::Shared) => (false, false, true),
        _ => (false, false, false),
    }
}

fn need_on(req: &PlacementRequest, model: &GpuModel) -> Option<Need> {
    Some(Need {
        milli: req.milli_per_gpu(model)?,
        memory_mb: req.memory_per_gpu(),
        gpus: req.gpus.max(1),
    })
}

fn mig_fits(p: &MigProfile, need: Need) -> bool {
    u32::from(p.compute_slices) * 1000 >= need.milli * u32::from(COMPUTE_SLICES)
        && p.memory_mb() >= need.memory_mb
}

/// Every priced option, cheapest first.
fn options<'v>(view: &'v CapacityView, req: &PlacementRequest, policy: &Policy) -> Vec<Opt<'v>> {
    let mut out = Vec::new();
    for b in view.buckets() {
        if req.region.is_some_and(|r| r != b.region) || !req.models.contains(b.model) {
            continue;
        }
        let model = model_at(b.model);
        let Some(need) = need_on(req, model) else {
            continue;
        };
        if need.milli > 1000 || need.memory_mb > model.memory_mb() {
            continue;
        }
        let price = view.price(b.region, b.model);
        if price.is_none() && policy.require_price {
            continue;
        }
        let offpeak = view
            .regions
            .get(usize::from(b.region))
            .is_some_and(|r| r.offpeak);
        let asked_tflops = req.standard_tflops(model).unwrap_or_default();
        let mut push = |kind: Kind, units: Units| {
            let cost = price.map(|p| units.tflops_h * p.tflops_h + units.vram_h * p.vram_h);
            out.push(Opt {
                bucket: b,
                kind,
                cost,
                units,
                offpeak,
            });
        };
        let (share, mig, whole) = kinds_for(req, b.mode);
        if share {
            push(
                Kind::Share,
                Units {
                    // A share below one milli-GPU still takes one: it holds,
                    // and is billed for, at least that.
                    tflops_h: asked_tflops.max(model.milli_tflops()),
                    vram_h: Units::vram_of(req.memory_mb),
                },
            );
        }
        if mig {
            if let Some(layout) = model.mig {
                for p in layout.profiles.iter().filter(|p| mig_fits(p, need)) {
                    push(
                        Kind::Mig(p),
                        Units {
                            tflops_h: p.tflops_units(model.fp16),
                            vram_h: p.vram_units(),
                        },
                    );
                }
            }
        }
        if whole {
            let n = Decimal::from(need.gpus);
            push(
                Kind::Whole,
                Units {
                    tflops_h: model.fp16 * n,
                    vram_h: model.vram_units() * n,
                },
            );
        }
    }
    let region_name = |o: &Opt| {
        view.regions
            .get(usize::from(o.bucket.region))
            .map_or("", |r| r.name.as_str())
    };
    out.sort_by(|a, b| {
        let ca = if policy.cheapest_first { a.cost } else { None };
        let cb = if policy.cheapest_first { b.cost } else { None };
        ca.cmp(&cb)
            .then(b.offpeak.cmp(&a.offpeak))
            .then(region_name(a).cmp(region_name(b)))
            .then(a.bucket.model.cmp(&b.bucket.model))
            .then(a.bucket.mode.cmp(&b.bucket.mode))
    });
    out
}

/// Lower is better; compared field by field.
type Key = (bool, i64, i64, i64, Uuid, u32);

/// The best candidate so far: where, and what it would hold.
struct Best {
    key: Key,
    opt: usize,
    node: u32,
    pick: Pick,
    frag_delta: i64,
    partly_used: bool,
    links: u32,
    cpu: u64,
    mem: u64,
}

/// Host CPU and memory a lease takes on `node` when it holds `held_milli`.
pub(super) fn host_take(
    req: &PlacementRequest,
    node: &NodeView,
    held_milli: u32,
    policy: &Policy,
) -> Option<(u64, u64)> {
    let gpus = u64::try_from(node.gpus.len()).unwrap_or(u64::MAX).max(1) * 1000;
    // In u64 whenever the product fits: a 128-bit division per node showed in profiles.
    let share = |total: u64| match total.checked_mul(u64::from(held_milli)) {
        Some(product) => product / gpus,
        None => u64::try_from(u128::from(total) * u128::from(held_milli) / u128::from(gpus))
            .unwrap_or(u64::MAX),
    };
    let (cpu_share, mem_share) = (share(node.cpu_milli), share(node.memory_mib));
    let cpu = req.cpu_milli.unwrap_or(cpu_share);
    let mem = req.memory_mib.unwrap_or(mem_share);
    if let Some(cap) = policy.host_cap_factor {
        if cpu > cpu_share.saturating_mul(cap) || mem > mem_share.saturating_mul(cap) {
            return None;
        }
    }
    (node.cpu_free >= cpu && node.memory_free >= mem).then_some((cpu, mem))
}

/// Places `req` on `view`; `None` when nothing adequate is free. See the module docs of
/// [`super`] for the order of preference.
pub fn place(
    view: &CapacityView,
    req: &PlacementRequest,
    mix: &DemandMix,
    policy: &Policy,
) -> Option<Placement> {
    let opts = options(view, req, policy);
    let mut scored = 0u32;
    let mut start = 0;
    while start < opts.len() {
        // A group of options with the same cost: the best candidate among them wins.
        let mut end = start + 1;
        while end < opts.len() && (!policy.cheapest_first || opts[end].cost == opts[start].cost) {
            end += 1;
        }
        let mut best: Option<Best> = None;
        for (i, opt) in opts.iter().enumerate().take(end).skip(start) {
            scan(view, req, mix, policy, opt, i, &mut best, &mut scored);
        }
        if let Some(b) = best {
            return Some(finish(
                view,
                req,
                &opts,
                b,
                u32::try_from(end).unwrap_or(u32::MAX),
                scored,
            ));
        }
        start = end;
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn scan(
    view: &CapacityView,
    req: &PlacementRequest,
    mix: &DemandMix,
    policy: &Policy,
    opt: &Opt,
    opt_idx: usize,
    best: &mut Option<Best>,
    scored: &mut u32,
) {
    let b = opt.bucket;
    let model = model_at(b.model);
    let Some(need) = need_on(req, model) else {
        return;
    };
    let scorer = Scorer::new(model, b.mode, mix);
    let total_weight = mix.total_weight();
    let held_milli = match opt.kind {
        Kind::Share => need.milli,
        Kind::Mig(p) => u32::from(p.compute_slices) * 1000 / u32::from(COMPUTE_SLICES),
        Kind::Whole => 1000 * u32::from(need.gpus),
    };
    // Nodes in the same state score the same but for their id, the last
    // tie-break: each state is scored once. Recent states catch the common
    // case, runs of idle (or equally filled) twins, at a compare per node.
    let mut recent: [Option<(&NodeView, Twin)>; TWINS_KEPT] = [None; TWINS_KEPT];
    let mut next_slot = 0;
    for &pos in &b.nodes {
        let Some(node) = view.node_at(pos) else {
            continue;
        };
        if node.cordoned || req.node.is_some_and(|n| n != node.id) {
            continue;
        }
        let possible = match opt.kind {
            Kind::Share => {
                node.summary.max_free_milli >= held_milli
                    && node.summary.max_free_memory_mb >= need.memory_mb
            }
            Kind::Mig(_) => node.summary.max_free_milli >= held_milli,
            Kind::Whole => node.summary.idle_gpus >= need.gpus,
        };
        if !possible {
            continue;
        }
        // A twin takes the same host share and offers the same candidates.
        let multi_gpu = matches!(opt.kind, Kind::Whole) && need.gpus > 1;
        let twin = if multi_gpu {
            None
        } else {
            recent
                .iter()
                .flatten()
                .find(|(seen, _)| same_state(seen, node))
                .map(|&(_, twin)| twin)
        };
        let host = match twin {
            Some(twin) => Some(twin.host),
            None => host_take(req, node, held_milli, policy),
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
            let Some((set, links)) = pick_gpu_set(node, b, need.gpus, req.nvlink) else {
                continue;
            };
            let idle_left = i64::from(node.summary.idle_gpus) - i64::from(need.gpus);
            let nv = if policy.prefer_nvlink {
                -i64::from(links)
            } else {
                0
            };
            let key3 = match policy.score {
                ScoreKind::FirstFit => (0, 0, 0),
                ScoreKind::WorstFit => (nv, -idle_left, 0),
                _ => (nv, idle_left, 0),
            };
            *scored += 1;
            at.consider(
                best,
                Cand {
                    key3,
                    tie: set,
                    pick: Pick::Set(set),
                    frag_delta: 0,
                    partly_used: idle_left > 0,
                    links,
                },
            );
            continue;
        }
        if let Some(twin) = twin {
            *scored += twin.candidates;
            if let Some(c) = twin.best {
                at.consider(best, c);
            }
            continue;
        }
        let mut local = Twin {
            best: None,
            candidates: 0,
            host: (cpu, mem),
        };
        let node_free: u32 = node.gpus.iter().map(|g| g.free.free_milli(g.mode)).sum();
        // The host's share of fragmentation before, to charge each candidate
        // what taking `cpu` does to the node's remaining GPUs.
        let host_before = i64::try_from(scorer.host_frag(u64::from(node_free), node.cpu_free))
            .unwrap_or(i64::MAX);
        let cpu_after = node.cpu_free - cpu;
        for g in node
            .gpus
            .iter()
            .filter(|g| g.model == b.model && g.mode == b.mode)
        {
            let partly_used = !g.free.is_idle(model, g.mode);
            let mut try_after = |after: GpuFree, pick: Pick, tie: u32| {
                // Only for GPUs that can hold the request: most cannot.
                let before = i64::try_from(scorer.frag(&g.free)).unwrap_or(i64::MAX);
                let node_after = node_free - (g.free.free_milli(g.mode) - after.free_milli(g.mode));
                let host_after = i64::try_from(scorer.host_frag(u64::from(node_after), cpu_after))
                    .unwrap_or(i64::MAX);
                let delta = i64::try_from(scorer.frag(&after)).unwrap_or(i64::MAX) - before
                    + (host_after - host_before);
                local.offer(Cand {
                    key3: rank(
                        policy.score,
                        delta,
                        total_weight,
                        partly_used,
                        after.free_milli(g.mode),
                        node_after,
                    ),
                    tie: u32::from(g.index) << 8 | tie,
                    pick,
                    frag_delta: delta,
                    partly_used,
                    links: 0,
                });
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
                        continue;
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
        *scored += local.candidates;
        if let Some(c) = local.best {
            at.consider(best, c);
        }
        recent[next_slot] = Some((node, local));
        next_slot = (next_slot + 1) % TWINS_KEPT;
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
        if self.best.is_none_or(|b| (c.key3, c.tie) < (b.key3, b.tie)) {
            self.best = Some(c);
        }
    }
}

/// Whether two nodes would offer the same candidates to a request. Idle
/// twins are told by their summaries: reading every node's GPUs was most of
/// a scan over a mostly idle fleet.
fn same_state(a: &NodeView, b: &NodeView) -> bool {
    let same_host = a.cpu_milli == b.cpu_milli
        && a.memory_mib == b.memory_mib
        && a.cpu_free == b.cpu_free
        && a.memory_free == b.memory_free;
    if !same_host {
        return false;
    }
    if a.idle_twin_of(b) {
        debug_assert!(a.gpus == b.gpus, "idle nodes of one hardware differ");
        return true;
    }
    a.gpus == b.gpus
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
        let key: Key = (
            !self.opt.offpeak,
            c.key3.0,
            c.key3.1,
            c.key3.2,
            self.node.id,
            c.tie,
        );
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
            });
        }
    }
}

/// What a candidate would take, cheap to copy while scanning.
#[derive(Debug, Clone, Copy)]
enum Pick {
    Share(u8),
    Whole(u8),
    Mig(u8, &'static MigProfile, u8),
    /// Whole GPUs, a bit mask of indices.
    Set(u32),
}

/// A scored candidate.
#[derive(Clone, Copy)]
struct Cand {
    key3: (i64, i64, i64),
    tie: u32,
    pick: Pick,
    frag_delta: i64,
    partly_used: bool,
    links: u32,
}

/// Picks `n` idle GPUs of the bucket's model and mode on `node`, most NVLink
/// links first (greedy from every seed; exhaustive when NVLink is required and
/// greedy failed). Returns the set as a bit mask of GPU indices and its links.
pub(super) fn pick_gpu_set(
    node: &NodeView,
    b: &Bucket,
    n: u8,
    require_nvlink: bool,
) -> Option<(u32, u32)> {
    let model = model_at(b.model);
    let idle: u32 = node
        .gpus
        .iter()
        .filter(|g| {
            g.model == b.model && g.mode == b.mode && g.free.is_idle(model, g.mode) && g.index < 32
        })
        .fold(0, |m, g| m | 1 << g.index);
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

fn finish(
    view: &CapacityView,
    req: &PlacementRequest,
    opts: &[Opt],
    b: Best,
    considered: u32,
    scored: u32,
) -> Placement {
    let opt = &opts[b.opt];
    let model = model_at(opt.bucket.model);
    let node = view.node_at(b.node);
    let node_id = node.map_or(Uuid::nil(), |n| n.id);
    let need = need_on(req, model);
    let slots = match b.pick {
        Pick::Share(index) => vec![GpuSlot {
            index,
            slot: Slot::Shared {
                milli: need.map_or(0, |n| n.milli),
                memory_mb: need.map_or(0, |n| n.memory_mb),
            },
        }],
        Pick::Whole(index) => vec![GpuSlot {
            index,
            slot: Slot::Whole,
        }],
        Pick::Mig(index, p, start) => vec![GpuSlot {
            index,
            slot: Slot::Mig {
                profile: p.name.to_owned(),
                start,
                mask: p.slice_mask(start),
                compute: p.compute_slices,
            },
        }],
        Pick::Set(set) => node
            .map(|n| {
                n.gpus
                    .iter()
                    .filter(|g| g.index < 32 && set & (1 << g.index) != 0)
                    .map(|g| GpuSlot {
                        index: g.index,
                        slot: Slot::Whole,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    Placement {
        node: node_id,
        region: opt.bucket.region,
        model: opt.bucket.model,
        mode: opt.bucket.mode,
        gpus: slots,
        cpu_milli: b.cpu,
        memory_mib: b.mem,
        units: opt.units,
        asked: Units {
            tflops_h: req.standard_tflops(model).unwrap_or_default(),
            vram_h: Units::vram_of(req.memory_mb),
        },
        asked_milli: req.milli_per_gpu(model).unwrap_or(0) * u32::from(req.gpus.max(1)),
        list_value: opt.cost,
        why: Why {
            options_considered: considered,
            candidates_scored: scored,
            frag_delta: b.frag_delta,
            partly_used: b.partly_used,
            nvlink_links: b.links,
            offpeak: opt.offpeak,
        },
    }
}

/// Whether any GPU could ever hold a request, ignoring what is taken now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adequacy {
    /// No GPU in the view can hold it even when idle.
    Nowhere,
    /// Only GPUs on cordoned nodes could.
    OnlyCordoned,
    /// Some uncordoned GPU could; the list value per hour of the cheapest such option.
    Somewhere {
        cheapest_list_value: Option<Decimal>,
    },
}

/// Says whether `req` fits any idle GPU of the view (used to tell
/// `unsatisfiable_resources` and `node_cordoned` from `no_capacity`, and to
/// value spot bids at the cheapest adequate market).
pub fn adequacy(view: &CapacityView, req: &PlacementRequest, policy: &Policy) -> Adequacy {
    let mut cordoned = false;
    for opt in options(view, req, policy) {
        let b = opt.bucket;
        let need = req.gpus.max(1);
        for &pos in &b.nodes {
            let Some(node) = view.node_at(pos) else {
                continue;
            };
            if req.node.is_some_and(|n| n != node.id) {
                continue;
            }
            let count = node
                .gpus
                .iter()
                .filter(|g| g.model == b.model && g.mode == b.mode)
                .count();
            // The whole host, and the cap on what a lease may ask (a multiple of its GPU share).
            let held = match opt.kind {
                Kind::Share => need_on(req, model_at(b.model)).map_or(0, |n| n.milli),
                Kind::Mig(p) => u32::from(p.compute_slices) * 1000 / u32::from(COMPUTE_SLICES),
                Kind::Whole => 1000 * u32::from(need),
            };
            let gpus = u64::try_from(node.gpus.len()).unwrap_or(u64::MAX).max(1) * 1000;
            let share = |total: u64| {
                u64::try_from(u128::from(total) * u128::from(held) / u128::from(gpus))
                    .unwrap_or(u64::MAX)
            };
            let cap = |total: u64| {
                policy
                    .host_cap_factor
                    .map_or(total, |f| share(total).saturating_mul(f).min(total))
            };
            let host_ok = req.cpu_milli.is_none_or(|c| c <= cap(node.cpu_milli))
                && req.memory_mib.is_none_or(|m| m <= cap(node.memory_mib));
            if count < usize::from(need) || !host_ok {
                continue;
            }
            if node.cordoned {
                cordoned = true;
            } else {
                return Adequacy::Somewhere {
                    cheapest_list_value: opt.cost,
                };
            }
        }
    }
    if cordoned {
        Adequacy::OnlyCordoned
    } else {
        Adequacy::Nowhere
    }
}
