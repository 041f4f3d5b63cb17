//! The indexed placement the engine and the simulator run: price the
//! (region, model, mode, profile) options a request can use, then walk only
//! the cheapest options' buckets, skipping nodes by their free summary.

use rust_decimal::Decimal;
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use uuid::Uuid;

use super::host::host_within_cap;
use super::nvlink;
use super::request::{GpuSlot, Placement, PlacementRequest, Slot, Units, Why};
use super::scan::{Best, Pick, Scan};
use super::view::{
    model_at, Bucket, CapacityView, ModelIdx, NodeView, PartitionMode, RegionIdx, UnitPrices,
};
use super::{DemandMix, Policy};
use crate::types::Isolation;
use gpuex_wire::catalog::{GpuModel, MigProfile, COMPUTE_SLICES};

/// What a request would hold in one bucket.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Share,
    Mig(&'static MigProfile),
    Whole,
}

impl Kind {
    /// The milli-GPU a lease of this kind holds: what it asks of a share,
    /// the profile's compute slices of a MIG GPU, every whole GPU.
    fn held_milli(self, need: Need) -> u32 {
        match self {
            Kind::Share => need.milli,
            Kind::Mig(p) => u32::from(p.compute_slices) * 1000 / u32::from(COMPUTE_SLICES),
            Kind::Whole => 1000 * u32::from(need.gpus),
        }
    }
}

/// One priced way to serve the request.
pub(super) struct Opt<'v> {
    pub(super) bucket: &'v Bucket,
    pub(super) kind: Kind,
    cost: Option<Decimal>,
    units: Units,
    pub(super) offpeak: bool,
    /// The request's needs on the bucket's model.
    pub(super) need: Need,
    /// The milli-GPU it holds, and so its share of the host.
    pub(super) held_milli: u32,
}

/// The request's needs on one model.
#[derive(Clone, Copy)]
pub(super) struct Need {
    pub(super) milli: u32,
    pub(super) memory_mb: u64,
    pub(super) gpus: u8,
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
pub(super) fn options<'v>(
    view: &'v CapacityView,
    req: &PlacementRequest,
    policy: &Policy,
) -> Vec<Opt<'v>> {
    let mut out = Vec::new();
    let mut per_model: PerModel = Vec::new();
    for b in view.buckets() {
        if req.region.is_some_and(|r| r != b.region) || !req.models.contains(b.model) {
            continue;
        }
        let model = model_at(b.model);
        let Some((need, asked_tflops)) = model_need(&mut per_model, req, b.model, model) else {
            continue;
        };
        let price = view.price(b.region, b.model);
        if price.is_none() && policy.require_price {
            continue;
        }
        let bucket = BucketNeed {
            bucket: b,
            model,
            need,
            asked_tflops,
            price,
        };
        bucket_options(&mut out, view, req, &bucket);
    }
    sort_options(&mut out, view, policy);
    out
}

/// What the request needs of each model and the TFLOPS it asks there, by model index.
type PerModel = Vec<Option<(Option<Need>, Decimal)>>;

/// The request's needs on `model` and the TFLOPS it asks of it; `None` when
/// no GPU of the model can hold it.
fn model_need(
    per_model: &mut PerModel,
    req: &PlacementRequest,
    idx: ModelIdx,
    model: &GpuModel,
) -> Option<(Need, Decimal)> {
    // What the request needs of each model, once per model however many
    // regions and modes it is in: TFLOPS become milli-GPU by a decimal division.
    let at = usize::from(idx);
    if per_model.len() <= at {
        per_model.resize(at + 1, None);
    }
    let (need, asked_tflops) = *per_model[at].get_or_insert_with(|| {
        (
            need_on(req, model),
            req.standard_tflops(model).unwrap_or_default(),
        )
    });
    let need = need?;
    if need.milli > 1000 || need.memory_mb > model.memory_mb() {
        return None;
    }
    Some((need, asked_tflops))
}

/// One bucket a request may use: its model, the request's needs there, and the price.
struct BucketNeed<'v> {
    bucket: &'v Bucket,
    model: &'static GpuModel,
    need: Need,
    asked_tflops: Decimal,
    price: Option<UnitPrices>,
}

/// Pushes onto `out` every kind the request may take in the bucket of `at`, priced.
fn bucket_options<'v>(
    out: &mut Vec<Opt<'v>>,
    view: &CapacityView,
    req: &PlacementRequest,
    at: &BucketNeed<'v>,
) {
    let (b, model, need, price) = (at.bucket, at.model, at.need, at.price);
    let offpeak = view
        .regions
        .get(usize::from(b.region))
        .is_some_and(|r| r.offpeak);
    let mut push = |kind: Kind, units: Units| {
        let cost = price.map(|p| units.tflops_h * p.tflops_h + units.vram_h * p.vram_h);
        out.push(Opt {
            bucket: b,
            kind,
            cost,
            units,
            offpeak,
            need,
            held_milli: kind.held_milli(need),
        });
    };
    let (share, mig, whole) = kinds_for(req, b.mode);
    if share {
        push(
            Kind::Share,
            Units {
                // A share below one milli-GPU still takes one: it holds,
                // and is billed for, at least that.
                tflops_h: at.asked_tflops.max(model.milli_tflops()),
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

/// Sorts `out` by cost (when `policy` prefers the cheapest), off-peak first,
/// then region name, model and mode.
fn sort_options(out: &mut [Opt], view: &CapacityView, policy: &Policy) {
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
    let mut scan = Scan::new(view, req, mix, policy);
    let mut start = 0;
    while start < opts.len() {
        // A group of options with the same cost: the best candidate among them wins.
        let end = cost_group_end(&opts, start, policy);
        for (i, opt) in opts.iter().enumerate().take(end).skip(start) {
            scan.option(opt, i);
        }
        if let Some(b) = scan.best.take() {
            let (b, end, offpeak_over) =
                match follow_the_sun(&opts, &b, end, req, policy, &mut scan) {
                    Some((sun, sun_end)) => (sun, sun_end, opts[b.opt].cost),
                    None => (b, end, None),
                };
            let mut p = finish(
                view,
                req,
                &opts,
                b,
                u32::try_from(end).unwrap_or(u32::MAX),
                scan.scored,
            );
            p.why.offpeak_over = offpeak_over;
            return Some(p);
        }
        start = end;
    }
    None
}

/// The end of the group of options priced like `opts[start]` (every option
/// when price does not rank).
fn cost_group_end(opts: &[Opt], start: usize, policy: &Policy) -> usize {
    let mut end = start + 1;
    while end < opts.len() && (!policy.cheapest_first || opts[end].cost == opts[start].cost) {
        end += 1;
    }
    end
}

/// Follow-the-sun (ARCHITECTURE.md §6): `cheapest` is the best free candidate at the
/// lowest price, in a region at peak hours. A `region: any` request takes the
/// cheapest off-peak option within the band above it instead, if one is free
/// (fragmentation decides within its price, as usual). Returns that candidate
/// and how many options were considered to find it.
fn follow_the_sun<'v>(
    opts: &[Opt<'v>],
    cheapest: &Best,
    scanned: usize,
    req: &PlacementRequest,
    policy: &Policy,
    scan: &mut Scan<'_, 'v>,
) -> Option<(Best, usize)> {
    if req.region.is_some() || !policy.cheapest_first || opts[cheapest.opt].offpeak {
        return None;
    }
    let band = policy.offpeak_band?;
    let base = opts[cheapest.opt].cost?;
    let cap = Decimal::ONE
        .checked_add(band)
        .and_then(|f| base.checked_mul(f))?;
    // Options of the cheapest price were all scanned: an off-peak one among
    // them with a free candidate would have won already.
    let mut start = scanned;
    while start < opts.len() && opts[start].cost.is_some_and(|c| c <= cap) {
        let end = cost_group_end(opts, start, policy);
        for (i, opt) in opts.iter().enumerate().take(end).skip(start) {
            if opt.offpeak {
                scan.option(opt, i);
            }
        }
        if let Some(b) = scan.best.take() {
            return Some((b, end));
        }
        start = end;
    }
    None
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
    let need = opt.need;
    let slots = match b.pick {
        Pick::Share(index) => vec![GpuSlot {
            index,
            slot: Slot::Shared {
                milli: need.milli,
                memory_mb: need.memory_mb,
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
            offpeak_over: None,
            predicted_end_extends_s: b.extends_s,
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
    let mut found = None;
    for_each_holder(view, req, policy, |opt, node| {
        if node.cordoned {
            cordoned = true;
            return ControlFlow::Continue(());
        }
        found = Some(Adequacy::Somewhere {
            cheapest_list_value: opt.cost,
        });
        ControlFlow::Break(())
    });
    match found {
        Some(somewhere) => somewhere,
        None if cordoned => Adequacy::OnlyCordoned,
        None => Adequacy::Nowhere,
    }
}

/// Every (model, region) where an uncordoned node could hold `req` were it
/// idle: what can be served at all. Quotes, orders, region lists and TCO
/// all ask this (issue 34 item 7: they disagreed).
pub fn servable(
    view: &CapacityView,
    req: &PlacementRequest,
    policy: &Policy,
) -> BTreeSet<(ModelIdx, RegionIdx)> {
    let mut pairs = BTreeSet::new();
    for_each_holder(view, req, policy, |opt, node| {
        if !node.cordoned {
            pairs.insert((opt.bucket.model, opt.bucket.region));
        }
        ControlFlow::Continue(())
    });
    pairs
}

/// Calls `visit` with each option and node that could hold `req` were the
/// node idle: enough GPUs of the option's model and mode (one NVLink-
/// connected group when NVLink is asked), and host room within the cap.
fn for_each_holder(
    view: &CapacityView,
    req: &PlacementRequest,
    policy: &Policy,
    mut visit: impl FnMut(&Opt<'_>, &NodeView) -> ControlFlow<()>,
) {
    let need = req.gpus.max(1);
    for opt in options(view, req, policy) {
        let b = opt.bucket;
        for &pos in &b.nodes {
            let Some(node) = view.node_at(pos) else {
                continue;
            };
            if req.node.is_some_and(|n| n != node.id) || !req.accepts_cuda(node.cuda) {
                continue;
            }
            let gpus = node
                .gpus
                .iter()
                .filter(|g| g.model == b.model && g.mode == b.mode && g.index < 32)
                .fold(0u32, |mask, g| mask | 1 << g.index);
            let linked = !req.nvlink
                || need < 2
                || nvlink::exhaustive_connected(gpus, need, &|i| node.nvlink_peers(i)).is_some();
            let host_ok = host_within_cap(req, node, opt.held_milli, policy);
            if gpus.count_ones() < u32::from(need) || !linked || !host_ok {
                continue;
            }
            if visit(&opt, node).is_break() {
                return;
            }
        }
    }
}
