//! The market's own metrics tell the truth: every fill observes how long its
//! order waited, and an order counts as open only while it waits or bids
//! (issue 15, item 9).

use crate::fleet::on_both_databases_fast;
use serde_json::json;
use std::time::Duration;

fn whole_h100(mode: &str) -> serde_json::Value {
    json!({"mode": mode, "region": "eu-west",
           "resources": {"tflops": 989, "vram_gb": 80, "isolation": "whole"}})
}

/// The value of an unlabelled series in the Prometheus text.
fn series(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

async fn open_orders(app: &crate::helpers::TestApp) -> u64 {
    app.get("/v1/market/stats", None).await.body["open_orders"]
        .as_u64()
        .expect("open_orders")
}

on_both_databases_fast! {
    async fn a_fill_observes_its_wait_and_only_waiting_or_bidding_orders_count_as_open(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let first = app.order(&buyer, whole_h100("on_demand")).await;
        assert_eq!(first.body["state"], "filled", "{}", first.body);
        let mut waiting = whole_h100("on_demand");
        waiting["max_wait_s"] = json!(600);
        let second = app.order(&buyer, waiting).await;
        assert_eq!(second.body["state"], "open", "{}", second.body);
        assert_eq!(open_orders(&app).await, 1);
        // The engine's clock counts whole seconds.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let lease = first.body["lease_id"].as_str().expect("lease");
        let r = app.post(&format!("/v1/leases/{lease}/release"), Some(&buyer), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let order = format!("/v1/orders/{}", second.body["id"].as_str().expect("id"));
        let mut filled = false;
        for _ in 0..50 {
            if app.get(&order, Some(&buyer)).await.body["state"] == "filled" {
                filled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(filled, "the waiting order is filled once capacity frees");
        assert_eq!(open_orders(&app).await, 0);
        let text = app.metrics_text().await;
        assert_eq!(series(&text, "gpuex_order_queue_wait_seconds_count"), 2.0, "{text}");
        assert!(series(&text, "gpuex_order_queue_wait_seconds_sum") >= 2.0, "{text}");
        assert_eq!(series(&text, "gpuex_orders_open"), 0.0);

        // A spot bid that holds its lease reads `filled`, and is not open.
        let lease = app.get(&order, Some(&buyer)).await.body["lease_id"].as_str().expect("lease").to_owned();
        app.post(&format!("/v1/leases/{lease}/release"), Some(&buyer), json!({})).await;
        let mut bid = whole_h100("spot");
        bid["max_price"] = json!("50");
        let bid = app.order(&buyer, bid).await;
        assert_eq!(bid.status, 201, "{}", bid.body);
        let bid = format!("/v1/orders/{}", bid.body["id"].as_str().expect("id"));
        let mut won = false;
        for _ in 0..50 {
            if app.get(&bid, Some(&buyer)).await.body["lease_id"].is_string() {
                won = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(won, "the bid wins the next clearing");
        assert_eq!(app.get(&bid, Some(&buyer)).await.body["state"], "filled");
        assert_eq!(open_orders(&app).await, 0);
        assert_eq!(series(&app.metrics_text().await, "gpuex_orders_open"), 0.0);
    }
}
