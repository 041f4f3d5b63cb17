//! Placement rules, one test per rule, and the naive-vs-fast agreement.

use proptest::prelude::*;
use rust_decimal_macros::dec;
use uuid::Uuid;

use super::*;
use crate::types::Isolation;
use gpuex_wire::catalog::Precision;

fn m(name: &str) -> ModelIdx {
    model_idx(name).expect("catalog model")
}

fn priced_view() -> (CapacityView, RegionIdx) {
    let mut v = CapacityView::new();
    let r = v.region("eu");
    for model in gpuex_wire::catalog::all_models() {
        v.set_price(
            r,
            m(model.name),
            UnitPrices {
                tflops_h: dec!(0.01),
                vram_h: dec!(0.05),
            },
        );
    }
    (v, r)
}

fn node(id: u128, r: RegionIdx, gpus: &[(&str, PartitionMode)]) -> NodeView {
    let mut n = NodeView::new(Uuid::from_u128(id), r, 64_000, 512_000);
    for (model, mode) in gpus {
        n = n.with_gpu(m(model), *mode, 0);
    }
    n
}

/// Places with no recent demand and the default policy.
fn place_plain(v: &CapacityView, req: &PlacementRequest) -> Option<Placement> {
    place(v, req, &DemandMix::default(), &Policy::default())
}

#[test]
fn a_shared_slice_holds_exactly_what_was_asked() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    let req = PlacementRequest::milli(250, 8_000);
    let p = place_plain(&v, &req).expect("fits");
    assert_eq!(
        p.gpus[0].slot,
        Slot::Shared {
            milli: 250,
            memory_mb: 8_000
        }
    );
    assert_eq!(p.units.tflops_h, dec!(78));
    assert_eq!(p.units.vram_h, dec!(2));
    assert_eq!(p.internal_waste_milli(), 0);
}

#[test]
fn mig_requests_get_the_smallest_adequate_profile() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("H100-SXM5-80GB", PartitionMode::Mig)]));
    let mut req = PlacementRequest::milli(0, 0);
    req.compute = Compute::Tflops {
        tflops: dec!(100),
        precision: Precision::Fp16,
    };
    req.memory_mb = 8_000;
    let p = place_plain(&v, &req).expect("fits");
    match &p.gpus[0].slot {
        Slot::Mig { profile, .. } => assert_eq!(profile, "1g.10gb"),
        other => panic!("not MIG: {other:?}"),
    }
    assert_eq!(p.units.tflops_h, dec!(141.286));
    assert_eq!(p.units.vram_h, dec!(2.5));
}

#[test]
fn the_cheapest_slice_for_the_buyer_wins_over_a_whole_gpu() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-80GB", PartitionMode::Whole)]));
    v.upsert_node(node(2, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    let p = place_plain(&v, &PlacementRequest::milli(100, 4_000)).expect("fits");
    assert_eq!(p.node, Uuid::from_u128(2));
}

#[test]
fn mig_instances_start_high_to_keep_large_placements_free() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-40GB", PartitionMode::Mig)]));
    let p = place_plain(&v, &PlacementRequest::milli(100, 1_000)).expect("fits");
    match &p.gpus[0].slot {
        Slot::Mig { start, .. } => assert_eq!(*start, 6),
        other => panic!("not MIG: {other:?}"),
    }
}

#[test]
fn partly_used_gpus_are_preferred_so_idle_ones_stay_whole() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(
        1,
        r,
        &[
            ("A100-SXM4-80GB", PartitionMode::Shared),
            ("A100-SXM4-80GB", PartitionMode::Shared),
        ],
    ));
    let mix = DemandMix::default();
    let first = place(
        &v,
        &PlacementRequest::milli(250, 1_000),
        &mix,
        &Policy::default(),
    )
    .expect("fits");
    v.allocate(&first).expect("allocates");
    let second = place(
        &v,
        &PlacementRequest::milli(250, 1_000),
        &mix,
        &Policy::default(),
    )
    .expect("fits");
    assert_eq!(first.gpus[0].index, second.gpus[0].index);
}

#[test]
fn multi_gpu_requests_take_an_nvlink_pair_first() {
    let (mut v, r) = priced_view();
    let mut n = NodeView::new(Uuid::from_u128(1), r, 64_000, 512_000);
    let a100 = m("A100-SXM4-80GB");
    // GPUs 0 and 3 are linked; the others are not.
    for i in 0..4u32 {
        let peers = match i {
            0 => 1 << 3,
            3 => 1,
            _ => 0,
        };
        n = n.with_gpu(a100, PartitionMode::Whole, peers);
    }
    v.upsert_node(n);
    let mut req = PlacementRequest::milli(2000, 0);
    req.gpus = 2;
    req.nvlink = true;
    let p = place_plain(&v, &req).expect("fits");
    let idx: Vec<u8> = p.gpus.iter().map(|g| g.index).collect();
    assert_eq!(idx, vec![0, 3]);
    assert_eq!(p.why.nvlink_links, 1);
}

#[test]
fn cordoned_nodes_and_unpriced_models_are_skipped() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    v.set_cordoned(Uuid::from_u128(1), true);
    assert!(place_plain(&v, &PlacementRequest::milli(100, 0)).is_none());
    let mut bare = CapacityView::new();
    let r2 = bare.region("us");
    bare.upsert_node(node(2, r2, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    assert!(place_plain(&bare, &PlacementRequest::milli(100, 0)).is_none());
    assert!(place(
        &bare,
        &PlacementRequest::milli(100, 0),
        &DemandMix::default(),
        &Policy::simulation(ScoreKind::Fgd)
    )
    .is_some());
}

#[test]
fn a_model_without_the_precision_is_not_adequate() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("V100-SXM2-32GB", PartitionMode::Shared)]));
    let mut req = PlacementRequest::milli(0, 0);
    req.compute = Compute::Tflops {
        tflops: dec!(10),
        precision: Precision::Fp8,
    };
    assert!(place_plain(&v, &req).is_none());
}

#[test]
fn frag_ratio_counts_free_capacity_the_mix_cannot_use() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    let whole_only = DemandMix::fixed(vec![(DemandClass::quantized(1000, 0, 1), 1)]);
    assert_eq!(frag_ratio(&v, &whole_only), 0.0);
    let p = place(
        &v,
        &PlacementRequest::milli(100, 0),
        &whole_only,
        &Policy::default(),
    )
    .expect("fits");
    v.allocate(&p).expect("allocates");
    assert_eq!(frag_ratio(&v, &whole_only), 1.0);
    assert_eq!(internal_waste([&p]), 0);
}

#[test]
fn allocate_refuses_what_no_longer_fits_and_release_gives_it_back() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-80GB", PartitionMode::Whole)]));
    let mut req = PlacementRequest::milli(1000, 0);
    req.isolation = Isolation::Whole;
    let p = place_plain(&v, &req).expect("fits");
    v.allocate(&p).expect("allocates");
    assert!(v.allocate(&p).is_err());
    v.release(&p).expect("releases");
    v.allocate(&p).expect("allocates again");
}

// ---- naive vs fast ----

const MODELS: [&str; 4] = [
    "A100-SXM4-40GB",
    "H100-SXM5-80GB",
    "L40S-48GB",
    "V100-SXM2-32GB",
];

fn arb_view() -> impl Strategy<Value = (CapacityView, Vec<PlacementRequest>)> {
    let gpu = (0..MODELS.len(), 0..3u8, any::<u32>());
    let node = (
        prop::collection::vec(gpu, 1..5),
        0..2u16,
        any::<bool>(),
        0..3usize,
    );
    let req = (
        0..1200u32,
        0..90_000u64,
        1..4u8,
        0..5usize,
        0..4u8,
        any::<bool>(),
        0..3u8,
        0..3usize,
    );
    (
        prop::collection::vec(node, 1..6),
        prop::collection::vec(req, 1..30),
    )
        .prop_map(|(nodes, reqs)| {
            let mut v = CapacityView::new();
            let rs = [v.region("eu"), v.region("us")];
            for (i, name) in MODELS.iter().enumerate() {
                if i != 3 {
                    v.set_price(
                        rs[0],
                        m(name),
                        UnitPrices {
                            tflops_h: dec!(0.01),
                            vram_h: dec!(0.02),
                        },
                    );
                }
                v.set_price(
                    rs[1],
                    m(name),
                    UnitPrices {
                        tflops_h: dec!(0.011),
                        vram_h: dec!(0.02),
                    },
                );
            }
            // No version reported, an older driver, a newer one.
            let cuda = [None, "12.2".parse().ok(), "12.4".parse().ok()];
            for (i, (gpus, region, cordon, driver)) in nodes.into_iter().enumerate() {
                let mut n = NodeView::new(
                    Uuid::from_u128(i as u128 + 1),
                    rs[usize::from(region)],
                    32_000,
                    256_000,
                );
                n.cordoned = cordon && i % 3 == 0;
                n.cuda = cuda[driver];
                let count = gpus.len() as u32;
                for (model, mode, links) in gpus {
                    let mode = [
                        PartitionMode::Mig,
                        PartitionMode::Shared,
                        PartitionMode::Whole,
                    ][usize::from(mode)];
                    let model_name = MODELS[model];
                    let mode = if mode == PartitionMode::Mig
                        && !model_name.starts_with('A')
                        && !model_name.starts_with('H')
                    {
                        PartitionMode::Shared
                    } else {
                        mode
                    };
                    n = n.with_gpu(m(model_name), mode, links & ((1 << count) - 1));
                }
                v.upsert_node(n);
            }
            let reqs = reqs
                .into_iter()
                .map(|(milli, mem, gpus, model, iso, nvlink, region, min_cuda)| {
                    let mut r = PlacementRequest::milli(milli * u32::from(gpus.min(2)), mem);
                    r.gpus = if gpus == 3 { 2 } else { 1 };
                    r.nvlink = nvlink;
                    r.models = if model < MODELS.len() {
                        ModelSet::only(m(MODELS[model]))
                    } else {
                        ModelSet::ANY
                    };
                    r.isolation = [
                        Isolation::Any,
                        Isolation::Mig,
                        Isolation::Whole,
                        Isolation::Shared,
                    ][usize::from(iso)];
                    r.region = if region < 2 {
                        Some(rs[usize::from(region)])
                    } else {
                        None
                    };
                    r.min_cuda = cuda[min_cuda];
                    r
                })
                .collect();
            (v, reqs)
        })
}

#[test]
fn idle_twins_are_known_by_hardware_and_stop_being_twins_once_used() {
    let (mut v, r) = priced_view();
    let shared = [
        ("A100-SXM4-80GB", PartitionMode::Shared),
        ("A100-SXM4-80GB", PartitionMode::Shared),
    ];
    v.upsert_node(node(1, r, &shared));
    v.upsert_node(node(2, r, &shared));
    v.upsert_node(node(3, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    let linked = NodeView::new(Uuid::from_u128(4), r, 64_000, 512_000)
        .with_gpu(m("A100-SXM4-80GB"), PartitionMode::Shared, 0b10)
        .with_gpu(m("A100-SXM4-80GB"), PartitionMode::Shared, 0b01);
    v.upsert_node(linked);
    fn at(v: &CapacityView, id: u128) -> NodeView {
        v.node(Uuid::from_u128(id)).expect("node").clone()
    }
    assert!(at(&v, 1).idle_twin_of(&at(&v, 2)));
    assert_eq!(at(&v, 1).gpus, at(&v, 2).gpus);
    // Other GPUs, or the same GPUs with NVLink, are other hardware.
    assert!(!at(&v, 1).idle_twin_of(&at(&v, 3)));
    assert!(!at(&v, 1).idle_twin_of(&at(&v, 4)));

    let mut p = place_plain(&v, &PlacementRequest::milli(250, 8_000)).expect("fits");
    p.node = Uuid::from_u128(1);
    v.allocate(&p).expect("allocates");
    let used = at(&v, 1);
    assert!(!used.summary.all_idle);
    assert!(!used.idle_twin_of(&at(&v, 2)));
    v.release(&p).expect("releases");
    assert!(at(&v, 1).idle_twin_of(&at(&v, 2)));
}

#[test]
fn a_node_whose_gpus_are_out_of_memory_is_passed_over_for_a_share() {
    let (mut v, r) = priced_view();
    v.upsert_node(node(1, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    v.upsert_node(node(2, r, &[("A100-SXM4-80GB", PartitionMode::Shared)]));
    // Node 1 keeps most of its compute but none of its memory.
    let all_memory = PlacementRequest::milli(100, 80_000);
    let mut on_first = place_plain(&v, &all_memory).expect("fits");
    on_first.node = Uuid::from_u128(1);
    v.allocate(&on_first).expect("allocates");
    let full = v.node(Uuid::from_u128(1)).expect("node");
    assert_eq!(full.summary.max_free_memory_mb, 0);
    assert!(full.summary.max_free_milli >= 900);
    let p = place_plain(&v, &PlacementRequest::milli(100, 1_000)).expect("the other node fits");
    assert_eq!(p.node, Uuid::from_u128(2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn fast_placement_finds_a_slot_exactly_when_the_naive_one_does((view, reqs) in arb_view()) {
        let mut view = view;
        let mix = DemandMix::default();
        for policy in [Policy::default(), Policy::simulation(ScoreKind::BestFit)] {
            for req in &reqs {
                let fast = place(&view, req, &mix, &policy);
                prop_assert_eq!(fast.is_some(), naive::feasible(&view, req, &policy), "request {:?}", req);
                // The state index chooses exactly what a walk over every node does.
                let walking = Policy { walk: Walk::EveryNode, ..policy };
                prop_assert_eq!(&fast, &place(&view, req, &mix, &walking), "request {:?}", req);
                if let Some(p) = fast {
                    prop_assert!(naive::valid(&view, req, &p), "invalid placement {:?}", p);
                    view.allocate(&p).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert!(view.states_in_step(), "index after allocating {:?}", p);
                }
            }
        }
    }
}

/// A MIG scorer's tables give what scoring each free state from scratch
/// gives, whichever state is met first.
#[test]
fn mig_scores_from_the_tables_equal_scores_from_scratch() {
    let model = model_at(m("A100-SXM4-80GB"));
    let layout = model.mig.expect("the A100 has MIG");
    let mut mix = DemandMix::default();
    for (milli, memory_mb) in [(142, 10_000), (285, 20_000), (571, 40_000), (1000, 0)] {
        mix.record(DemandClass::quantized(milli, memory_mb, 1));
    }
    let scorer = score::Scorer::new(model, PartitionMode::Mig, &mix);
    let states: Vec<GpuFree> = (0..=u8::MAX)
        .flat_map(|mig_mask| {
            (0..=gpuex_wire::catalog::COMPUTE_SLICES).map(move |mig_compute| GpuFree {
                milli: 0,
                memory_mb: 0,
                mig_mask,
                mig_compute,
            })
        })
        .collect();
    // Forwards fills the tables, backwards reads them in another order.
    for free in states.iter().chain(states.iter().rev()) {
        let free_milli = u64::from(free.free_milli(PartitionMode::Mig));
        let placeable = score::placeable_profiles(layout, free);
        let from_scratch: u64 = mix
            .classes()
            .iter()
            .filter(|(c, _)| {
                placeable & score::adequate_profiles(layout, c.milli, c.memory_mb) == 0
            })
            .map(|(_, weight)| weight * free_milli)
            .sum();
        assert_eq!(scorer.frag(free), from_scratch, "{free:?}");
    }
}

/// The mix keeps placement's scorers between placements, and a recorded
/// request gives scorers of the mix as it is then.
#[test]
fn kept_scorers_follow_the_mix_as_it_changes() {
    let model = m("A100-SXM4-80GB");
    let half_used = GpuFree {
        milli: 500,
        memory_mb: 40_000,
        mig_mask: 0,
        mig_compute: 0,
    };
    let mut mix = DemandMix::default();
    let kept = mix.take_scorer(model, PartitionMode::Shared);
    // The prior's whole GPUs cannot use half a GPU: weight 1 of 4.
    assert_eq!(kept.frag(&half_used), 500);
    mix.return_scorer(model, PartitionMode::Shared, kept);
    for _ in 0..3 {
        mix.record(DemandClass::quantized(600, 0, 1));
    }
    let now = mix.take_scorer(model, PartitionMode::Shared);
    assert_eq!(
        now.frag(&half_used),
        1_500,
        "three asks of 600 milli-GPU cannot use it"
    );
    let fresh = score::Scorer::with_forecast(model_at(model), PartitionMode::Shared, &mix);
    assert_eq!(now.frag(&half_used), fresh.frag(&half_used));
}
