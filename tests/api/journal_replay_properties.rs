//! The journal's replay property (ARCHITECTURE.md §20): any command stream the
//! leader's engine applied, stored as journal rows on either database and
//! replayed on a fresh engine from the first snapshot, gives the leader's
//! state digest. The stream is random: orders of every mode (reserved ahead,
//! spot bids, waiting orders), time passing, releases, agents' reports,
//! funds running out, nodes lost, cordoned and re-inventoried, resale
//! listings and their cancellation, forecasts; some of them refused, as on a
//! real leader.

use crate::helpers::{fresh_postgres_database, postgres_base_url};
use gpuex::catalog::Unit;
use gpuex::db::{Db, Writes};
use gpuex::engine::placement::PartitionMode;
use gpuex::engine::types::{Gang, Isolation, Mode, OrderSpec, Qos, Resources};
use gpuex::engine::{
    AgentReport, Command, DemandForecast, Engine, EngineConfig, GpuSpec, ListPrice, ListResale,
    NodeSpec, PlaceOrder,
};
use gpuex::market::journal::{self, Append, Step};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rust_decimal::Decimal;
use uuid::Uuid;

const REGION: &str = "eu-west";
const MODEL: &str = "H100-SXM5-80GB";
const BUYERS: [Uuid; 2] = [Uuid::from_u128(0xb1), Uuid::from_u128(0xb2)];
/// The market's clock at the stream's start: an hour boundary.
const START: i64 = 1_800_000_000;

/// One random operation; which lease, order or node it touches is picked
/// from the leader's engine as it stands when the operation comes.
#[derive(Debug, Clone)]
enum Op {
    Place {
        mode: Mode,
        tflops: u32,
        vram_gb: u32,
        funds: u32,
        wait: bool,
    },
    Tick {
        advance_s: i64,
    },
    Release {
        pick: usize,
    },
    Report {
        pick: usize,
        report: AgentReport,
    },
    FundsExhausted {
        pick: usize,
    },
    Cancel {
        pick: usize,
    },
    NodeLost {
        pick: usize,
    },
    Cordon {
        pick: usize,
        cordoned: bool,
    },
    Reinventory {
        pick: usize,
        mode: PartitionMode,
    },
    ListResale {
        pick: usize,
    },
    CancelListing {
        pick: usize,
    },
    Forecast {
        tflops: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let mode = prop_oneof![
        Just(Mode::OnDemand),
        Just(Mode::Reserved),
        Just(Mode::Spot),
        Just(Mode::Pooled)
    ];
    let report = prop_oneof![
        Just(AgentReport::Provisioned),
        Just(AgentReport::Ended),
        Just(AgentReport::Failed)
    ];
    let partition = prop_oneof![
        Just(PartitionMode::Whole),
        Just(PartitionMode::Shared),
        Just(PartitionMode::Mig)
    ];
    prop_oneof![
        8 => (mode, 10..900u32, 1..20u32, 0..400u32, any::<bool>()).prop_map(
            |(mode, tflops, vram, funds, wait)| Op::Place { mode, tflops, vram_gb: vram * 4, funds, wait }
        ),
        4 => (1..4000i64).prop_map(|advance_s| Op::Tick { advance_s }),
        2 => any::<usize>().prop_map(|pick| Op::Release { pick }),
        3 => (any::<usize>(), report).prop_map(|(pick, report)| Op::Report { pick, report }),
        1 => any::<usize>().prop_map(|pick| Op::FundsExhausted { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Cancel { pick }),
        1 => any::<usize>().prop_map(|pick| Op::NodeLost { pick }),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(pick, cordoned)| Op::Cordon { pick, cordoned }),
        1 => (any::<usize>(), partition).prop_map(|(pick, mode)| Op::Reinventory { pick, mode }),
        2 => any::<usize>().prop_map(|pick| Op::ListResale { pick }),
        1 => any::<usize>().prop_map(|pick| Op::CancelListing { pick }),
        1 => (0..5000u32).prop_map(|tflops| Op::Forecast { tflops }),
    ]
}

fn node(n: u128, mode: PartitionMode) -> NodeSpec {
    NodeSpec {
        id: Uuid::from_u128(0xa000 + n),
        zone: None,
        region: REGION.into(),
        cpu_milli: 64_000,
        memory_mib: 512 * 1024,
        gpus: (0..2)
            .map(|index| GpuSpec {
                index,
                model: MODEL.into(),
                mode,
                nvlink: vec![],
            })
            .collect(),
        cuda: None,
    }
}

const NODE_MODES: [PartitionMode; 3] = [
    PartitionMode::Shared,
    PartitionMode::Mig,
    PartitionMode::Whole,
];

/// The market every stream starts in: a region, its prices, three nodes.
fn setup() -> Vec<Command> {
    let price = |unit, list: i64| ListPrice {
        region: REGION.into(),
        gpu_model: MODEL.into(),
        unit,
        list_price: Decimal::new(list, 4),
    };
    let mut commands = vec![
        Command::SetRegion {
            name: REGION.into(),
            timezone: "Europe/Amsterdam".into(),
        },
        Command::SetPrices(vec![price(Unit::TflopsH, 21), price(Unit::VramH, 500)]),
    ];
    for (n, mode) in NODE_MODES.iter().enumerate() {
        commands.push(Command::UpsertNode(node(n as u128, *mode)));
    }
    commands
}

fn pick<T: Copy>(items: &[T], at: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[at % items.len()])
}

/// The command `op` stands for on `engine` at `now`; `None` when there is
/// nothing to touch (no lease to release, …).
fn command(engine: &Engine, op: &Op, now: &mut i64, next: &mut u128) -> Option<Command> {
    let mut leases: Vec<_> = engine.leases().map(|l| (l.id, l.buyer)).collect();
    leases.sort();
    *next += 1;
    Some(match *op {
        Op::Place {
            mode,
            tflops,
            vram_gb,
            funds,
            wait,
        } => {
            let hour = (*now / 3600 + 2) * 3600;
            let spec = OrderSpec {
                mode,
                resources: Resources {
                    tflops: Decimal::from(tflops),
                    vram_gb,
                    precision: None,
                    gpu_model: None,
                    gpus: None,
                    nvlink: false,
                    isolation: if mode == Mode::Pooled {
                        Isolation::Shared
                    } else {
                        Isolation::Any
                    },
                    cpu_milli: None,
                    memory_mib: None,
                    min_cuda: None,
                },
                region: REGION.into(),
                node: None,
                start_at: (mode == Mode::Reserved).then_some(hour),
                duration_s: Some(3600 * (1 + i64::from(tflops % 3))),
                max_price: (mode == Mode::Spot).then(|| Decimal::from(1 + tflops % 4)),
                max_wait_s: wait.then_some(1800),
                qos: Qos::Batch,
                predicted_duration: None,
                // Some on-demand orders are gangs, all-or-none or not.
                gang: (mode == Mode::OnDemand && tflops % 4 == 0).then_some(Gang {
                    count: 2 + tflops % 3,
                    min_count: 1 + (vram_gb / 4 % 2) * (1 + tflops % 3),
                }),
            };
            Command::Place(PlaceOrder {
                order_id: Uuid::from_u128(*next),
                buyer: BUYERS[(tflops % 2) as usize],
                // Some orders' holds exceed what the wallet has.
                funds_available: Decimal::from(funds),
                spec,
            })
        }
        Op::Tick { advance_s } => {
            *now += advance_s;
            Command::Tick
        }
        Op::Release { pick: at } => Command::Release {
            lease_id: pick(&leases, at)?.0,
        },
        Op::Report { pick: at, report } => Command::AgentStatus {
            lease_id: pick(&leases, at)?.0,
            status: report,
        },
        Op::FundsExhausted { pick: at } => Command::FundsExhausted {
            lease_id: pick(&leases, at)?.0,
            funded_until: Some(*now + 600),
        },
        Op::Cancel { pick: at } => {
            let mut open: Vec<_> = engine.snapshot().orders.iter().map(|o| o.id).collect();
            open.sort();
            Command::Cancel {
                order_id: pick(&open, at)?,
            }
        }
        Op::NodeLost { pick: at } => Command::NodeLost {
            node: node(at as u128 % 3, PartitionMode::Whole).id,
        },
        Op::Cordon { pick: at, cordoned } => Command::Cordon {
            node: node(at as u128 % 3, PartitionMode::Whole).id,
            cordoned,
        },
        Op::Reinventory { pick: at, mode } => Command::UpsertNode(node(at as u128 % 3, mode)),
        Op::ListResale { pick: at } => {
            let (lease_id, seller) = pick(&leases, at)?;
            Command::ListResale(ListResale {
                listing_id: Uuid::from_u128(*next),
                lease_id,
                seller,
                from: (*now / 3600 + 1) * 3600,
                ask_per_hour: Decimal::new(5, 1),
            })
        }
        Op::CancelListing { pick: at } => {
            let mut open: Vec<_> = engine
                .snapshot()
                .listings
                .iter()
                .map(|l| (l.id, l.seller))
                .collect();
            open.sort();
            let (listing_id, seller) = pick(&open, at)?;
            Command::CancelListing { listing_id, seller }
        }
        Op::Forecast { tflops } => Command::SetForecast(vec![DemandForecast {
            gpu_model: MODEL.into(),
            region: REGION.into(),
            tflops: Decimal::from(tflops),
            mig_profiles: vec![],
        }]),
    })
}

/// Runs `ops` on a leader's engine, batching its steps into journal rows of
/// `row_size`; returns the leader, the rows and how many listings opened.
fn lead(ops: &[Op], row_size: usize) -> (Engine, Vec<Vec<Step>>, usize) {
    let config = EngineConfig::default();
    let mut leader = Engine::new(config);
    let (mut now, mut next) = (START, 0u128);
    let mut steps: Vec<Step> = setup()
        .into_iter()
        .map(|command| Step { at: now, command })
        .collect();
    journal::apply(&mut leader, &steps);
    let mut listed = 0;
    for op in ops {
        if let Some(command) = command(&leader, op, &mut now, &mut next) {
            let step = Step { at: now, command };
            let events = leader
                .apply(step.at, step.command.clone())
                .unwrap_or_default();
            listed += events
                .iter()
                .filter(|e| matches!(e, gpuex::engine::Event::ListingCreated { .. }))
                .count();
            steps.push(step);
        }
    }
    let rows = steps.chunks(row_size).map(<[Step]>::to_vec).collect();
    (leader, rows, listed)
}

/// Stores `rows` as the journal after a first snapshot of a fresh engine
/// and restores from them.
async fn replay_stored(db: &Db, rows: &[Vec<Step>]) -> (Engine, i64) {
    let config = EngineConfig::default();
    for table in ["journal", "journal_snapshots"] {
        gpuex::db::dispatch!(db, pool => {
            sqlx::query(&format!("DELETE FROM {table}"))
                .execute(pool)
                .await
                .map(|done| done.rows_affected())
        })
        .expect("an empty journal");
    }
    let fresh = journal::encode_snapshot(&Engine::new(config)).expect("a snapshot");
    journal::keep_snapshot(db, 0, START * 1000, fresh)
        .await
        .expect("the first snapshot");
    let mut tx = db.begin().await.expect("begin");
    let mut writes = Writes::new(&tx);
    for (seq, steps) in (1..).zip(rows) {
        journal::push_append(
            &mut writes,
            Append {
                seq,
                epoch: 1,
                at_ms: START * 1000 + seq,
                commands: journal::encode(steps).expect("encode"),
                owed: None,
                digest: false,
            },
        );
    }
    writes.execute(&mut tx).await.expect("the rows");
    tx.commit().await.expect("commit");
    gpuex::market::restore::load_at(db, config)
        .await
        .expect("the journal replays")
}

/// Totals over the streams' final states, and the listings they opened.
#[derive(Debug, Default)]
struct Seen {
    leases: usize,
    running: usize,
    open_orders: usize,
    /// Listings opened during the streams.
    listed: usize,
}

impl Seen {
    fn note(&mut self, engine: &Engine, listed: usize) {
        let state = engine.snapshot();
        self.listed += listed;
        self.leases += state.leases.len();
        self.running += state
            .leases
            .iter()
            .filter(|l| l.state == gpuex::engine::LeaseState::Running)
            .count();
        self.open_orders += state.orders.len();
    }
}

#[test]
fn any_command_stream_replays_from_the_journal_to_the_leaders_digest() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = format!("sqlite://{}/journal.db", dir.path().display());
    let mut urls = vec![("SQLite", sqlite)];
    if postgres_base_url().is_some() {
        urls.push(("PostgreSQL", runtime.block_on(fresh_postgres_database())));
    }
    let dbs: Vec<(&str, Db)> = runtime.block_on(async {
        let mut dbs = Vec::new();
        for (name, url) in urls {
            let db = Db::connect(&url).await.expect("database");
            db.migrate().await.expect("migrations");
            dbs.push((name, db));
        }
        dbs
    });
    let cases = std::env::var("GPUEX_JOURNAL_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases,
        max_shrink_iters: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let stream = (prop::collection::vec(op(), 1..80), 1..8usize);
    // What the streams reached, so the property is not about empty markets.
    let seen = std::cell::RefCell::new(Seen::default());
    runner
        .run(&stream, |(ops, row_size)| {
            let (leader, rows, listed) = lead(&ops, row_size);
            seen.borrow_mut().note(&leader, listed);
            let digest = journal::digest(&leader);
            for (name, db) in &dbs {
                let (replayed, seq) = runtime.block_on(replay_stored(db, &rows));
                prop_assert_eq!(seq, rows.len() as i64, "{}", name);
                prop_assert_eq!(&journal::digest(&replayed), &digest, "{}", name);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = seen.into_inner();
    eprintln!("the streams ended with: {seen:?}");
    assert!(
        seen.leases > 0 && seen.running > 0 && seen.open_orders > 0 && seen.listed > 0,
        "{seen:?}"
    );
    runtime.block_on(async {
        for (_, db) in dbs {
            db.close().await;
        }
    });
}
