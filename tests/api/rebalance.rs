//! The early `rebalance` warning at elevated risk, whatever the bid (issue 34
//! item 10, ARCHITECTURE.md §3/§15): a spot lease bidding far above the clearing
//! index's cap still hears, 15 minutes ahead, that a reservation booked its
//! slice — on the lease (`rebalance_at`), as an event, and by webhook.

use crate::fleet::{
    create_node, eventually, h100_node, lease, market, order, provisioned, register, report,
};
use crate::helpers::on_both_databases_with;
use crate::webhooks::{assert_signed, Receiver};
use chrono::{DurationRound, TimeDelta};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use uuid::Uuid;

/// The buyer's events of `kind` for `lease`.
async fn events_of(
    app: &crate::helpers::TestApp,
    buyer: &str,
    kind: &str,
    lease: Uuid,
) -> Vec<Value> {
    let r = app.get("/v1/events?limit=100", Some(buyer)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e["type"] == kind && e["lease_id"] == json!(lease))
        .collect()
}

/// Short auction intervals; nodes that stay up without heartbeats while
/// the test moves the clock on by hours without heartbeats.
fn patient(settings: &mut gpuex::config::Settings) {
    crate::fleet::fast(settings);
    settings.node_timeout_s = 86_400;
}

on_both_databases_with! { patient =>
    async fn a_high_spot_bid_is_warned_15_minutes_before_a_reservation_takes_its_slice(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[("H100-SXM5-80GB", false)]).await;
        let receiver = Receiver::start().await;
        let hook = app.post("/v1/webhooks", Some(&m.buyer), json!({"url": receiver.url})).await;
        assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.body);
        let secret = hook.body["secret"].as_str().unwrap().to_owned();
        // A bid far above 0.78 × list: the capped clearing index never comes near it.
        let mut spot = order("spot");
        spot["max_price"] = json!("50");
        // Open-ended, so the reservation below does take its GPU.
        spot.as_object_mut().unwrap().remove("duration_s");
        let r = app.post("/v1/orders", Some(&m.buyer), spot).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let spot_order = format!("/v1/orders/{}", r.body["id"].as_str().unwrap());
        eventually(10, "the spot fill", || async {
            app.get(&spot_order, Some(&m.buyer)).await.body["lease_id"].is_string()
        })
        .await;
        let spot_lease: Uuid = app.get(&spot_order, Some(&m.buyer)).await.body["lease_id"]
            .as_str().unwrap().parse().unwrap();
        report(&app, &node, spot_lease, provisioned("GPU-0")).await;
        // A reservation of the GPU two whole hours ahead.
        let start = (app.market_now() + TimeDelta::hours(2)).duration_trunc(TimeDelta::hours(1)).unwrap();
        let mut reserved = order("reserved");
        reserved["start_at"] = json!(start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let r = app.post("/v1/orders", Some(&m.buyer), reserved).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let booked = lease(&app, &m.buyer, spot_lease).await;
        assert_eq!(booked["preempt_at"], json!(start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)), "{booked}");
        // More than 15 minutes ahead: no warning yet.
        assert_eq!(lease(&app, &m.buyer, spot_lease).await["rebalance_at"], json!(null));
        assert!(events_of(&app, &m.buyer, "lease.rebalance", spot_lease).await.is_empty());
        // Within 15 minutes of the reservation: warned, whatever the bid.
        let ahead = (start - TimeDelta::minutes(15) - app.market_now()).num_seconds();
        app.advance_clock(Duration::from_secs(u64::try_from(ahead).unwrap() + 1));
        eventually(10, "the rebalance warning", || async {
            !events_of(&app, &m.buyer, "lease.rebalance", spot_lease).await.is_empty()
        })
        .await;
        let warning = events_of(&app, &m.buyer, "lease.rebalance", spot_lease).await.remove(0);
        assert_eq!(warning["data"]["reason"], "booked", "{warning}");
        let own: f64 = warning["data"]["bid_index"].as_str().unwrap().parse().unwrap();
        let clearing: f64 = warning["data"]["clearing_index"].as_str().unwrap().parse().unwrap();
        assert!(clearing < own * 0.9, "not the clearing rule: {warning}");
        let view = lease(&app, &m.buyer, spot_lease).await;
        assert!(view["rebalance_at"].is_string(), "{view}");
        assert_eq!(view["state"], "running", "warned, not yet noticed: {view}");
        eventually(10, "the rebalance webhook", || async {
            receiver.accepted().iter().any(|r| r.event_type == "lease.rebalance")
        })
        .await;
        let delivered = receiver.accepted().into_iter().find(|r| r.event_type == "lease.rebalance").unwrap();
        assert_signed(&secret, &delivered);
        let body: Value = serde_json::from_str(&delivered.body).unwrap();
        assert_eq!(body["data"]["reason"], "booked", "{body}");
        // Sent once, however many clearings ran while the webhook went out.
        assert_eq!(events_of(&app, &m.buyer, "lease.rebalance", spot_lease).await.len(), 1);
    }
}
