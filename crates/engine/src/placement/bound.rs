//! A lower bound on the best candidate a node state offers, read from the
//! state's [`Card`] without scoring its GPUs. A scan keeps the best
//! candidate so far; a state whose bound is already worse cannot win, so
//! its GPUs are only counted (for [`super::Why::candidates_scored`], which
//! must stay what the walk over every node reports), not scored.
//!
//! The bound, for FGD ranking (see [`super::score::rank`]): a candidate
//! that takes `t` milli-GPU of a GPU whose free state `b` serves all but
//! the weight `U(b)` of the demand mix changes the GPU's fragmentation by
//! `U(a)·(fm − t) − U(b)·fm ≥ −t·U(b)` (what is left, `a`, serves no
//! class that `b` did not), and `U(b)` is at most what the smallest state
//! able to hold the request leaves unserved. The host's share changes by
//! `(nf − t)·W(c − k) − nf·W(c) ≥ −t·W(c)`, `W(x)` being the weight of the
//! classes needing more than `x` host CPU, `nf ≥ t` the node's free
//! milli-GPU and `c` its free CPU. The packing term is at least
//! `(nf − t) << 11`, and a predicted-end term at least 0.

use super::fast::{Kind, Opt};
use super::host::{take_of, Host};
use super::node_view::{GpuFree, NodeView, PartitionMode};
use super::request::PlacementRequest;
use super::scan::{Best, Key};
use super::score::{ScoreKind, Scorer, FRAG_STEP};
use super::view::ModelIdx;
use super::Policy;
use gpuex_wire::catalog::COMPUTE_SLICES;

/// GPUs a card holds: nodes with more are always scored.
const CARD_GPUS: usize = 8;

/// One GPU as a card keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardGpu {
    model: ModelIdx,
    mode: PartitionMode,
    free: GpuFree,
}

/// What a scan reads of a node state to bound and count its candidates:
/// its host and its GPUs, copied into the state so that a state that
/// cannot win costs no read of its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    host: Host,
    /// Free milli-GPU over every GPU of the node.
    node_free: u32,
    gpus: [Option<CardGpu>; CARD_GPUS],
}

impl Card {
    /// The card of `node`'s state; `None` for a node with more GPUs than a card holds.
    pub(super) fn of(node: &NodeView) -> Option<Card> {
        if node.gpus.len() > CARD_GPUS {
            return None;
        }
        let mut gpus = [None; CARD_GPUS];
        for (slot, g) in gpus.iter_mut().zip(&node.gpus) {
            *slot = Some(CardGpu {
                model: g.model,
                mode: g.mode,
                free: g.free,
            });
        }
        Some(Card {
            host: Host::of(node),
            node_free: node.gpus.iter().map(|g| g.free.free_milli(g.mode)).sum(),
            gpus,
        })
    }
}

/// What bounding one option's candidates needs, worked out once per scan of the option.
pub(super) struct OptBound {
    /// Whether candidates are ranked by FGD, which the bound is for.
    fgd: bool,
    /// Whether the option's candidates rank behind off-peak ones.
    not_offpeak: bool,
    /// The most milli-GPU a candidate takes off its GPU's free compute.
    t_max: i128,
    /// The most weight a GPU able to hold the request leaves unserved.
    unusable: i128,
    /// [`rank`](super::score::rank)'s step.
    step: i128,
}

impl OptBound {
    /// The bound for `opt`, or `None` for multi-GPU sets (ranked by links
    /// and idle GPUs, and counted per set).
    pub(super) fn new(
        opt: &Opt,
        scorer: &Scorer,
        total_weight: u64,
        policy: &Policy,
    ) -> Option<OptBound> {
        let (t_max, unusable) = match opt.kind {
            Kind::Share => (
                opt.need.milli,
                scorer.unusable_share_at_most(opt.need.milli, opt.need.memory_mb),
            ),
            Kind::Mig(p) => (
                (u32::from(p.compute_slices) * 1000).div_ceil(u32::from(COMPUTE_SLICES)),
                scorer.unusable_mig_at_most(p),
            ),
            Kind::Whole if opt.need.gpus > 1 => return None,
            // A whole GPU's fragmentation is 0 in whole mode; in shared mode
            // an idle GPU leaves at most every class unserved.
            Kind::Whole => (
                1000,
                match opt.bucket.mode {
                    PartitionMode::Whole => 0,
                    _ => scorer.all_weight(),
                },
            ),
        };
        Some(OptBound {
            fgd: policy.score == ScoreKind::Fgd,
            not_offpeak: !opt.offpeak,
            t_max: i128::from(t_max),
            unusable: i128::from(unusable),
            step: i128::from(FRAG_STEP) * i128::from(total_weight.max(1)),
        })
    }

    /// At most the leading fields of the ranking key (not off-peak, then
    /// fragmentation step, predicted-end term, packing) of any candidate
    /// on a node of a state with `card`.
    pub(super) fn lower(&self, card: &Card, scorer: &Scorer) -> Lead {
        let host_weight = i128::from(scorer.host_weight_above(card.host.cpu_free));
        let delta = -self.t_max * (self.unusable + host_weight);
        let k0 = delta.div_euclid(self.step);
        let packed = (i128::from(card.node_free) - self.t_max) << 11;
        (self.not_offpeak, k0, 0, packed)
    }

    /// Whether no candidate of a state with `card` can beat `best`: its
    /// ranking key's leading fields are already behind.
    pub(super) fn behind(&self, card: &Card, scorer: &Scorer, best: &Key) -> bool {
        self.fgd && self.lower(card, scorer) > lead(best)
    }
}

/// The leading fields of a ranking key, widened so a bound cannot overflow.
pub(super) type Lead = (bool, i128, i128, i128);

/// The leading fields of `key` that [`OptBound::lower`] bounds.
pub(super) fn lead(key: &Key) -> Lead {
    let (off, k) = (key.0, key.1);
    (off, i128::from(k[0]), i128::from(k[1]), i128::from(k[2]))
}

/// The candidates `opt` would score on one node of a state with `card`:
/// each slot of a GPU of the bucket that can hold it, none when the host
/// has no room. The same count [`super::scan`]'s scoring makes.
pub(super) fn candidates(card: &Card, opt: &Opt, req: &PlacementRequest, policy: &Policy) -> u32 {
    if take_of(req, &card.host, opt.held_milli, policy).is_none() {
        return 0;
    }
    let b = opt.bucket;
    let need = opt.need;
    let model = super::view::model_at(b.model);
    let mut count = 0;
    for g in card.gpus.iter().flatten() {
        if g.model != b.model || g.mode != b.mode {
            continue;
        }
        count += match opt.kind {
            Kind::Share => {
                u32::from(g.free.milli >= need.milli && g.free.memory_mb >= need.memory_mb)
            }
            Kind::Whole => u32::from(g.free.is_idle(model, g.mode)),
            Kind::Mig(p) if g.free.mig_compute < p.compute_slices => 0,
            Kind::Mig(p) => {
                let fits = |s: &u8| {
                    let mask = p.slice_mask(*s);
                    g.free.mig_mask & mask == mask
                };
                u32::try_from(p.starts.iter().filter(|s| fits(s)).count()).unwrap_or(u32::MAX)
            }
        };
    }
    count
}

/// The candidates per node of a state of `card` when they need not be
/// scored: there are none (most states with compute to spare on a full
/// fleet lack GPU memory or host room), or the state's bound is behind `best`.
pub(super) fn count_unscored(
    bound: Option<&OptBound>,
    best: Option<&Best>,
    card: Option<&Card>,
    at: (&Opt, &Scorer, &PlacementRequest, &Policy),
) -> Option<u32> {
    let (bound, card) = (bound?, card?);
    let (opt, scorer, req, policy) = at;
    let count = candidates(card, opt, req, policy);
    let behind = || best.is_some_and(|b| bound.behind(card, scorer, &b.key));
    (count == 0 || behind()).then_some(count)
}
