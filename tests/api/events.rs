//! Events (issue 24): every type produced by a real scenario, read back
//! through `GET /v1/events` and `GET /v1/events/stream`; resuming a stream;
//! tenants kept apart.

use crate::fleet;
use crate::helpers::{on_both_databases, on_both_databases_with, TestApp};
use crate::sse::{SseEvent, SseStream};
use crate::webhooks::{assert_signed, Receiver};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;
use uuid::Uuid;

/// Every event of `buyer`, paging through `GET /v1/events`.
async fn all_events(app: &TestApp, buyer: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let r = app
            .get(&format!("/v1/events?after={after}&limit=7"), Some(buyer))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let items = r.body["items"].as_array().cloned().unwrap_or_default();
        events.extend(items);
        after = r.body["next_after"].as_i64().expect("next_after");
        if !r.body["has_more"].as_bool().expect("has_more") {
            return events;
        }
    }
}

fn types(events: &[Value]) -> BTreeSet<String> {
    events
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_owned))
        .collect()
}

async fn stream(app: &TestApp, token: &str, last_event_id: Option<i64>) -> SseStream {
    let url = format!("{}/v1/events/stream", app.address);
    SseStream::open(&app.client, &url, Some(token), last_event_id).await
}

/// The stream's events as the page shows them: the `data` of each.
fn bodies(events: &[SseEvent]) -> Vec<Value> {
    events.iter().map(|e| e.data.clone()).collect()
}

/// Waits up to `secs` until `buyer` has an event of `kind` (for `id` in
/// `order_id` or `lease_id` when given).
async fn wait_secs(app: &TestApp, buyer: &str, kind: &str, id: Option<Uuid>, secs: u64) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let found = all_events(app, buyer).await.into_iter().find(|e| {
            e["type"] == kind
                && id.is_none_or(|id| e["order_id"] == json!(id) || e["lease_id"] == json!(id))
        });
        if let Some(event) = found {
            return event;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {kind}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_for(app: &TestApp, buyer: &str, kind: &str, id: Option<Uuid>) -> Value {
    wait_secs(app, buyer, kind, id, 20).await
}

/// A webhook to a receiver of the test's own, for every event of `token`'s
/// account; the receiver and the webhook's secret.
async fn hooked(app: &TestApp, token: &str) -> (Receiver, String) {
    let receiver = Receiver::start().await;
    let hook = app
        .post("/v1/webhooks", Some(token), json!({"url": receiver.url}))
        .await;
    assert_eq!(hook.status, 201, "{}", hook.body);
    let secret = hook.body["secret"].as_str().expect("secret").to_owned();
    (receiver, secret)
}

/// Waits for the receiver to accept an event of `kind`, checks its
/// signature and returns its body.
async fn delivered(receiver: &Receiver, secret: &str, kind: &str) -> Value {
    for _ in 0..200 {
        if let Some(r) = receiver
            .accepted()
            .into_iter()
            .find(|r| r.event_type == kind)
        {
            assert_signed(secret, &r);
            return serde_json::from_str(&r.body).expect("json");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {kind} was delivered");
}

fn id_of(r: &crate::helpers::Reply) -> Uuid {
    r.body["id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("id")
}

/// Short auction and billing intervals; nodes that stay up without
/// heartbeats for the length of a test.
fn fast_without_heartbeats(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.node_timeout_s = 120;
}

on_both_databases_with! { fast_without_heartbeats =>
    async fn every_order_and_lease_event_reaches_the_page_and_the_stream_in_order(app) {
        let m = fleet::market(&app).await;
        let node = fleet::create_node(&app, &m.provider, fleet::h100_node(1, "whole")).await;
        fleet::register(&app, &node, &[("H100-SXM5-80GB", false)]).await;
        let mut live = stream(&app, &m.buyer, None).await;
        let (receiver, secret) = hooked(&app, &m.buyer).await;
        let whole = json!({"tflops": 989, "vram_gb": 80, "isolation": "whole"});
        // A spot bid wins the GPU and runs.
        let spot = app.order(&m.buyer, json!({"mode": "spot", "region": "eu-west", "max_price": "2.1", "resources": whole})).await;
        assert_eq!(spot.status, 201, "{}", spot.body);
        let spot_order = id_of(&spot);
        let filled = wait_for(&app, &m.buyer, "order.filled", Some(spot_order)).await;
        let spot_lease: Uuid = filled["lease_id"].as_str().expect("lease").parse().expect("uuid");
        assert_eq!(filled["data"]["lease_id"], json!(spot_lease));
        let r = fleet::report(&app, &node, spot_lease, fleet::provisioned("GPU-0")).await;
        assert!(r.status.is_success(), "{}", r.body);
        wait_for(&app, &m.buyer, "lease.running", Some(spot_lease)).await;
        // A slightly lower bid loses for lack of capacity: its index sets
        // the clearing index, within 10 % of the winner's, which is warned.
        let rival = app.order(&m.buyer, json!({"mode": "spot", "region": "eu-west", "max_price": "2.0", "resources": whole})).await;
        assert_eq!(rival.status, 201, "{}", rival.body);
        let warning = wait_for(&app, &m.buyer, "lease.rebalance", Some(spot_lease)).await;
        let (own, clearing) = (warning["data"]["bid_index"].as_str().expect("own"), warning["data"]["clearing_index"].as_str().expect("clearing"));
        assert!(own.parse::<f64>().unwrap() * 0.9 <= clearing.parse::<f64>().unwrap(), "{warning}");
        assert!(fleet::lease(&app, &m.buyer, spot_lease).await["rebalance_at"].is_string());
        let r = app.request(Method::DELETE, &format!("/v1/orders/{}", id_of(&rival)), Some(&m.buyer), None).await;
        assert!(r.status.is_success(), "{}", r.body);
        // On-demand takes the GPU from spot, after notice.
        let on_demand = app.order(&m.buyer, json!({"mode": "on_demand", "region": "eu-west", "resources": whole})).await;
        assert_eq!(on_demand.status, 201, "{}", on_demand.body);
        let notice = wait_for(&app, &m.buyer, "lease.preempt_notice", Some(spot_lease)).await;
        assert!(notice["data"]["preempt_at"].is_string(), "{notice}");
        // No GPU in us-east: refused at once (the region has no capacity,
        // ARCHITECTURE.md §6). The one GPU here is taken: an order that may wait a second expires.
        let elsewhere = json!({"mode": "on_demand", "region": "us-east", "resources": {"tflops": 100, "vram_gb": 16}});
        app.order(&m.buyer, elsewhere).await.assert_code(422, "no_capacity");
        let waiting = app.order(&m.buyer, json!({"mode": "on_demand", "region": "eu-west", "max_wait_s": 1, "resources": whole})).await;
        assert_eq!(waiting.body["state"], "open", "{}", waiting.body);
        wait_for(&app, &m.buyer, "order.expired", Some(id_of(&waiting))).await;
        let r = app.post(&format!("/v1/leases/{spot_lease}/release"), Some(&m.buyer), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let ended = wait_for(&app, &m.buyer, "lease.ended", Some(spot_lease)).await;
        assert_eq!(ended["data"]["reason"], "released", "{ended}");
        assert_eq!(ended["order_id"], json!(spot_order), "a lease's event names its order");

        let page = all_events(&app, &m.buyer).await;
        let expected: BTreeSet<String> = ["order.accepted", "order.filled", "order.rejected", "order.cancelled",
            "order.expired", "lease.running", "lease.rebalance", "lease.preempt_notice", "lease.ended"]
            .into_iter().map(str::to_owned).collect();
        assert!(types(&page).is_superset(&expected), "{:?}", types(&page));
        let ids: Vec<i64> = page.iter().map(|e| e["id"].as_i64().expect("id")).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids grow: {ids:?}");
        // The stream saw the same events, in the same order, each with its id and type.
        let mut seen = Vec::new();
        while seen.len() < page.len() {
            let Some(event) = live.next(Duration::from_secs(10)).await else { break };
            assert_eq!(event.id.as_deref(), event.data["id"].as_i64().map(|i| i.to_string()).as_deref());
            assert_eq!(event.event.as_deref(), event.data["type"].as_str());
            seen.push(event);
        }
        assert_eq!(bodies(&seen), page);
        // And the webhook got each of them once, signed, in order.
        let mut delivered = Vec::new();
        for _ in 0..100 {
            delivered = receiver.accepted();
            if delivered.len() >= page.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for received in &delivered {
            assert_signed(&secret, received);
        }
        let delivered: Vec<Value> = delivered.iter().map(|r| serde_json::from_str(&r.body).expect("json")).collect();
        assert_eq!(delivered, page);
    }

    async fn a_stream_resumed_with_last_event_id_loses_and_repeats_nothing(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        // No node: each order is rejected, one event apiece.
        let order = json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 100, "vram_gb": 16}});
        for _ in 0..3 {
            app.order(&buyer, order.clone()).await;
        }
        let page = all_events(&app, &buyer).await;
        assert_eq!(page.len(), 3, "{page:?}");
        let first_id = page[0]["id"].as_i64().expect("id");
        // From the start (`after=0`), cut after two events.
        let url = format!("{}/v1/events/stream?after=0", app.address);
        let mut cut = SseStream::open(&app.client, &url, Some(&buyer), None).await;
        let mut got = Vec::new();
        for _ in 0..2 {
            got.push(cut.next(Duration::from_secs(10)).await.expect("an event"));
        }
        drop(cut);
        // More happens while no stream is open.
        for _ in 0..2 {
            app.order(&buyer, order.clone()).await;
        }
        let last: i64 = got[1].id.as_deref().expect("id").parse().expect("number");
        let mut resumed = stream(&app, &buyer, Some(last)).await;
        // And more while it is open.
        app.order(&buyer, order.clone()).await;
        let page = all_events(&app, &buyer).await;
        assert_eq!(page.len(), 6);
        while got.len() < page.len() {
            got.push(resumed.next(Duration::from_secs(10)).await.expect("the rest"));
        }
        assert!(resumed.next(Duration::from_millis(500)).await.is_none(), "nothing repeated");
        assert_eq!(bodies(&got), page);
        assert_eq!(got[0].data["id"].as_i64(), Some(first_id));
        // `after` in the query does the same as the header.
        let url = format!("{}/v1/events/stream?after={last}", app.address);
        let mut again = SseStream::open(&app.client, &url, Some(&buyer), None).await;
        let rest = again.drain(Duration::from_millis(800)).await;
        assert_eq!(bodies(&rest), page[2..].to_vec());
    }

    async fn another_tenants_events_never_reach_a_page_or_a_stream(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (alice, _) = app.buyer_with(&admin, "100").await;
        let (mallory, _) = app.buyer_with(&admin, "100").await;
        let url = format!("{}/v1/events/stream?after=0", app.address);
        let mut spy = SseStream::open(&app.client, &url, Some(&mallory), None).await;
        let order = json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 100, "vram_gb": 16}});
        app.order(&alice, order).await;
        let alices = all_events(&app, &alice).await;
        assert_eq!(alices.len(), 1, "{alices:?}");
        assert!(all_events(&app, &mallory).await.is_empty());
        assert!(spy.drain(Duration::from_millis(800)).await.is_empty());
        // Resuming from before Alice's events shows Mallory none of them either.
        let r = app.get("/v1/events?after=0&limit=500", Some(&mallory)).await;
        assert_eq!(r.body["items"], json!([]), "{}", r.body);
        let order_id = alices[0]["order_id"].as_str().expect("order");
        assert!(!r.body.to_string().contains(order_id));
    }

    async fn bad_cursors_and_agents_are_refused_naming_the_field(app) {
        let m = fleet::market(&app).await;
        app.get("/v1/events?after=-1", Some(&m.buyer)).await.assert_problem(422, Some("query.after"));
        app.get("/v1/events?limit=0", Some(&m.buyer)).await.assert_problem(422, Some("query.limit"));
        app.get("/v1/events?limit=501", Some(&m.buyer)).await.assert_problem(422, Some("query.limit"));
        app.get("/v1/events/stream?after=-5", Some(&m.buyer)).await.assert_problem(422, Some("query.after"));
        let r = app.client.get(format!("{}/v1/events/stream", app.address))
            .bearer_auth(&m.buyer).header("last-event-id", "not-a-number").send().await.expect("request");
        TestApp::reply(r).await.assert_problem(422, Some("header.last-event-id"));
        app.get("/v1/events", None).await.assert_problem(401, None);
        app.get("/v1/events/stream", None).await.assert_problem(401, None);
        let node = fleet::create_node(&app, &m.provider, fleet::h100_node(1, "whole")).await;
        app.get("/v1/events", Some(&node.token)).await.assert_problem(403, None);
    }
}

/// A notice as long as the lease's first hold, so the first billing pass
/// already wants the hold topped up.
fn long_notice(settings: &mut gpuex::config::Settings) {
    fast_without_heartbeats(settings);
    settings.preempt_notice_s = 3400;
}

on_both_databases_with! { long_notice =>
    async fn a_wallet_that_cannot_top_up_a_hold_tells_the_buyer_funds_low(app) {
        let m = fleet::market(&app).await;
        let node = fleet::create_node(&app, &m.provider, fleet::h100_node(1, "mig")).await;
        fleet::register(&app, &node, &[("H100-SXM5-80GB", true)]).await;
        let body = json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 100, "vram_gb": 16}});
        // What the lease holds for its first hour, learnt from a first buyer.
        let probe = fleet::place(&app, &m.buyer, body.clone()).await;
        let held = app.get("/v1/wallet", Some(&m.buyer)).await.body["held"].as_str().expect("held").to_owned();
        app.post(&format!("/v1/leases/{probe}/release"), Some(&m.buyer), json!({})).await;
        // Exactly that much: nothing is left to top the hold up with.
        let (buyer, _) = app.buyer_with(&m.admin, &held).await;
        let (receiver, secret) = hooked(&app, &buyer).await;
        let mut live = stream(&app, &buyer, Some(0)).await;
        let lease = fleet::place(&app, &buyer, body).await;
        fleet::report(&app, &node, lease, fleet::provisioned("MIG-1")).await;
        let low = wait_for(&app, &buyer, "funds.low", Some(lease)).await;
        assert!(low["data"]["funded_until"].is_string(), "{low}");
        let notice = wait_for(&app, &buyer, "lease.preempt_notice", Some(lease)).await;
        assert_eq!(notice["data"]["reason"], "funds_exhausted", "{notice}");
        assert_eq!(delivered(&receiver, &secret, "funds.low").await, low);
        let streamed = live.drain(Duration::from_millis(800)).await;
        assert!(bodies(&streamed).contains(&low), "{streamed:?}");
    }
}

on_both_databases_with! { fast_without_heartbeats =>
    async fn a_budget_reached_tells_the_buyer_and_names_the_leases_noticed(app) {
        let m = fleet::market(&app).await;
        let node = fleet::create_node(&app, &m.provider, fleet::h100_node(1, "mig")).await;
        fleet::register(&app, &node, &[("H100-SXM5-80GB", true)]).await;
        let mut body = fleet::order("on_demand");
        body["tags"] = json!({"team": "ads"});
        let (receiver, secret) = hooked(&app, &m.buyer).await;
        let mut live = stream(&app, &m.buyer, Some(0)).await;
        let lease = fleet::place(&app, &m.buyer, body).await;
        fleet::report(&app, &node, lease, fleet::provisioned("MIG-1")).await;
        let r = app.put("/v1/budgets", Some(&m.buyer), json!({"tag_key": "team", "tag_value": "ads", "monthly_limit": "0.01"})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        // The budget watcher looks every 15 s.
        let notice = wait_secs(&app, &m.buyer, "budget.notice", None, 40).await;
        assert_eq!(notice["data"]["tag_key"], "team");
        assert_eq!(notice["data"]["leases"], json!([lease]), "{notice}");
        wait_for(&app, &m.buyer, "lease.preempt_notice", Some(lease)).await;
        assert_eq!(delivered(&receiver, &secret, "budget.notice").await, notice);
        let streamed = live.drain(Duration::from_millis(800)).await;
        assert!(bodies(&streamed).contains(&notice), "{streamed:?}");
    }
}

fn short_timeout(settings: &mut gpuex::config::Settings) {
    settings.request_timeout_s = 1;
}

on_both_databases_with! { short_timeout =>
    async fn the_stream_outlives_the_request_timeout_is_not_compressed_and_keeps_alive(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let response = app.client.get(format!("{}/v1/events/stream", app.address))
            .bearer_auth(&buyer)
            .header("accept-encoding", "gzip")
            .timeout(Duration::from_secs(60))
            .send().await.expect("stream");
        assert_eq!(response.status(), 200);
        assert!(response.headers().get("content-encoding").is_none(), "{:?}", response.headers());
        assert_eq!(response.headers()["cache-control"], "no-cache");
        assert!(app.metrics_text().await.contains("gpuex_event_streams 1"), "one stream open");
        drop(response);
        let mut live = stream(&app, &buyer, None).await;
        // Past the server's 1 s request timeout, the stream still delivers.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        app.order(&buyer, json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 100, "vram_gb": 16}})).await;
        let event = live.next(Duration::from_secs(10)).await.expect("an event after the timeout");
        assert_eq!(event.event.as_deref(), Some("order.rejected"));
        // Idle, it still hears a comment line every 15 s.
        assert!(live.next(Duration::from_secs(17)).await.is_none());
        assert!(live.comments >= 1, "no keep-alive in 17 s");
    }
}

fn short_tokens(settings: &mut gpuex::config::Settings) {
    settings.token_ttl_s = 2;
}

on_both_databases_with! { short_tokens =>
    async fn a_stream_ends_when_its_access_token_expires(app) {
        let admin = app.admin().await;
        let (buyer, _) = app.buyer_with(&admin, "1").await;
        let mut live = stream(&app, &buyer, None).await;
        assert!(live.ends_within(Duration::from_secs(10)).await, "the stream outlived its token");
    }
}

on_both_databases! {
    async fn the_server_shuts_down_with_event_streams_open_and_ends_them(app) {
        let admin = app.admin().await;
        let (buyer, _) = app.buyer_with(&admin, "1").await;
        let key = app.post("/v1/api-keys", Some(&buyer), json!({"name": "stream"})).await;
        assert_eq!(key.status, 201, "{}", key.body);
        // An API key never expires, so only the shutdown can end this one.
        let mut open = stream(&app, key.body["key"].as_str().expect("key"), None).await;
        tokio::time::timeout(Duration::from_secs(20), app.stop())
            .await
            .expect("the graceful shutdown did not wait for the stream");
        assert!(open.ends_within(Duration::from_secs(5)).await);
    }
}
