//! A database from before the journal (ARCHITECTURE.md §20): its rows held the
//! engine's state (each live lease, open order and listing as the engine's
//! JSON, and the engine's meta row) and it has no journal. Its first start
//! reads the engine from those rows, once, and keeps it as the journal's
//! first snapshot; from then on it runs on the journal, and its rows keep
//! records of their own.

use crate::fleet::{self, market, on_both_databases_fast};
use crate::journal::{journal_matches_rows, replay};
use gpuex::db::{dispatch, Db};
use gpuex::engine::Engine;
use gpuex::market::journal;
use serde_json::json;

/// Writes `engine` into the rows the way the release before the journal
/// kept it, and removes the journal.
async fn write_as_before_the_journal(db: &Db, engine: &Engine) {
    let state = engine.snapshot();
    let leases: Vec<(uuid::Uuid, String)> = state
        .leases
        .iter()
        .map(|l| (l.id, serde_json::to_string(l).expect("a lease")))
        .collect();
    let orders: Vec<(uuid::Uuid, String)> = state
        .orders
        .iter()
        .map(|o| (o.id, serde_json::to_string(o).expect("an order")))
        .collect();
    let meta = serde_json::to_string(&engine.meta()).expect("the meta");
    dispatch!(db, pool => {
        for (id, json) in &leases {
            sqlx::query("UPDATE leases SET record_json = $1 WHERE id = $2")
                .bind(json).bind(id).execute(pool).await.expect("a lease row");
        }
        for (id, json) in &orders {
            sqlx::query("UPDATE orders SET engine_json = $1 WHERE id = $2")
                .bind(json).bind(id).execute(pool).await.expect("an order row");
        }
        sqlx::query(
            "INSERT INTO engine_meta (id, state_json) VALUES (1, $1) \
             ON CONFLICT (id) DO UPDATE SET state_json = excluded.state_json",
        )
        .bind(&meta).execute(pool).await.expect("the meta row");
        for table in ["journal", "journal_snapshots"] {
            sqlx::query(&format!("DELETE FROM {table}")).execute(pool).await.expect("no journal");
        }
    });
}

on_both_databases_fast! {
    async fn a_database_from_before_the_journal_starts_from_its_rows_once(app) {
        let mut app = app;
        let m = market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"), ("H100-SXM5-80GB", "whole")]).await;
        let mut leases = Vec::new();
        for _ in 0..3 {
            leases.push(fleet::place(&app, &m.buyer, fleet::order("on_demand")).await);
        }
        // An order that will pay less than the price waits.
        let mut bid = fleet::order("on_demand");
        bid["max_price"] = json!("0.01");
        bid["max_wait_s"] = json!(3600);
        let r = app.order(&m.buyer, bid).await;
        assert_eq!(r.status, 201, "{}", r.body);
        app.halt().await;
        let config = app.settings.market().engine;
        let db = Db::connect(&app.database_url).await.expect("database");
        let (engine, _, _) = replay(&db, config).await;
        assert!(!engine.snapshot().orders.is_empty(), "the bid is open");
        let before = journal::digest(&engine);
        write_as_before_the_journal(&db, &engine).await;
        let (from_rows, seq) = gpuex::market::restore::from_rows(&db, config)
            .await
            .expect("the rows restore");
        assert_eq!(seq, 0, "no journal yet");
        assert_eq!(journal::digest(&from_rows), before, "the rows hold the engine");

        app.resume().await;
        let ready = app.get("/readyz", None).await;
        assert_eq!(ready.status, 200, "{}", ready.body);
        let (first_seq, first) = journal::snapshot(&db, config, false)
            .await
            .expect("the snapshot reads")
            .expect("the first start kept a snapshot");
        assert_eq!(first_seq, 0);
        assert_eq!(journal::digest(&first), before, "the first snapshot is the rows' engine");
        db.close().await;
        for lease in &leases {
            let r = app.get(&format!("/v1/leases/{lease}"), Some(&m.buyer)).await;
            assert_eq!(r.status, 200, "{}", r.body);
            assert_ne!(r.body["state"], "ended", "{}", r.body);
        }
        // It runs on the journal now, its new rows keeping their records.
        fleet::place(&app, &m.buyer, fleet::order("on_demand")).await;
        let (seq, rows) = journal_matches_rows(&mut app).await;
        assert!(seq > 0 && rows > 0, "{seq} {rows}");
    }
}
