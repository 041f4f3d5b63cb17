//! One test per rule of orders, leases, funds and capacity.

use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::{PartitionMode, Slot};
use crate::*;
use gpuex_wire::catalog::Precision;

fn one_whole_gpu() -> Engine {
    engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])])
}

#[test]
fn on_demand_is_filled_at_once_at_one_point_eight_times_list() {
    let mut e = one_whole_gpu();
    let ev = run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let lease = granted(&ev).pop().expect("granted");
    assert_eq!(lease.state, LeaseState::Provisioning);
    assert_eq!(lease.unit_prices.tflops_h, dec!(0.0036));
    assert_eq!(lease.unit_prices.vram_h, dec!(0.090));
    // 312 tflops × 0.0036 + 20 vram × 0.09
    assert_eq!(lease.price_per_hour, dec!(2.9232));
    assert_eq!(lease.hold, dec!(2.9232));
    assert!(ev.iter().any(|x| matches!(x, Event::OrderFilled { report, .. } if report.sources_considered == vec!["primary".to_string()])));
}

#[test]
fn an_order_without_capacity_and_no_max_wait_is_rejected_with_no_capacity() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let ev = run(&mut e, T0, place(2, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(rejected(&ev), Some(RejectReason::NoCapacity));
}

#[test]
fn a_waiting_order_expires_after_max_wait() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.max_wait_s = Some(60);
    let ev = run(&mut e, T0, place(2, s));
    assert!(matches!(ev[0], Event::OrderAccepted { .. }));
    let ev = run(&mut e, T0 + 59, Command::Tick);
    assert!(!ev.iter().any(|x| matches!(x, Event::OrderExpired { .. })));
    let ev = run(&mut e, T0 + 60, Command::Tick);
    assert!(ev.iter().any(|x| matches!(x, Event::OrderExpired { order_id, at } if *order_id == super::helpers::order_id(2) && *at == T0 + 60)));
}

#[test]
fn a_waiting_order_is_filled_when_capacity_frees() {
    let mut e = one_whole_gpu();
    let first = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.max_wait_s = Some(600);
    run(&mut e, T0, place(2, s));
    let ev = run(&mut e, T0 + 5, Command::Release { lease_id: first.id });
    assert_eq!(ended(&ev), vec![(first.id, EndReason::Released, T0 + 5)]);
    assert_eq!(granted(&ev).len(), 1);
}

#[test]
fn realtime_orders_never_wait() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.max_wait_s = Some(600);
    s.qos = Qos::Realtime;
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, s))),
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
fn reserved_must_start_at_least_an_hour_ahead() {
    let mut e = one_whole_gpu();
    assert_eq!(
        rejected(&run(&mut e, T0, place(1, reserved(T0 + 3599, 3600)))),
        Some(RejectReason::ReservedTooSoon)
    );
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, reserved(T0 + 3600, 3600)))),
        None
    );
}

#[test]
fn reserved_windows_on_the_same_slice_never_overlap() {
    let mut e = one_whole_gpu();
    let a = grant(&mut e, T0, place(1, reserved(T0 + 7200, 3600)));
    assert_eq!(a.state, LeaseState::Pending);
    assert_eq!(a.price_per_hour, dec!(1.3804)); // 0.85 × list
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, reserved(T0 + 9000, 3600)))),
        Some(RejectReason::NoCapacity)
    );
    // Back to back is fine.
    assert_eq!(
        rejected(&run(&mut e, T0, place(3, reserved(T0 + 10_800, 3600)))),
        None
    );
}

#[test]
fn an_open_ended_lease_blocks_its_slice_for_later_reservations() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, reserved(T0 + 86_400, 3600)))),
        Some(RejectReason::NoCapacity)
    );
}

#[test]
fn a_reserved_lease_starts_provisioning_at_its_window_and_ends_with_it() {
    let mut e = one_whole_gpu();
    let a = grant(&mut e, T0, place(1, reserved(T0 + 7200, 3600)));
    let ev = run(&mut e, T0 + 7200, Command::Tick);
    assert!(ev.iter().any(|x| matches!(
        x,
        Event::LeaseStateChanged {
            to: LeaseState::Provisioning,
            ..
        }
    )));
    let ev = run(&mut e, T0 + 20_000, Command::Tick);
    assert_eq!(ended(&ev), vec![(a.id, EndReason::Expired, T0 + 10_800)]);
}

#[test]
fn a_reserved_hold_covers_a_rolling_seven_days_of_its_window() {
    let mut e = one_whole_gpu();
    let a = grant(&mut e, T0, place(1, reserved(T0 + 7200, 30 * 86_400)));
    assert_eq!(a.hold, a.price_per_hour * dec!(168));
}

#[test]
fn an_order_whose_hold_exceeds_the_funds_is_rejected() {
    let mut e = one_whole_gpu();
    let ev = run(
        &mut e,
        T0,
        place_with_funds(1, spec(Mode::OnDemand, whole_a100()), dec!(2.9)),
    );
    assert_eq!(rejected(&ev), Some(RejectReason::InsufficientFunds));
    let ev = run(
        &mut e,
        T0,
        place_with_funds(2, spec(Mode::OnDemand, whole_a100()), dec!(2.9232)),
    );
    assert_eq!(rejected(&ev), None);
}

#[test]
fn unknown_models_and_precisions_are_rejected_by_name() {
    let mut e = one_whole_gpu();
    let mut r = whole_a100();
    r.gpu_model = Some("Z9000".into());
    assert_eq!(
        rejected(&run(&mut e, T0, place(1, spec(Mode::OnDemand, r)))),
        Some(RejectReason::UnknownModel)
    );
    let mut r = resources(dec!(10), 4);
    r.gpu_model = Some("V100-SXM2-32GB".into());
    r.precision = Some(Precision::Fp8);
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, spec(Mode::OnDemand, r)))),
        Some(RejectReason::UnknownPrecision)
    );
}

#[test]
fn resources_no_gpu_can_hold_are_unsatisfiable() {
    let mut e = one_whole_gpu();
    // 400 GB on one GPU: no model has that much.
    assert_eq!(
        rejected(&run(
            &mut e,
            T0,
            place(1, spec(Mode::OnDemand, resources(dec!(10), 400)))
        )),
        Some(RejectReason::UnsatisfiableResources)
    );
    // An H100 fits the catalog but the fleet has none.
    let mut r = resources(dec!(10), 4);
    r.gpu_model = Some(H100.into());
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, spec(Mode::OnDemand, r)))),
        Some(RejectReason::UnsatisfiableResources)
    );
}

#[test]
fn orders_naming_a_cordoned_node_or_finding_only_cordoned_capacity_are_rejected_as_cordoned() {
    let mut e = one_whole_gpu();
    run(
        &mut e,
        T0,
        Command::Cordon {
            node: node_id(1),
            cordoned: true,
        },
    );
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.node = Some(node_id(1));
    assert_eq!(
        rejected(&run(&mut e, T0, place(1, s))),
        Some(RejectReason::NodeCordoned)
    );
    assert_eq!(
        rejected(&run(
            &mut e,
            T0,
            place(2, spec(Mode::OnDemand, whole_a100()))
        )),
        Some(RejectReason::NodeCordoned)
    );
    run(
        &mut e,
        T0,
        Command::Cordon {
            node: node_id(1),
            cordoned: false,
        },
    );
    assert_eq!(
        rejected(&run(
            &mut e,
            T0,
            place(3, spec(Mode::OnDemand, whole_a100()))
        )),
        None
    );
}

#[test]
fn invalid_resources_and_windows_are_rejected() {
    let mut e = one_whole_gpu();
    assert_eq!(
        rejected(&run(
            &mut e,
            T0,
            place(1, spec(Mode::OnDemand, resources(dec!(10), 6)))
        )),
        Some(RejectReason::InvalidResources)
    );
    let mut s = spec(Mode::Reserved, whole_a100());
    s.start_at = Some(T0 + 7200);
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, s))),
        Some(RejectReason::InvalidWindow)
    );
    run(
        &mut e,
        T0,
        place(3, spec(Mode::OnDemand, resources(dec!(1), 4))),
    );
    assert_eq!(
        rejected(&run(
            &mut e,
            T0,
            place(3, spec(Mode::OnDemand, resources(dec!(1), 4)))
        )),
        Some(RejectReason::DuplicateOrder)
    );
}

#[test]
fn a_mig_gpu_serves_a_small_order_with_the_smallest_adequate_profile_and_charges_its_units() {
    let mut e = engine_with(vec![node(1, "eu", &[(H100, PartitionMode::Mig)])]);
    let lease = granted(&run(
        &mut e,
        T0,
        place(1, spec(Mode::OnDemand, resources(dec!(100), 8))),
    ))
    .pop()
    .unwrap();
    assert!(
        matches!(&lease.placement.gpus[0].slot, Slot::Mig { profile, .. } if profile == "1g.10gb")
    );
    assert_eq!(lease.placement.units.tflops_h, dec!(141.286));
    assert!(e.internal_waste_milli() > 0);
}

#[test]
fn host_cpu_and_memory_default_to_the_share_matching_the_gpu_share() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Shared), (A100, PartitionMode::Shared)],
    )]);
    // 78 TFLOPS = a quarter of one A100 = an eighth of the node's two GPUs.
    let lease = granted(&run(
        &mut e,
        T0,
        place(1, spec(Mode::OnDemand, resources(dec!(78), 8))),
    ))
    .pop()
    .unwrap();
    assert_eq!(lease.placement.cpu_milli, 8_000);
    assert_eq!(lease.placement.memory_mib, 64_000);
}

#[test]
fn a_lease_runs_when_the_agent_reports_it_provisioned_and_ends_when_it_reports_ended() {
    let mut e = one_whole_gpu();
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let ev = run(
        &mut e,
        T0 + 3,
        Command::AgentStatus {
            lease_id: lease.id,
            status: AgentReport::Provisioned,
        },
    );
    assert!(matches!(
        ev[0],
        Event::LeaseStateChanged {
            to: LeaseState::Running,
            ..
        }
    ));
    let ev = run(
        &mut e,
        T0 + 9,
        Command::AgentStatus {
            lease_id: lease.id,
            status: AgentReport::Failed,
        },
    );
    assert_eq!(ended(&ev), vec![(lease.id, EndReason::AgentFailed, T0 + 9)]);
    assert!(ev.iter().any(|x| matches!(
        x,
        Event::LeaseStateChanged {
            to: LeaseState::Failed,
            ..
        }
    )));
}

#[test]
fn an_on_demand_lease_with_a_duration_ends_when_it_runs_out() {
    let mut e = one_whole_gpu();
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.duration_s = Some(600);
    let lease = grant(&mut e, T0, place(1, s));
    assert_eq!(
        ended(&run(&mut e, T0 + 1000, Command::Tick)),
        vec![(lease.id, EndReason::Expired, T0 + 600)]
    );
}

#[test]
fn funds_exhausted_starts_the_notice_and_a_reserved_booking_ends_where_funded() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    let od = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let ev = run(
        &mut e,
        T0 + 10,
        Command::FundsExhausted {
            lease_id: od.id,
            funded_until: None,
        },
    );
    assert!(ev.iter().any(|x| matches!(x, Event::PreemptNotice { preempt_at, reason: NoticeReason::FundsExhausted, .. } if *preempt_at == T0 + 130)));
    assert_eq!(
        ended(&run(&mut e, T0 + 200, Command::Tick)),
        vec![(od.id, EndReason::FundsExhausted, T0 + 130)]
    );

    let rs = grant(&mut e, T0 + 200, place(2, reserved(T0 + 7200, 10 * 86_400)));
    run(
        &mut e,
        T0 + 300,
        Command::FundsExhausted {
            lease_id: rs.id,
            funded_until: Some(T0 + 7200 + 86_400),
        },
    );
    assert_eq!(
        e.lease(rs.id).unwrap().booked_until(),
        Some(T0 + 7200 + 86_400)
    );
    let ev = run(&mut e, T0 + 7200 + 90_000, Command::Tick);
    assert_eq!(
        ended(&ev),
        vec![(rs.id, EndReason::FundsExhausted, T0 + 7200 + 86_400)]
    );
}

#[test]
fn a_lost_node_ends_its_leases_and_on_demand_is_re_placed_elsewhere() {
    let mut e = engine_with(vec![
        node(1, "eu", &[(A100, PartitionMode::Whole)]),
        node(2, "eu", &[(A100, PartitionMode::Whole)]),
    ]);
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let ev = run(&mut e, T0 + 50, Command::NodeLost { node: lease.node });
    assert_eq!(ended(&ev), vec![(lease.id, EndReason::NodeLost, T0 + 50)]);
    let again = granted(&ev).pop().expect("re-placed");
    assert_ne!(again.node, lease.node);
    assert_eq!(again.id, lease_id(lease.order_id, 1));
}

#[test]
fn a_changed_inventory_ends_the_leases_on_the_gpus_that_changed() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    let a = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let b = grant(&mut e, T0, place(2, spec(Mode::OnDemand, whole_a100())));
    let changed_index = a.placement.gpus[0].index;
    let mut spec_ = node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    );
    spec_.gpus[usize::from(changed_index)].mode = PartitionMode::Shared;
    let ev = run(&mut e, T0 + 1, Command::UpsertNode(spec_));
    assert_eq!(ended(&ev), vec![(a.id, EndReason::CapacityRemoved, T0 + 1)]);
    assert!(e.lease(b.id).is_some());
}

#[test]
fn lease_ids_derive_from_the_order_and_fill_number_only() {
    assert_eq!(lease_id(order_id(1), 0), lease_id(order_id(1), 0));
    assert_ne!(lease_id(order_id(1), 0), lease_id(order_id(1), 1));
    assert_ne!(lease_id(order_id(1), 0), lease_id(order_id(2), 0));
}

#[test]
fn every_reject_reason_has_a_code_and_a_message() {
    for r in [
        RejectReason::InsufficientFunds,
        RejectReason::NoCapacity,
        RejectReason::BelowFloor,
        RejectReason::ReservedTooSoon,
        RejectReason::UnknownModel,
        RejectReason::UnknownPrecision,
        RejectReason::UnsatisfiableResources,
        RejectReason::NodeCordoned,
    ] {
        assert!(!r.code().is_empty() && !r.message().is_empty());
        assert_eq!(
            serde_json::to_value(r).unwrap(),
            serde_json::Value::String(r.code().into())
        );
    }
}

#[test]
fn a_node_whose_host_shrinks_ends_the_lowest_priority_leases_that_no_longer_fit() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    let a = grant(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    let b = grant(&mut e, T0, place(2, spec(Mode::OnDemand, whole_a100())));
    let mut smaller = node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    );
    smaller.cpu_milli = 40_000;
    let ev = run(&mut e, T0 + 1, Command::UpsertNode(smaller));
    assert_eq!(ended(&ev).len(), 1);
    assert_eq!(e.leases().count(), 1);
    assert!(e.lease(a.id).is_some() != e.lease(b.id).is_some());
}

#[test]
fn a_lease_may_ask_at_most_four_times_its_share_of_host_cpu() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Shared), (A100, PartitionMode::Shared)],
    )]);
    // A quarter GPU is an eighth of the node: 8 cores by default, at most 32.
    let mut r = resources(dec!(78), 8);
    r.cpu_milli = Some(32_000);
    let lease = grant(&mut e, T0, place(1, spec(Mode::OnDemand, r)));
    assert_eq!(lease.placement.cpu_milli, 32_000);
    let mut r = resources(dec!(78), 8);
    r.cpu_milli = Some(32_001);
    assert_eq!(
        rejected(&run(&mut e, T0, place(2, spec(Mode::OnDemand, r)))),
        Some(RejectReason::UnsatisfiableResources)
    );
}
