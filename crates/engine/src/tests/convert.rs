//! Mode conversions (ARCHITECTURE.md §3 "Mode changes"), through the engine.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::pricing::PriceRule;
use crate::*;

/// The first whole hour after `T0` (`T0` is 800 s past one).
const H1: Ts = T0 + 2800;

fn one_whole_gpu() -> Engine {
    engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])])
}

fn spot(max_price: Decimal) -> OrderSpec {
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(max_price);
    s
}

fn reserved(start: Ts, dur: Ts) -> OrderSpec {
    let mut s = spec(Mode::Reserved, whole_a100());
    s.start_at = Some(start);
    s.duration_s = Some(dur);
    s
}

fn convert_with(
    e: &mut Engine,
    now: Ts,
    lease_id: LeaseIdAlias,
    to: ConvertTo,
    funds: Decimal,
) -> Result<Vec<Event>, EngineError> {
    let out = e.apply(
        now,
        Command::Convert {
            lease_id,
            to,
            funds_available: funds,
        },
    );
    e.validate().expect("invariants hold");
    out
}

fn convert(
    e: &mut Engine,
    now: Ts,
    id: LeaseIdAlias,
    to: ConvertTo,
) -> Result<Vec<Event>, EngineError> {
    convert_with(e, now, id, to, dec!(1000000))
}

fn refused(out: Result<Vec<Event>, EngineError>) -> Option<ConversionRefused> {
    match out {
        Err(EngineError::Conversion(r)) => Some(r),
        _ => None,
    }
}

/// A whole A100 won at the spot floor (0.812 per hour) and running since `T0 + 12`.
fn running_spot(e: &mut Engine) -> Lease {
    run(e, T0, place(1, spot(dec!(1.0))));
    let s = grant(e, T0 + 10, Command::Tick);
    provisioned(e, T0 + 12, s.id);
    s
}

/// A whole A100 on demand (2.9232 per hour), running since `T0 + 2`.
fn running_on_demand(e: &mut Engine) -> Lease {
    let l = grant(e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    provisioned(e, T0 + 2, l.id);
    l
}

#[test]
fn a_running_spot_lease_converts_to_on_demand_at_once_and_leaves_the_auction() {
    let mut e = one_whole_gpu();
    let s = running_spot(&mut e);
    assert_eq!(s.price_per_hour, dec!(0.812));
    let ev = convert(&mut e, T0 + 100, s.id, ConvertTo::OnDemand).expect("converted");
    let l = e.lease(s.id).expect("still live").clone();
    assert_eq!(l.mode, Mode::OnDemand);
    assert_eq!(l.priority, Priority::OnDemand);
    assert_eq!(l.state, LeaseState::Running);
    assert_eq!(l.rule, PriceRule::fixed(Mode::OnDemand));
    assert_eq!(l.price_per_hour, dec!(2.9232), "1.8 × 1.624 list");
    assert_eq!(
        l.hold,
        dec!(2.9232),
        "one hour ahead at the on-demand price"
    );
    assert_eq!(l.placement, s.placement, "the slice stays");
    assert_eq!(
        l.conversions,
        vec![Conversion {
            at: T0 + 100,
            effective_at: T0 + 100,
            from_mode: Mode::Spot,
            to_mode: Mode::OnDemand,
            price_per_hour_before: dec!(0.812),
            price_per_hour_after: dec!(2.9232),
        }]
    );
    assert!(
        matches!(&ev[0], Event::LeaseModeChanged { lease, at } if lease.mode == Mode::OnDemand && *at == T0 + 100)
    );
    assert!(ev.iter().any(
        |x| matches!(x, Event::LeaseConverted { lease_id, effective_at, hold, .. }
        if *lease_id == s.id && *effective_at == T0 + 100 && *hold == dec!(2.9232))
    ));
    assert!(
        e.open_order(order_id(1)).is_none(),
        "the spot bid is out of the book"
    );
    assert!(
        e.changed_orders().any(|o| o == order_id(1)),
        "and its row hears of it"
    );
    // Later clearings neither reprice nor requeue it.
    let ev = run(&mut e, T0 + 200, Command::Tick);
    assert!(!ev
        .iter()
        .any(|x| matches!(x, Event::LeaseRepriced { .. } | Event::OrderRequeued { .. })));
    assert_eq!(e.lease(s.id).map(|l| l.price_per_hour), Some(dec!(2.9232)));
}

#[test]
fn a_spot_lease_converted_to_on_demand_is_no_longer_preempted_by_higher_priority_claims() {
    let mut e = one_whole_gpu();
    let s = running_spot(&mut e);
    convert(&mut e, T0 + 100, s.id, ConvertTo::OnDemand).expect("converted");
    let ev = run(
        &mut e,
        T0 + 110,
        place(2, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(rejected(&ev), Some(RejectReason::NoCapacity));
    assert!(!ev.iter().any(|x| matches!(
        x,
        Event::PreemptNotice { .. } | Event::PreemptScheduled { .. }
    )));
    let ev = run(&mut e, T0 + 120, place(3, reserved(T0 + 7200, 3600)));
    assert_eq!(rejected(&ev), Some(RejectReason::NoCapacity));
    // A higher spot bid cannot displace it either.
    run(&mut e, T0 + 130, place(4, spot(dec!(1.1))));
    let ev = run(&mut e, T0 + 140, Command::Tick);
    assert!(!ev.iter().any(|x| matches!(x, Event::PreemptNotice { .. })));
    let ev = run(&mut e, T0 + 100_000, Command::Tick);
    assert!(ended(&ev).is_empty());
    assert_eq!(e.lease(s.id).map(|l| l.state), Some(LeaseState::Running));
}

#[test]
fn a_noticed_spot_lease_cannot_convert() {
    let mut e = one_whole_gpu();
    let s = running_spot(&mut e);
    run(
        &mut e,
        T0 + 100,
        place(2, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(e.lease(s.id).map(|l| l.state), Some(LeaseState::Preempting));
    let before = e.snapshot();
    assert_eq!(
        refused(convert(&mut e, T0 + 110, s.id, ConvertTo::OnDemand)),
        Some(ConversionRefused::AlreadyNoticed)
    );
    assert_eq!(e.snapshot().leases, before.leases, "nothing changed");
}

#[test]
fn a_spot_lease_with_a_reservation_booked_after_it_cannot_convert() {
    let mut e = one_whole_gpu();
    let s = running_spot(&mut e);
    run(&mut e, T0 + 100, place(2, reserved(T0 + 7200, 3600)));
    assert!(e.lease(s.id).is_some_and(|l| l.notice_at.is_some()));
    assert_eq!(
        refused(convert(&mut e, T0 + 110, s.id, ConvertTo::OnDemand)),
        Some(ConversionRefused::SliceBooked)
    );
    assert_eq!(e.lease(s.id).map(|l| l.mode), Some(Mode::Spot));
}

#[test]
fn only_running_spot_to_on_demand_and_on_demand_to_reserved_convert() {
    let mut e = one_whole_gpu();
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    let s = grant(&mut e, T0 + 10, Command::Tick);
    assert_eq!(
        refused(convert(&mut e, T0 + 11, s.id, ConvertTo::OnDemand)),
        Some(ConversionRefused::NotRunning),
        "provisioning, not running yet"
    );
    provisioned(&mut e, T0 + 12, s.id);
    let window = ConvertTo::Reserved {
        from: H1 + 3600,
        until: H1 + 7200,
    };
    assert_eq!(
        refused(convert(&mut e, T0 + 20, s.id, window)),
        Some(ConversionRefused::NotAllowed)
    );
    convert(&mut e, T0 + 30, s.id, ConvertTo::OnDemand).expect("converted");
    assert_eq!(
        refused(convert(&mut e, T0 + 40, s.id, ConvertTo::OnDemand)),
        Some(ConversionRefused::NotAllowed),
        "already on demand"
    );
    convert(&mut e, T0 + 50, s.id, window).expect("on demand to reserved");
    assert_eq!(
        refused(convert(&mut e, T0 + 60, s.id, window)),
        Some(ConversionRefused::NotAllowed),
        "once"
    );
    assert_eq!(
        e.apply(
            T0 + 70,
            Command::Convert {
                lease_id: order_id(99),
                to: ConvertTo::OnDemand,
                funds_available: Decimal::ZERO
            }
        ),
        Err(EngineError::UnknownLease(order_id(99)))
    );
}

#[test]
fn on_demand_converts_to_reserved_whose_price_applies_at_from_even_after_downtime() {
    let mut e = one_whole_gpu();
    let l = running_on_demand(&mut e);
    assert_eq!(l.price_per_hour, dec!(2.9232));
    let (from, until) = (H1 + 3600, H1 + 3 * 3600);
    let ev =
        convert(&mut e, T0 + 100, l.id, ConvertTo::Reserved { from, until }).expect("converted");
    // Recorded now; the price stays on-demand until `from`.
    assert!(
        matches!(ev.as_slice(), [Event::LeaseConverted { effective_at, price_per_hour_after, hold, .. }]
        if *effective_at == from && *price_per_hour_after == dec!(1.3804) && *hold == dec!(2.9232) + dec!(2.7608))
    );
    let c = e.lease(l.id).expect("live").clone();
    assert_eq!(
        (c.mode, c.price_per_hour, c.ends_at),
        (Mode::OnDemand, dec!(2.9232), Some(until))
    );
    assert_eq!(c.converts_to_reserved, Some(ReservedWindow { from, until }));
    assert!(!run(&mut e, from - 1, Command::Tick)
        .iter()
        .any(|x| matches!(x, Event::LeaseModeChanged { .. })));
    // The engine was down across `from`: the first tick after catches up, stamped at `from`.
    let ev = run(&mut e, from + 500, Command::Tick);
    let changed: Vec<_> = ev
        .iter()
        .filter_map(|x| match x {
            Event::LeaseModeChanged { lease, at } => Some((lease.mode, lease.price_per_hour, *at)),
            _ => None,
        })
        .collect();
    assert_eq!(changed, vec![(Mode::Reserved, dec!(1.3804), from)]);
    let r = e.lease(l.id).expect("live");
    assert_eq!(
        (r.mode, r.priority, r.converts_to_reserved),
        (Mode::Reserved, Priority::Reserved, None)
    );
    assert_eq!(r.spec.start_at, Some(from));
    let ev = run(&mut e, until, Command::Tick);
    assert_eq!(ended(&ev), vec![(l.id, EndReason::Expired, until)]);
}

#[test]
fn a_conversion_to_reserved_needs_a_whole_hour_window_at_least_an_hour_ahead() {
    let mut e = one_whole_gpu();
    let l = running_on_demand(&mut e);
    let now = T0 + 100;
    for (from, until) in [
        (H1, H1 + 3600),             // less than an hour ahead
        (H1 + 3600 + 60, H1 + 7200), // not a whole hour
        (H1 + 3600, H1 + 7200 + 1),  // nor this
        (H1 + 7200, H1 + 7200),      // empty
        (H1 + 7200, H1 + 3600),      // backwards
    ] {
        assert_eq!(
            refused(convert(
                &mut e,
                now,
                l.id,
                ConvertTo::Reserved { from, until }
            )),
            Some(ConversionRefused::InvalidWindow),
            "{from}..{until}"
        );
    }
    assert_eq!(
        refused(convert_with(
            &mut e,
            now,
            l.id,
            ConvertTo::Reserved {
                from: H1 + 3600,
                until: H1 + 3 * 3600
            },
            dec!(2.76)
        )),
        Some(ConversionRefused::InsufficientFunds),
        "the reserved part holds 2.7608, more than the wallet has"
    );
    assert_eq!(
        e.lease(l.id).map(|l| (l.mode, l.ends_at)),
        Some((Mode::OnDemand, None))
    );
}

#[test]
fn a_conversion_to_reserved_over_another_booking_of_the_slice_is_refused() {
    let mut e = one_whole_gpu();
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.duration_s = Some(3600);
    let l = grant(&mut e, T0, place(1, s));
    provisioned(&mut e, T0 + 2, l.id);
    // The slice is booked again from T0 + 7200, after the on-demand hour.
    grant(&mut e, T0 + 10, place(2, reserved(T0 + 7200, 3600)));
    let booked = ConvertTo::Reserved {
        from: H1 + 3600,
        until: H1 + 7200,
    };
    assert_eq!(
        refused(convert(&mut e, T0 + 100, l.id, booked)),
        Some(ConversionRefused::SliceBooked)
    );
}

#[test]
fn a_restored_engine_keeps_a_pending_conversion_and_carries_it_out_identically() {
    let mut e = one_whole_gpu();
    let l = running_on_demand(&mut e);
    let (from, until) = (H1 + 3600, H1 + 3 * 3600);
    convert(&mut e, T0 + 100, l.id, ConvertTo::Reserved { from, until }).expect("converted");
    let snap = e.snapshot();
    let json = serde_json::to_string(&snap).expect("serializes");
    let back: Snapshot = serde_json::from_str(&json).expect("deserializes");
    let mut restored = Engine::restore(EngineConfig::default(), back).expect("restores");
    assert_eq!(restored.snapshot(), snap);
    for now in [from + 10, until] {
        assert_eq!(
            restored.apply(now, Command::Tick),
            e.apply(now, Command::Tick)
        );
    }
    assert!(restored.lease(l.id).is_none());
}

#[test]
fn a_lease_row_from_before_conversions_existed_reads_with_none() {
    let mut e = one_whole_gpu();
    let l = running_on_demand(&mut e);
    let mut row = serde_json::to_value(e.lease(l.id).expect("live")).expect("json");
    assert!(
        row.get("conversions").is_none(),
        "an empty list is not written"
    );
    row.as_object_mut()
        .expect("object")
        .remove("converts_to_reserved");
    let back: Lease = serde_json::from_value(row).expect("old rows read");
    assert!(back.conversions.is_empty() && back.converts_to_reserved.is_none());
}
