//! A preempted lease whose workload exits within its notice frees its slot
//! at once (issue 34 item 9): the lease waiting for it starts when the agent
//! reports the victim `ended`, not when the notice would have run out.

use crate::fleet::{
    beat, create_node, ended, h100_node, lease, market, order, place, provisioned, register, report,
};
use crate::helpers::on_both_databases_with;
use reqwest::StatusCode;
use serde_json::json;
use uuid::Uuid;

/// Bids for a whole GPU on spot and waits for the auction to fill it.
async fn filled_spot_lease(app: &crate::helpers::TestApp, buyer: &str) -> Uuid {
    let mut spot = order("spot");
    spot["max_price"] = json!("50");
    let r = app.post("/v1/orders", Some(buyer), spot).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let order_path = format!("/v1/orders/{}", r.body["id"].as_str().unwrap());
    crate::fleet::eventually(10, "the spot fill", || async {
        app.get(&order_path, Some(buyer)).await.body["lease_id"].is_string()
    })
    .await;
    app.get(&order_path, Some(buyer)).await.body["lease_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn seconds(v: &serde_json::Value) -> i64 {
    v.as_str()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.timestamp())
        .unwrap_or_else(|| panic!("not a time: {v}"))
}

/// Short auction intervals; nodes that stay up without heartbeats while
/// the test moves the clock on by seconds without heartbeats.
fn patient(settings: &mut gpuex::config::Settings) {
    crate::fleet::fast(settings);
    settings.node_timeout_s = 120;
}

on_both_databases_with! { patient =>
    async fn a_preempted_lease_that_exits_early_frees_its_slot_and_the_waiting_lease_starts_then(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[("H100-SXM5-80GB", false)]).await;
        let spot_lease = filled_spot_lease(&app, &m.buyer).await;
        report(&app, &node, spot_lease, provisioned("GPU-0")).await;
        // On-demand needs the whole GPU: the spot lease gets its notice.
        let on_demand = place(&app, &m.buyer, order("on_demand")).await;
        let waiting = lease(&app, &m.buyer, on_demand).await;
        assert_eq!(waiting["state"], "pending", "{waiting}");
        let deadline = seconds(&waiting["ready_at"]);
        let noticed = lease(&app, &m.buyer, spot_lease).await;
        assert_eq!(noticed["state"], "preempting", "{noticed}");
        assert_eq!(seconds(&noticed["preempt_at"]), deadline);
        // Four seconds into the notice the workload exits on SIGTERM and the
        // agent reports its process tree gone.
        app.advance_clock(std::time::Duration::from_secs(4));
        let before = app.market_now().timestamp();
        let r = report(&app, &node, spot_lease, ended(143)).await;
        assert!(r.status.is_success(), "{}", r.body);
        let after = app.market_now().timestamp();
        let over = lease(&app, &m.buyer, spot_lease).await;
        assert_eq!(over["state"], "ended", "{over}");
        // The waiting lease starts then, with its whole hour from then.
        let started = lease(&app, &m.buyer, on_demand).await;
        assert_eq!(started["state"], "provisioning", "{started}");
        assert_eq!(started["ready_at"], json!(null), "{started}");
        let starts_at = seconds(&started["starts_at"]);
        assert!((before..=after).contains(&starts_at), "{starts_at} not in {before}..={after}");
        assert!(starts_at < deadline, "started at the deadline: {started}");
        assert_eq!(seconds(&started["ends_at"]), starts_at + 3600, "{started}");
        // The agent is told to start it on its next heartbeat.
        let assignments = beat(&app, &node, &[]).await;
        assert_eq!(assignments.len(), 1, "{assignments:?}");
        assert_eq!(assignments[0]["lease_id"], json!(on_demand));
        assert_eq!(assignments[0]["action"], "start");
    }
}
