//! The engine benchmarks' fleet and order mix, shared by `crates/engine/benches/engine.rs`
//! and `benches/restore.rs` so both measure the same market: nodes of 8
//! GPUs cycling through 6 models, 3 modes and 3 regions, filled with a mix
//! of one- and two-GPU on-demand orders.
// Each benchmark uses its part.
#![allow(dead_code)]

use rust_decimal::Decimal;
use uuid::Uuid;

use gpuex_engine::placement::PartitionMode;
use gpuex_engine::*;
use gpuex_wire::catalog::Unit;

pub const T0: Ts = 1_700_000_000;
pub const REGIONS: [&str; 3] = ["eu", "us", "ap"];
pub const MODELS: [(&str, bool); 6] = [
    ("A100-SXM4-80GB", true),
    ("H100-SXM5-80GB", true),
    ("H200-SXM-141GB", true),
    ("L40S-48GB", false),
    ("A100-SXM4-40GB", true),
    ("V100-SXM2-32GB", false),
];

/// A deterministic xorshift so the fleet and the stream are the same every run.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub fn fleet_engine() -> Engine {
    fleet_of(1250, EngineConfig::default())
}

/// The benchmark's fleet at any size: `nodes` nodes of 8 GPUs cycling
/// through the models, modes and regions.
pub fn fleet_of(nodes: u32, cfg: EngineConfig) -> Engine {
    let mut e = Engine::new(cfg);
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
    for n in 0..nodes {
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
            zone: None,
            region: REGIONS[(n % 3) as usize].into(),
            cpu_milli: 128_000,
            memory_mib: 1_024_000,
            gpus,
            cuda: None,
        };
        e.apply(T0, Command::UpsertNode(spec)).unwrap();
    }
    e
}

pub fn order(rng: &mut Rng) -> OrderSpec {
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
        min_cuda: None,
    };
    OrderSpec {
        mode: Mode::OnDemand,
        resources: res,
        region: Default::default(),
        node: None,
        start_at: None,
        duration_s: None,
        max_price: None,
        max_wait_s: None,
        qos: Qos::Batch,
        predicted_duration: None,
        gang: None,
    }
}

pub fn place_cmd(id: u128, spec: OrderSpec) -> Command {
    Command::Place(PlaceOrder {
        order_id: Uuid::from_u128(id),
        buyer: Uuid::from_u128(1),
        funds_available: Decimal::from(1_000_000),
        spec,
    })
}

/// Fills the fleet to `target` of its GPU compute; returns the live lease ids.
pub fn fill(e: &mut Engine, rng: &mut Rng, target: f64, next_id: &mut u128) -> Vec<Uuid> {
    fill_from(e, rng, target, next_id, 0.0)
}

/// Fills the fleet, `held` milli-GPU of it already held, to `target` with
/// on-demand leases; returns their ids.
pub fn fill_from(
    e: &mut Engine,
    rng: &mut Rng,
    target: f64,
    next_id: &mut u128,
    mut held: f64,
) -> Vec<Uuid> {
    let total = e.view().nodes().len() as f64 * 8.0 * 1000.0;
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
