//! Issue 40 item 4, ARCHITECTURE.md §22 "Order types": `time_in_force`
//! (gtc, ioc, fok, gtt with `expires_at`) and `count` units placed together
//! (`all_or_none` or `min_count`), through the real server on both databases.

use crate::fleet::{self, eventually};
use crate::helpers::{on_both_databases, TestApp};
use chrono::{DateTime, Duration, DurationRound, Utc};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use uuid::Uuid;

/// A whole H100 in `region`, on demand unless the body says otherwise.
fn whole_h100(region: &str) -> Value {
    json!({"mode": "on_demand", "region": region,
           "resources": {"tflops": 900, "vram_gb": 80, "gpu_model": "H100-SXM5-80GB"}})
}

fn with(mut body: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

fn ids(v: &Value) -> Vec<Uuid> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().parse().unwrap())
        .collect()
}

fn money(v: &Value) -> Decimal {
    v.as_str().unwrap().parse().unwrap()
}

async fn available(app: &TestApp, buyer: &str) -> Decimal {
    money(&app.get("/v1/wallet", Some(buyer)).await.body["available"])
}

async fn live_leases(app: &TestApp, buyer: &str) -> usize {
    let leases = app.get("/v1/leases", Some(buyer)).await.body;
    leases["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| !matches!(l["state"].as_str(), Some("ended" | "failed")))
        .count()
}

on_both_databases! {
    async fn units_are_placed_together_or_not_at_all_and_the_quote_says_how_many_fit(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"); 3]).await;
        // The quote of five says three fit now, and what three cost together.
        let quote = app.post("/v1/quotes", None, with(whole_h100("eu-west"), json!({"count": 5}))).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        let one = money(&quote.body["slice"]["price_per_hour"]);
        assert_eq!(quote.body["units"]["count"], 5, "{}", quote.body);
        assert_eq!(quote.body["units"]["placeable_now"], 3, "{}", quote.body);
        assert_eq!(money(&quote.body["units"]["price_per_hour"]), one * Decimal::from(3));
        // Fill-or-kill of four: refused whole, nothing held.
        let before = available(&app, &m.buyer).await;
        let fok = app.order(&m.buyer, with(whole_h100("eu-west"), json!({"count": 4, "time_in_force": "fok"}))).await;
        fok.assert_code(422, "no_capacity");
        assert_eq!(live_leases(&app, &m.buyer).await, 0);
        assert_eq!(available(&app, &m.buyer).await, before);
        // All-or-none of two: both placed, on two GPUs, shown as lease_ids.
        let pair = app.order(&m.buyer, with(whole_h100("eu-west"), json!({"count": 2, "all_or_none": true}))).await;
        assert_eq!(pair.status, 201, "{}", pair.body);
        assert_eq!(pair.body["state"], "filled", "{}", pair.body);
        let legs = ids(&pair.body["lease_ids"]);
        assert_eq!(legs.len(), 2, "{}", pair.body);
        let mut gpus = Vec::new();
        for leg in &legs {
            let lease = fleet::lease(&app, &m.buyer, *leg).await;
            assert_eq!(lease["order_id"], pair.body["id"], "{lease}");
            gpus.push(lease["placement"]["gpus"].clone());
        }
        assert_ne!(gpus[0], gpus[1]);
        assert_eq!(available(&app, &m.buyer).await, before - one * Decimal::from(2), "one hour held per unit");
        // Each fill reports the order's type.
        let order = pair.body["id"].as_str().unwrap();
        let fills = app.get(&format!("/v1/orders/{order}/fills"), Some(&m.buyer)).await;
        assert_eq!(fills.status, 200, "{}", fills.body);
        let fills = fills.body.as_array().unwrap().clone();
        assert_eq!(fills.len(), 2);
        for f in &fills {
            assert_eq!(f["order_type"], json!({"time_in_force": "ioc", "expires_at": null, "count": 2, "min_count": 2}));
        }
        // Immediate-or-cancel of three with at least one: the one GPU left.
        let ioc = app.order(&m.buyer, with(whole_h100("eu-west"),
            json!({"count": 3, "min_count": 1, "time_in_force": "ioc"}))).await;
        assert_eq!(ioc.status, 201, "{}", ioc.body);
        assert_eq!(ids(&ioc.body["lease_ids"]).len(), 1, "{}", ioc.body);
        // The read-back view agrees.
        let read = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
        assert_eq!(ids(&read["lease_ids"]), legs);
    }

    async fn a_gtc_gang_waits_until_all_of_it_fits_then_fills_whole(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"); 2]).await;
        let first = fleet::place(&app, &m.buyer, whole_h100("eu-west")).await;
        let gang = app.order(&m.buyer, with(whole_h100("eu-west"),
            json!({"count": 2, "all_or_none": true, "time_in_force": "gtc"}))).await;
        assert_eq!(gang.status, 201, "{}", gang.body);
        assert_eq!(gang.body["state"], "open", "one free GPU is not enough: {}", gang.body);
        assert_eq!(gang.body["lease_ids"], json!([]));
        let order = gang.body["id"].as_str().unwrap().to_owned();
        let r = app.post(&format!("/v1/leases/{first}/release"), Some(&m.buyer), json!({})).await;
        assert!(r.status.is_success(), "{}", r.body);
        eventually(10, "the gang to fill", || async {
            app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body["state"] == "filled"
        })
        .await;
        let view = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
        assert_eq!(ids(&view["lease_ids"]).len(), 2, "{view}");
        let fills = app.get(&format!("/v1/orders/{order}/fills"), Some(&m.buyer)).await.body;
        let expires = fills[0]["order_type"]["expires_at"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap();
        let created = view["created_at"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap();
        assert_eq!(fills[0]["order_type"]["time_in_force"], "gtc");
        assert_eq!(expires - created, Duration::days(7), "good till cancelled waits at most 7 days");
    }

    async fn a_gtt_order_expires_at_its_time_holding_nothing(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let first = fleet::place(&app, &m.buyer, whole_h100("eu-west")).await;
        let before = available(&app, &m.buyer).await;
        let expires_at = app.market_now() + Duration::seconds(120);
        let gtt = app.order(&m.buyer, with(whole_h100("eu-west"),
            json!({"time_in_force": "gtt", "expires_at": expires_at}))).await;
        assert_eq!(gtt.status, 201, "{}", gtt.body);
        assert_eq!(gtt.body["state"], "open", "{}", gtt.body);
        assert_eq!(available(&app, &m.buyer).await, before, "a waiting order holds nothing");
        let order = gtt.body["id"].as_str().unwrap().to_owned();
        app.advance_clock(std::time::Duration::from_secs(121));
        eventually(10, "the order to expire", || async {
            app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body["state"] == "expired"
        })
        .await;
        // Capacity freed after its time goes to no one.
        let r = app.post(&format!("/v1/leases/{first}/release"), Some(&m.buyer), json!({})).await;
        assert!(r.status.is_success(), "{}", r.body);
        let view = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
        assert_eq!(view["state"], "expired");
        assert_eq!(view["lease_ids"], json!([]));
    }

    async fn a_waiting_gang_the_wallet_can_no_longer_cover_is_refused_with_no_leg_left(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"); 2]).await;
        app.node("us-east", &[("H100-SXM5-80GB", "whole")]).await;
        let hour = (app.market_now() + Duration::hours(2)).duration_trunc(Duration::hours(1)).unwrap();
        let reserved = json!({"mode": "reserved", "region": "us-east", "start_at": hour, "duration_s": 4 * 3600,
                              "resources": {"tflops": 900, "vram_gb": 80, "gpu_model": "H100-SXM5-80GB"}});
        let quote = |body: Value| { let app = &app; async move {
            let q = app.post("/v1/quotes", None, body).await;
            assert_eq!(q.status, 200, "{}", q.body);
            money(&q.body["slice"]["hold"])
        }};
        let p = quote(whole_h100("eu-west")).await;
        let y = quote(reserved.clone()).await;
        assert!(y >= p * Decimal::new(15, 1), "the reservation holds at least 1.5 units' worth");
        // Enough for the gang while it waits, one and a half units once the
        // reservation is held too.
        let wallet = y + p * Decimal::new(15, 1);
        let (buyer, _) = app.buyer_with(&m.admin, &wallet.to_string()).await;
        let first = fleet::place(&app, &buyer, whole_h100("eu-west")).await;
        let gang = app.order(&buyer, with(whole_h100("eu-west"),
            json!({"count": 2, "all_or_none": true, "time_in_force": "gtc"}))).await;
        assert_eq!(gang.body["state"], "open", "{}", gang.body);
        let order = gang.body["id"].as_str().unwrap().to_owned();
        fleet::place(&app, &buyer, reserved).await;
        let r = app.post(&format!("/v1/leases/{first}/release"), Some(&buyer), json!({})).await;
        assert!(r.status.is_success(), "{}", r.body);
        eventually(10, "the gang to be refused", || async {
            app.get(&format!("/v1/orders/{order}"), Some(&buyer)).await.body["state"] == "rejected"
        })
        .await;
        let view = app.get(&format!("/v1/orders/{order}"), Some(&buyer)).await.body;
        assert_eq!(view["reject_reason"], "insufficient_funds", "{view}");
        // Neither leg stays: the one whose hold was placed is released too.
        eventually(10, "both legs released", || async { live_leases(&app, &buyer).await == 1 }).await;
        let journal_balances = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(journal_balances.status, 200);
        assert_eq!(
            available(&app, &buyer).await + y,
            money(&journal_balances.body["balance"]),
            "only the reservation is held: {}", journal_balances.body
        );
    }

    async fn order_type_fields_are_checked_and_named(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let now = app.market_now();
        let hour = (now + Duration::hours(2)).duration_trunc(Duration::hours(1)).unwrap();
        let base = whole_h100("eu-west");
        for (extra, field) in [
            (json!({"time_in_force": "gtc", "max_wait_s": 60}), "max_wait_s"),
            (json!({"time_in_force": "gtt"}), "expires_at"),
            (json!({"time_in_force": "gtt", "expires_at": now - Duration::seconds(1)}), "expires_at"),
            (json!({"time_in_force": "gtt", "expires_at": now + Duration::days(8)}), "expires_at"),
            (json!({"time_in_force": "ioc", "expires_at": now + Duration::hours(1)}), "expires_at"),
            (json!({"count": 65}), "count"),
            (json!({"count": 0}), "count"),
            (json!({"count": 2, "all_or_none": true, "min_count": 1}), "min_count"),
            (json!({"count": 2, "min_count": 3}), "min_count"),
            (json!({"count": 3, "min_count": 2, "time_in_force": "fok"}), "min_count"),
            (json!({"mode": "pooled", "qos": "realtime", "time_in_force": "gtc",
                    "resources": {"tflops": 10, "vram_gb": 4}}), "time_in_force"),
            (json!({"mode": "spot", "max_price": "5", "time_in_force": "ioc"}), "time_in_force"),
            (json!({"mode": "spot", "max_price": "5", "count": 2}), "count"),
            (json!({"mode": "reserved", "start_at": hour, "duration_s": 3600, "time_in_force": "gtc"}), "time_in_force"),
            (json!({"mode": "reserved", "start_at": hour, "duration_s": 3600, "count": 2}), "count"),
        ] {
            let r = app.order(&m.buyer, with(base.clone(), extra.clone())).await;
            r.assert_problem(422, Some(field));
        }
        let q = app.post("/v1/quotes", None, with(base.clone(), json!({"count": 65}))).await;
        q.assert_problem(422, Some("count"));
        assert_eq!(live_leases(&app, &m.buyer).await, 0);
        // A reservation may say fok: it is booked at once or refused.
        let fok = app.order(&m.buyer, with(base, json!({"mode": "reserved", "start_at": hour,
            "duration_s": 3600, "time_in_force": "fok"}))).await;
        assert_eq!(fok.status, 201, "{}", fok.body);
    }
}
