//! The journal (DESIGN §20): every command the engine applied is in it, in
//! order, so an engine that replays it from the first snapshot is the
//! engine the rows restore, on both databases, across a restart; and
//! `/readyz` says where the replica stands.

use crate::fleet::{self, market, on_both_databases_fast};
use crate::helpers::TestApp;
use gpuex::db::Db;
use gpuex::market::journal;
use serde_json::json;

/// Replays the journal from its oldest snapshot, checking the rows come in
/// sequence and every digest the leader wrote matches; returns the engine,
/// the last sequence and how many rows were applied.
async fn replay(db: &Db, config: gpuex::engine::EngineConfig) -> (gpuex::engine::Engine, i64, i64) {
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
            if let Some(digest) = &entry.digest {
                assert_eq!(&journal::digest(&engine), digest, "row {}", entry.seq);
            }
            seq = entry.seq;
            rows += 1;
        }
    }
}

/// Stops the server and checks its journal against its rows.
async fn journal_matches_rows(app: &mut TestApp) -> (i64, i64) {
    app.halt().await;
    let config = app.settings.market().engine;
    let db = Db::connect(&app.database_url).await.expect("database");
    let (replayed, seq, rows) = replay(&db, config).await;
    let (restored, rows_seq) = gpuex::market::restore::load_at(&db, config)
        .await
        .expect("the rows restore");
    assert_eq!(seq, rows_seq, "the journal ends where the rows are");
    assert_eq!(
        journal::digest(&replayed),
        journal::digest(&restored),
        "the replayed engine is the engine the rows restore"
    );
    db.close().await;
    app.resume().await;
    (seq, rows)
}

on_both_databases_fast! {
    async fn an_engine_replaying_the_journal_is_the_engine_the_rows_restore(app) {
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
