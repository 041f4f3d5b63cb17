//! Inputs at the edge of `Decimal`'s range: refused with a reason, never a
//! panic that would stop the one task owning the engine.

use proptest::prelude::*;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::pricing;
use crate::*;

fn one_whole_a100() -> Engine {
    engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])])
}

fn spot_bid(max_price: Decimal, tflops: Decimal) -> OrderSpec {
    let mut s = spec(Mode::Spot, resources(tflops, 8));
    s.max_price = Some(max_price);
    s
}

#[test]
fn a_spot_bid_of_decimal_max_is_refused_and_the_market_goes_on() {
    let mut e = one_whole_a100();
    let huge = Decimal::MAX;
    assert_eq!(
        rejected(&run(&mut e, T0, place(1, spot_bid(huge, dec!(10))))),
        Some(RejectReason::OutOfRange)
    );
    assert_eq!(
        e.quote(&spot_bid(huge, dec!(10))).err(),
        Some(RejectReason::OutOfRange)
    );
    let ev = run(&mut e, T0, place(2, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(granted(&ev).len(), 1, "an ordinary order is still filled");
}

#[test]
fn a_price_index_beyond_decimal_s_range_is_none() {
    assert_eq!(pricing::price_index(Decimal::MAX, dec!(0.0001)), None);
    assert_eq!(
        pricing::price_index(pricing::MAX_PRICE_PER_HOUR, dec!(0.000000001)),
        Some(dec!(1e18))
    );
}

#[test]
fn a_list_price_beyond_the_engine_s_range_is_refused() {
    let mut e = one_whole_a100();
    let rows = vec![ListPrice {
        region: "eu".into(),
        gpu_model: A100.into(),
        unit: gpuex_wire::catalog::Unit::TflopsH,
        list_price: Decimal::MAX,
    }];
    assert!(e.apply(T0, Command::SetPrices(rows)).is_err());
    let ev = run(&mut e, T0, place(1, spec(Mode::OnDemand, whole_a100())));
    assert_eq!(
        granted(&ev)[0].price_per_hour,
        dec!(2.9232),
        "prices unchanged"
    );
}

fn any_decimal() -> impl Strategy<Value = Decimal> {
    (any::<u32>(), any::<u32>(), any::<u32>(), 0u32..=28)
        .prop_map(|(lo, mid, hi, scale)| Decimal::from_parts(lo, mid, hi, false, scale))
}

proptest! {
    #[test]
    fn any_bid_quantity_window_or_wait_is_placed_or_refused_never_a_panic(
        max_price in any_decimal(),
        tflops in any_decimal(),
        duration_s in any::<i64>(),
        max_wait_s in any::<i64>(),
        mode in prop_oneof![Just(Mode::Spot), Just(Mode::OnDemand), Just(Mode::Pooled)],
    ) {
        let mut e = one_whole_a100();
        let mut s = spot_bid(max_price, tflops);
        s.mode = mode;
        s.duration_s = Some(duration_s);
        s.max_wait_s = Some(max_wait_s);
        let _ = e.quote(&s);
        run(&mut e, T0, place(1, s));
        run(&mut e, T0 + 10, Command::Tick);
        run(&mut e, T0 + 3600, Command::Tick);
    }
}
