//! Duration prediction over HTTP (ARCHITECTURE.md §17): an order without
//! `duration_s` gets its likely duration from the buyer's ended leases of
//! the same tags, else the same command, else all of them, and the fill
//! report shows which.

use crate::helpers::{on_both_databases_with, TestApp};
use gpuex::config::Settings;
use serde_json::{json, Value};
use std::time::Duration;

fn order(tags: Value, command: &str) -> Value {
    json!({"mode": "on_demand", "tags": tags, "command": command,
           "resources": {"tflops": 100, "vram_gb": 8, "gpu_model": "H100-SXM5-80GB"}})
}

/// Places `body`, holds its lease `held_s` seconds of market time, releases
/// it, and returns the prediction its fill report showed.
async fn run_for(app: &TestApp, buyer: &str, body: Value, held_s: u64) -> Value {
    let r = app.order(buyer, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["state"], "filled", "{}", r.body);
    let order_id = r.body["id"].as_str().expect("an order id").to_owned();
    let lease_id = r.body["lease_id"].as_str().expect("a lease").to_owned();
    let fills = app
        .get(&format!("/v1/orders/{order_id}/fills"), Some(buyer))
        .await;
    assert_eq!(fills.status, 200, "{}", fills.body);
    let prediction = fills.body[0]["report"]["duration_prediction"].clone();
    app.advance_clock(Duration::from_secs(held_s));
    let released = app
        .post(
            &format!("/v1/leases/{lease_id}/release"),
            Some(buyer),
            json!({}),
        )
        .await;
    assert_eq!(released.status, 200, "{}", released.body);
    prediction
}

/// The market's clock stands still but for the test's own moves, so a lease
/// lasts exactly the market time the test moved on.
fn stopped_clock(settings: &mut Settings) {
    settings.clock = gpuex::clock::Clock::stopped();
}

/// A prediction of exactly `seconds` from `samples` leases of `basis`.
#[track_caller]
fn assert_predicted(p: &Value, seconds: i64, basis: &str, samples: u64) {
    assert_eq!(
        p,
        &json!({"seconds": seconds, "basis": basis, "samples": samples})
    );
}

on_both_databases_with! { stopped_clock =>
    async fn a_buyers_history_predicts_by_tags_then_command_then_all_leases(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let train = json!({"job": "train"});

        // No history yet: nothing to predict from.
        let p = run_for(&app, &buyer, order(train.clone(), "python train.py"), 600).await;
        assert_eq!(p, json!({"seconds": null, "basis": "none", "samples": 0}));

        // Other tags, the same command: the command's one lease, 600 s.
        let p = run_for(&app, &buyer, order(json!({"job": "sweep"}), "python train.py"), 200).await;
        assert_predicted(&p, 600, "command", 1);

        // The same tags, another command: the tags win (the one 600 s lease).
        let p = run_for(&app, &buyer, order(train.clone(), "python eval.py"), 100).await;
        assert_predicted(&p, 600, "tags", 1);

        // The tags' two leases (600 s and 100 s): their median.
        let p = run_for(&app, &buyer, order(train, "python other.py"), 50).await;
        assert_predicted(&p, 350, "tags", 2);

        // Nothing matches: every ended lease of the buyer (600, 200, 100, 50).
        let p = run_for(&app, &buyer, order(json!({}), "python new.py"), 10).await;
        assert_predicted(&p, 150, "fallback", 4);

        // An order's own duration wins over any prediction.
        let mut timed = order(json!({"job": "train"}), "python train.py");
        timed["duration_s"] = json!(7200);
        let p = run_for(&app, &buyer, timed, 10).await;
        assert_eq!(p, json!({"seconds": 7200, "basis": "duration_s", "samples": 0}));

        // Another buyer's history is not this one's.
        let (other, _) = app.buyer_with(&admin, "1000").await;
        let p = run_for(&app, &other, order(json!({"job": "train"}), "python train.py"), 10).await;
        assert_eq!(p["basis"], "none");
    }

    async fn a_restarted_server_keeps_a_waiting_orders_prediction(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let whole = |tags: Value| json!({"mode": "on_demand", "tags": tags, "command": "run",
            "max_wait_s": 3600, "resources": {"tflops": 900, "vram_gb": 80, "gpu_model": "H100-SXM5-80GB"}});
        run_for(&app, &buyer, whole(json!({"job": "a"})), 900).await;
        let first = app.order(&buyer, whole(json!({"job": "a"}))).await;
        assert_eq!(first.body["state"], "filled", "{}", first.body);
        // The GPU is taken: this one waits, with its prediction in the engine's row.
        let waiting = app.order(&buyer, whole(json!({"job": "a"}))).await;
        assert_eq!(waiting.body["state"], "open", "{}", waiting.body);
        let mut app = app;
        app.halt().await;
        app.resume().await;
        let lease_id = first.body["lease_id"].as_str().expect("a lease").to_owned();
        let released = app.post(&format!("/v1/leases/{lease_id}/release"), Some(&buyer), json!({})).await;
        assert_eq!(released.status, 200, "{}", released.body);
        let order_id = waiting.body["id"].as_str().expect("an order id").to_owned();
        let mut fills = Value::Null;
        for _ in 0..400 {
            fills = app.get(&format!("/v1/orders/{order_id}/fills"), Some(&buyer)).await.body;
            if fills.as_array().is_some_and(|f| !f.is_empty()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The one sample: exactly the 900 s of market time the lease was held.
        assert_predicted(&fills[0]["report"]["duration_prediction"], 900, "tags", 1);
    }
}
