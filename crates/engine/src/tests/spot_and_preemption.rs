//! The spot auction and preemption, through the engine.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::{self, PartitionMode};
use crate::pricing::PriceRule;
use crate::*;

fn spot(max_price: Decimal) -> OrderSpec {
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(max_price);
    s
}

fn one_whole_gpu() -> Engine {
    engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])])
}

fn multiplier(l: &Lease) -> Decimal {
    l.rule.multiplier()
}

#[test]
fn a_bid_below_the_floor_is_rejected() {
    // A whole A100 lists at 312 × 0.002 + 20 × 0.05 = 1.624 per hour; 0.8 is index 0.49.
    let mut e = one_whole_gpu();
    assert_eq!(
        rejected(&run(&mut e, T0, place(1, spot(dec!(0.8))))),
        Some(RejectReason::BelowFloor)
    );
    assert_eq!(rejected(&run(&mut e, T0, place(2, spot(dec!(0.82))))), None);
}

#[test]
fn spot_bids_fill_on_the_next_clearing_at_the_floor_when_no_bid_loses() {
    let mut e = one_whole_gpu();
    let ev = run(&mut e, T0, place(1, spot(dec!(1.0))));
    assert!(granted(&ev).is_empty(), "sealed bids wait for the clearing");
    let ev = run(&mut e, T0 + 10, Command::Tick);
    let lease = granted(&ev).pop().expect("filled at the clearing");
    assert_eq!(multiplier(&lease), dec!(0.5));
    assert_eq!(lease.price_per_hour, dec!(0.812));
    assert_eq!(e.clearing_index(A100, "eu"), Some(dec!(0.5)));
}

#[test]
fn the_clearing_index_is_the_highest_losing_index_and_winners_pay_no_more_than_it() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0)))); // index 0.615764
    run(&mut e, T0, place(2, spot(dec!(1.05)))); // index 0.646552
    let ev = run(&mut e, T0 + 10, Command::Tick);
    let lease = granted(&ev).pop().unwrap();
    assert_eq!(lease.order_id, order_id(2));
    assert_eq!(
        lease.rule,
        PriceRule::Spot {
            bid_index: dec!(0.646552),
            clearing_index: dec!(0.615764)
        }
    );
    // Within 10 % of its own bid: an early rebalance warning.
    assert!(ev
        .iter()
        .any(|x| matches!(x, Event::RebalanceWarning { lease_id, .. } if *lease_id == lease.id)));
}

#[test]
fn every_clearing_reports_each_priced_market_with_its_unit_prices_and_the_units_won() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0)))); // index 0.615764
    run(&mut e, T0, place(2, spot(dec!(1.05)))); // index 0.646552, the winner
    let cleared = |ev: &[Event]| -> Vec<Event> {
        ev.iter()
            .filter(|x| matches!(x, Event::AuctionCleared { .. }))
            .cloned()
            .collect()
    };
    let ev = run(&mut e, T0 + 10, Command::Tick);
    let lease = granted(&ev).pop().expect("a winner");
    let reports = cleared(&ev);
    let [Event::AuctionCleared {
        gpu_model,
        region,
        clearing_index,
        unit_prices,
        won,
        at,
    }] = reports.as_slice()
    else {
        panic!("one market, one report: {ev:?}");
    };
    assert_eq!((gpu_model.as_str(), region.as_str()), (A100, "eu"));
    assert_eq!(*clearing_index, dec!(0.615764));
    // A100 lists at 0.002 per TFLOPS-hour and 0.05 per VRAM unit-hour.
    assert_eq!(unit_prices.tflops_h, dec!(0.002) * dec!(0.615764));
    assert_eq!(unit_prices.vram_h, dec!(0.05) * dec!(0.615764));
    assert_eq!(*won, lease.placement.units);
    assert_eq!(*at, T0 + 10);
    // The next clearing reports again, unchanged index or not, with nothing won.
    let ev = run(&mut e, T0 + 20, Command::Tick);
    let reports = cleared(&ev);
    let [Event::AuctionCleared { won, .. }] = reports.as_slice() else {
        panic!("a report at every clearing: {ev:?}");
    };
    assert_eq!(*won, placement::Units::default());
}

#[test]
fn the_clearing_index_is_capped_at_point_seven() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.5)))); // index 0.92
    run(&mut e, T0, place(2, spot(dec!(1.6))));
    let lease = grant(&mut e, T0 + 10, Command::Tick);
    assert_eq!(multiplier(&lease), dec!(0.7));
}

#[test]
fn spot_clears_only_every_interval_unless_capacity_changes() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    run(&mut e, T0, Command::Tick);
    run(&mut e, T0 + 1, place(1, spot(dec!(1.0))));
    assert!(granted(&run(&mut e, T0 + 5, Command::Tick)).is_empty());
    assert_eq!(granted(&run(&mut e, T0 + 10, Command::Tick)).len(), 1);
}

#[test]
fn on_demand_takes_a_spot_slice_only_after_notice_and_waits_pending_meanwhile() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    provisioned(&mut e, T0 + 12, s.id);
    let ev = run(
        &mut e,
        T0 + 100,
        place(2, spec(Mode::OnDemand, whole_a100())),
    );
    let od = granted(&ev).pop().unwrap();
    assert_eq!(od.state, LeaseState::Pending);
    assert_eq!(od.ready_at, Some(T0 + 220));
    assert!(ev.iter().any(|x| matches!(x, Event::PreemptNotice { lease_id, preempt_at, .. } if *lease_id == s.id && *preempt_at == T0 + 220)));
    assert_eq!(e.lease(s.id).unwrap().state, LeaseState::Preempting);
    assert!(ended(&run(&mut e, T0 + 219, Command::Tick)).is_empty());
    let ev = run(&mut e, T0 + 220, Command::Tick);
    assert_eq!(ended(&ev), vec![(s.id, EndReason::Preempted, T0 + 220)]);
    assert!(ev
        .iter()
        .any(|x| matches!(x, Event::OrderRequeued { order_id: o, .. } if *o == order_id(1))));
    assert_eq!(e.lease(od.id).unwrap().state, LeaseState::Provisioning);
}

#[test]
fn a_victim_that_exits_within_its_notice_frees_its_slice_and_the_waiting_lease_starts_at_once() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    provisioned(&mut e, T0 + 12, s.id);
    let mut hour = spec(Mode::OnDemand, whole_a100());
    hour.duration_s = Some(3600);
    let od = grant(&mut e, T0 + 100, place(2, hour));
    assert_eq!(
        (od.state, od.ready_at),
        (LeaseState::Pending, Some(T0 + 220))
    );
    // The workload exits on SIGTERM four seconds into its notice.
    let ev = run(
        &mut e,
        T0 + 104,
        Command::AgentStatus {
            lease_id: s.id,
            status: AgentReport::Ended,
        },
    );
    assert_eq!(ended(&ev), vec![(s.id, EndReason::AgentEnded, T0 + 104)]);
    let started = e.lease(od.id).unwrap();
    assert_eq!(started.state, LeaseState::Provisioning);
    assert_eq!(started.starts_at, T0 + 104, "not at the deadline, T0 + 220");
    assert_eq!(started.ready_at, None);
    assert_eq!(
        started.ends_at,
        Some(T0 + 104 + 3600),
        "a full hour from its start"
    );
    assert!(ev.iter().any(|x| matches!(x, Event::LeaseStateChanged { lease_id, to: LeaseState::Provisioning, at, .. } if *lease_id == od.id && *at == T0 + 104)));
    // Its stale timers change nothing: not re-provisioned at the deadline,
    // and it ends an hour after it started, not after the deadline.
    let ev = run(&mut e, T0 + 220, Command::Tick);
    assert!(
        ev.iter()
            .all(|x| !matches!(x, Event::LeaseStateChanged { lease_id, .. } if *lease_id == od.id)),
        "{ev:?}"
    );
    assert!(ended(&run(&mut e, T0 + 104 + 3599, Command::Tick)).is_empty());
    assert_eq!(
        ended(&run(&mut e, T0 + 104 + 3600, Command::Tick)),
        vec![(od.id, EndReason::Expired, T0 + 104 + 3600)]
    );
}

#[test]
fn a_lease_waiting_on_two_victims_starts_only_when_both_are_gone() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    run(&mut e, T0, place(2, spot(dec!(1.0))));
    let spots = granted(&run(&mut e, T0 + 10, Command::Tick));
    assert_eq!(spots.len(), 2);
    let mut two = spec(Mode::OnDemand, whole_a100());
    two.resources.gpus = Some(2);
    let od = grant(&mut e, T0 + 100, place(3, two));
    assert_eq!(od.state, LeaseState::Pending);
    let report = |id| Command::AgentStatus {
        lease_id: id,
        status: AgentReport::Ended,
    };
    run(&mut e, T0 + 104, report(spots[0].id));
    assert_eq!(
        e.lease(od.id).unwrap().state,
        LeaseState::Pending,
        "one victim still holds a GPU"
    );
    run(&mut e, T0 + 150, report(spots[1].id));
    let started = e.lease(od.id).unwrap();
    assert_eq!(
        (started.state, started.starts_at),
        (LeaseState::Provisioning, T0 + 150)
    );
}

#[test]
fn on_demand_never_takes_capacity_from_on_demand_or_reserved() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(
        rejected(&run(
            &mut e,
            T0,
            place(2, spec(Mode::OnDemand, whole_a100()))
        )),
        Some(RejectReason::NoCapacity)
    );
}

fn reserved(start: Ts, dur: Ts) -> OrderSpec {
    let mut s = spec(Mode::Reserved, whole_a100());
    s.start_at = Some(start);
    s.duration_s = Some(dur);
    s
}

#[test]
fn a_reservation_over_a_spot_lease_sends_its_notice_at_start_minus_notice() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    let r = grant(&mut e, T0 + 10, place(2, reserved(T0 + 7200, 3600)));
    assert_eq!(e.lease(s.id).unwrap().state, LeaseState::Provisioning);
    let ev = run(&mut e, T0 + 7079, Command::Tick);
    assert!(!ev.iter().any(|x| matches!(x, Event::PreemptNotice { .. })));
    let ev = run(&mut e, T0 + 7080, Command::Tick);
    assert!(ev.iter().any(|x| matches!(x, Event::PreemptNotice { lease_id, preempt_at, at, .. } if *lease_id == s.id && *preempt_at == T0 + 7200 && *at == T0 + 7080)));
    let ev = run(&mut e, T0 + 7200, Command::Tick);
    assert_eq!(ended(&ev), vec![(s.id, EndReason::Preempted, T0 + 7200)]);
    assert_eq!(e.lease(r.id).unwrap().state, LeaseState::Provisioning);
}

#[test]
fn spot_is_never_placed_inside_a_booked_window() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, reserved(T0 + 7200, 3600)));
    run(&mut e, T0, place(2, spot(dec!(1.0))));
    assert!(granted(&run(&mut e, T0 + 10, Command::Tick)).is_empty());
}

#[test]
fn after_downtime_the_first_tick_processes_every_notice_and_end_that_fell_due() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    let r = grant(&mut e, T0 + 10, place(2, reserved(T0 + 7200, 3600)));
    let ev = run(&mut e, T0 + 50_000, Command::Tick);
    let notice = ev
        .iter()
        .position(|x| matches!(x, Event::PreemptNotice { at, .. } if *at == T0 + 7080))
        .expect("notice");
    let spot_end = ev.iter().position(|x| matches!(x, Event::LeaseEnded { lease_id, at, .. } if *lease_id == s.id && *at == T0 + 7200)).expect("spot end");
    let ready = ev.iter().position(|x| matches!(x, Event::LeaseStateChanged { lease_id, to: LeaseState::Provisioning, at, .. } if *lease_id == r.id && *at == T0 + 7200)).expect("ready");
    let r_end = ev.iter().position(|x| matches!(x, Event::LeaseEnded { lease_id, at, .. } if *lease_id == r.id && *at == T0 + 10_800)).expect("reserved end");
    assert!(notice < spot_end && spot_end < ready && ready < r_end);
}

#[test]
fn cancelling_a_spot_order_ends_its_lease() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    let ev = run(
        &mut e,
        T0 + 15,
        Command::Cancel {
            order_id: order_id(1),
        },
    );
    assert_eq!(ended(&ev), vec![(s.id, EndReason::OrderCancelled, T0 + 15)]);
    assert!(ev.iter().any(|x| matches!(x, Event::OrderCancelled { .. })));
}

#[test]
fn a_preempted_spot_order_is_filled_again_when_capacity_returns() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    let od = grant(
        &mut e,
        T0 + 11,
        place(2, spec(Mode::OnDemand, whole_a100())),
    );
    run(&mut e, T0 + 131, Command::Tick);
    run(&mut e, T0 + 200, Command::Release { lease_id: od.id });
    // Capacity changed: the next tick clears, interval or not.
    let ev = run(&mut e, T0 + 201, Command::Tick);
    let again = granted(&ev).pop().expect("re-filled");
    assert_eq!(again.order_id, s.order_id);
    assert_eq!(again.id, lease_id(s.order_id, 1));
}

#[test]
fn pooled_batch_makes_way_for_on_demand_after_notice() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Shared)])]);
    let pooled = granted(&run(
        &mut e,
        T0,
        place(1, spec(Mode::Pooled, resources(dec!(312), 80))),
    ))
    .pop()
    .unwrap();
    assert_eq!(pooled.rule.multiplier(), dec!(1.0));
    let od = granted(&run(
        &mut e,
        T0 + 1,
        place(2, spec(Mode::OnDemand, resources(dec!(156), 40))),
    ))
    .pop()
    .unwrap();
    assert_eq!(od.state, LeaseState::Pending);
    assert!(noticed(&e, pooled.id));
}

#[test]
fn a_lease_noticed_before_it_runs_runs_and_is_billed_until_the_notice_ends() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    assert_eq!(s.state, LeaseState::Provisioning);
    run(
        &mut e,
        T0 + 11,
        place(2, spec(Mode::OnDemand, whole_a100())),
    );
    // Noticed, but still to be provisioned: the agent is still to start it.
    assert!(noticed(&e, s.id));
    assert_eq!(e.lease(s.id).unwrap().state, LeaseState::Provisioning);
    // Running (its seconds billed from here), then preempting at once.
    let ev = provisioned(&mut e, T0 + 13, s.id);
    let states: Vec<_> = ev
        .iter()
        .filter_map(|x| match x {
            Event::LeaseStateChanged { lease_id, to, .. } if *lease_id == s.id => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(states, vec![LeaseState::Running, LeaseState::Preempting]);
    let ev = run(&mut e, T0 + 131, Command::Tick);
    assert_eq!(ended(&ev), vec![(s.id, EndReason::Preempted, T0 + 131)]);
}

#[test]
fn a_pending_lease_whose_notice_ends_before_it_starts_is_never_provisioned() {
    // Pooled realtime waits on pooled batch's notice; on-demand arriving at
    // once outranks both, so realtime's notice ends where its window begins.
    let (mut e, batch, rt) = pooled_realtime_behind_batch();
    assert_eq!(rt.ready_at, Some(T0 + 120));
    let od = grant(
        &mut e,
        T0,
        place(3, spec(Mode::OnDemand, whole_shared_a100())),
    );
    assert_eq!(od.ready_at, Some(T0 + 120));
    assert!(noticed(&e, rt.id));
    assert_eq!(e.lease(rt.id).unwrap().state, LeaseState::Pending);
    let ev = run(&mut e, T0 + 120, Command::Tick);
    let gone = ended(&ev);
    assert_eq!(gone.len(), 2, "{gone:?}");
    for id in [batch.id, rt.id] {
        assert!(
            gone.contains(&(id, EndReason::Preempted, T0 + 120)),
            "{gone:?}"
        );
    }
    assert!(!ev.iter().any(|x| matches!(
        x,
        Event::LeaseStateChanged { lease_id, to: LeaseState::Provisioning, .. } if *lease_id == rt.id
    )));
    assert_eq!(e.lease(od.id).unwrap().state, LeaseState::Provisioning);
}

#[test]
fn a_higher_bid_displaces_a_lower_spot_lease_after_notice() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let low = grant(&mut e, T0 + 10, Command::Tick);
    run(&mut e, T0 + 11, place(2, spot(dec!(1.05))));
    let ev = run(&mut e, T0 + 20, Command::Tick);
    let high = granted(&ev)
        .pop()
        .expect("the higher bid gets a pending lease");
    assert_eq!(high.state, LeaseState::Pending);
    assert_eq!(high.ready_at, Some(T0 + 140));
    assert!(ev.iter().any(|x| matches!(x, Event::PreemptNotice { lease_id, preempt_at, .. } if *lease_id == low.id && *preempt_at == T0 + 140)));
    let ev = run(&mut e, T0 + 140, Command::Tick);
    assert_eq!(ended(&ev), vec![(low.id, EndReason::Preempted, T0 + 140)]);
    assert_eq!(e.lease(high.id).unwrap().state, LeaseState::Provisioning);
    // The lower bid is back in the queue and cannot displace the higher one.
    assert!(granted(&run(&mut e, T0 + 150, Command::Tick)).is_empty());
}

/// Three whole A100s held by spot leases bidding index 0.95, 0.60 and 0.55
/// (a whole A100 lists at 1.624 per hour). Returns them highest first.
fn three_spot_leases_at_095_060_055() -> (Engine, [Lease; 3]) {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[
            (A100, PartitionMode::Whole),
            (A100, PartitionMode::Whole),
            (A100, PartitionMode::Whole),
        ],
    )]);
    run(&mut e, T0, place(1, spot(dec!(1.5428))));
    run(&mut e, T0, place(2, spot(dec!(0.9744))));
    run(&mut e, T0, place(3, spot(dec!(0.8932))));
    let mut leases = granted(&run(&mut e, T0 + 10, Command::Tick));
    assert_eq!(leases.len(), 3);
    leases.sort_by_key(|l| std::cmp::Reverse(l.bid_index));
    for l in &leases {
        provisioned(&mut e, T0 + 11, l.id);
    }
    let indices: Vec<_> = leases.iter().map(|l| l.bid_index.unwrap()).collect();
    assert_eq!(indices, vec![dec!(0.95), dec!(0.6), dec!(0.55)]);
    let [a, b, c] = <[Lease; 3]>::try_from(leases).unwrap();
    (e, [a, b, c])
}

#[test]
fn a_claim_for_one_gpu_notices_only_the_lowest_spot_lease_and_ends_one_job() {
    let (mut e, [high, mid, low]) = three_spot_leases_at_095_060_055();
    let ev = run(
        &mut e,
        T0 + 20,
        place(9, spec(Mode::OnDemand, whole_a100())),
    );
    let noticed_now: Vec<_> = ev
        .iter()
        .filter_map(|x| match x {
            Event::PreemptNotice { lease_id, .. } => Some(*lease_id),
            _ => None,
        })
        .collect();
    assert_eq!(noticed_now, vec![low.id]);
    let od = granted(&ev).pop().unwrap();
    assert_eq!(od.placement.gpus, low.placement.gpus);
    // Through the notice and several clearings after it, only that job ends:
    // the re-queued 0.55 bid outbids nobody.
    let mut gone = ended(&run(&mut e, T0 + 140, Command::Tick));
    for t in [T0 + 150, T0 + 160, T0 + 170, T0 + 300] {
        gone.extend(ended(&run(&mut e, t, Command::Tick)));
    }
    assert_eq!(gone, vec![(low.id, EndReason::Preempted, T0 + 140)]);
    for l in [&high, &mid] {
        assert!(!noticed(&e, l.id));
        assert_eq!(e.lease(l.id).unwrap().state, LeaseState::Running);
    }
}

#[test]
fn a_claim_for_two_gpus_notices_the_two_lowest_spot_leases() {
    let (mut e, [high, mid, low]) = three_spot_leases_at_095_060_055();
    let mut two = whole_a100();
    two.tflops = dec!(624);
    two.vram_gb = 160;
    two.gpus = Some(2);
    let ev = run(&mut e, T0 + 20, place(9, spec(Mode::OnDemand, two)));
    assert!(granted(&ev).pop().is_some(), "{ev:?}");
    assert!(noticed(&e, low.id) && noticed(&e, mid.id));
    assert!(!noticed(&e, high.id));
}

#[test]
fn a_higher_bid_displaces_only_the_lowest_of_several_spot_leases() {
    let (mut e, [high, mid, low]) = three_spot_leases_at_095_060_055();
    run(&mut e, T0 + 20, place(9, spot(dec!(1.1368)))); // index 0.70
    run(&mut e, T0 + 30, Command::Tick);
    assert!(noticed(&e, low.id));
    assert!(!noticed(&e, mid.id) && !noticed(&e, high.id));
}

#[test]
fn a_spot_workload_that_exits_on_its_notice_ends_as_reported_and_its_order_is_requeued() {
    for (status, reason) in [
        (AgentReport::Ended, EndReason::AgentEnded),
        (AgentReport::Failed, EndReason::AgentFailed),
    ] {
        let mut e = one_whole_gpu();
        run(&mut e, T0, place(1, spot(dec!(1.0))));
        let s = grant(&mut e, T0 + 10, Command::Tick);
        provisioned(&mut e, T0 + 12, s.id);
        let od = grant(
            &mut e,
            T0 + 20,
            place(2, spec(Mode::OnDemand, whole_a100())),
        );
        assert!(noticed(&e, s.id));
        let ev = run(
            &mut e,
            T0 + 30,
            Command::AgentStatus {
                lease_id: s.id,
                status,
            },
        );
        assert_eq!(ended(&ev), vec![(s.id, reason, T0 + 30)]);
        assert!(
            ev.iter()
                .any(|x| matches!(x, Event::OrderRequeued { order_id: o, .. } if *o == s.order_id)),
            "{ev:?}"
        );
        // Back in the queue: filled again once the on-demand lease is gone.
        run(&mut e, T0 + 200, Command::Release { lease_id: od.id });
        let again = granted(&run(&mut e, T0 + 201, Command::Tick)).pop();
        assert_eq!(again.map(|l| l.id), Some(lease_id(s.order_id, 1)));
    }
}

#[test]
fn a_spot_workload_that_exits_before_any_notice_ends_its_order() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    provisioned(&mut e, T0 + 12, s.id);
    let ev = run(
        &mut e,
        T0 + 20,
        Command::AgentStatus {
            lease_id: s.id,
            status: AgentReport::Ended,
        },
    );
    assert_eq!(ended(&ev), vec![(s.id, EndReason::AgentEnded, T0 + 20)]);
    assert!(!ev.iter().any(|x| matches!(x, Event::OrderRequeued { .. })));
    assert!(granted(&run(&mut e, T0 + 30, Command::Tick)).is_empty());
}

#[test]
fn a_bid_without_room_keeps_losing_until_something_is_freed_then_wins() {
    let mut e = one_whole_gpu();
    let od = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    run(&mut e, T0, place(2, spot(dec!(1.0))));
    // No room at three clearings: the later two remember it and place nothing.
    let before = e.view().growth();
    for k in 1..=3 {
        let ev = run(&mut e, T0 + 10 * k, Command::Tick);
        assert!(granted(&ev).is_empty(), "clearing {k}");
        assert_eq!(e.view().growth(), before, "clearing {k} frees nothing");
    }
    // An on-demand order that finds no room takes nothing and frees nothing.
    run(
        &mut e,
        T0 + 35,
        place(3, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(e.view().growth(), before);
    run(&mut e, T0 + 37, Command::Release { lease_id: od.id });
    assert!(e.view().growth() > before, "a release frees room");
    let ev = run(&mut e, T0 + 38, Command::Tick);
    let won = granted(&ev).pop().expect("the bid wins once room is freed");
    assert_eq!(won.order_id, order_id(2));
    e.validate().expect("invariants hold");
}
