//! A small fleet and order builders for the engine tests.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use uuid::Uuid;

use crate::placement::PartitionMode;
use crate::*;
use gpuex_wire::catalog::Unit;

pub const T0: Ts = 1_700_000_000;
pub const A100: &str = "A100-SXM4-80GB";
pub const H100: &str = "H100-SXM5-80GB";

pub fn node_id(n: u128) -> Uuid {
    Uuid::from_u128(0x1000 + n)
}

pub fn order_id(n: u128) -> Uuid {
    Uuid::from_u128(0xabc0_0000 + n)
}

pub fn node(n: u128, region: &str, gpus: &[(&str, PartitionMode)]) -> NodeSpec {
    NodeSpec {
        id: node_id(n),
        zone: None,
        region: region.to_owned(),
        cpu_milli: 64_000,
        memory_mib: 512_000,
        gpus: gpus
            .iter()
            .enumerate()
            .map(|(i, (model, mode))| GpuSpec {
                index: i as u8,
                model: (*model).to_owned(),
                mode: *mode,
                nvlink: Vec::new(),
            })
            .collect(),
        cuda: None,
    }
}

/// List prices: 0.002 per tflops_h and 0.05 per vram_h for every model in `region`.
pub fn prices(region: &str) -> Command {
    let mut rows = Vec::new();
    for m in gpuex_wire::catalog::all_models() {
        rows.push(ListPrice {
            region: region.into(),
            gpu_model: m.name.into(),
            unit: Unit::TflopsH,
            list_price: dec!(0.002),
        });
        rows.push(ListPrice {
            region: region.into(),
            gpu_model: m.name.into(),
            unit: Unit::VramH,
            list_price: dec!(0.05),
        });
    }
    Command::SetPrices(rows)
}

/// An engine with prices in `eu` and the given nodes, validated after every step.
pub fn engine_with(nodes: Vec<NodeSpec>) -> Engine {
    engine_configured(EngineConfig::default(), nodes)
}

/// [`engine_with`] under `cfg`.
pub fn engine_configured(cfg: EngineConfig, nodes: Vec<NodeSpec>) -> Engine {
    let mut e = Engine::new(cfg);
    e.apply(
        T0,
        Command::SetRegion {
            name: "eu".into(),
            timezone: "Europe/Berlin".into(),
        },
    )
    .unwrap();
    e.apply(T0, prices("eu")).unwrap();
    for n in nodes {
        e.apply(T0, Command::UpsertNode(n)).unwrap();
    }
    e.validate().unwrap();
    e
}

pub fn resources(tflops: Decimal, vram_gb: u32) -> Resources {
    Resources {
        tflops,
        vram_gb,
        precision: None,
        gpu_model: None,
        gpus: None,
        nvlink: false,
        isolation: Isolation::Any,
        cpu_milli: None,
        memory_mib: None,
        min_cuda: None,
    }
}

pub fn spec(mode: Mode, res: Resources) -> OrderSpec {
    OrderSpec {
        mode,
        resources: res,
        region: RegionChoice::Any,
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

/// A whole A100-80GB's worth: 312 TFLOPS and 80 GB.
pub fn whole_a100() -> Resources {
    resources(dec!(312), 80)
}

pub fn place(id: u128, spec: OrderSpec) -> Command {
    Command::Place(PlaceOrder {
        order_id: order_id(id),
        buyer: Uuid::from_u128(7),
        funds_available: dec!(1000000),
        spec,
    })
}

pub fn place_with_funds(id: u128, spec: OrderSpec, funds: Decimal) -> Command {
    Command::Place(PlaceOrder {
        order_id: order_id(id),
        buyer: Uuid::from_u128(7),
        funds_available: funds,
        spec,
    })
}

/// Applies and validates.
pub fn run(e: &mut Engine, now: Ts, cmd: Command) -> Vec<Event> {
    let ev = e.apply(now, cmd).expect("command applies");
    e.validate().expect("invariants hold");
    ev
}

pub fn rejected(ev: &[Event]) -> Option<RejectReason> {
    ev.iter().find_map(|e| match e {
        Event::OrderRejected { reason, .. } => Some(*reason),
        _ => None,
    })
}

/// Applies `cmd` and returns the last lease it granted.
pub fn grant(e: &mut Engine, now: Ts, cmd: Command) -> Lease {
    granted(&run(e, now, cmd))
        .pop()
        .expect("a lease is granted")
}

pub fn granted(ev: &[Event]) -> Vec<Lease> {
    ev.iter()
        .filter_map(|e| match e {
            Event::LeaseGranted { lease, .. } => Some((**lease).clone()),
            _ => None,
        })
        .collect()
}

pub fn ended(ev: &[Event]) -> Vec<(LeaseIdAlias, EndReason, Ts)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::LeaseEnded {
                lease_id,
                reason,
                at,
            } => Some((*lease_id, *reason, *at)),
            _ => None,
        })
        .collect()
}

pub type LeaseIdAlias = Uuid;

/// Whether `id` has been given its preemption notice. A lease that has not
/// run yet keeps its state when noticed: only a running one is `preempting`.
pub fn noticed(e: &Engine, id: LeaseIdAlias) -> bool {
    e.lease(id)
        .is_some_and(|l| l.noticed_at.is_some() && l.preempt_at.is_some())
}

/// The agent reports `id` provisioned at `now`.
pub fn provisioned(e: &mut Engine, now: Ts, id: LeaseIdAlias) -> Vec<Event> {
    run(
        e,
        now,
        Command::AgentStatus {
            lease_id: id,
            status: AgentReport::Provisioned,
        },
    )
}

/// One shared A100, all of it taken by a pooled batch lease at `T0`, and a
/// pooled realtime order for all of it at `T0`, which outranks the batch
/// one and waits `pending` on its notice. Returns (engine, batch, realtime).
pub fn pooled_realtime_behind_batch() -> (Engine, Lease, Lease) {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Shared)])]);
    let batch = granted(&run(
        &mut e,
        T0,
        place(1, spec(Mode::Pooled, whole_shared_a100())),
    ))
    .pop()
    .unwrap();
    let mut rt = spec(Mode::Pooled, whole_shared_a100());
    rt.qos = Qos::Realtime;
    let rt = granted(&run(&mut e, T0, place(2, rt))).pop().unwrap();
    (e, batch, rt)
}

/// All of an A100's compute and memory, as a shared request.
pub fn whole_shared_a100() -> Resources {
    resources(dec!(312), 80)
}
