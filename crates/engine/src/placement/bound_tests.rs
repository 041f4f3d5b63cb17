//! The scan's bound is admissible: on any node, in any free state, under any
//! demand mix, no candidate ranks ahead of the bound of the node's state,
//! and the candidates counted for a state left unscored are those the scan scores.

use proptest::prelude::*;
use uuid::Uuid;

use super::bound::{candidates, lead, Card, OptBound};
use super::fast::options;
use super::scan::Scan;
use super::*;
use crate::types::Isolation;

/// A node of 8 GPUs of one model and mode, with some slices already taken.
fn busy_node(mode: PartitionMode, cpu: u64, taken: &[(u32, u64)]) -> CapacityView {
    let mut v = CapacityView::new();
    let r = v.region("eu");
    let model = model_idx("A100-SXM4-80GB").expect("catalog model");
    let mut n = NodeView::new(Uuid::from_u128(1), r, cpu, 1_024_000);
    for _ in 0..8 {
        n = n.with_gpu(model, mode, 0);
    }
    v.upsert_node(n);
    let policy = Policy::simulation(ScoreKind::BestFit);
    for &(milli, memory_mb) in taken {
        let req = PlacementRequest::milli(milli, memory_mb);
        if let Some(p) = place(&v, &req, &DemandMix::default(), &policy) {
            // A placement of `v` on `v` fits.
            v.allocate(&p).expect("allocates");
        }
    }
    v
}

fn mix_of(classes: &[(u32, u64, u8, u64)]) -> DemandMix {
    let mut mix = DemandMix::new(64);
    for &(milli, memory_mb, gpus, cpu) in classes {
        mix.record(DemandClass::quantized(milli, memory_mb, gpus).with_host_cpu(cpu));
    }
    mix
}

fn arb_case() -> impl Strategy<Value = (CapacityView, DemandMix, PlacementRequest)> {
    let mode = prop_oneof![
        Just(PartitionMode::Shared),
        Just(PartitionMode::Mig),
        Just(PartitionMode::Whole)
    ];
    let taken = prop::collection::vec((1u32..=1000, 0u64..40_000), 0..24);
    let classes = prop::collection::vec((1u32..=1000, 0u64..40_000, 1u8..=2, 0u64..40_000), 0..12);
    let req = (1u32..=1000, 0u64..40_000, 0u64..8_000);
    (mode, 8_000u64..128_000, taken, classes, req).prop_map(|(mode, cpu, taken, classes, req)| {
        let view = busy_node(mode, cpu, &taken);
        let mut r = PlacementRequest::milli(req.0, req.1);
        r.isolation = Isolation::Any;
        r.cpu_milli = (req.2 > 4_000).then_some(req.2);
        (view, mix_of(&classes), r)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn no_candidate_ranks_ahead_of_its_states_bound((view, mix, req) in arb_case()) {
        let policy = Policy { walk: Walk::EveryNode, ..Policy::simulation(ScoreKind::Fgd) };
        let node = &view.nodes()[0];
        let card = Card::of(node).expect("8 GPUs fit a card");
        for (i, opt) in options(&view, &req, &policy).iter().enumerate() {
            let b = opt.bucket;
            let scorer = mix.take_scorer(b.model, b.mode);
            let bound = OptBound::new(opt, &scorer, mix.total_weight(), &policy);
            let counted = candidates(&card, opt, &req, &policy);
            mix.return_scorer(b.model, b.mode, scorer);
            let mut scan = Scan::new(&view, &req, &mix, &policy);
            scan.option(opt, i);
            prop_assert_eq!(counted, scan.scored, "candidates counted as scored");
            let (Some(bound), Some(best)) = (bound, scan.best) else { continue };
            // The best candidate ranks at or behind the bound, so every one does.
            let scorer = mix.take_scorer(b.model, b.mode);
            let lower = bound.lower(&card, &scorer);
            mix.return_scorer(b.model, b.mode, scorer);
            prop_assert!(lower <= lead(&best.key), "bound {:?} ahead of {:?}", lower, best.key);
        }
    }
}
