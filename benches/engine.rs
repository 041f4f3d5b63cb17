//! Engine benchmarks: placement latency (p50/p99) on a 10,000-GPU fleet
//! (1,250 nodes × 8, mixed models and modes) at 80 % full, and engine
//! commands per second on a mixed place/cancel/release/tick stream.
//!
//! `cargo bench --bench engine -- --warm-up-time 1 --measurement-time 3`

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rust_decimal::Decimal;
use uuid::Uuid;

use gpuex::catalog::Unit;
use gpuex::engine::placement::{self, PartitionMode, PlacementRequest};
use gpuex::engine::*;

const T0: Ts = 1_700_000_000;
const REGIONS: [&str; 3] = ["eu", "us", "ap"];
const MODELS: [(&str, bool); 6] = [
    ("A100-SXM4-80GB", true),
    ("H100-SXM5-80GB", true),
    ("H200-SXM-141GB", true),
    ("L40S-48GB", false),
    ("A100-SXM4-40GB", true),
    ("V100-SXM2-32GB", false),
];

/// A deterministic xorshift so the fleet and the stream are the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn fleet_engine() -> Engine {
    let mut e = Engine::new(EngineConfig::default());
    for (i, r) in REGIONS.iter().enumerate() {
        e.apply(
            T0,
            Command::SetRegion {
                name: (*r).into(),
                timezone: ["Europe/Paris", "America/New_York", "Asia/Tokyo"][i].into(),
            },
        )
        .unwrap();
        let mut rows = Vec::new();
        for (m, _) in MODELS {
            let bump = Decimal::new(100 + i as i64, 2);
            rows.push(ListPrice {
                region: (*r).into(),
                gpu_model: m.into(),
                unit: Unit::TflopsH,
                list_price: Decimal::new(2, 3) * bump,
            });
            rows.push(ListPrice {
                region: (*r).into(),
                gpu_model: m.into(),
                unit: Unit::VramH,
                list_price: Decimal::new(5, 2) * bump,
            });
        }
        e.apply(T0, Command::SetPrices(rows)).unwrap();
    }
    for n in 0..1250u32 {
        let (model, mig) = MODELS[(n % 6) as usize];
        let mode = match n % 3 {
            0 if mig => PartitionMode::Mig,
            0 | 1 => PartitionMode::Shared,
            _ => PartitionMode::Whole,
        };
        let gpus = (0..8u8)
            .map(|i| GpuSpec {
                index: i,
                model: model.into(),
                mode,
                nvlink: vec![i ^ 1],
            })
            .collect();
        let spec = NodeSpec {
            id: Uuid::from_u128(0x5000_0000 + u128::from(n)),
            region: REGIONS[(n % 3) as usize].into(),
            cpu_milli: 128_000,
            memory_mib: 1_024_000,
            gpus,
        };
        e.apply(T0, Command::UpsertNode(spec)).unwrap();
    }
    e
}

fn order(rng: &mut Rng) -> OrderSpec {
    let gpus = if rng.below(20) == 0 { 2 } else { 1 };
    let tflops = match rng.below(4) {
        0 => 30 + rng.below(40),
        1 => 100 + rng.below(100),
        2 => 200 + rng.below(200),
        _ => 300 * gpus,
    };
    let res = Resources {
        tflops: Decimal::from(tflops),
        vram_gb: 4 * (1 + rng.below(8) as u32) * gpus as u32,
        precision: None,
        gpu_model: None,
        gpus: Some(gpus as u32),
        nvlink: false,
        isolation: Isolation::Any,
        cpu_milli: None,
        memory_mib: None,
    };
    OrderSpec {
        mode: Mode::OnDemand,
        resources: res,
        region: None,
        node: None,
        start_at: None,
        duration_s: None,
        max_price: None,
        max_wait_s: None,
        qos: Qos::Batch,
    }
}

fn place_cmd(id: u128, spec: OrderSpec) -> Command {
    Command::Place(PlaceOrder {
        order_id: Uuid::from_u128(id),
        buyer: Uuid::from_u128(1),
        funds_available: Decimal::from(1_000_000),
        spec,
    })
}

/// Fills the fleet to `target` of its GPU compute; returns the live lease ids.
fn fill(e: &mut Engine, rng: &mut Rng, target: f64, next_id: &mut u128) -> Vec<Uuid> {
    let total: f64 = 10_000.0 * 1000.0;
    let mut held: f64 = 0.0;
    let mut leases = Vec::new();
    let mut misses = 0;
    while held / total < target && misses < 2000 {
        *next_id += 1;
        let ev = e.apply(T0, place_cmd(*next_id, order(rng))).unwrap();
        let mut got = false;
        for x in ev {
            if let Event::LeaseGranted { lease, .. } = x {
                held += f64::from(lease.placement.held_milli());
                leases.push(lease.id);
                got = true;
            }
        }
        if !got {
            misses += 1;
        }
    }
    leases
}

fn request_of(e: &Engine, spec: &OrderSpec) -> PlacementRequest {
    let _ = e;
    PlacementRequest {
        compute: placement::Compute::Tflops {
            tflops: spec.resources.tflops,
            precision: gpuex::catalog::Precision::Fp16,
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
    }
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn bench(c: &mut Criterion) {
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
    let mut samples = Vec::new();
    for _ in 0..3000 {
        next_id += 1;
        let spec = order(&mut rng);
        let t = Instant::now();
        let ev = e.apply(T0, place_cmd(next_id, spec)).unwrap();
        samples.push(t.elapsed());
        for x in ev {
            if let Event::LeaseGranted { lease, .. } = x {
                e.apply(T0, Command::Release { lease_id: lease.id })
                    .unwrap();
            }
        }
    }
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

criterion_group!(benches, bench);
criterion_main!(benches);
