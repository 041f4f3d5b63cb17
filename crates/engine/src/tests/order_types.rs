//! ARCHITECTURE.md §22, "Order types": gangs of `count` units placed
//! together (all-or-none, or at least `min_count`), and waiting orders that
//! expire at their deadline (good-til-time).

use proptest::prelude::*;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

/// One node of `gpus` whole A100s.
fn whole_a100s(gpus: usize) -> Engine {
    let layout = vec![(A100, PartitionMode::Whole); gpus];
    engine_with(vec![node(1, "eu", &layout)])
}

fn gang(mode: Mode, count: u32, min_count: u32) -> OrderSpec {
    let mut s = spec(mode, whole_a100());
    s.gang = Some(Gang { count, min_count });
    s
}

fn fills_of(ev: &[Event], order: uuid::Uuid) -> Vec<uuid::Uuid> {
    ev.iter()
        .filter_map(|e| match e {
            Event::OrderFilled {
                order_id, lease_id, ..
            } if *order_id == order => Some(*lease_id),
            _ => None,
        })
        .collect()
}

#[test]
fn an_all_or_none_gang_larger_than_the_free_capacity_gets_nothing_and_changes_nothing() {
    let mut e = whole_a100s(2);
    let before = e.view().nodes().to_vec();
    let ev = run(&mut e, T0, place(1, gang(Mode::OnDemand, 3, 3)));
    assert_eq!(rejected(&ev), Some(RejectReason::NoCapacity));
    assert!(granted(&ev).is_empty(), "{ev:?}");
    assert_eq!(e.view().nodes(), &before[..], "the view is put back");
    // The whole fleet is still there for a gang that fits.
    let ev = run(&mut e, T0, place(2, gang(Mode::OnDemand, 2, 2)));
    let leases = granted(&ev);
    assert_eq!(leases.len(), 2);
    assert_ne!(leases[0].id, leases[1].id);
    assert_ne!(leases[0].placement.gpus, leases[1].placement.gpus);
    assert_eq!(
        fills_of(&ev, order_id(2)),
        leases.iter().map(|l| l.id).collect::<Vec<_>>()
    );
    // Every grant comes before the first fill (the ledger may refuse a leg).
    let last_grant = ev
        .iter()
        .rposition(|e| matches!(e, Event::LeaseGranted { .. }));
    let first_fill = ev
        .iter()
        .position(|e| matches!(e, Event::OrderFilled { .. }));
    assert!(last_grant < first_fill);
}

#[test]
fn a_gang_with_a_min_count_takes_what_there_is_down_to_its_minimum() {
    let mut e = whole_a100s(2);
    let ev = run(&mut e, T0, place(1, gang(Mode::OnDemand, 4, 2)));
    assert_eq!(granted(&ev).len(), 2);
    assert_eq!(rejected(&ev), None);
    // Nothing left: a second gang of at least one is refused.
    let ev = run(&mut e, T0, place(2, gang(Mode::OnDemand, 4, 1)));
    assert_eq!(rejected(&ev), Some(RejectReason::NoCapacity));
}

#[test]
fn a_gang_whose_wallet_holds_fewer_legs_than_its_minimum_is_refused_whole() {
    let mut e = whole_a100s(3);
    // One on-demand whole A100 for an hour holds 2.9232; three hold 8.7696.
    let one_hold = granted(&run(
        &mut whole_a100s(1),
        T0,
        place(9, spec(Mode::OnDemand, whole_a100())),
    ))[0]
        .hold;
    let ev = run(
        &mut e,
        T0,
        place_with_funds(1, gang(Mode::OnDemand, 3, 3), one_hold * dec!(2.5)),
    );
    assert_eq!(rejected(&ev), Some(RejectReason::InsufficientFunds));
    assert!(granted(&ev).is_empty());
    let ev = run(
        &mut e,
        T0,
        place_with_funds(2, gang(Mode::OnDemand, 3, 2), one_hold * dec!(2.5)),
    );
    assert_eq!(granted(&ev).len(), 2, "as many as the wallet holds");
}

#[test]
fn max_price_binds_on_each_unit_of_a_gang() {
    let mut e = whole_a100s(2);
    let mut capped = gang(Mode::OnDemand, 2, 2);
    capped.max_price = Some(dec!(2.9232));
    assert_eq!(granted(&run(&mut e, T0, place(1, capped))).len(), 2);
    let mut e = whole_a100s(2);
    let mut capped = gang(Mode::OnDemand, 2, 2);
    capped.max_price = Some(dec!(2.9));
    let ev = run(&mut e, T0, place(2, capped));
    assert_eq!(rejected(&ev), Some(RejectReason::MaxPriceExceeded));
}

#[test]
fn a_waiting_gang_fills_whole_once_enough_frees_and_not_before() {
    let mut e = whole_a100s(2);
    let first = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let mut waiting = gang(Mode::OnDemand, 2, 2);
    waiting.max_wait_s = Some(3600);
    let ev = run(&mut e, T0, place(2, waiting));
    assert!(granted(&ev).is_empty() && rejected(&ev).is_none(), "{ev:?}");
    // One GPU free is not enough for the gang.
    let ev = run(&mut e, T0 + 10, Command::Tick);
    assert!(granted(&ev).is_empty());
    let ev = run(&mut e, T0 + 20, Command::Release { lease_id: first.id });
    let ev = [ev, run(&mut e, T0 + 21, Command::Tick)].concat();
    assert_eq!(fills_of(&ev, order_id(2)).len(), 2, "{ev:?}");
}

#[test]
fn a_waiting_order_expires_at_its_deadline_with_nothing_granted() {
    let mut e = whole_a100s(1);
    let first = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let mut gtt = gang(Mode::OnDemand, 1, 1);
    gtt.max_wait_s = Some(600);
    run(&mut e, T0, place(2, gtt));
    let ev = run(&mut e, T0 + 600, Command::Tick);
    assert!(
        ev.iter().any(|e| matches!(e,
            Event::OrderExpired { order_id: id, at } if *id == order_id(2) && *at == T0 + 600)),
        "{ev:?}"
    );
    // Capacity freed after the deadline goes to no one.
    let ev = run(&mut e, T0 + 601, Command::Release { lease_id: first.id });
    assert!(granted(&ev).is_empty());
}

#[test]
fn a_lost_leg_is_placed_again_alone_while_its_siblings_run_on() {
    let mut e = engine_with(vec![
        node(1, "eu", &[(A100, PartitionMode::Whole)]),
        node(2, "eu", &[(A100, PartitionMode::Whole)]),
        node(3, "eu", &[(A100, PartitionMode::Whole)]),
    ]);
    let legs = granted(&run(&mut e, T0, place(1, gang(Mode::OnDemand, 2, 2))));
    assert_eq!(legs.len(), 2);
    let lost = &legs[0];
    let ev = run(&mut e, T0 + 60, Command::NodeLost { node: lost.node });
    let replaced = granted(&ev);
    assert_eq!(replaced.len(), 1, "{ev:?}");
    assert!(replaced[0].spec.gang.is_none());
    assert!(e.lease(legs[1].id).is_some(), "the sibling runs on");
    assert!(![lost.id, legs[1].id].contains(&replaced[0].id));
}

#[test]
fn a_quote_counts_the_units_free_capacity_holds_now() {
    let mut e = whole_a100s(3);
    grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let nodes = e.view().nodes().to_vec();
    let counters = (e.view().changes(), e.view().growth());
    // A whole A100 on demand: 2.9232 an hour.
    assert_eq!(
        e.gang_room(&gang(Mode::OnDemand, 5, 1)),
        Ok((2, dec!(5.8464)))
    );
    assert_eq!(
        e.gang_room(&gang(Mode::OnDemand, 1, 1)),
        Ok((1, dec!(2.9232)))
    );
    // The trial leaves no trace: the nodes and the counters a memo reads.
    assert_eq!(e.view().nodes(), &nodes[..]);
    assert_eq!((e.view().changes(), e.view().growth()), counters);
    e.validate().unwrap();
}

#[test]
fn gangs_on_spot_or_reserved_or_out_of_range_are_refused() {
    for bad in [
        gang(Mode::Spot, 2, 2),
        gang(Mode::Reserved, 2, 2),
        gang(Mode::OnDemand, 0, 0),
        gang(Mode::OnDemand, 2, 3),
        gang(Mode::OnDemand, Gang::MAX_COUNT + 1, 1),
    ] {
        let mut e = whole_a100s(2);
        let ev = run(&mut e, T0, place(1, bad.clone()));
        assert_eq!(rejected(&ev), Some(RejectReason::OutOfRange), "{bad:?}");
    }
}

/// A fleet of `nodes` nodes, each of `gpus` whole or MIG A100s.
fn mixed_fleet(nodes: u8, gpus: usize, mig: bool) -> Engine {
    let mode = if mig {
        PartitionMode::Mig
    } else {
        PartitionMode::Whole
    };
    let layout = vec![(A100, mode); gpus];
    engine_with(
        (0..nodes)
            .map(|n| node(u128::from(n), "eu", &layout))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever was there before, a gang is placed with at least
    /// `min_count` legs (exactly `count` when all-or-none) or not at all,
    /// and when not at all the engine is as it was.
    #[test]
    fn a_gang_is_whole_within_its_bounds_or_absent(
        nodes in 1u8..4,
        gpus in 1usize..5,
        mig in any::<bool>(),
        preload in proptest::collection::vec((1u32..4, any::<bool>()), 0..8),
        count in 1u32..9,
        min_seed in 0u32..9,
        all_or_none in any::<bool>(),
        tflops in prop_oneof![Just(dec!(40)), Just(dec!(100)), Just(dec!(312))],
    ) {
        let mut e = mixed_fleet(nodes, gpus, mig);
        for (id, (k, pooled)) in (100u128..).zip(preload) {
            let mode = if pooled { Mode::Pooled } else { Mode::OnDemand };
            let mut s = spec(mode, resources(dec!(40), 10));
            s.gang = Some(Gang { count: k, min_count: 1 });
            run(&mut e, T0, place(id, s));
        }
        let min_count = if all_or_none { count } else { 1 + min_seed % count };
        let mut s = spec(Mode::OnDemand, resources(tflops, 20));
        s.gang = Some(Gang { count, min_count });
        let room = e.gang_room(&s).map_or(0, |r| r.0);
        let before = e.view().nodes().to_vec();
        let live_before = e.leases().count();
        let ev = run(&mut e, T0 + 1, place(1, s));
        let legs = fills_of(&ev, order_id(1));
        if legs.is_empty() {
            prop_assert!(rejected(&ev).is_some());
            prop_assert!(room < min_count, "room {room} ≥ {min_count} but refused");
            prop_assert_eq!(e.view().nodes(), &before[..]);
            prop_assert_eq!(e.leases().count(), live_before);
        } else {
            let n = legs.len() as u32;
            prop_assert!((min_count..=count).contains(&n), "{n} legs of {min_count}..={count}");
            prop_assert_eq!(n, room.min(count), "the quote said what was placed");
            prop_assert_eq!(granted(&ev).len(), legs.len());
        }
    }
}
