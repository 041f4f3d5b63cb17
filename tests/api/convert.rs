//! Mode conversion of a running lease (issue 17, item 4; ARCHITECTURE.md §3 "Mode
//! changes"): spot → on-demand keeps the slice and the workload, is no
//! longer preempted, and is charged spot before and on-demand after; every
//! refusal answers problem+json with its code.

use crate::fleet;
use crate::helpers::{on_both_databases_with, Reply, TestApp};
use crate::webhooks::{assert_signed, Receiver};
use chrono::{DateTime, Duration as Span, Utc};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;
use uuid::Uuid;

/// Short auction and billing intervals; nodes that stay up without heartbeats.
fn fast_without_heartbeats(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.node_timeout_s = 120;
}

fn dec(v: &Value) -> Decimal {
    Decimal::from_str(
        v.as_str()
            .unwrap_or_else(|| panic!("a decimal string: {v}")),
    )
    .expect("decimal")
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a time: {v}"))
}

fn whole() -> Value {
    json!({"tflops": 989, "vram_gb": 80, "isolation": "whole"})
}

async fn convert(app: &TestApp, token: &str, lease: Uuid, body: Value) -> Reply {
    app.post(&format!("/v1/leases/{lease}/convert"), Some(token), body)
        .await
}

/// Places an order and waits for its fill; returns (order, lease).
async fn filled(app: &TestApp, token: &str, body: Value) -> (Uuid, Uuid) {
    let r = app.order(token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let order: Uuid = r.body["id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("order id");
    for _ in 0..200 {
        let o = app
            .get(&format!("/v1/orders/{order}"), Some(token))
            .await
            .body;
        if o["state"] == "filled" {
            let lease = o["lease_id"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("a lease");
            return (order, lease);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("order {order} was not filled");
}

/// Reports the lease provisioned and waits until it runs.
async fn running(app: &TestApp, node: &fleet::Node, token: &str, lease: Uuid) {
    let r = fleet::report(app, node, lease, fleet::provisioned("GPU-0")).await;
    assert!(r.status.is_success(), "{}", r.body);
    fleet::eventually(20, "the lease running", || async {
        fleet::lease(app, token, lease).await["state"] == "running"
    })
    .await;
}

/// The start of the hour `hours` whole hours after the next one.
fn whole_hour_ahead(hours: i64) -> DateTime<Utc> {
    let now = Utc::now().timestamp();
    let next = (now / 3600 + 1) * 3600;
    DateTime::from_timestamp(next + hours * 3600, 0).expect("time")
}

/// The plain CSV export's lines of `lease`.
async fn lines_of(app: &TestApp, token: &str, lease: Uuid) -> Vec<BTreeMap<String, String>> {
    // Whole days either side: a reserved window may run past midnight.
    let (from, to) = (Utc::now() - Span::days(1), Utc::now() + Span::days(3));
    let url = format!(
        "{}/v1/billing/export?format=csv&from={}&to={}",
        app.address,
        from.format("%Y-%m-%dT00:00:00Z"),
        to.format("%Y-%m-%dT00:00:00Z")
    );
    let r = app
        .client
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .expect("export");
    assert_eq!(r.status(), 200);
    let text = r.text().await.expect("body");
    let mut rows = text.lines();
    let header: Vec<String> = rows
        .next()
        .expect("header")
        .split(',')
        .map(str::to_owned)
        .collect();
    rows.map(|row| {
        header
            .iter()
            .cloned()
            .zip(row.split(',').map(str::to_owned))
            .collect::<BTreeMap<_, _>>()
    })
    .filter(|row| row.get("lease_id").map(String::as_str) == Some(lease.to_string().as_str()))
    .collect()
}

async fn trial_balance(app: &TestApp) -> Decimal {
    let db = gpuex::db::Db::connect(&app.database_url).await.expect("db");
    gpuex::billing::ledger::trial_balance(&db)
        .await
        .expect("trial balance")
}

on_both_databases_with! { fast_without_heartbeats =>
    async fn a_running_spot_lease_converts_to_on_demand_keeps_its_slice_and_is_no_longer_preempted(app) {
        let m = fleet::market(&app).await;
        let node = fleet::create_node(&app, &m.provider, fleet::h100_node(1, "whole")).await;
        fleet::register(&app, &node, &[("H100-SXM5-80GB", false)]).await;
        let receiver = Receiver::start().await;
        let hook = app.post("/v1/webhooks", Some(&m.buyer), json!({"url": receiver.url, "events": ["lease.converted"]})).await;
        assert_eq!(hook.status, 201, "{}", hook.body);
        let secret = hook.body["secret"].as_str().expect("secret").to_owned();
        let (order, lease) = filled(&app, &m.buyer, json!({"mode": "spot", "region": "eu-west", "max_price": "2.1", "resources": whole()})).await;
        running(&app, &node, &m.buyer, lease).await;
        let spot = fleet::lease(&app, &m.buyer, lease).await;
        // Alone in the auction it pays the floor: 0.5 × list.
        let list = dec(&spot["price_per_hour"]) / Decimal::new(5, 1);
        tokio::time::sleep(Duration::from_millis(2500)).await;

        let r = convert(&app, &m.buyer, lease, json!({"to": "on_demand"})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let converted = r.body.clone();
        assert_eq!(converted["mode"], "on_demand", "{converted}");
        assert_eq!(converted["state"], "running");
        assert_eq!(converted["placement"], spot["placement"], "the slice stays");
        assert_eq!(dec(&converted["price_per_hour"]), list * Decimal::new(18, 1));
        let c = &converted["conversions"][0];
        assert_eq!((c["from_mode"].as_str(), c["to_mode"].as_str()), (Some("spot"), Some("on_demand")), "{converted}");
        assert_eq!(dec(&c["price_per_hour_before"]), dec(&spot["price_per_hour"]));
        assert_eq!(dec(&c["price_per_hour_after"]), dec(&converted["price_per_hour"]));
        assert_eq!(c["at"], c["effective_at"]);
        let converted_at = time(&c["at"]);
        // The spot bid left the auction; the fill report shows the conversion.
        assert_eq!(app.get("/v1/market/stats", None).await.body["open_orders"], 0);
        let fills = app.get(&format!("/v1/orders/{order}/fills"), Some(&m.buyer)).await;
        assert_eq!(fills.body[0]["conversions"][0]["to_mode"], "on_demand", "{}", fills.body);
        // The on-demand hour is held now, not the bid's max_price.
        let held = dec(&app.get("/v1/wallet", Some(&m.buyer)).await.body["held"]);
        assert!(held <= dec(&converted["price_per_hour"]) && held > Decimal::new(21, 1), "held {held}");

        // Higher-priority claims no longer take it.
        let od = app.order(&m.buyer, json!({"mode": "on_demand", "region": "eu-west", "resources": whole()})).await;
        od.assert_code(422, "no_capacity");
        let start = whole_hour_ahead(1);
        let rv = app.order(&m.buyer, json!({"mode": "reserved", "region": "eu-west", "start_at": start, "duration_s": 3600, "resources": whole()})).await;
        rv.assert_code(422, "no_capacity");
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let now = fleet::lease(&app, &m.buyer, lease).await;
        assert_eq!(now["state"], "running", "{now}");
        assert!(now["preempt_at"].is_null(), "{now}");

        let r = app.post(&format!("/v1/leases/{lease}/release"), Some(&m.buyer), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        // Charged spot up to the conversion and on-demand after it.
        let lines = lines_of(&app, &m.buyer, lease).await;
        let (mut spot_s, mut od_s) = (0, 0);
        for line in &lines {
            let (start, end) = (time(&json!(line["period_start"])), time(&json!(line["period_end"])));
            let (unit_price, list_price) = (dec(&json!(line["unit_price"])), dec(&json!(line["list_unit_price"])));
            match line["mode"].as_str() {
                "spot" => {
                    assert!(end <= converted_at, "{line:?}");
                    assert_eq!(unit_price, list_price * Decimal::new(5, 1), "{line:?}");
                    spot_s += (end - start).num_seconds();
                }
                "on_demand" => {
                    assert!(start >= converted_at, "{line:?}");
                    assert_eq!(unit_price, list_price * Decimal::new(18, 1), "{line:?}");
                    od_s += (end - start).num_seconds();
                }
                other => panic!("a {other} line: {line:?}"),
            }
        }
        assert!(spot_s >= 2 && od_s >= 2, "spot {spot_s} s, on-demand {od_s} s: {lines:?}");
        let total: Decimal = lines.iter().map(|l| dec(&json!(l["amount"]))).sum();
        let ended = fleet::lease(&app, &m.buyer, lease).await;
        assert_eq!(dec(&ended["usage"]["charged"]), total);
        let w = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        assert_eq!(dec(&w["held"]), Decimal::ZERO, "{w}");
        assert_eq!(dec(&w["balance"]), Decimal::from(1000) - total, "{w}");
        assert_eq!(trial_balance(&app).await, Decimal::ZERO);
        // The buyer heard of it.
        let events = app.get("/v1/events?limit=500&after=0", Some(&m.buyer)).await.body;
        let told = events["items"].as_array().expect("items").iter()
            .find(|e| e["type"] == "lease.converted").cloned().expect("a lease.converted event");
        assert_eq!(told["lease_id"], json!(lease));
        assert_eq!(told["data"]["to_mode"], "on_demand", "{told}");
        // And so did its webhook, signed.
        let mut delivered = None;
        for _ in 0..200 {
            delivered = receiver.accepted().into_iter().find(|r| r.event_type == "lease.converted");
            if delivered.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let delivered = delivered.expect("lease.converted was delivered");
        assert_signed(&secret, &delivered);
        let body: Value = serde_json::from_str(&delivered.body).expect("json");
        assert_eq!(body, told);

        // An ended lease, someone else's, or none at all.
        convert(&app, &m.buyer, lease, json!({"to": "on_demand"})).await.assert_code(409, "lease_ended");
        let (stranger, _) = app.user("buyer").await;
        convert(&app, &stranger, lease, json!({"to": "on_demand"})).await.assert_code(404, "not_found");
        convert(&app, &m.buyer, Uuid::now_v7(), json!({"to": "on_demand"})).await.assert_code(404, "not_found");
    }

    async fn every_refused_conversion_answers_its_code_and_on_demand_converts_to_reserved(app) {
        let m = fleet::market(&app).await;
        let node = fleet::create_node(&app, &m.provider, fleet::h100_node(3, "whole")).await;
        fleet::register(&app, &node, &[("H100-SXM5-80GB", false), ("H100-SXM5-80GB", false), ("H100-SXM5-80GB", false)]).await;
        // A buyer who can hold an on-demand hour and a little more.
        let (poor, _) = app.buyer_with(&m.admin, "12").await;
        let (_, on_demand) = filled(&app, &poor, json!({"mode": "on_demand", "region": "eu-west", "resources": whole()})).await;
        running(&app, &node, &poor, on_demand).await;
        let (_, b) = filled(&app, &m.buyer, json!({"mode": "spot", "region": "eu-west", "max_price": "2.1", "resources": whole()})).await;
        let (_, c) = filled(&app, &m.buyer, json!({"mode": "spot", "region": "eu-west", "max_price": "2.1", "resources": whole()})).await;
        running(&app, &node, &m.buyer, b).await;
        running(&app, &node, &m.buyer, c).await;

        // Bodies the schema refuses name their field.
        convert(&app, &poor, on_demand, json!({"to": "reserved"})).await.assert_problem(422, Some("from"));
        let from = whole_hour_ahead(1);
        let until = from + Span::hours(2);
        convert(&app, &poor, on_demand, json!({"to": "reserved", "from": from + Span::minutes(30), "until": until})).await.assert_problem(422, Some("from"));
        convert(&app, &poor, on_demand, json!({"to": "reserved", "from": from, "until": from})).await.assert_problem(422, Some("until"));
        convert(&app, &poor, on_demand, json!({"to": "reserved", "from": whole_hour_ahead(-1), "until": until})).await.assert_problem(422, Some("from"));
        convert(&app, &poor, on_demand, json!({"to": "on_demand", "until": until})).await.assert_problem(422, Some("until"));
        convert(&app, &poor, on_demand, json!({"to": "reserved", "from": from, "until": until, "extra": 1})).await.assert_problem(422, Some("extra"));
        // Conversions that do not exist.
        convert(&app, &poor, on_demand, json!({"to": "on_demand"})).await.assert_code(422, "conversion_not_allowed");
        convert(&app, &poor, on_demand, json!({"to": "spot"})).await.assert_code(422, "conversion_not_allowed");
        convert(&app, &m.buyer, b, json!({"to": "reserved", "from": from, "until": until})).await.assert_code(422, "conversion_not_allowed");
        // Seven days reserved is more than the poor wallet can hold.
        convert(&app, &poor, on_demand, json!({"to": "reserved", "from": from, "until": from + Span::days(7)})).await.assert_code(422, "insufficient_funds");

        // On demand to reserved: on-demand until `from`, reserved to `until`, then it ends.
        let held_before = dec(&app.get("/v1/wallet", Some(&poor)).await.body["held"]);
        let r = convert(&app, &poor, on_demand, json!({"to": "reserved", "from": from, "until": until})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["mode"], "on_demand", "reserved only from `from`: {}", r.body);
        assert_eq!(time(&r.body["ends_at"]), until);
        let conv = &r.body["conversions"][0];
        assert_eq!((conv["to_mode"].as_str(), time(&conv["effective_at"])), (Some("reserved"), from), "{}", r.body);
        let od_price = dec(&r.body["price_per_hour"]);
        assert_eq!(dec(&conv["price_per_hour_after"]), od_price / Decimal::new(18, 1) * Decimal::new(85, 2));
        // The reserved part is held now, like any reservation.
        let held_after = dec(&app.get("/v1/wallet", Some(&poor)).await.body["held"]);
        assert!(held_after - held_before >= dec(&conv["price_per_hour_after"]) * Decimal::from(2) - Decimal::ONE, "{held_before} → {held_after}");
        convert(&app, &poor, on_demand, json!({"to": "reserved", "from": from, "until": until})).await.assert_code(422, "conversion_not_allowed");

        // On-demand takes one spot lease after notice: it can no longer convert.
        let od = app.order(&m.buyer, json!({"mode": "on_demand", "region": "eu-west", "resources": whole()})).await;
        assert_eq!(od.status, 201, "{}", od.body);
        let mut noticed = None;
        for _ in 0..200 {
            for id in [b, c] {
                if fleet::lease(&app, &m.buyer, id).await["state"] == "preempting" {
                    noticed = Some(id);
                }
            }
            if noticed.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let noticed = noticed.expect("a spot lease is noticed");
        convert(&app, &m.buyer, noticed, json!({"to": "on_demand"})).await.assert_code(409, "already_noticed");
        // A reservation booked over the other: its slice is claimed later.
        let other = if noticed == b { c } else { b };
        let start = whole_hour_ahead(2);
        let rv = app.order(&m.buyer, json!({"mode": "reserved", "region": "eu-west", "start_at": start, "duration_s": 3600, "resources": whole()})).await;
        assert_eq!(rv.status, 201, "{}", rv.body);
        assert_eq!(rv.body["state"], "filled", "{}", rv.body);
        convert(&app, &m.buyer, other, json!({"to": "on_demand"})).await.assert_code(409, "slice_booked");
        assert_eq!(fleet::lease(&app, &m.buyer, other).await["mode"], "spot");

        // Released before `from`, the reserved window is still owed whole.
        let r = app.post(&format!("/v1/leases/{on_demand}/release"), Some(&poor), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let lines = lines_of(&app, &poor, on_demand).await;
        let reserved: Decimal = lines.iter().filter(|l| l["mode"] == "reserved").map(|l| dec(&json!(l["amount"]))).sum();
        // Two hours' lines, each rounded once.
        let owed = dec(&conv["price_per_hour_after"]) * Decimal::from(2);
        assert!((reserved - owed).abs() <= Decimal::new(1, 5), "{reserved} for {owed}: {lines:?}");
        assert!(lines.iter().filter(|l| l["mode"] == "reserved").all(|l| time(&json!(l["period_start"])) >= from));
        assert_eq!(dec(&app.get("/v1/wallet", Some(&poor)).await.body["held"]), Decimal::ZERO);
        assert_eq!(trial_balance(&app).await, Decimal::ZERO);
    }
}
