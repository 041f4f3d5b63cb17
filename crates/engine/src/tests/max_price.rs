//! ARCHITECTURE.md §22: `max_price` binds on every mode. An on-demand, pooled or
//! reserved order is never filled above it; it is refused with the price, or
//! waits within `max_wait_s` (issue 34 item 5).

use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

/// A whole A100 and a shared one: a whole A100's worth lists at
/// 312 × 0.002 + 20 × 0.05 = 1.624 an hour, so on-demand is 2.9232, pooled
/// 1.624 and reserved 1.3804; a `max_price` of 1 is below all three.
fn fleet() -> Engine {
    engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Shared)],
    )])
}

fn capped(mode: Mode, max: rust_decimal::Decimal) -> OrderSpec {
    let mut s = spec(mode, whole_a100());
    s.max_price = Some(max);
    if mode == Mode::Reserved {
        s.start_at = Some(T0 + 7200);
        s.duration_s = Some(3600);
    }
    s
}

fn refusal(ev: &[Event]) -> Option<(RejectReason, String)> {
    ev.iter().find_map(|e| match e {
        Event::OrderRejected {
            reason, message, ..
        } => Some((*reason, message.clone())),
        _ => None,
    })
}

#[test]
fn an_order_priced_above_its_max_price_is_refused_with_the_price_on_every_fixed_mode() {
    for (n, (mode, price)) in [
        (Mode::OnDemand, "2.9232"),
        (Mode::Pooled, "1.624"),
        (Mode::Reserved, "1.3804"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut e = fleet();
        let ev = run(&mut e, T0, place(n as u128, capped(mode, dec!(1))));
        let (reason, message) = refusal(&ev).expect("refused");
        assert_eq!(reason, RejectReason::MaxPriceExceeded, "{mode:?}");
        assert_eq!(
            message,
            format!("the price is {price} per hour, above max_price 1"),
            "{mode:?}"
        );
        assert!(granted(&ev).is_empty(), "{mode:?}: {ev:?}");
        let quote = e.quote(&capped(mode, dec!(1))).expect("a quote");
        assert!(quote.max_price_binds, "{mode:?}");
        assert_eq!(
            quote.price_per_hour.normalize().to_string(),
            price,
            "{mode:?}"
        );
    }
}

#[test]
fn an_order_at_its_max_price_is_filled_at_that_price() {
    let mut e = fleet();
    let s = capped(Mode::OnDemand, dec!(2.9232));
    assert!(!e.quote(&s).expect("a quote").max_price_binds);
    let lease = grant(&mut e, T0, place(1, s));
    assert_eq!(lease.price_per_hour, dec!(2.9232));
}

#[test]
fn an_order_above_its_max_price_waits_and_fills_once_the_price_drops_under_it() {
    let mut e = fleet();
    let mut s = capped(Mode::OnDemand, dec!(2));
    s.max_wait_s = Some(600);
    let ev = run(&mut e, T0, place(1, s));
    assert!(refusal(&ev).is_none() && granted(&ev).is_empty(), "{ev:?}");
    assert!(ev.iter().any(|e| matches!(e, Event::OrderAccepted { .. })));
    // VRAM's list price halves: 312 × 0.002 + 20 × 0.025 = 1.124, × 1.8 = 2.0232: still above.
    let mut cheaper = prices("eu");
    let Command::SetPrices(rows) = &mut cheaper else {
        unreachable!()
    };
    for r in rows.iter_mut() {
        if r.unit == gpuex_wire::catalog::Unit::VramH {
            r.list_price = dec!(0.025);
        }
    }
    let ev = run(&mut e, T0 + 10, cheaper.clone());
    assert!(granted(&ev).is_empty(), "2.0232 > 2: {ev:?}");
    // And TFLOPS' to 0.0015: 0.468 + 0.5 = 0.968, × 1.8 = 1.7424 ≤ 2.
    if let Command::SetPrices(rows) = &mut cheaper {
        for r in rows.iter_mut() {
            if r.unit == gpuex_wire::catalog::Unit::TflopsH {
                r.list_price = dec!(0.0015);
            }
        }
    }
    let lease = granted(&run(&mut e, T0 + 20, cheaper))
        .pop()
        .expect("filled once under max_price");
    assert_eq!(lease.price_per_hour, dec!(1.7424));
}

#[test]
fn an_order_above_its_max_price_expires_when_its_wait_runs_out() {
    let mut e = fleet();
    let mut s = capped(Mode::Pooled, dec!(1));
    s.max_wait_s = Some(60);
    run(&mut e, T0, place(1, s));
    let ev = run(&mut e, T0 + 60, Command::Tick);
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::OrderExpired { at, .. } if *at == T0 + 60)),
        "{ev:?}"
    );
    assert!(granted(&ev).is_empty());
}

#[test]
fn spot_max_price_is_the_bid_and_never_binds_the_quote() {
    let e = fleet();
    let s = capped(Mode::Spot, dec!(1));
    let quote = e.quote(&s).expect("a quote");
    assert!(!quote.max_price_binds);
    assert!(quote.price_per_hour <= dec!(1), "{}", quote.price_per_hour);
}
