//! The early `rebalance` warning at elevated risk whatever the bid (issue 34
//! item 10): a high spot bid never sees the capped clearing index come near
//! it, yet hears when a reservation booked its slice, or the forecast expects
//! more on-demand and reserved work than its market has idle, within 15 minutes.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

/// A whole hour (T0 is 800 s past one) at least an hour ahead of T0.
const START: Ts = T0 + 6400;

fn spot(max_price: Decimal) -> OrderSpec {
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(max_price);
    s
}

fn warnings(ev: &[Event]) -> Vec<(LeaseIdAlias, RebalanceReason)> {
    ev.iter()
        .filter_map(|x| match x {
            Event::RebalanceWarning {
                lease_id, reason, ..
            } => Some((*lease_id, *reason)),
            _ => None,
        })
        .collect()
}

/// A running spot lease bidding far above the clearing index's cap.
fn high_bid_on(e: &mut Engine) -> Lease {
    run(e, T0, place(1, spot(dec!(4.0))));
    let s = grant(e, T0 + 10, Command::Tick);
    provisioned(e, T0 + 12, s.id);
    let index = s.bid_index.unwrap();
    assert!(index > dec!(0.78), "a high bid: {index}");
    s
}

#[test]
fn a_high_bid_is_warned_15_minutes_before_a_reservation_takes_its_slice() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    let s = high_bid_on(&mut e);
    let mut reserved = spec(Mode::Reserved, whole_a100());
    reserved.start_at = Some(START);
    reserved.duration_s = Some(3600);
    let r = grant(&mut e, T0 + 20, place(2, reserved));
    assert_eq!(r.state, LeaseState::Pending);
    assert_eq!(
        e.lease(s.id).unwrap().preempt_at,
        Some(START),
        "the booking scheduled its notice"
    );
    // Further ahead than 15 minutes: no warning at the clearings.
    assert!(warnings(&run(&mut e, T0 + 30, Command::Tick)).is_empty());
    assert!(warnings(&run(&mut e, START - 911, Command::Tick)).is_empty());
    // 15 minutes ahead: warned once, and the lease says since when.
    let ev = run(&mut e, START - 900, Command::Tick);
    assert_eq!(warnings(&ev), vec![(s.id, RebalanceReason::Booked)]);
    assert_eq!(e.lease(s.id).unwrap().rebalance_at, Some(START - 900));
    assert!(
        warnings(&run(&mut e, START - 880, Command::Tick)).is_empty(),
        "sent once"
    );
    // The notice itself comes at its time.
    let ev = run(&mut e, START - 120, Command::Tick);
    assert!(ev
        .iter()
        .any(|x| matches!(x, Event::PreemptNotice { lease_id, .. } if *lease_id == s.id)));
}

#[test]
fn a_high_bid_is_warned_when_the_forecast_expects_more_primary_work_than_is_idle() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    let s = high_bid_on(&mut e);
    let forecast = |tflops: Decimal| {
        Command::SetForecast(vec![DemandForecast {
            gpu_model: A100.into(),
            region: "eu".into(),
            tflops,
            mig_profiles: Vec::new(),
        }])
    };
    // One A100 (312 TFLOPS) idle: expected demand it can absorb is no risk.
    run(&mut e, T0 + 20, forecast(dec!(312)));
    assert!(warnings(&run(&mut e, T0 + 30, Command::Tick)).is_empty());
    // More than is idle: that work would take the spot lease's GPU.
    run(&mut e, T0 + 35, forecast(dec!(313)));
    let ev = run(&mut e, T0 + 40, Command::Tick);
    assert_eq!(warnings(&ev), vec![(s.id, RebalanceReason::Forecast)]);
    assert!(e.lease(s.id).unwrap().rebalance_at.is_some());
    // The risk passes: the warning is re-armed.
    run(&mut e, T0 + 45, Command::SetForecast(vec![]));
    assert!(warnings(&run(&mut e, T0 + 50, Command::Tick)).is_empty());
    assert_eq!(e.lease(s.id).unwrap().rebalance_at, None);
}
