//! The seeded run (`GPUEX_BENCH_SEEDED=1`, issue 38 item 4): the server's
//! memory with a full fleet, without filling it through HTTP orders (an
//! hour at 100,000 GPUs). The restore bench's rows (`restore/rows.rs`: a
//! `GPUEX_BENCH_RESTORE_GPUS` fleet, default 100,000, filled to 80 %) are
//! written into a fresh PostgreSQL database with every lease running,
//! funded and billable as the server leaves one whose agent reported it
//! started (a hold each, billed from the seeding on), the buyer credited
//! through the ledger, and a release `gpuex serve` restores the market from
//! them: its billing passes charge every lease, 200 a batch. Then every
//! seeded node heartbeats as its agent would after a server restart,
//! reporting the leases it runs, while buyers
//! place a modest stream of orders; the server's resident memory is read
//! after the restore and throughout, with the live leases counted.
//!
//! Knobs: `GPUEX_BENCH_SECONDS` (60) for the heartbeats alone, then again
//! with `GPUEX_BENCH_IN_FLIGHT` (8) orders in flight;
//! `GPUEX_BENCH_HEARTBEAT_S` (5); `GPUEX_BENCH_AGENT_CONNECTIONS` (256).

use super::*;
use gpuex::billing::{ledger, Account};
use gpuex::db::{push_rows, Db, Money, Writes};
use gpuex::engine::{Engine, EngineConfig, LeaseState};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use uuid::Uuid;

/// What the seeded run saw.
pub(super) struct SeededFigures {
    gpus: u32,
    leases: usize,
    restore: Duration,
    rss_restored: f64,
    rss_beating: f64,
    rss_end: f64,
    peak: f64,
    live_leases: i64,
    /// Leases charged at least once since the seeding.
    billed: i64,
    lost_nodes: i64,
    beats: u64,
    beat_errors: u64,
    orders: buyers::OrderFigures,
}

/// What each seeded lease's hold sets aside; billing tops it up from the
/// wallet when it runs short, as it does any lease's.
const HOLD_PER_LEASE: i64 = 100;

/// The restore bench's filled fleet with every lease running: its agents
/// reported them started before the server restarted.
fn running_engine(gpus: u32) -> Engine {
    // What the engine itself holds, seen in this process's own memory: a
    // rough share of the server's, which holds the same engine.
    let before = memory_mib(std::process::id()).0;
    let filled = rows::filled_engine(gpus);
    eprintln!(
        "  the filled engine: {:.0} MiB of this process's RSS",
        memory_mib(std::process::id()).0 - before
    );
    let mut snap = filled.snapshot();
    drop(filled);
    for lease in &mut snap.leases {
        lease.state = LeaseState::Running;
    }
    Engine::restore(EngineConfig::default(), snap).expect("the running fleet restores")
}

/// Writes the fleet's rows and funds its buyer the way the server does: the
/// seeded users' ledger accounts opened, a credit posted from external
/// funding, and one hold a lease set aside from the wallet (one entry for
/// them all), so the ledger balances; each lease then names its hold and
/// is billable from now, as the server's writer marks a lease that runs.
async fn seed(url: &str, engine: &Engine) {
    let db = Db::connect(url).await.expect("the seeded database");
    db.migrate().await.expect("migrations");
    rows::write_rows(&db, engine).await;
    let now = chrono::Utc::now();
    let mut tx = db.begin().await.expect("begin");
    ledger::open_system_accounts(&mut tx, "USD", now)
        .await
        .expect("system accounts");
    for user in [rows::BUYER, rows::PROVIDER] {
        ledger::open_user_accounts(&mut tx, user, "USD", now)
            .await
            .expect("user accounts");
    }
    ledger::credit(
        &mut tx,
        rows::BUYER,
        Decimal::from(1_000_000_000),
        "seeded fleet's buyer",
        None,
        now,
    )
    .await
    .expect("the buyer's credit");
    let holds: Vec<(Uuid, String)> = engine
        .leases()
        .map(|l| (Uuid::new_v4(), format!("lease:{}", l.id)))
        .collect();
    let hold = Decimal::from(HOLD_PER_LEASE);
    let total = hold * Decimal::from(holds.len());
    let entry = ledger::Entry {
        kind: "hold",
        memo: format!("holds for the {} seeded leases", holds.len()),
        actor: None,
        reference: None,
        postings: vec![
            (Account::Wallet(rows::BUYER), -total),
            (Account::Holds(rows::BUYER), total),
        ],
    };
    ledger::post(&mut tx, &entry, now)
        .await
        .expect("the seeded holds' entry");
    let mut writes = Writes::new(&tx);
    push_rows!(
        &mut writes,
        "INSERT INTO holds (id, user_id, remaining, reference, status, created_at, updated_at) ",
        holds,
        |row, (id, reference)| row
            .push_bind(*id)
            .push_bind(rows::BUYER)
            .push_bind(Money(hold))
            .push_bind(reference)
            .push_bind("open")
            .push_bind(now)
            .push_bind(now)
    );
    writes.execute(&mut tx).await.expect("the holds' rows");
    tx.commit().await.expect("commit");
    db.close().await;
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url)
        .await
        .expect("the seeded database");
    sqlx::query(
        "UPDATE leases SET hold_id = h.id, running_at = $1, billed_until = $1 \
         FROM holds h WHERE h.reference = 'lease:' || leases.id::text",
    )
    .bind(now.timestamp())
    .execute(&mut conn)
    .await
    .expect("the leases' holds");
}

/// Every seeded node with its token and the leases placed on it.
fn seeded_nodes(engine: &Engine) -> Vec<agents::Seeded> {
    let mut running: BTreeMap<Uuid, Vec<Uuid>> = BTreeMap::new();
    for lease in engine.leases() {
        running.entry(lease.node).or_default().push(lease.id);
    }
    engine
        .snapshot()
        .nodes
        .iter()
        .map(|n| agents::Seeded {
            id: n.spec.id,
            token: rows::node_token(n.spec.id),
            model: n
                .spec
                .gpus
                .first()
                .map(|g| g.model.clone())
                .unwrap_or_default(),
            gpus: n.spec.gpus.len() as u32,
            running: running.remove(&n.spec.id).unwrap_or_default(),
        })
        .collect()
}

/// Samples the server's resident memory every second for `over`; the
/// highest. Every tenth sample is shown, so a run tells whether the memory
/// levels off or keeps growing.
async fn highest_rss(pid: u32, over: Duration) -> f64 {
    let started = Instant::now();
    let mut highest: f64 = 0.0;
    let mut samples = 0u32;
    while started.elapsed() < over {
        let rss = memory_mib(pid).0;
        highest = highest.max(rss);
        if samples % 10 == 0 {
            eprintln!("    {:>4}s RSS {rss:.0} MiB", started.elapsed().as_secs());
        }
        samples += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    highest
}

async fn count(url: &str, sql: &str) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url)
        .await
        .expect("connect to the seeded database");
    sqlx::query_scalar(sql)
        .fetch_one(&mut conn)
        .await
        .unwrap_or(-1)
}

pub(super) async fn run(client: &reqwest::Client, postgres_base: &str) -> SeededFigures {
    let gpus: u32 = knob("GPUEX_BENCH_RESTORE_GPUS", 100_000);
    let heartbeat_s = knob("GPUEX_BENCH_HEARTBEAT_S", 5);
    let connections = knob("GPUEX_BENCH_AGENT_CONNECTIONS", 256);
    let window = Duration::from_secs(knob("GPUEX_BENCH_SECONDS", 60));

    let phase = Instant::now();
    let engine = running_engine(gpus);
    let leases = engine.leases().count();
    // Named apart from `gpuex_t_bench_*`, which other benches' clean-ups
    // drop, and dropped by this run alone.
    let database = Database::postgres(postgres_base, "gpuex_memscale_").await;
    seed(&database.url, &engine).await;
    let nodes = seeded_nodes(&engine);
    drop(engine);
    eprintln!(
        "  {gpus} GPUs, {} nodes, {leases} leases seeded in {:.1}s",
        nodes.len(),
        phase.elapsed().as_secs_f64()
    );

    let phase = Instant::now();
    let mut server = super::fleet_server(&database.url, heartbeat_s, connections);
    // The restore reads every row before the market answers: longer than
    // `wait_ready`'s deadline at this size.
    let deadline = Instant::now() + Duration::from_secs(900);
    while server.role(client).await.as_deref() != Some("leader") {
        assert!(Instant::now() < deadline, "the server did not restore");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let restore = phase.elapsed();
    let pid = server.child.id().expect("the server's pid");
    let (rss_restored, _) = memory_mib(pid);
    eprintln!(
        "  restored and serving in {:.1}s; RSS {rss_restored:.0} MiB",
        restore.as_secs_f64()
    );

    let base = server.address.clone();
    let parties = parties(client, &base).await;
    let beating =
        agents::Fleet::seeded(&base, nodes, connections).start(Duration::from_secs(heartbeat_s));
    eprintln!("  heartbeats: {}s, every node beating", window.as_secs());
    let rss_beating = highest_rss(pid, window).await;
    let in_flight = knob("GPUEX_BENCH_IN_FLIGHT", 8) as usize;
    let (orders, rss_ordering) = tokio::join!(
        buyers::load(client, &base, &parties.buyer, in_flight, window),
        highest_rss(pid, window)
    );
    let (rss_end, peak) = memory_mib(pid);
    let beats = beating
        .shared
        .sent
        .load(std::sync::atomic::Ordering::Relaxed);
    let beat_errors = beating.stop().await.errors;
    let live_leases = census(&database.url).await.0;
    let billed = count(
        &database.url,
        "SELECT count(*) FROM leases WHERE billed_until > running_at",
    )
    .await;
    let lost_nodes = count(
        &database.url,
        "SELECT count(*) FROM nodes WHERE status = 'lost'",
    )
    .await;

    let _ = server.child.kill().await;
    database.drop_now().await;
    SeededFigures {
        gpus,
        leases,
        restore,
        rss_restored,
        rss_beating: rss_beating.max(rss_ordering),
        rss_end,
        peak,
        live_leases,
        billed,
        lost_nodes,
        beats,
        beat_errors,
        orders,
    }
}

/// The run's figures as lines for BENCHMARKS.md.
pub(super) fn report(s: &SeededFigures) -> String {
    let per_lease = |mib: f64| mib * 1024.0 * 1024.0 / s.live_leases.max(1) as f64;
    format!(
        "seeded: {} GPUs, {} leases seeded, {} live at the end ({} charged since), {} nodes lost\n\
         restore seen from outside (spawn to /readyz leader): {:.1}s\n\
         RSS after restore: {:.0} MiB ({:.0} B a live lease)\n\
         RSS highest sampled during heartbeats and orders: {:.0} MiB\n\
         RSS at the end: {:.0} MiB; peak (VmHWM): {:.0} MiB ({:.0} B a live lease)\n\
         heartbeats sent: {} ({} failed)\n\
         orders: {} sent, {} filled, {} refused, {} failed; {:.0}/s, p50 {:.0?}, p99 {:.0?}",
        s.gpus,
        s.leases,
        s.live_leases,
        s.billed,
        s.lost_nodes,
        s.restore.as_secs_f64(),
        s.rss_restored,
        per_lease(s.rss_restored),
        s.rss_beating,
        s.rss_end,
        s.peak,
        per_lease(s.peak),
        s.beats,
        s.beat_errors,
        s.orders.sent,
        s.orders.filled,
        s.orders.refused,
        s.orders.failed,
        s.orders.per_s,
        s.orders.p50,
        s.orders.p99,
    )
}
