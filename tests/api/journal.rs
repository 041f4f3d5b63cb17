//! The journal (ARCHITECTURE.md §20): every command the engine applied is in it, in
//! order, so an engine that replays it from the first snapshot is the
//! engine whose leases the rows show, on both databases, across a restart; and
//! `/readyz` says where the replica stands.

use crate::fleet::{self, market, on_both_databases_fast};
use crate::helpers::TestApp;
use gpuex::db::leases::LeaseRecord;
use gpuex::db::Db;
use gpuex::market::journal;
use serde_json::json;

/// Replays the journal from its oldest snapshot, checking the rows come in
/// sequence and every digest the leader wrote matches; returns the engine,
/// the last sequence and how many rows were applied.
pub(crate) async fn replay(
    db: &Db,
    config: gpuex::engine::EngineConfig,
) -> (gpuex::engine::Engine, i64, i64) {
    let (mut seq, mut engine) = journal::snapshot(db, config, false)
        .await
        .expect("the snapshot reads")
        .expect("the leader kept a first snapshot");
    let mut rows = 0;
    loop {
        let entries = journal::after(db, seq).await.expect("the journal reads");
        if entries.is_empty() {
            return (engine, seq, rows);
        }
        for entry in entries {
            assert_eq!(entry.seq, seq + 1, "rows come in sequence");
            journal::apply(&mut engine, &entry.steps);
            if let Some(digest) = entry
                .digest
                .as_ref()
                .filter(|d| *d != journal::DIGEST_PENDING)
            {
                assert_eq!(&journal::digest(&engine), digest, "row {}", entry.seq);
            }
            seq = entry.seq;
            rows += 1;
        }
    }
}

/// The journal a release wrote, kept so every later release is shown to
/// replay it: its first snapshot and its rows as stored, and what the
/// engine held at its end.
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/journal-v1.json"
);

/// Keeps this database's journal as [`FIXTURE`] (`GPUEX_UPDATE_JOURNAL_FIXTURE=1`).
async fn keep_fixture(db: &Db, config: gpuex::engine::EngineConfig) {
    let snapshot: (i64, i32, String) = sqlx_row(
        db,
        "SELECT seq, version, state FROM journal_snapshots ORDER BY seq LIMIT 1",
    )
    .await;
    let mut rows = Vec::new();
    let mut seq = snapshot.0;
    loop {
        let entries = journal::after(db, seq).await.expect("the journal reads");
        let Some(last) = entries.last() else { break };
        seq = last.seq;
        for entry in &entries {
            rows.push(json!({
                "seq": entry.seq,
                "version": journal::VERSION,
                "commands": journal::encode(&entry.steps).expect("encodes"),
            }));
        }
    }
    let (replayed, _, _) = replay(db, config).await;
    let state = replayed.snapshot();
    let fixture = json!({
        "snapshot": {"seq": snapshot.0, "version": snapshot.1, "state": snapshot.2},
        "rows": rows,
        "ends_with": {
            "seq": seq,
            "leases": state.leases.len(),
            "orders": state.orders.len(),
            "nodes": state.nodes.len(),
            "now": state.now,
        },
    });
    let text = serde_json::to_string_pretty(&fixture).expect("fixture");
    std::fs::write(FIXTURE, text + "\n").expect("write the fixture");
}

async fn sqlx_row(db: &Db, sql: &str) -> (i64, i32, String) {
    gpuex::db::dispatch!(db, pool => {
        sqlx::query_as(sql).fetch_one(pool).await
    })
    .expect("a row")
}

/// Stops the server and checks its journal against its rows.
pub(crate) async fn journal_matches_rows(app: &mut TestApp) -> (i64, i64) {
    app.halt().await;
    let config = app.settings.market().engine;
    let db = Db::connect(&app.database_url).await.expect("database");
    let (replayed, seq, rows) = replay(&db, config).await;
    if std::env::var("GPUEX_UPDATE_JOURNAL_FIXTURE").is_ok_and(|v| v == "1")
        && app.backend == crate::helpers::Backend::Sqlite
    {
        keep_fixture(&db, config).await;
    }
    rows_agree(&db, &replayed).await;
    let (restored, restored_seq) = gpuex::market::restore::load_at(&db, config)
        .await
        .expect("the snapshot and the journal restore");
    assert_eq!(seq, restored_seq, "a restore ends where the journal does");
    assert_eq!(journal::digest(&replayed), journal::digest(&restored));
    db.close().await;
    app.resume().await;
    (seq, rows)
}

/// The rows are what the engine says: every live lease row is a lease of
/// the engine with its state, price, end and record, and nothing more; the
/// open listings are the engine's.
pub(crate) async fn rows_agree(db: &Db, engine: &gpuex::engine::Engine) {
    type LeaseRow = (uuid::Uuid, String, gpuex::db::Money, Option<i64>, String);
    let rows: Vec<LeaseRow> = gpuex::db::dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, state, price_per_hour, ends_at, record_json FROM leases \
             WHERE state NOT IN ('ended', 'failed') ORDER BY id",
        )
        .fetch_all(pool)
        .await
    })
    .expect("the lease rows read");
    let listings: Vec<uuid::Uuid> = gpuex::db::dispatch!(db, pool => {
        sqlx::query_scalar("SELECT id FROM resale_listings WHERE state = 'open' ORDER BY id")
            .fetch_all(pool)
            .await
    })
    .expect("the listing rows read");
    let mut live: Vec<_> = engine.leases().collect();
    live.sort_by_key(|l| l.id);
    let ids = |rows: &[LeaseRow]| rows.iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(
        ids(&rows),
        live.iter().map(|l| l.id).collect::<Vec<_>>(),
        "live leases"
    );
    for ((id, state, price, ends_at, record), lease) in rows.iter().zip(&live) {
        assert_eq!(json!(state), json!(lease.state), "lease {id}");
        assert_eq!(price.0, lease.price_per_hour, "lease {id}");
        assert_eq!(*ends_at, lease.ends_at, "lease {id}");
        assert_eq!(
            LeaseRecord::parse(record).expect("a lease record"),
            LeaseRecord::of(lease),
            "lease {id}"
        );
    }
    let mut open: Vec<_> = engine.snapshot().listings.iter().map(|l| l.id).collect();
    open.sort();
    assert_eq!(listings, open, "open listings");
}

on_both_databases_fast! {
    async fn an_engine_replaying_the_journal_is_the_engine_the_rows_show(app) {
        let mut app = app;
        let m = market(&app).await;
        let ready = app.get("/readyz", None).await;
        assert_eq!(ready.status, 200, "{}", ready.body);
        let start = ready.body["applied_seq"].as_i64().expect("applied_seq");
        assert_eq!(ready.body["lag_ms"], 0, "{}", ready.body);
        let nodes = [
            app.node("eu-west", &[("H100-SXM5-80GB", "shared"), ("H100-SXM5-80GB", "mig")]).await,
            app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await,
        ];
        let mut leases = Vec::new();
        for _ in 0..3 {
            leases.push(fleet::place(&app, &m.buyer, fleet::order("on_demand")).await);
        }
        let mut bids = Vec::new();
        for price in ["0.5", "4"] {
            let mut body = fleet::order("spot");
            body["max_price"] = json!(price);
            let r = app.order(&m.buyer, body).await;
            assert_eq!(r.status, 201, "{}", r.body);
            bids.push(r.body["id"].as_str().expect("order id").to_owned());
        }
        let mut reserved = fleet::order("reserved");
        let hour = chrono::Utc::now().timestamp() / 3600 * 3600 + 2 * 3600;
        reserved["start_at"] = json!(chrono::DateTime::from_timestamp(hour, 0));
        let r = app.order(&m.buyer, reserved).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let r = app
            .request(reqwest::Method::DELETE, &format!("/v1/orders/{}", bids[0]), Some(&m.buyer), None)
            .await;
        assert!(r.status.is_success() || r.status == 409, "{}", r.body);
        let r = app
            .post(&format!("/v1/leases/{}/release", leases[0]), Some(&m.buyer), json!({}))
            .await;
        assert!(r.status.is_success(), "{}", r.body);
        // Each node's agent says hello once and is heard from no more.
        for (node, gpus) in nodes.iter().zip([
            &[("H100-SXM5-80GB", false), ("H100-SXM5-80GB", true)][..],
            &[("H100-SXM5-80GB", false)][..],
        ]) {
            let node = fleet::Node { id: node.id, token: node.token.clone() };
            fleet::register(&app, &node, gpus).await;
            fleet::beat(&app, &node, &[]).await;
        }
        // Ticks, billing rounds and, with no agent heartbeating, node loss
        // (and the re-placing of what ran there) go through the journal too.
        fleet::eventually(20, "the nodes to be lost", || async {
            fleet::scalar(&app, "SELECT COUNT(*) FROM nodes WHERE status = 'lost'").await == 2
        })
        .await;
        let ready = app.get("/readyz", None).await;
        let written = ready.body["applied_seq"].as_i64().expect("applied_seq");
        assert!(written > start, "{}", ready.body);
        let (seq, rows) = journal_matches_rows(&mut app).await;
        assert!(rows >= 8, "{rows} rows");
        // A restarted server writes on from where the journal ends (its
        // first batch bills at once, so it may be past it already).
        let ready = app.get("/readyz", None).await;
        let resumed = ready.body["applied_seq"].as_i64().expect("applied_seq");
        assert!(resumed >= seq, "{}", ready.body);
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        fleet::place(&app, &m.buyer, fleet::order("on_demand")).await;
        let (after_restart, _) = journal_matches_rows(&mut app).await;
        assert!(after_restart > seq);
    }
}

on_both_databases_fast! {
    async fn a_write_answers_its_journal_row_and_a_read_asking_for_a_later_one_waits_then_503s(app) {
        let m = market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let r = app
            .client
            .post(format!("{}/v1/orders", app.address))
            .bearer_auth(&m.buyer)
            .json(&fleet::order("on_demand"))
            .send()
            .await
            .expect("order");
        assert_eq!(r.status(), 201);
        let seq: i64 = r.headers()["gpuex-seq"]
            .to_str()
            .ok()
            .and_then(|s| s.parse().ok())
            .expect("a write answers Gpuex-Seq");
        assert!(seq >= 1);
        let read = |min_seq: String| {
            app.client
                .get(format!("{}/v1/orders", app.address))
                .bearer_auth(&m.buyer)
                .header("gpuex-min-seq", min_seq)
                .send()
        };
        assert_eq!(read(seq.to_string()).await.expect("read").status(), 200);
        // A row this replica does not have (yet): 503 with Retry-After.
        let r = read((seq + 1_000_000).to_string()).await.expect("read");
        assert_eq!(r.status(), 503);
        assert!(r.headers().contains_key("retry-after"));
        let body: serde_json::Value = r.json().await.expect("problem");
        assert_eq!(body["code"], "replica_behind", "{body}");
        for bad in ["-1", "soon", "1.5"] {
            let r = read(bad.into()).await.expect("read");
            assert_eq!(r.status(), 400, "{bad}");
            let body: serde_json::Value = r.json().await.expect("problem");
            assert_eq!(body["code"], "invalid_header", "{body}");
        }
    }
}

/// A release replays the journal an earlier release wrote: version 1's rows
/// (`tests/fixtures/journal-v1.json`, written by the replay test above with
/// `GPUEX_UPDATE_JOURNAL_FIXTURE=1`) decode, apply to its snapshot, and
/// leave the engine that release had.
#[test]
fn the_journal_an_earlier_release_wrote_replays() {
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).expect("the fixture"))
            .expect("json");
    let snapshot = &fixture["snapshot"];
    assert_eq!(snapshot["version"], 1);
    let state: gpuex::engine::Snapshot =
        serde_json::from_str(snapshot["state"].as_str().expect("state"))
            .expect("the snapshot decodes");
    // The settings the journal was written under: the tests' fast ones.
    let mut settings = gpuex::config::Settings::with_database("sqlite::memory:");
    fleet::fast(&mut settings);
    let mut engine = gpuex::engine::Engine::restore(settings.market().engine, state)
        .expect("the snapshot restores");
    let rows = fixture["rows"].as_array().expect("rows");
    assert!(
        rows.len() >= 8,
        "a journal worth replaying: {} rows",
        rows.len()
    );
    let mut seq = snapshot["seq"].as_i64().expect("seq");
    for row in rows {
        assert_eq!(row["seq"].as_i64(), Some(seq + 1), "rows in sequence");
        seq += 1;
        let version = i32::try_from(row["version"].as_i64().expect("version")).expect("small");
        let steps = journal::decode(version, row["commands"].as_str().expect("commands"))
            .unwrap_or_else(|e| panic!("row {seq}: {e}"));
        journal::apply(&mut engine, &steps);
    }
    engine.validate().expect("no slice promised twice");
    let end = &fixture["ends_with"];
    let state = engine.snapshot();
    assert_eq!(end["seq"].as_i64(), Some(seq));
    assert_eq!(end["leases"].as_u64(), Some(state.leases.len() as u64));
    assert_eq!(end["orders"].as_u64(), Some(state.orders.len() as u64));
    assert_eq!(end["nodes"].as_u64(), Some(state.nodes.len() as u64));
    assert_eq!(end["now"].as_i64(), Some(state.now));
}

crate::helpers::on_both_databases! {
    async fn a_snapshot_trims_the_journal_and_snapshots_before_the_older_of_the_last_two(app) {
        let mut app = app;
        app.halt().await;
        let db = Db::connect(&app.database_url).await.expect("database");
        let first = fleet::scalar(&app, "SELECT COALESCE(MAX(seq), 0) FROM journal").await;
        let state = journal::encode_snapshot(&gpuex::engine::Engine::new(app.settings.market().engine))
            .expect("a snapshot");
        for i in 1..=9 {
            let tx = db.begin().await.expect("tx");
            let mut writes = gpuex::db::Writes::new(&tx);
            journal::push_append(&mut writes, journal::Append {
                seq: first + i,
                epoch: 1,
                at_ms: 0,
                commands: journal::encode(&[]).expect("[]"),
                owed: None,
                digest: false,
            });
            if i % 3 == 0 {
                journal::push_snapshot(&mut writes, first + i, 0, state.clone());
            }
            tx.commit_with(writes).await.expect("commit");
        }
        // Kept: the last two snapshots, and the journal after the older.
        let kept = fleet::scalar(&app, "SELECT COUNT(*) FROM journal_snapshots").await;
        let oldest = fleet::scalar(&app, "SELECT MIN(seq) FROM journal_snapshots").await;
        let journal_from = fleet::scalar(&app, "SELECT MIN(seq) FROM journal").await;
        assert_eq!((kept, oldest, journal_from), (2, first + 6, first + 7));
        let (engine, seq, rows) = replay(&db, app.settings.market().engine).await;
        assert_eq!((seq, rows), (first + 9, 3), "from the older snapshot, its three rows after");
        engine.validate().expect("valid");
        db.close().await;
        app.resume().await;
    }
}

/// Fast settings, with a snapshot every 8 journal rows.
fn snapshot_often(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.journal_snapshot_every = 8;
}

crate::helpers::on_both_databases_with! { snapshot_often =>
    async fn the_leader_keeps_a_snapshot_every_few_rows_off_its_path_and_trims_the_journal(app) {
        let mut app = app;
        let m = market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"), ("H100-SXM5-80GB", "shared")]).await;
        let order = json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 4},
                           "region": "eu-west", "duration_s": 3600});
        for _ in 0..12 {
            fleet::place(&app, &m.buyer, order.clone()).await;
        }
        // The first snapshot (at the journal's start) gives way once two
        // later ones are kept: each kept after its row committed.
        fleet::eventually(30, "two snapshots past the first", || async {
            fleet::scalar(&app, "SELECT COUNT(*) FROM journal_snapshots").await == 2
                && fleet::scalar(&app, "SELECT MIN(seq) FROM journal_snapshots").await >= 8
        })
        .await;
        let oldest = fleet::scalar(&app, "SELECT MIN(seq) FROM journal_snapshots").await;
        assert_eq!(oldest % 8, 0, "snapshots at every 8th row: {oldest}");
        let (_, rows) = journal_matches_rows(&mut app).await;
        assert!(rows >= 8, "replayed from the oldest kept snapshot: {rows} rows");
        // In one statement: the server writes on meanwhile.
        let gap = fleet::scalar(
            &app,
            "SELECT (SELECT MIN(seq) FROM journal) - (SELECT MIN(seq) FROM journal_snapshots)",
        )
        .await;
        assert_eq!(gap, 1, "the journal starts right after the older kept snapshot");
        restarts_from_the_snapshot(&mut app, &m.buyer).await;
    }
}

/// Once a snapshot is kept the rows are no longer the engine's storage:
/// with what a database from before the journal restored from made
/// unreadable (the engine's meta row and copies of its orders), the engine
/// still restores (the newest snapshot, then the journal after it) to what
/// the journal holds, and the server restarts on it, with its leases.
async fn restarts_from_the_snapshot(app: &mut TestApp, buyer: &str) {
    app.halt().await;
    let config = app.settings.market().engine;
    let db = Db::connect(&app.database_url).await.expect("database");
    let (replayed, replayed_seq, _) = replay(&db, config).await;
    let leases: Vec<_> = replayed.leases().map(|l| l.id).collect();
    assert!(leases.len() >= 12, "{} leases", leases.len());
    for sql in [
        "UPDATE engine_meta SET state_json = 'unreadable' WHERE $1 IS NOT NULL",
        "UPDATE orders SET engine_json = 'unreadable' WHERE $1 IS NOT NULL",
    ] {
        app.execute(sql, uuid::Uuid::nil()).await;
    }
    let (restored, seq) = gpuex::market::restore::load_at(&db, config)
        .await
        .expect("the snapshot and the journal restore");
    assert_eq!(seq, replayed_seq);
    assert_eq!(journal::digest(&restored), journal::digest(&replayed));
    db.close().await;
    app.resume().await;
    let ready = app.get("/readyz", None).await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert!(
        ready.body["applied_seq"].as_i64() >= Some(seq),
        "{}",
        ready.body
    );
    let r = app
        .post(
            &format!("/v1/leases/{}/release", leases[0]),
            Some(buyer),
            json!({}),
        )
        .await;
    assert!(
        r.status.is_success(),
        "the restarted engine has the lease: {}",
        r.body
    );
}
