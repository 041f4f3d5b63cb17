//! Order types (ARCHITECTURE.md §22): what a gang of units costs the market
//! against one unit, in the same run, on the benchmark's fleet filled to
//! 80 % at 10,000 and 100,000 GPUs (`GPUEX_BENCH_GANG_GPUS`).
//!
//! `cargo bench -p gpuex-engine --bench gangs`
//!
//! Measured, each as p50 and p99 of `GPUEX_BENCH_GANG_SAMPLES` (default
//! 300) commands, every lease released again so the fleet stays as filled:
//! - `apply(Place)` of one on-demand unit (the baseline);
//! - `apply(Place)` of an all-or-none gang of 8 of the same units;
//! - `apply(Place)` of an all-or-none gang of 64 (the most an order asks);
//! - `gang_room` of 8 (a quote's `units`), which copies the view.

use std::time::{Duration, Instant};

use uuid::Uuid;

use gpuex_engine::*;

#[path = "common/fleet.rs"]
mod fleet;
use fleet::*;

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    (at(0.5), at(0.99))
}

/// Places `spec` as order `id`, timing the command, and releases whatever
/// it was granted (untimed), so the next sample meets the same fleet.
fn place_timed(e: &mut Engine, id: u128, spec: OrderSpec) -> (Duration, usize) {
    let t = Instant::now();
    let events = e.apply(T0, place_cmd(id, spec)).unwrap();
    let took = t.elapsed();
    let granted: Vec<Uuid> = events
        .iter()
        .filter_map(|ev| match ev {
            Event::LeaseGranted { lease, .. } => Some(lease.id),
            _ => None,
        })
        .collect();
    for lease_id in &granted {
        e.apply(
            T0,
            Command::Release {
                lease_id: *lease_id,
            },
        )
        .unwrap();
    }
    (took, granted.len())
}

fn main() {
    let sizes: Vec<u32> = std::env::var("GPUEX_BENCH_GANG_GPUS")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|g| g.trim().parse().ok())
        .collect();
    let samples: usize = std::env::var("GPUEX_BENCH_GANG_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    println!("| GPUs | command | p50 | p99 | p50 ÷ one unit | units placed |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for gpus in sizes {
        let mut e = fleet_of(gpus.div_ceil(8), EngineConfig::default());
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut next_id = 0u128;
        fill(&mut e, &mut rng, 0.80, &mut next_id);
        // A whole-GPU-sized unit of 300 TFLOPS and 32 GB: several models hold it.
        let mut unit = order(&mut rng);
        unit.resources.tflops = 300.into();
        unit.resources.vram_gb = 32;
        unit.resources.gpus = Some(1);
        let gang = |count: u32| {
            let mut s = unit.clone();
            s.gang = Some(Gang {
                count,
                min_count: count,
            });
            s
        };
        let mut rows: Vec<(&str, Vec<Duration>, usize)> = Vec::new();
        for (name, spec) in [
            ("one unit", unit.clone()),
            ("gang of 8", gang(8)),
            ("gang of 64", gang(64)),
        ] {
            let mut times = Vec::with_capacity(samples);
            let mut placed = 0;
            for _ in 0..samples {
                next_id += 1;
                let (took, n) = place_timed(&mut e, 0x7000_0000 + next_id, spec.clone());
                times.push(took);
                placed = n;
            }
            rows.push((name, times, placed));
        }
        let mut quotes = Vec::with_capacity(samples);
        let mut room = 0;
        for _ in 0..samples {
            let t = Instant::now();
            room = e.gang_room(&gang(8)).map_or(0, |r| r.0);
            quotes.push(t.elapsed());
        }
        rows.push(("gang_room of 8 (quote)", quotes, room as usize));
        let (base, _) = percentiles(rows[0].1.clone());
        for (name, times, placed) in rows {
            let (p50, p99) = percentiles(times);
            println!(
                "| {gpus} | {name} | {p50:.1?} | {p99:.1?} | {:.1}× | {placed} |",
                p50.as_secs_f64() / base.as_secs_f64()
            );
        }
    }
}
