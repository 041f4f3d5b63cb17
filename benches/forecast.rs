//! One forecast refresh over a 100-market fleet (ARCHITECTURE.md §17; target under
//! 50 ms): every market's per-minute demand fitted and forecast 15 minutes
//! ahead, as `forecast::refresh` does off the engine task. In the same run:
//! MSTL with an AutoETS trend (statsforecast's default, which the refresh
//! does not use for its cost) and the recent-mean floor, so each reads as a
//! ratio; the accuracy of each is printed first.

use augurs::ets::{trend::AutoETSTrendModel, AutoETS};
use augurs::mstl::MSTLModel;
use augurs::prelude::*;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gpuex::forecast::model::forecast;
use std::hint::black_box;

const MARKETS: usize = 100;

/// A market's demand: an hourly wave and a daily one at its own phase, a
/// slow trend, and a fixed pseudo-random wiggle.
fn demand(market: usize, minutes: usize) -> Vec<f64> {
    (0..minutes)
        .map(|t| {
            let hour = ((t + market * 7) % 60) as f64 / 60.0 * std::f64::consts::TAU;
            let day = ((t + market * 97) % 1440) as f64 / 1440.0 * std::f64::consts::TAU;
            let wiggle = (((t + market) * 7919) % 17) as f64 / 17.0 - 0.5;
            300.0 + 0.02 * t as f64 + 80.0 * hour.sin() + 150.0 * day.sin() + 25.0 * wiggle
        })
        .collect()
}

/// Mean absolute percentage error of a 15-minute forecast from the first
/// 360 minutes of each market, printed beside the timings.
fn accuracy(fleet: &[Vec<f64>], fit: impl Fn(&[f64]) -> Vec<f64>) -> f64 {
    let total: f64 = fleet
        .iter()
        .map(|series| {
            let (history, actual) = series.split_at(360);
            let point = fit(history);
            actual
                .iter()
                .zip(&point)
                .map(|(a, p)| ((a - p) / a).abs())
                .sum::<f64>()
                / 15.0
        })
        .sum();
    total / fleet.len() as f64
}

/// MSTL with an AutoETS trend: statsforecast's default, the comparison.
fn mstl_auto_ets(history: &[f64], periods: Vec<usize>) -> Vec<f64> {
    let trend = AutoETSTrendModel::from(AutoETS::non_seasonal());
    MSTLModel::new(periods, trend)
        .fit(history)
        .and_then(|f| f.predict(15, 0.8))
        .map(|f| f.point)
        .unwrap_or_default()
}

fn refresh(c: &mut Criterion) {
    let check: Vec<Vec<f64>> = (0..MARKETS).map(|m| demand(m, 375)).collect();
    println!(
        "15-minute MAPE over {MARKETS} markets: MSTL (naive trend) {:.4}, MSTL + AutoETS trend {:.4}, last value {:.4}",
        accuracy(&check, |h| forecast(h, 15).point),
        accuracy(&check, |h| mstl_auto_ets(h, vec![60])),
        accuracy(&check, |h| vec![h[h.len() - 1]; 15]),
    );
    let mut group = c.benchmark_group("forecast_refresh_100_markets");
    group.sample_size(10);
    // 360 minutes (the default history: the hourly season) and two days (both seasons).
    for minutes in [360usize, 2880] {
        let fleet: Vec<Vec<f64>> = (0..MARKETS).map(|m| demand(m, minutes)).collect();
        let periods: Vec<usize> = [60, 1440]
            .into_iter()
            .filter(|p| minutes >= 2 * p)
            .collect();
        group.bench_with_input(BenchmarkId::new("mstl", minutes), &fleet, |b, fleet| {
            b.iter(|| {
                for history in fleet {
                    black_box(forecast(history, 15));
                }
            })
        });
        group.bench_with_input(
            BenchmarkId::new("mstl_auto_ets", minutes),
            &fleet,
            |b, fleet| {
                b.iter(|| {
                    for history in fleet {
                        black_box(mstl_auto_ets(history, periods.clone()));
                    }
                })
            },
        );
        // Too few busy minutes for a model (at most 8): the recent mean, the
        // floor any refresh pays.
        let sparse: Vec<Vec<f64>> = fleet
            .iter()
            .map(|h| {
                h.iter()
                    .enumerate()
                    .map(|(i, v)| if i % 400 == 0 { *v } else { 0.0 })
                    .collect()
            })
            .collect();
        group.bench_with_input(
            BenchmarkId::new("recent_mean", minutes),
            &sparse,
            |b, fleet| {
                b.iter(|| {
                    for history in fleet {
                        black_box(forecast(history, 15));
                    }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, refresh);
criterion_main!(benches);
