//! Engine benchmarks: placement latency (p50/p99) on a 10,000-GPU fleet
//! (1,250 nodes × 8, mixed models and modes) at 80 % full, and engine
//! commands per second on a mixed place/cancel/release/tick stream.
//!
//! `cargo bench -p gpuex-engine --bench engine -- --warm-up-time 1 --measurement-time 3`
//!
//! Last, a buyer's `Engine::apply(Place)` with 1,000 open resale listings
//! against the same engine without them (issue 17). Placement alone is the
//! same function either way (listings are bookings like any other), so the
//! whole Place command is what is compared. `GPUEX_BENCH_RESALE_ONLY=1`
//! runs that part alone.
//!
//! Then the fleet-size curve (issue 23): 1,000, 10,000 and 100,000 GPUs,
//! placement walking every node against the state index, side by side; and
//! the spot auction's cost with 10,000 bids queued. `GPUEX_BENCH_SCALE_ONLY=1`
//! runs those two alone.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rust_decimal::Decimal;
use uuid::Uuid;

use gpuex_engine::placement::{self, PlacementRequest};

use gpuex_engine::*;

#[path = "common/fleet.rs"]
mod fleet;
use fleet::*;

#[path = "engine/resale.rs"]
mod resale_bench;
use resale_bench::bench_resale;

fn request_of(e: &Engine, spec: &OrderSpec) -> PlacementRequest {
    let _ = e;
    PlacementRequest {
        compute: placement::Compute::Tflops {
            tflops: spec.resources.tflops,
            precision: gpuex_wire::catalog::Precision::Fp16,
        },
        memory_mb: u64::from(spec.resources.vram_gb) * 1000,
        gpus: u8::try_from(spec.resources.gpus.unwrap_or(1)).unwrap_or(1),
        models: placement::ModelSet::ANY,
        nvlink: false,
        isolation: Isolation::Any,
        region: None,
        node: None,
        cpu_milli: None,
        memory_mib: None,
        ends: None,
        min_cuda: None,
    }
}

fn percentile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q) as usize]
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn bench(c: &mut Criterion) {
    if std::env::var_os("GPUEX_BENCH_RESALE_ONLY").is_some()
        || std::env::var_os("GPUEX_BENCH_SCALE_ONLY").is_some()
    {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut e = fleet_engine();
    let mut next_id = 0u128;
    let leases = fill(&mut e, &mut rng, 0.80, &mut next_id);
    let used: u64 = e
        .leases()
        .map(|l| u64::from(l.placement.held_milli()))
        .sum();
    println!(
        "fleet: 10000 GPUs, {} leases, {:.1} % of GPU compute held, frag_ratio {:.3}, internal_waste {} milli-GPU",
        leases.len(),
        used as f64 / 100_000.0,
        e.frag_ratio(),
        e.internal_waste_milli()
    );

    // Placement latency, the pure function on the live view.
    let policy = e.config().policy;
    let reqs: Vec<PlacementRequest> = (0..5000)
        .map(|_| request_of(&e, &order(&mut rng)))
        .collect();
    let mut samples = Vec::with_capacity(reqs.len());
    let mut found = 0;
    for r in &reqs {
        let t = Instant::now();
        let p = placement::place(e.view(), r, e.demand_mix(), &policy);
        samples.push(t.elapsed());
        found += usize::from(p.is_some());
    }
    let (p50, p99, max) = percentiles(samples);
    println!("placement::place at 80 %: p50 {p50:?}, p99 {p99:?}, max {max:?} over {} requests ({found} placeable)", reqs.len());

    let mut g = c.benchmark_group("placement");
    g.throughput(Throughput::Elements(1));
    let mut i = 0;
    g.bench_function("place_10k_gpus_80pct", |b| {
        b.iter(|| {
            i = (i + 1) % reqs.len();
            placement::place(e.view(), &reqs[i], e.demand_mix(), &policy)
        })
    });
    g.finish();

    // A whole Place command (placement + pricing + funds + booking), then its release.
    let samples = timed_places(&mut e, &mut rng, &mut next_id, 3000);
    let (p50, p99, max) = percentiles(samples);
    println!("Engine::apply(Place) at 80 %: p50 {p50:?}, p99 {p99:?}, max {max:?}");

    // Mixed streams, occupancy held near 80 %: place 65 % (a tenth of them
    // waiting up to 30 s), release 25 %, cancel 8 %, tick 2 % (one second each).
    // The second stream makes a tenth of the places spot bids, and its cancels
    // pick among the open spot bids (buyers give up on bids that never clear).
    let population = leases.len();
    let mut st = Stream {
        live: leases,
        now: T0,
        next_id,
        spot_orders: Vec::new(),
        population,
    };
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(1000));
    for (name, spot) in [
        ("mixed_stream_1000_commands", false),
        ("mixed_stream_with_spot_1000_commands", true),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || (),
                |_| {
                    for _ in 0..1000 {
                        st.step(&mut e, &mut rng, spot);
                    }
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
    println!(
        "after the streams: {} leases, {} open orders, frag_ratio {:.3}",
        e.leases().count(),
        e.open_orders().count(),
        e.frag_ratio()
    );
}

/// The state a command stream carries between commands.
struct Stream {
    live: Vec<Uuid>,
    now: Ts,
    next_id: u128,
    spot_orders: Vec<Uuid>,
    population: usize,
}

impl Stream {
    fn step(&mut self, e: &mut Engine, rng: &mut Rng, spot: bool) {
        let roll = rng.below(100);
        let cmd = if roll < 65 {
            self.next_id += 1;
            let mut s = order(rng);
            match rng.below(10) {
                0 => s.max_wait_s = Some(30),
                1 if spot => {
                    // A bid near 0.8 × the list value of what it asks.
                    let t = s.resources.tflops * Decimal::new(16, 4);
                    let v = Decimal::from(s.resources.vram_gb / 4) * Decimal::new(4, 2);
                    s.mode = Mode::Spot;
                    s.max_price = Some(t + v);
                    self.spot_orders.push(Uuid::from_u128(self.next_id));
                }
                _ => {}
            }
            place_cmd(self.next_id, s)
        } else if roll < 90 && !self.live.is_empty() {
            let k = rng.below(self.live.len() as u64) as usize;
            Command::Release {
                lease_id: self.live.swap_remove(k),
            }
        } else if roll < 98 {
            let order_id = if spot && !self.spot_orders.is_empty() {
                let k = rng.below(self.spot_orders.len() as u64) as usize;
                self.spot_orders.swap_remove(k)
            } else {
                Uuid::from_u128(self.next_id)
            };
            Command::Cancel { order_id }
        } else {
            self.now += 1;
            Command::Tick
        };
        if let Ok(ev) = e.apply(self.now, cmd) {
            for x in ev {
                if let Event::LeaseGranted { lease, .. } = x {
                    self.live.push(lease.id);
                }
            }
        }
        // Keep occupancy steady: release beyond the 80 % population.
        while self.live.len() > self.population {
            let k = rng.below(self.live.len() as u64) as usize;
            let _ = e.apply(
                self.now,
                Command::Release {
                    lease_id: self.live.swap_remove(k),
                },
            );
        }
    }
}

/// Issue 23: the fleet-size curve. The benchmark's fleet at 1,000, 10,000
/// and 100,000 GPUs (`GPUEX_BENCH_SCALE_GPUS`, comma-separated), filled to
/// 80 % with the same orders, once with placement walking every node (the
/// code before the state index) and once on the state index. Both choose
/// the same placements, so both fleets end up identical and every figure
/// compares like with like. `GPUEX_BENCH_SCALE_ONLY=1` runs this part alone.
fn bench_scale(_c: &mut Criterion) {
    if std::env::var_os("GPUEX_BENCH_RESALE_ONLY").is_some()
        || std::env::var_os("GPUEX_BENCH_AUCTION_ONLY").is_some()
    {
        return;
    }
    let sizes: Vec<u32> = std::env::var("GPUEX_BENCH_SCALE_GPUS")
        .unwrap_or_else(|_| "1000,10000,100000".into())
        .split(',')
        .filter_map(|g| g.trim().parse().ok())
        .collect();
    println!("| GPUs | walk | placement p50 | placement p99 | placements/s | apply(Place) p99 | filling to 80 % | leases | node states |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for gpus in sizes {
        let mut fleets = Vec::new();
        // `GPUEX_BENCH_SCALE_WALK=states` (or `every_node`) runs one walk, for a profile.
        let only = std::env::var("GPUEX_BENCH_SCALE_WALK").ok();
        for walk in [placement::Walk::EveryNode, placement::Walk::States] {
            let name = match walk {
                placement::Walk::EveryNode => "every_node",
                placement::Walk::States => "states",
            };
            if only.as_deref().is_some_and(|o| o != name) {
                continue;
            }
            let mut cfg = EngineConfig::default();
            cfg.policy.walk = walk;
            let mut e = fleet_of(gpus.div_ceil(8), cfg);
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let mut next_id = 0u128;
            let t = Instant::now();
            let leases = fill(&mut e, &mut rng, 0.80, &mut next_id);
            let filling = t.elapsed();

            let policy = e.config().policy;
            let reqs: Vec<PlacementRequest> = (0..5000)
                .map(|_| request_of(&e, &order(&mut rng)))
                .collect();
            let mut samples = Vec::with_capacity(reqs.len());
            for r in &reqs {
                let t = Instant::now();
                let p = placement::place(e.view(), r, e.demand_mix(), &policy);
                samples.push(t.elapsed());
                std::hint::black_box(p);
            }
            let spent: Duration = samples.iter().sum();
            let per_s = reqs.len() as f64 / spent.as_secs_f64();
            let (p50, p99, _) = percentiles(samples);

            let applied = timed_places(&mut e, &mut rng, &mut next_id, 3000);
            let (_, apply_p99, _) = percentiles(applied);
            println!(
                "| {gpus} | {walk:?} | {p50:.1?} | {p99:.1?} | {per_s:.0} | {apply_p99:.1?} | {:.1} s | {} | {} |",
                filling.as_secs_f64(),
                leases.len(),
                e.view().node_states()
            );
            fleets.push(e.snapshot().leases);
        }
        if let [walking, indexed] = &fleets[..] {
            assert_eq!(walking, indexed, "both walks place the same");
        }
    }
}

/// Issue 23: what a spot clearing costs with 10,000 bids queued on the
/// 10,000-GPU fleet at 80 % (`GPUEX_BENCH_AUCTION_BIDS`): the first
/// clearing, which places every bid and grants what fits; then clearings
/// with nothing freed in between, where the bids that found no room lose
/// without a placement; then one after a lease ends, which places them all
/// again. Run with `GPUEX_BENCH_SCALE_ONLY=1` too; add
/// `GPUEX_BENCH_AUCTION_ONLY=1` to run the auction without the fleet-size curve
/// (`GPUEX_BENCH_AUCTION_STEADY`: how many clearings with nothing freed, for
/// a profile of those alone). Last, order latency with and without
/// clearings (see [`order_latency`]).
fn bench_auction(_c: &mut Criterion) {
    if std::env::var_os("GPUEX_BENCH_RESALE_ONLY").is_some() {
        return;
    }
    // Issue 38: clearings in steps (the engine's default), and whole in one
    // tick as before, in the same run.
    let steps = [
        ("in steps", EngineConfig::default().clearing_step_bids),
        ("whole", u32::MAX),
    ];
    for (name, step_bids) in steps {
        auction_with(name, step_bids);
    }
}

/// [`bench_auction`] with clearings of `step_bids` bids a step.
fn auction_with(name: &str, step_bids: u32) {
    let bids: usize = std::env::var("GPUEX_BENCH_AUCTION_BIDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let gpus: u32 = std::env::var("GPUEX_BENCH_AUCTION_GPUS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let cfg = EngineConfig {
        clearing_step_bids: step_bids,
        ..EngineConfig::default()
    };
    let mut e = fleet_of(gpus.div_ceil(8), cfg);
    let mut next_id = 0u128;
    let leases = fill(&mut e, &mut rng, 0.80, &mut next_id);
    let mut now = T0;
    e.apply(now, Command::Tick).unwrap();
    for _ in 0..bids {
        next_id += 1;
        let mut s = order(&mut rng);
        // A bid between 0.55 and 0.95 of the list value of what it asks.
        let index = Decimal::new(55 + rng.below(41) as i64, 2);
        let list = s.resources.tflops * Decimal::new(2, 3)
            + Decimal::from(s.resources.vram_gb / 4) * Decimal::new(5, 2);
        s.mode = Mode::Spot;
        s.max_price = Some((list * index).round_dp(6));
        e.apply(now, place_cmd(next_id, s)).unwrap();
    }
    // A whole clearing: the tick that begins it and those that carry it on.
    // Its time in all, its longest tick but the last, its last tick (which
    // sets the indexes, reprices and displaces), and the leases it granted.
    let clear = |e: &mut Engine, now: &mut Ts| {
        *now += e.config().spot_interval_s;
        let (mut total, mut longest, mut granted) = (Duration::ZERO, Duration::ZERO, 0);
        loop {
            let t = Instant::now();
            let ev = e.apply(*now, Command::Tick).unwrap();
            let took = t.elapsed();
            total += took;
            granted += ev
                .iter()
                .filter(|x| matches!(x, Event::LeaseGranted { .. }))
                .count();
            if !e.clearing_under_way() {
                return (total, longest.max(took), granted, took);
            }
            longest = longest.max(took);
        }
    };
    let (first, first_longest, granted, _) = clear(&mut e, &mut now);
    let queued = e.open_orders().count();
    let rounds: usize = std::env::var("GPUEX_BENCH_AUCTION_STEADY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let (mut steady, mut steady_ticks) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (total, longest, _, _) = clear(&mut e, &mut now);
        steady.push(total);
        steady_ticks.push(longest);
    }
    let (steady_p50, _, steady_max) = percentiles(steady);
    let (_, _, steady_tick) = percentiles(steady_ticks);
    let (mut after_release, mut release_ticks, mut last_ticks) =
        (Vec::new(), Vec::new(), Vec::new());
    for k in 0..5 {
        e.apply(
            now,
            Command::Release {
                lease_id: leases[k * 97],
            },
        )
        .unwrap();
        let (total, longest, _, last) = clear(&mut e, &mut now);
        after_release.push(total);
        release_ticks.push(longest);
        last_ticks.push(last);
    }
    let (release_p50, _, release_max) = percentiles(after_release);
    let (_, _, release_tick) = percentiles(release_ticks);
    let (_, _, last_tick) = percentiles(last_ticks);
    println!(
        "spot auction {name}, {bids} bids on {gpus} GPUs at 80 %: first clearing {first:.1?} (longest tick {first_longest:.1?}; {granted} granted, {queued} open orders after); nothing freed: p50 {steady_p50:.1?}, max {steady_max:.1?} (longest tick {steady_tick:.1?}); after a lease ends: p50 {release_p50:.1?}, max {release_max:.1?} (longest tick {release_tick:.1?}, of which the last {last_tick:.1?})"
    );
    let every: usize = std::env::var("GPUEX_BENCH_TICK_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    for (label, tick_every) in [("no clearing", None), ("a clearing due", Some(every))] {
        let (p50, p99, max) = percentiles(order_latency(
            &mut e,
            &mut rng,
            &mut next_id,
            &mut now,
            tick_every,
        ));
        let label = match tick_every {
            Some(n) => format!("{label} every {n} orders"),
            None => label.to_owned(),
        };
        println!("order latency with the bids queued ({name}), {label}: p50 {p50:.1?}, p99 {p99:.1?}, max {max:.1?}");
    }
}

/// Issue 38: what an order waits while auctions run. 2,000 on-demand
/// `apply(Place)`s back to back on the auction's engine (each lease released
/// again, so the fleet stays at 80 % and every clearing has something
/// freed); with `tick_every`, a tick with a clearing due runs before every
/// n-th order, and while a clearing is under way a tick (its next step)
/// runs before every order, as the market task begins each batch with a
/// tick. An order's latency is its own apply plus the tick it queued
/// behind: the market task applies one command at a time.
fn order_latency(
    e: &mut Engine,
    rng: &mut Rng,
    next_id: &mut u128,
    now: &mut Ts,
    tick_every: Option<usize>,
) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(2000);
    for k in 0..2000 {
        let mut waited = Duration::ZERO;
        let due = tick_every.is_some_and(|n| k % n == 0);
        if due || e.clearing_under_way() {
            if due {
                *now += e.config().spot_interval_s;
            }
            let t = Instant::now();
            e.apply(*now, Command::Tick).unwrap();
            waited = t.elapsed();
        }
        *next_id += 1;
        let spec = order(rng);
        let t = Instant::now();
        let ev = e.apply(*now, place_cmd(*next_id, spec)).unwrap();
        samples.push(waited + t.elapsed());
        for x in ev {
            if let Event::LeaseGranted { lease, .. } = x {
                e.apply(*now, Command::Release { lease_id: lease.id })
                    .unwrap();
            }
        }
    }
    samples
}

criterion_group!(benches, bench, bench_resale, bench_scale, bench_auction);
criterion_main!(benches);

/// `count` whole Place commands (placement, pricing, funds, booking), each
/// timed, and each lease granted released again so occupancy stays put.
fn timed_places(e: &mut Engine, rng: &mut Rng, next_id: &mut u128, count: usize) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        *next_id += 1;
        let spec = order(rng);
        let t = Instant::now();
        let ev = e.apply(T0, place_cmd(*next_id, spec)).unwrap();
        samples.push(t.elapsed());
        for x in ev {
            if let Event::LeaseGranted { lease, .. } = x {
                e.apply(T0, Command::Release { lease_id: lease.id })
                    .unwrap();
            }
        }
    }
    samples
}
