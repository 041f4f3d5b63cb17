//! Regions, prices and who makes way: `region: any`, off-peak ties, victim order, NVLink.

use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::{PartitionMode, Slot};
use crate::*;
use gpuex_wire::catalog::Unit;

fn two_regions(us_tflops_price: rust_decimal::Decimal) -> Engine {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    run(
        &mut e,
        T0,
        Command::SetRegion {
            name: "us".into(),
            timezone: "America/New_York".into(),
        },
    );
    run(&mut e, T0, prices("us"));
    run(
        &mut e,
        T0,
        Command::SetPrices(vec![ListPrice {
            region: "us".into(),
            gpu_model: A100.into(),
            unit: Unit::TflopsH,
            list_price: us_tflops_price,
        }]),
    );
    run(
        &mut e,
        T0,
        Command::UpsertNode(node(2, "us", &[(A100, PartitionMode::Whole)])),
    );
    e
}

#[test]
fn region_any_takes_the_cheapest_region_first() {
    let mut e = two_regions(dec!(0.001));
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(lease.region, "us");
}

#[test]
fn region_any_breaks_price_ties_by_local_off_peak_hours() {
    // T0 is 22:13 UTC: 23:13 in eu (off-peak), 17:13 in us.
    let mut e = two_regions(dec!(0.002));
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(lease.region, "eu");
    assert!(lease.placement.why.offpeak);
    // Nine hours later: 08:13 in eu, 02:13 in us.
    let mut e = two_regions(dec!(0.002));
    let lease = grant(
        &mut e,
        T0 + 9 * 3600,
        place(1, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(lease.region, "us");
}

#[test]
fn a_named_region_is_kept_and_an_unknown_one_rejected() {
    let mut e = two_regions(dec!(0.001));
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.region = "eu".into();
    assert_eq!(grant(&mut e, T0, place(1, s)).region, "eu");
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.region = "mars".into();
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, s))),
        Some(RejectReason::UnknownRegion)
    );
}

#[test]
fn the_lowest_bid_makes_way_first() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Shared)])]);
    let half = || resources(dec!(156), 40);
    let mut low = spec(Mode::Spot, half());
    low.max_price = Some(dec!(0.6)); // index ≈ 0.74 of 0.812
    let mut high = spec(Mode::Spot, half());
    high.max_price = Some(dec!(0.8));
    run(&mut e, T0, place(1, high));
    run(&mut e, T0, place(2, low));
    let spot = granted(&run(&mut e, T0 + 10, Command::Tick));
    assert_eq!(spot.len(), 2);
    let od = grant(&mut e, T0 + 20, place(3, spec(Mode::OnDemand, half())));
    assert_eq!(od.state, LeaseState::Pending);
    let low_lease = spot.iter().find(|l| l.order_id == order_id(2)).unwrap();
    let high_lease = spot.iter().find(|l| l.order_id == order_id(1)).unwrap();
    assert!(noticed(&e, low_lease.id));
    assert!(!noticed(&e, high_lease.id));
}

#[test]
fn pooled_realtime_outranks_pooled_batch_but_not_the_other_way() {
    let (mut e, batch, rt) = pooled_realtime_behind_batch();
    let all = whole_shared_a100;
    assert_eq!(rt.state, LeaseState::Pending);
    assert!(noticed(&e, batch.id));
    run(&mut e, T0 + 120, Command::Tick);
    assert_eq!(
        rejected(&run(&mut e, T0 + 130, place(3, spec(Mode::Pooled, all())))),
        Some(RejectReason::NoCapacity)
    );
}

#[test]
fn a_two_gpu_order_takes_an_nvlink_pair_on_one_node() {
    let mut n = node(
        1,
        "eu",
        &[
            (A100, PartitionMode::Whole),
            (A100, PartitionMode::Whole),
            (A100, PartitionMode::Whole),
        ],
    );
    n.gpus[1].nvlink = vec![2];
    let mut e = engine_with(vec![n]);
    let mut r = resources(dec!(600), 160);
    r.gpus = Some(2);
    r.nvlink = true;
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, r)));
    let idx: Vec<u8> = lease.placement.gpus.iter().map(|g| g.index).collect();
    assert_eq!(idx, vec![1, 2]);
    assert!(lease.placement.gpus.iter().all(|g| g.slot == Slot::Whole));
    assert_eq!(lease.placement.units.tflops_h, dec!(624));
}

#[test]
fn isolation_mig_is_only_served_by_mig_partitions() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Shared), (A100, PartitionMode::Mig)],
    )]);
    let mut r = resources(dec!(40), 8);
    r.isolation = Isolation::Mig;
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, r)));
    assert!(matches!(lease.placement.gpus[0].slot, Slot::Mig { .. }));
}

#[test]
fn a_quote_names_the_slice_units_and_price_without_changing_anything() {
    let mut e = engine_with(vec![node(1, "eu", &[(H100, PartitionMode::Mig)])]);
    let s = spec(Mode::OnDemand, resources(dec!(100), 8));
    let q = e.quote(&s).unwrap();
    assert!(matches!(&q.placement.gpus[0].slot, Slot::Mig { profile, .. } if profile == "1g.10gb"));
    assert_eq!(q.placement.units.tflops_h, dec!(141.286));
    assert_eq!(q.rule.multiplier(), dec!(1.8));
    assert!(e.leases().next().is_none());
    let lease = grant(&mut e, T0, place(1, s));
    assert_eq!(lease.placement, q.placement);
    assert_eq!(lease.price_per_hour, q.price_per_hour);
}

#[test]
fn the_market_book_shows_idle_capacity_and_queued_bids() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(dec!(1));
    run(&mut e, T0, place(2, s));
    let book = e.market_book();
    assert_eq!(book.levels.len(), 1);
    assert_eq!(book.levels[0].idle_gpus, 1);
    assert_eq!(book.levels[0].idle_milli, 1000);
    assert_eq!(book.bids.len(), 1);
    assert_eq!(book.live_leases, 1);
}
