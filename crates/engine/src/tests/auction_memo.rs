//! The spot clearing's memory (the memo of its losers, the parsed bids, the
//! ranked queue) changes how much work a clearing does, never what it
//! decides: random spot-heavy sequences give the same events when every bit
//! of it is forgotten before each command.

use proptest::prelude::*;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

#[derive(Debug, Clone)]
enum Step {
    /// A spot bid (or, with `spot` false, an on-demand order taking room).
    Bid {
        spot: bool,
        tflops: u32,
        vram4: u32,
        gpus: u8,
        mig: bool,
        price_c: u32,
        ends: bool,
    },
    Cancel(usize),
    Release(usize),
    Provisioned(usize),
    Tick(i64),
    Cordon(u8, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (prop::bool::weighted(0.8), 1..400u32, 0..12u32, 1..3u8, prop::bool::weighted(0.2), 20..300u32, prop::bool::weighted(0.2))
            .prop_map(|(spot, tflops, vram4, gpus, mig, price_c, ends)| Step::Bid { spot, tflops, vram4, gpus, mig, price_c, ends }),
        1 => any::<usize>().prop_map(Step::Cancel),
        3 => any::<usize>().prop_map(Step::Release),
        1 => any::<usize>().prop_map(Step::Provisioned),
        5 => (0..400i64).prop_map(Step::Tick),
        1 => (0..5u8, any::<bool>()).prop_map(|(n, c)| Step::Cordon(n, c)),
    ]
}

fn fleet() -> Vec<NodeSpec> {
    let whole = [(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)];
    vec![
        node(0, "eu", &whole),
        node(1, "eu", &whole),
        node(
            2,
            "eu",
            &[(H100, PartitionMode::Mig), (H100, PartitionMode::Whole)],
        ),
        node(
            3,
            "eu",
            &[(A100, PartitionMode::Shared), (H100, PartitionMode::Whole)],
        ),
        node(4, "eu", &[("L40S-48GB", PartitionMode::Shared)]),
    ]
}

fn to_command(s: &Step, n: usize, orders: &[Uuid], leases: &[Uuid]) -> Option<Command> {
    let pick = |v: &[Uuid], i: usize| v.get(i % v.len().max(1)).copied();
    Some(match s.clone() {
        Step::Bid {
            spot,
            tflops,
            vram4,
            gpus,
            mig,
            price_c,
            ends,
        } => {
            let mut r = resources(Decimal::from(tflops), vram4 * 4);
            r.gpus = Some(u32::from(gpus));
            r.isolation = if mig { Isolation::Mig } else { Isolation::Any };
            let mut sp = spec(if spot { Mode::Spot } else { Mode::OnDemand }, r);
            sp.max_price = Some(Decimal::new(i64::from(price_c), 2));
            // A predicted end makes a bid's request read the clock.
            sp.duration_s = ends.then_some(3600);
            place(n as u128, sp)
        }
        Step::Cancel(i) => Command::Cancel {
            order_id: pick(orders, i)?,
        },
        Step::Release(i) => Command::Release {
            lease_id: pick(leases, i)?,
        },
        Step::Provisioned(i) => Command::AgentStatus {
            lease_id: pick(leases, i)?,
            status: AgentReport::Provisioned,
        },
        Step::Tick(_) => Command::Tick,
        Step::Cordon(n, cordoned) => Command::Cordon {
            node: node_id(u128::from(n)),
            cordoned,
        },
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_clearing_decides_the_same_with_its_memory_forgotten(
        steps in prop::collection::vec(step(), 1..120),
        bids_a_step in prop::option::of(1..6u32),
    ) {
        // Whole clearings a tick, or a few bids a step with commands between.
        let mut cfg = EngineConfig::default();
        if let Some(bids) = bids_a_step {
            cfg.clearing_step_bids = bids;
        }
        let mut kept = engine_configured(cfg, fleet());
        let mut fresh = engine_configured(cfg, fleet());
        let (mut orders, mut leases) = (Vec::new(), Vec::new());
        let mut now = T0;
        for (n, s) in steps.iter().enumerate() {
            if let Step::Tick(dt) = s {
                now += dt;
            }
            let Some(cmd) = to_command(s, n, &orders, &leases) else {
                continue;
            };
            if let Command::Place(po) = &cmd {
                orders.push(po.order_id);
            }
            fresh.spot.forget_derived();
            fresh.book.forget_ranking();
            let out = kept.apply(now, cmd.clone());
            prop_assert_eq!(&fresh.apply(now, cmd), &out, "step {}", n);
            for x in out.iter().flatten() {
                if let Event::LeaseGranted { lease, .. } = x {
                    leases.push(lease.id);
                }
            }
            kept.validate().map_err(|i| TestCaseError::fail(format!("step {n}: {i}")))?;
        }
    }
}
