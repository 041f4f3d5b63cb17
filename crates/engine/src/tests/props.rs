//! Property tests: random command sequences keep every invariant after every
//! step; the same commands give the same events; a restored engine carries on
//! exactly as the original.

use proptest::prelude::*;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::helpers::*;
use crate::placement::{model_at, PartitionMode, PlacementRequest, Slot};
use crate::*;

/// One random step; indices pick among ids seen so far.
#[derive(Debug, Clone)]
enum Step {
    Place {
        mode: u8,
        tflops: u32,
        vram4: u32,
        gpus: u8,
        iso: u8,
        wait: bool,
        realtime: bool,
        start_h: i64,
        dur_m: i64,
        price_c: u32,
        rich: bool,
    },
    Cancel(usize),
    Release(usize),
    Agent(usize, u8),
    Funds(usize, i64),
    Tick(i64),
    Cordon(u8, bool),
    Lost(u8),
    ReAdd(u8),
    /// Convert a lease: to on-demand, or to reserved `ahead_h` whole hours on for `hours`.
    Convert {
        lease: usize,
        reserved: bool,
        ahead_h: i64,
        hours: i64,
        rich: bool,
    },
    /// List a lease's tail from `from_h` whole hours on, at `ask_pct` % of
    /// its price (over 90 % is refused), as its holder or not.
    List {
        lease: usize,
        from_h: i64,
        ask_pct: u32,
        holder: bool,
    },
    /// Cancel a listing, as its seller or not.
    Unlist(usize, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..4u8, 1..700u32, 0..21u32, 1..3u8, 0..3u8, any::<bool>(), any::<bool>(), 0..4i64, 1..300i64, 40..200u32, prop::bool::weighted(0.9))
            .prop_map(|(mode, tflops, vram4, gpus, iso, wait, realtime, start_h, dur_m, price_c, rich)| Step::Place { mode, tflops, vram4, gpus, iso, wait, realtime, start_h, dur_m, price_c, rich }),
        1 => any::<usize>().prop_map(Step::Cancel),
        2 => any::<usize>().prop_map(Step::Release),
        2 => (any::<usize>(), 0..3u8).prop_map(|(i, s)| Step::Agent(i, s)),
        1 => (any::<usize>(), 0..20_000i64).prop_map(|(i, s)| Step::Funds(i, s)),
        4 => (0..4000i64).prop_map(Step::Tick),
        1 => (0..3u8, any::<bool>()).prop_map(|(n, c)| Step::Cordon(n, c)),
        1 => (0..3u8).prop_map(Step::Lost),
        1 => (0..3u8).prop_map(Step::ReAdd),
        2 => (any::<usize>(), any::<bool>(), 0..4i64, 0..4i64, prop::bool::weighted(0.9))
            .prop_map(|(lease, reserved, ahead_h, hours, rich)| Step::Convert { lease, reserved, ahead_h, hours, rich }),
        2 => (any::<usize>(), 0..6i64, 50..95u32, prop::bool::weighted(0.9))
            .prop_map(|(lease, from_h, ask_pct, holder)| Step::List { lease, from_h, ask_pct, holder }),
        1 => (any::<usize>(), prop::bool::weighted(0.9)).prop_map(|(i, seller)| Step::Unlist(i, seller)),
    ]
}

fn fleet() -> Vec<NodeSpec> {
    let mut a = node(
        0,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    );
    a.gpus[0].nvlink = vec![1];
    vec![
        a,
        node(
            1,
            "eu",
            &[(H100, PartitionMode::Mig), (A100, PartitionMode::Shared)],
        ),
        node(
            2,
            "eu",
            &[
                ("L40S-48GB", PartitionMode::Shared),
                ("A100-SXM4-40GB", PartitionMode::Mig),
            ],
        ),
    ]
}

/// Turns steps into commands with times, using the ids the engine has produced so far.
/// What the steps have seen so far, for picking what a step names.
#[derive(Default)]
struct Seen {
    orders: Vec<Uuid>,
    leases: Vec<Lease>,
    listings: Vec<Listing>,
}

/// Two buyers take turns placing, so one may buy what the other lists.
fn buyer_of_step(n: usize) -> Uuid {
    Uuid::from_u128(7 + (n % 2) as u128)
}

fn to_command(s: &Step, now: &mut Ts, n: usize, seen: &Seen) -> Command {
    let orders = &seen.orders;
    let leases: Vec<Uuid> = seen.leases.iter().map(|l| l.id).collect();
    let leases = &leases[..];
    let pick = |v: &[Uuid], i: usize| v.get(i % v.len().max(1)).copied().unwrap_or(Uuid::nil());
    match s.clone() {
        Step::Place {
            mode,
            tflops,
            vram4,
            gpus,
            iso,
            wait,
            realtime,
            start_h,
            dur_m,
            price_c,
            rich,
        } => {
            let mode =
                [Mode::OnDemand, Mode::Reserved, Mode::Spot, Mode::Pooled][usize::from(mode)];
            let mut r = resources(Decimal::from(tflops), vram4 * 4);
            r.gpus = Some(u32::from(gpus));
            r.isolation = [Isolation::Any, Isolation::Mig, Isolation::Whole][usize::from(iso)];
            let mut sp = spec(mode, r);
            sp.max_wait_s = wait.then_some(120);
            sp.qos = if realtime { Qos::Realtime } else { Qos::Batch };
            if mode == Mode::Reserved {
                sp.start_at = Some(*now + 3600 + start_h * 3600);
                sp.duration_s = Some(dur_m * 60);
            } else if dur_m % 3 == 0 {
                sp.duration_s = Some(dur_m * 30);
            }
            sp.max_price = Some(Decimal::new(i64::from(price_c), 2));
            // Some on-demand and pooled orders are gangs of 2–4 units,
            // all-or-none or with a minimum (ARCHITECTURE.md §22).
            if matches!(mode, Mode::OnDemand | Mode::Pooled) && dur_m % 4 == 0 {
                let count = 2 + price_c % 3;
                let min_count = if vram4 % 2 == 0 {
                    count
                } else {
                    1 + tflops % count
                };
                sp.gang = Some(Gang { count, min_count });
            }
            let funds = if rich {
                Decimal::from(100_000)
            } else {
                Decimal::new(50, 2)
            };
            Command::Place(PlaceOrder {
                order_id: order_id(n as u128),
                buyer: buyer_of_step(n),
                funds_available: funds,
                spec: sp,
            })
        }
        Step::Cancel(i) => Command::Cancel {
            order_id: pick(orders, i),
        },
        Step::Release(i) => Command::Release {
            lease_id: pick(leases, i),
        },
        Step::Agent(i, st) => Command::AgentStatus {
            lease_id: pick(leases, i),
            status: [
                AgentReport::Provisioned,
                AgentReport::Ended,
                AgentReport::Failed,
            ][usize::from(st)],
        },
        Step::Funds(i, ahead) => Command::FundsExhausted {
            lease_id: pick(leases, i),
            funded_until: Some(*now + ahead),
        },
        Step::Tick(dt) => {
            *now += dt;
            Command::Tick
        }
        Step::Cordon(n, c) => Command::Cordon {
            node: node_id(u128::from(n)),
            cordoned: c,
        },
        Step::Lost(n) => Command::NodeLost {
            node: node_id(u128::from(n)),
        },
        Step::ReAdd(n) => Command::UpsertNode(fleet()[usize::from(n)].clone()),
        Step::Convert {
            lease,
            reserved,
            ahead_h,
            hours,
            rich,
        } => {
            // Whole hours from the next one on; `ahead_h` 0 is too soon and `hours` 0 empty,
            // so refusals are drawn too.
            let next_hour = (*now / 3600 + 1) * 3600;
            let to = if reserved {
                let from = next_hour + ahead_h * 3600;
                ConvertTo::Reserved {
                    from,
                    until: from + hours * 3600,
                }
            } else {
                ConvertTo::OnDemand
            };
            Command::Convert {
                lease_id: pick(leases, lease),
                to,
                funds_available: if rich {
                    Decimal::from(100_000)
                } else {
                    Decimal::ZERO
                },
            }
        }
        Step::List {
            lease,
            from_h,
            ask_pct,
            holder,
        } => {
            let picked = seen.leases.get(lease % seen.leases.len().max(1));
            let (lease_id, buyer, price) = picked
                .map_or((Uuid::nil(), Uuid::nil(), Decimal::ONE), |l| {
                    (l.id, l.buyer, l.price_per_hour)
                });
            Command::ListResale(ListResale {
                listing_id: Uuid::from_u128(1_000_000 + n as u128),
                lease_id,
                seller: if holder { buyer } else { Uuid::from_u128(99) },
                from: (*now / 3600 + 1 + from_h) * 3600,
                ask_per_hour: price * Decimal::from(ask_pct) / Decimal::from(100),
            })
        }
        Step::Unlist(i, seller) => {
            let picked = seen.listings.get(i % seen.listings.len().max(1));
            Command::CancelListing {
                listing_id: picked.map_or(Uuid::nil(), |l| l.id),
                seller: match (picked, seller) {
                    (Some(l), true) => l.seller,
                    _ => Uuid::from_u128(99),
                },
            }
        }
    }
}

/// The listing an order could take, found by looking at every open one:
/// what `listing_for`, which looks through the asks index, must agree with.
fn listing_by_scan(
    e: &Engine,
    buyer: Uuid,
    req: &PlacementRequest,
    (from, until): (Ts, Ts),
) -> Option<Uuid> {
    let holds = |l: &Listing| {
        let p = &l.placement;
        let gpus = u8::try_from(p.gpus.len()).unwrap_or(0);
        let iso = p.gpus.iter().all(|g| {
            matches!(
                (req.isolation, &g.slot),
                (Isolation::Any, _)
                    | (Isolation::Mig, Slot::Mig { .. })
                    | (Isolation::Whole, Slot::Whole)
                    | (Isolation::Shared, Slot::Shared { .. })
            )
        });
        let Some(milli) = req.milli_per_gpu(model_at(p.model)) else {
            return false;
        };
        let memory_held_mb = p.units.vram_h
            * Decimal::from(u64::from(gpuex_wire::catalog::UNIT_VRAM_GB) * 1000)
            / Decimal::from(gpus.max(1));
        gpus == req.gpus
            && req.models.contains(p.model)
            && req.region.is_none_or(|r| r == p.region)
            && req.node.is_none_or(|n| n == l.node)
            && iso
            && !(req.nvlink && gpus > 1 && p.why.nvlink_links == 0)
            && p.gpus.iter().all(|g| g.slot.milli() >= milli)
            && Decimal::from(req.memory_per_gpu()) <= memory_held_mb
            && req.cpu_milli.is_none_or(|c| c <= p.cpu_milli)
            && req.memory_mib.is_none_or(|m| m <= p.memory_mib)
    };
    e.listings()
        .filter(|l| l.seller != buyer && l.from <= from && until <= l.until && holds(l))
        .min_by_key(|l| (l.ask_per_hour, l.id))
        .map(|l| l.id)
}

/// Before an order is placed: the listing the engine would look at for it
/// is the one a scan of every open listing finds, with no price to beat and
/// with the order's `max_price` as one.
fn same_listing_as_a_scan(e: &Engine, po: &PlaceOrder, now: Ts) -> Result<(), TestCaseError> {
    let Ok(req) = e.resolve(&po.spec) else {
        return Ok(());
    };
    let from = po.spec.start_at.unwrap_or(now);
    let window = (from, from + po.spec.duration_s.unwrap_or(0));
    let scanned = listing_by_scan(e, po.buyer, &req, window);
    for below in [None, po.spec.max_price] {
        let indexed = e.listing_for(po.buyer, &req, window, below).map(|l| l.id);
        let expected = scanned.filter(|id| {
            let ask = e.listing(*id).map(|l| l.ask_per_hour);
            below.is_none_or(|b| ask.is_some_and(|a| a < b))
        });
        prop_assert_eq!(indexed, expected, "below {:?}", below);
    }
    Ok(())
}

type Outcome = Result<Vec<Event>, EngineError>;

/// Spot clearings a few bids a step, so that random sequences clear over
/// several ticks with orders, releases and snapshots between the steps.
fn stepping() -> EngineConfig {
    EngineConfig {
        clearing_step_bids: 3,
        ..EngineConfig::default()
    }
}
/// Commands with their times, their outcomes, and the snapshot taken mid-run.
type Run = (Vec<(Ts, Command)>, Vec<Outcome>, Snapshot);

/// Runs the steps, validating after each; returns commands, outcomes and a mid-run snapshot.
fn drive(steps: &[Step], snapshot_at: usize) -> Result<Run, TestCaseError> {
    let mut e = engine_configured(stepping(), fleet());
    let mut seen = Seen::default();
    let mut now = T0;
    let mut cmds = Vec::new();
    let mut outs = Vec::new();
    let mut snap = e.snapshot();
    let mut lease_rows: std::collections::BTreeMap<Uuid, Lease> = std::collections::BTreeMap::new();
    let mut order_rows: std::collections::BTreeMap<Uuid, crate::orders::OpenOrder> =
        std::collections::BTreeMap::new();
    let mut listing_rows: std::collections::BTreeMap<Uuid, Listing> =
        std::collections::BTreeMap::new();
    let mut specs: std::collections::BTreeMap<Uuid, OrderSpec> = std::collections::BTreeMap::new();
    for (n, s) in steps.iter().enumerate() {
        if n == snapshot_at {
            snap = e.snapshot();
        }
        let cmd = to_command(s, &mut now, n, &seen);
        if let Command::Place(po) = &cmd {
            seen.orders.push(po.order_id);
            same_listing_as_a_scan(&e, po, now)?;
            specs.insert(po.order_id, po.spec.clone());
        }
        let out = e.apply(now, cmd.clone());
        if let Ok(ev) = &out {
            for x in ev {
                match x {
                    Event::LeaseGranted { lease, .. } => {
                        // ARCHITECTURE.md §22: max_price binds on every mode; never
                        // filled above it (spot's is its bid, checked by the auction).
                        let max = specs
                            .get(&lease.order_id)
                            .filter(|s| s.mode != Mode::Spot)
                            .and_then(|s| s.max_price);
                        if let Some(max) = max {
                            prop_assert!(
                                lease.price_per_hour <= max,
                                "step {}: filled at {} above max_price {}",
                                n,
                                lease.price_per_hour,
                                max
                            );
                        }
                        seen.leases.push((**lease).clone())
                    }
                    Event::ListingCreated { listing, .. } => {
                        seen.listings.push((**listing).clone())
                    }
                    _ => {}
                }
            }
        }
        e.validate()
            .map_err(|i| TestCaseError::fail(format!("after step {n} {s:?}: {i}")))?;
        // The server's rows, kept only from what each command says changed, equal the engine's.
        for id in e.changed_leases().collect::<Vec<_>>() {
            match e.lease(id) {
                Some(l) => lease_rows.insert(id, l.clone()),
                None => lease_rows.remove(&id),
            };
        }
        for id in e.changed_orders().collect::<Vec<_>>() {
            match e.open_order(id) {
                Some(o) => order_rows.insert(id, o.clone()),
                None => order_rows.remove(&id),
            };
        }
        let snap_now = e.snapshot();
        let leases_now: Vec<Lease> = lease_rows.values().cloned().collect();
        prop_assert_eq!(leases_now, snap_now.leases, "lease rows after step {}", n);
        let orders_now: Vec<_> = order_rows.values().cloned().collect();
        prop_assert_eq!(orders_now, snap_now.orders, "order rows after step {}", n);
        for id in e.changed_listings().collect::<Vec<_>>() {
            match e.listing(id) {
                Some(l) => listing_rows.insert(id, l.clone()),
                None => listing_rows.remove(&id),
            };
        }
        let listings_now: Vec<Listing> = listing_rows.values().cloned().collect();
        prop_assert_eq!(
            listings_now,
            snap_now.listings,
            "listing rows after step {}",
            n
        );
        cmds.push((now, cmd));
        outs.push(out);
    }
    Ok((cmds, outs, snap))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_command_sequences_keep_every_invariant_and_replay_identically(
        steps in prop::collection::vec(step(), 1..60),
        cut in any::<prop::sample::Index>(),
    ) {
        let at = cut.index(steps.len());
        let (cmds, outs, snap) = drive(&steps, at)?;

        // Same commands, same events; and the same again when placement
        // walks every node instead of the state index.
        let mut again = engine_configured(stepping(), fleet());
        let mut cfg = stepping();
        cfg.policy.walk = crate::placement::Walk::EveryNode;
        let mut walking = engine_configured(cfg, fleet());
        for ((now, cmd), out) in cmds.iter().zip(&outs) {
            prop_assert_eq!(&again.apply(*now, cmd.clone()), out);
            prop_assert_eq!(&walking.apply(*now, cmd.clone()), out);
        }
        // Restored mid-run from its rows, the engine carries on exactly as the original.
        let mut restored = Engine::restore(stepping(), snap)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for ((now, cmd), out) in cmds.iter().zip(&outs).skip(at) {
            prop_assert_eq!(&restored.apply(*now, cmd.clone()), out);
            restored.validate().map_err(|i| TestCaseError::fail(i.to_string()))?;
        }
    }
}

#[test]
fn a_restored_engine_equals_the_one_that_stopped() {
    let mut e = engine_with(fleet());
    run(
        &mut e,
        T0,
        place(1, spec(Mode::OnDemand, resources(Decimal::from(100), 8))),
    );
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(Decimal::from(2));
    run(&mut e, T0, place(2, s));
    run(&mut e, T0 + 10, Command::Tick);
    let snap = e.snapshot();
    let restored = Engine::restore(EngineConfig::default(), snap.clone()).unwrap();
    assert_eq!(restored.snapshot(), snap);
    let json = serde_json::to_string(&snap).unwrap();
    let back: Snapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, snap);
}

#[test]
fn the_random_steps_reach_both_conversions() {
    let place = |mode| Step::Place {
        mode,
        tflops: 312,
        vram4: 20,
        gpus: 1,
        iso: 2,
        wait: false,
        realtime: false,
        start_h: 0,
        dur_m: 1,
        price_c: 190,
        rich: true,
    };
    let convert = |lease, reserved| Step::Convert {
        lease,
        reserved,
        ahead_h: 1,
        hours: 2,
        rich: true,
    };
    // A spot bid, its clearing, its run, then spot → on-demand → reserved.
    let steps = [
        place(2),
        Step::Tick(10),
        Step::Agent(0, 0),
        convert(0, false),
        convert(0, true),
        Step::Tick(4000),
        Step::Tick(4000),
        Step::Tick(4000),
    ];
    let (_, outs, _) = drive(&steps, 0).expect("the steps keep every invariant");
    let converted: Vec<(Mode, Mode)> = outs
        .iter()
        .flatten()
        .flatten()
        .filter_map(|e| match e {
            Event::LeaseConverted {
                from_mode, to_mode, ..
            } => Some((*from_mode, *to_mode)),
            _ => None,
        })
        .collect();
    assert_eq!(
        converted,
        vec![
            (Mode::Spot, Mode::OnDemand),
            (Mode::OnDemand, Mode::Reserved)
        ]
    );
    assert!(outs.iter().flatten().flatten().any(
        |e| matches!(e, Event::LeaseModeChanged { lease, .. } if lease.mode == Mode::Reserved)
    ));
}

#[test]
fn the_random_steps_reach_a_listing_sold_and_one_cancelled() {
    let reserved = |start_h, dur_m| Step::Place {
        mode: 1,
        tflops: 312,
        vram4: 20,
        gpus: 1,
        iso: 2,
        wait: false,
        realtime: false,
        start_h,
        dur_m,
        price_c: 190,
        rich: true,
    };
    let list = |lease| Step::List {
        lease,
        from_h: 2,
        ask_pct: 80,
        holder: true,
    };
    // Buyer 7 (even steps) books 5 hours twice and lists both tails; buyer
    // 8's hour (odd steps) inside them takes the first; the other is cancelled.
    let steps = [
        reserved(0, 300),
        reserved(4, 60),
        reserved(0, 300),
        list(0),
        list(2),
        reserved(3, 60),
        Step::Unlist(1, true),
    ];
    let (_, outs, _) = drive(&steps, 3).expect("the steps keep every invariant");
    let events: Vec<&Event> = outs.iter().flatten().flatten().collect();
    let sold = events
        .iter()
        .filter(|e| matches!(e, Event::ListingSold { .. }))
        .count();
    let cancelled = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::ListingClosed {
                    end: ListingEnd::Cancelled,
                    ..
                }
            )
        })
        .count();
    assert_eq!((sold, cancelled), (1, 1), "{events:?}");
}
