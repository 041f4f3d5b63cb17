//! Restore at scale (issue 23): a database holding a 100,000-GPU fleet
//! (12,500 nodes of 8) with its live leases is read back into a serving
//! engine, the way a replica that takes over the market does. The fleet
//! and its leases come from the engine benchmark's fleet filled to 80 %
//! with its order mix, written as the server's rows (node specs, order and
//! lease rows with the engine's JSON, list prices, the engine's clock:
//! `restore/rows.rs`), as a database from before the journal holds them, so
//! `load` reads them once and keeps them as the first snapshot.
//!
//! Reported: the database read and decode, `Engine::restore` itself, and the
//! whole of `market::restore::load`, on SQLite and, with
//! `GPUEX_TEST_POSTGRES_URL` (or `GPUEX_BENCH_POSTGRES_URL`), on PostgreSQL.
//!
//! `cargo bench --bench restore` (`GPUEX_BENCH_RESTORE_GPUS`, default 100000).

use std::time::Instant;

use chrono::Utc;
use sqlx::Connection;

use gpuex::db::{Db, Writes};
use gpuex::engine::*;

#[path = "../crates/engine/benches/common/fleet.rs"]
mod fleet;
use fleet::{order, place_cmd, Rng};
// The rows, shared with the market-scale bench's seeded run.
#[path = "restore/rows.rs"]
mod rows;
use gpuex::market::journal::{self, Append, Step};
use rows::{filled_engine, write_rows};

async fn measure(label: &str, url: &str, e: &Engine) {
    let db = Db::connect(url).await.expect("database");
    db.migrate().await.expect("migrations");
    let t = Instant::now();
    write_rows(&db, e).await;
    let written = t.elapsed();
    // The whole load twice: the first reads a cold cache.
    let mut loads = Vec::new();
    for _ in 0..2 {
        let t = Instant::now();
        let restored = gpuex::market::restore::load(&db, EngineConfig::default())
            .await
            .expect("restore");
        loads.push(t.elapsed());
        assert_eq!(restored.leases().count(), e.leases().count());
    }
    println!(
        "{label}: rows written in {written:.1?}; market::restore::load (read, decode, Engine::restore, validate): {:.2?} cold, {:.2?} warm",
        loads[0], loads[1]
    );
    promotion(label, &db).await;
    db.close().await;
}

/// Batches in the journal's tail a promoted follower applies, and orders in each.
const TAIL_ROWS: i64 = 200;
const ORDERS_PER_ROW: u128 = 12;

/// Promotion at this size (ARCHITECTURE.md §20): the follower that takes the lock
/// applies the journal's tail to the engine it has and leads with it, with
/// no restore. The leader here writes [`TAIL_ROWS`] batches of new orders
/// (a follower is normally a few rows behind, so this is generous); the
/// follower's catch-up is timed, against a restore from the snapshot and
/// the same journal.
async fn promotion(label: &str, db: &Db) {
    let config = EngineConfig::default();
    let first = || async {
        journal::snapshot(db, config, true)
            .await
            .expect("the snapshot reads")
            .expect("the load kept the first snapshot")
    };
    let (seq, mut leader) = first().await;
    let (_, mut follower) = first().await;
    let at = leader.snapshot().now;
    let (mut rng, mut next_id) = (Rng(0x5eed), 1u128 << 100);
    let mut tx = db.begin().await.expect("begin");
    let mut writes = Writes::new(&tx);
    for row in 1..=TAIL_ROWS {
        let steps: Vec<Step> = (0..ORDERS_PER_ROW)
            .map(|_| {
                next_id += 1;
                Step {
                    at,
                    command: place_cmd(next_id, order(&mut rng)),
                }
            })
            .collect();
        journal::apply(&mut leader, &steps);
        journal::push_append(
            &mut writes,
            Append {
                seq: seq + row,
                epoch: 1,
                at_ms: Utc::now().timestamp_millis(),
                commands: journal::encode(&steps).expect("encode"),
                owed: None,
                digest: false,
            },
        );
    }
    writes.execute(&mut tx).await.expect("the journal's tail");
    tx.commit().await.expect("commit");

    let t = Instant::now();
    let mut applied = seq;
    loop {
        let entries = journal::after(db, applied)
            .await
            .expect("the journal reads");
        let Some(last) = entries.last() else { break };
        applied = last.seq;
        for entry in &entries {
            journal::apply(&mut follower, &entry.steps);
        }
    }
    let caught_up = t.elapsed();
    assert_eq!(applied, seq + TAIL_ROWS);
    let t = Instant::now();
    let (restored, restored_seq) = gpuex::market::restore::load_at(db, config)
        .await
        .expect("restore");
    let restore = t.elapsed();
    assert_eq!(restored_seq, applied);
    let digest = journal::digest(&leader);
    assert_eq!(
        journal::digest(&follower),
        digest,
        "the follower is the leader"
    );
    assert_eq!(
        journal::digest(&restored),
        digest,
        "the restore is the leader"
    );
    println!(
        "{label}: promotion: a tail of {TAIL_ROWS} rows ({} orders) read and applied in {caught_up:.1?} \
         ({:.2?} a row); a restore instead (snapshot, then the same journal): {restore:.2?}",
        TAIL_ROWS as u128 * ORDERS_PER_ROW,
        caught_up / TAIL_ROWS as u32,
    );
}

fn main() {
    let gpus: u32 = std::env::var("GPUEX_BENCH_RESTORE_GPUS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let t = Instant::now();
    let e = filled_engine(gpus);
    let held: u64 = e
        .leases()
        .map(|l| u64::from(l.placement.held_milli()))
        .sum();
    println!(
        "fleet: {gpus} GPUs, {} live leases, {:.1} % of GPU compute held (filled in {:.1?})",
        e.leases().count(),
        held as f64 / f64::from(gpus) / 10.0,
        t.elapsed()
    );

    // The engine alone, from rows already decoded.
    let snap = e.snapshot();
    let t = Instant::now();
    let restored = Engine::restore(EngineConfig::default(), snap).expect("restore");
    println!(
        "Engine::restore of the snapshot (validation included): {:.2?}",
        t.elapsed()
    );
    assert_eq!(restored.snapshot(), e.snapshot(), "restored as it stopped");

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = format!("sqlite://{}/restore.db", dir.path().display());
    runtime.block_on(measure("SQLite", &sqlite, &e));
    let postgres = std::env::var("GPUEX_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("GPUEX_TEST_POSTGRES_URL"))
        .ok();
    match postgres {
        Some(base) => runtime.block_on(async {
            let name = format!("gpuex_bench_restore_{}", std::process::id());
            let mut admin = sqlx::PgConnection::connect(&base).await.expect("postgres");
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut admin)
                .await
                .expect("create database");
            let url = match base.rsplit_once('/') {
                Some((server, _)) => format!("{server}/{name}"),
                None => base.clone(),
            };
            measure("PostgreSQL", &url, &e).await;
            sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
                .execute(&mut admin)
                .await
                .expect("drop database");
        }),
        None => println!("PostgreSQL: SKIPPED (set GPUEX_TEST_POSTGRES_URL)"),
    }
}
