//! The demand forecast keeps idle capacity from spot (ARCHITECTURE.md §17).

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::{PartitionMode, Slot};
use crate::*;

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
            mig_profiles: Vec::new(),
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
        mig_profiles: Vec::new(),
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

/// 1g.10gb on an H100 (100 TFLOPS, 8 GB).
fn small_mig() -> OrderSpec {
    let mut r = resources(dec!(100), 8);
    r.isolation = Isolation::Mig;
    spec(Mode::OnDemand, r)
}

fn mig_start(lease: &Lease) -> u8 {
    match &lease.placement.gpus[0].slot {
        Slot::Mig { start, .. } => *start,
        other => panic!("not a MIG slot: {other:?}"),
    }
}

/// Two MIG H100s: the first with 1g.10gb instances at 6, 5 and 4 (room for
/// one 3g.40gb at 0), the second with one at 6 (room for a 3g.40gb at 0 and
/// more 1g beside it); then one more 1g.10gb, with a forecast of `profiles`.
/// Returns the GPU index and start it took.
fn next_small_slice(layout: bool, profiles: &[(&str, u32)]) -> (u8, u8) {
    let cfg = EngineConfig {
        forecast_mig_layout: layout,
        // The recent mix is the small slices placed here, nothing larger.
        demand_window: 2,
        ..EngineConfig::default()
    };
    let mig = (H100, PartitionMode::Mig);
    let mut e = engine_configured(cfg, vec![node(1, "eu", &[mig, mig])]);
    let leases: Vec<Lease> = (1..=7)
        .map(|id| grant(&mut e, T0, place(id, small_mig())))
        .collect();
    let at = |l: &Lease| (l.placement.gpus[0].index, mig_start(l));
    let placed: Vec<(u8, u8)> = leases.iter().map(at).collect();
    assert_eq!(
        placed,
        [(0, 6), (0, 5), (0, 4), (0, 3), (0, 2), (0, 1), (1, 6)]
    );
    for l in leases.iter().filter(|l| at(l).0 == 0 && mig_start(l) < 4) {
        run(&mut e, T0 + 1, Command::Release { lease_id: l.id });
    }
    run(
        &mut e,
        T0 + 2,
        Command::SetForecast(vec![DemandForecast {
            gpu_model: H100.into(),
            region: "eu".into(),
            tflops: dec!(400),
            mig_profiles: profiles
                .iter()
                .map(|(p, n)| ProfileDemand {
                    profile: (*p).into(),
                    instances: *n,
                })
                .collect(),
        }]),
    );
    let next = grant(&mut e, T0 + 2, place(9, small_mig()));
    (next.placement.gpus[0].index, mig_start(&next))
}

#[test]
fn mig_placement_keeps_room_for_the_profiles_the_forecast_expects() {
    // Packing alone puts the slice on the fuller GPU, where it breaks the
    // last 3g.40gb hole.
    assert_eq!(next_small_slice(false, &[("3g.40gb", 1)]), (0, 3));
    assert_eq!(next_small_slice(true, &[]), (0, 3));
    // With a 3g.40gb expected, it goes beside the other GPU's slice and
    // both holes stay; a forecast of small slices only changes nothing.
    let (gpu, start) = next_small_slice(true, &[("3g.40gb", 1)]);
    assert_eq!(gpu, 1);
    assert!(start >= 4, "slices 0-3 stay free for the 3g.40gb: {start}");
    assert_eq!(next_small_slice(true, &[("1g.10gb", 3)]), (0, 3));
}

#[test]
fn profiles_unknown_to_the_model_are_ignored() {
    assert_eq!(next_small_slice(true, &[("9g.99gb", 4)]), (0, 3));
}
