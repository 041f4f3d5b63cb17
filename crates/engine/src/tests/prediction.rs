//! Duration prediction steers placement (ARCHITECTURE.md §17): a lease goes to the
//! GPU whose other leases are predicted to end near its own end.

use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

const HOUR: i64 = 3600;

fn predicted(seconds: i64) -> DurationPrediction {
    DurationPrediction {
        seconds: Some(seconds),
        basis: PredictionBasis::Tags,
        samples: 3,
    }
}

/// An on-demand share of `tflops` of a shared A100 with a predicted duration.
fn share(tflops: rust_decimal::Decimal, seconds: Option<i64>) -> OrderSpec {
    let mut s = spec(Mode::OnDemand, resources(tflops, 8));
    s.predicted_duration = seconds.map(predicted);
    s
}

/// Two shared A100s: GPU 0 holds 60 % for a lease predicted to end in an
/// hour, GPU 1 60 % for one predicted to end in ten hours. Then a 30 % share
/// predicted to run `seconds` is placed: on which GPU does it land?
fn gpu_for_third(prediction_on: bool, seconds: Option<i64>) -> (u8, Lease, Engine) {
    let cfg = EngineConfig {
        duration_prediction: prediction_on,
        ..EngineConfig::default()
    };
    let mut e = engine_configured(
        cfg,
        vec![node(
            1,
            "eu",
            &[(A100, PartitionMode::Shared), (A100, PartitionMode::Shared)],
        )],
    );
    let short = grant(&mut e, T0, place(1, share(dec!(187.2), Some(HOUR))));
    let long = grant(&mut e, T0, place(2, share(dec!(187.2), Some(10 * HOUR))));
    assert_eq!(short.placement.gpus[0].index, 0);
    assert_eq!(long.placement.gpus[0].index, 1);
    let third = grant(&mut e, T0 + 60, place(3, share(dec!(93.6), seconds)));
    e.validate().expect("valid");
    (third.placement.gpus[0].index, third, e)
}

#[test]
fn a_lease_predicted_to_run_long_joins_the_gpu_whose_lease_ends_last() {
    let (gpu, lease, _) = gpu_for_third(true, Some(10 * HOUR));
    assert_eq!(gpu, 1);
    // It ends a minute after GPU 1's lease: it extends GPU 1's busy time by that.
    assert_eq!(lease.placement.why.predicted_end_extends_s, Some(60));
}

#[test]
fn a_lease_predicted_to_run_short_joins_the_gpu_whose_lease_ends_soon() {
    let (gpu, lease, _) = gpu_for_third(true, Some(HOUR - 120));
    assert_eq!(gpu, 0);
    assert_eq!(lease.placement.why.predicted_end_extends_s, Some(0));
}

#[test]
fn without_the_prediction_or_with_prediction_off_placement_ignores_ends() {
    // Equal GPUs otherwise: the lower index wins, whatever the leases' ends.
    assert_eq!(gpu_for_third(true, None).0, 0);
    let (gpu, lease, _) = gpu_for_third(false, Some(10 * HOUR));
    assert_eq!(gpu, 0);
    assert_eq!(lease.placement.why.predicted_end_extends_s, None);
}

#[test]
fn an_orders_own_duration_wins_over_its_prediction() {
    let mut s = share(dec!(93.6), Some(HOUR));
    s.duration_s = Some(10 * HOUR);
    assert_eq!(
        s.duration_prediction(),
        DurationPrediction {
            seconds: Some(10 * HOUR),
            basis: PredictionBasis::DurationS,
            samples: 0,
        }
    );
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Shared), (A100, PartitionMode::Shared)],
    )]);
    grant(&mut e, T0, place(1, share(dec!(187.2), Some(HOUR))));
    grant(&mut e, T0, place(2, share(dec!(187.2), Some(10 * HOUR))));
    let ev = run(&mut e, T0, place(3, s));
    let lease = granted(&ev).remove(0);
    assert_eq!(lease.placement.gpus[0].index, 1);
    let report = ev
        .iter()
        .find_map(|e| match e {
            Event::OrderFilled { report, .. } => Some(report.clone()),
            _ => None,
        })
        .expect("a fill report");
    assert_eq!(report.duration_prediction.basis, PredictionBasis::DurationS);
}

#[test]
fn the_fill_report_shows_the_prediction_used() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Shared)])]);
    let ev = run(&mut e, T0, place(1, share(dec!(93.6), Some(2 * HOUR))));
    let report = ev
        .iter()
        .find_map(|e| match e {
            Event::OrderFilled { report, .. } => Some(report.clone()),
            _ => None,
        })
        .expect("a fill report");
    assert_eq!(report.duration_prediction, predicted(2 * HOUR));
    let ev = run(&mut e, T0, place(2, share(dec!(93.6), None)));
    let report = ev
        .iter()
        .find_map(|e| match e {
            Event::OrderFilled { report, .. } => Some(report.clone()),
            _ => None,
        })
        .expect("a fill report");
    assert_eq!(report.duration_prediction, DurationPrediction::none());
}

#[test]
fn a_restored_engine_keeps_predictions_and_places_the_same() {
    let (_, _, mut e) = gpu_for_third(true, Some(10 * HOUR));
    let snap = e.snapshot();
    let json = serde_json::to_string(&snap).expect("serializes");
    let back: Snapshot = serde_json::from_str(&json).expect("deserializes");
    let mut restored = Engine::restore(EngineConfig::default(), back).expect("restores");
    assert_eq!(restored.snapshot(), snap);
    assert_eq!(restored.view().nodes(), e.view().nodes());
    let next = place(4, share(dec!(31.2), Some(10 * HOUR)));
    assert_eq!(
        restored.apply(T0 + 120, next.clone()),
        e.apply(T0 + 120, next)
    );
}
