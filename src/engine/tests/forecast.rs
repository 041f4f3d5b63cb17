//! The demand forecast keeps idle capacity from spot (DESIGN §17).

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::engine::placement::PartitionMode;
use crate::engine::*;

fn spot(max_price: Decimal) -> OrderSpec {
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(max_price);
    s
}

/// Two idle whole A100s, two spot bids for one each, and a forecast that
/// primary orders will ask for `expected` TFLOPS within the notice period.
fn spot_winners(holdback: bool, expected: Decimal) -> (usize, Engine) {
    let cfg = EngineConfig {
        forecast_holdback: holdback,
        ..EngineConfig::default()
    };
    let mut e = engine_configured(
        cfg,
        vec![node(
            1,
            "eu",
            &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
        )],
    );
    run(
        &mut e,
        T0,
        Command::SetForecast(vec![DemandForecast {
            gpu_model: A100.into(),
            region: "eu".into(),
            tflops: expected,
        }]),
    );
    run(&mut e, T0, place(1, spot(dec!(1.0))));
    run(&mut e, T0, place(2, spot(dec!(1.05))));
    let won = granted(&run(&mut e, T0 + 10, Command::Tick)).len();
    (won, e)
}

#[test]
fn capacity_the_forecast_expects_primary_orders_to_need_is_not_sold_to_spot() {
    // One whole A100 is 312 TFLOPS: a forecast of 300 keeps one of the two.
    let (won, e) = spot_winners(true, dec!(300));
    assert_eq!(won, 1);
    // The bid left out lost for lack of capacity, so it sets the clearing index.
    assert_eq!(e.clearing_index(A100, "eu"), Some(dec!(0.615764)));
    // The kept GPU is there for the on-demand order the forecast expected.
    let ev = run(
        &mut e.clone(),
        T0 + 11,
        place(3, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(granted(&ev).len(), 1);
}

#[test]
fn without_the_holdback_or_the_forecast_spot_takes_every_idle_gpu() {
    assert_eq!(spot_winners(false, dec!(300)).0, 2);
    assert_eq!(spot_winners(true, Decimal::ZERO).0, 2);
}

#[test]
fn a_new_forecast_replaces_the_last_and_unknown_models_are_ignored() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    let forecast = |model: &str, tflops| DemandForecast {
        gpu_model: model.into(),
        region: "eu".into(),
        tflops,
    };
    run(
        &mut e,
        T0,
        Command::SetForecast(vec![forecast(A100, dec!(10)), forecast("GTX-480", dec!(5))]),
    );
    assert_eq!(e.forecast().len(), 1);
    run(&mut e, T0, Command::SetForecast(vec![]));
    assert!(e.forecast().is_empty());
}
