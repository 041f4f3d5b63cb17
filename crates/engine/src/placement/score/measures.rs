//! What the simulator and the market's metrics measure of a placement:
//! fragmentation against the demand mix, and compute held beyond what was asked.

use super::super::view::{model_at, CapacityView};
use super::super::Placement;
use super::{DemandMix, Scorer};

/// FGD's `frag_ratio`: the share of free GPU compute that the demand mix
/// cannot use, weighted by the mix (0 when nothing is free). Cordoned nodes count.
pub fn frag_ratio(view: &CapacityView, mix: &DemandMix) -> f64 {
    let weight = mix.total_weight();
    if weight == 0 {
        return 0.0;
    }
    let mut frag: u128 = 0;
    let mut free: u128 = 0;
    for b in view.buckets() {
        let scorer = Scorer::new(model_at(b.model), b.mode, mix);
        for &pos in &b.nodes {
            let Some(node) = view.node_at(pos) else {
                continue;
            };
            for g in node
                .gpus
                .iter()
                .filter(|g| g.model == b.model && g.mode == b.mode)
            {
                frag += u128::from(scorer.frag(&g.free));
                free += u128::from(g.free.free_milli(g.mode)) * u128::from(weight);
            }
        }
    }
    if free == 0 {
        0.0
    } else {
        frag as f64 / free as f64
    }
}

/// `internal_waste`: compute held beyond what was asked, summed over
/// placements, in milli-GPU (MIG profiles and whole GPUs round requests up).
pub fn internal_waste<'a>(placements: impl IntoIterator<Item = &'a Placement>) -> u64 {
    placements
        .into_iter()
        .map(|p| u64::from(p.internal_waste_milli()))
        .sum()
}
