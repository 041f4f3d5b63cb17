//! One forecast refresh over a 100-market fleet (DESIGN §17; target under
//! 50 ms): every market's per-minute demand fitted and forecast 15 minutes
//! ahead, as `forecast::refresh` does off the engine task. Baseline in the
//! same run: the same markets with the recent-mean fallback, and with AutoETS
//! alone (no seasons), so the cost of the seasonal model reads as a ratio.

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

fn refresh(c: &mut Criterion) {
    let mut group = c.benchmark_group("forecast_refresh_100_markets");
    group.sample_size(10);
    // 360 minutes (the default history: the hourly season) and two days (both seasons).
    for minutes in [360usize, 2880] {
        let fleet: Vec<Vec<f64>> = (0..MARKETS).map(|m| demand(m, minutes)).collect();
        group.bench_with_input(BenchmarkId::new("mstl_ets", minutes), &fleet, |b, fleet| {
            b.iter(|| {
                for history in fleet {
                    black_box(forecast(history, 15));
                }
            })
        });
        // Too few busy minutes for a model: the recent mean, the floor any refresh pays.
        let sparse: Vec<Vec<f64>> = fleet
            .iter()
            .map(|h| {
                h.iter()
                    .enumerate()
                    .map(|(i, v)| if i % 60 == 0 { *v } else { 0.0 })
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
        // Shorter than two hours: AutoETS without seasons, on the last 100 minutes.
        let short: Vec<Vec<f64>> = fleet.iter().map(|h| h[h.len() - 100..].to_vec()).collect();
        group.bench_with_input(
            BenchmarkId::new("ets_last_100", minutes),
            &short,
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
