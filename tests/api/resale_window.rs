//! Issue 34, item 2 (ARCHITECTURE.md §6, §19): a lease bought on resale keeps the
//! seller's window as its outer bound; converting it past that is refused
//! (409 `resale_window`), since nobody bought the time after it from the
//! provider. The seller's lease shows `vacate_at` from the moment it is
//! listed, and a cancel that loses the race to a sale is a conflict.

use crate::fleet::{self, create_node, h100_node, register};
use crate::helpers::*;
use chrono::{DateTime, Duration, DurationRound, Utc};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::str::FromStr;
use uuid::Uuid;

const H100: (&str, bool) = ("H100-SXM5-80GB", false);

/// Fast ticks, and nodes that outlive the clock jumping hours ahead without
/// a heartbeat (the jump is what lets the listed time come).
fn fast_long_lived_nodes(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.node_timeout_s = 86_400;
}

fn slice() -> Value {
    json!({"tflops": 100, "vram_gb": 16, "isolation": "whole"})
}

fn reserved(start: DateTime<Utc>, hours: i64) -> Value {
    json!({"mode": "reserved", "region": "eu-west", "start_at": start, "duration_s": hours * 3600,
           "resources": slice()})
}

/// The first whole hour at least two hours ahead of the market's clock.
fn window_start(app: &TestApp) -> DateTime<Utc> {
    (app.market_now() + Duration::hours(2))
        .duration_trunc(Duration::hours(1))
        .unwrap()
        + Duration::hours(1)
}

fn time(v: &Value) -> Option<DateTime<Utc>> {
    v.as_str()
        .map(|s| s.parse().unwrap_or_else(|_| panic!("a time: {v}")))
}

fn id(v: &Value) -> Uuid {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an id: {v}"))
}

/// Lists `[from, …)` of `lease` at 0.8 × its price; returns the listing id.
async fn list(app: &TestApp, seller: &str, lease: Uuid, from: DateTime<Utc>) -> Uuid {
    let view = fleet::lease(app, seller, lease).await;
    let price = Decimal::from_str(view["price_per_hour"].as_str().unwrap()).unwrap();
    let ask = (price * Decimal::from_str("0.8").unwrap()).round_dp(6);
    let r = app
        .post(
            "/v1/resale-listings",
            Some(seller),
            json!({"lease_id": lease, "from": from, "ask_per_hour": ask.to_string()}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    id(&r.body["id"])
}

async fn cancel(app: &TestApp, seller: &str, listing: Uuid) -> Reply {
    app.request(
        reqwest::Method::DELETE,
        &format!("/v1/resale-listings/{listing}"),
        Some(seller),
        None,
    )
    .await
}

on_both_databases_with! { fast_long_lived_nodes =>
    async fn a_lease_bought_on_resale_is_not_converted_past_the_sellers_window(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[H100]).await;
        let (other, _) = app.buyer_with(&m.admin, "1000").await;
        let start = window_start(&app);
        let r = app.order(&m.buyer, reserved(start, 3)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let seller_lease = id(&r.body["lease_id"]);
        let window_end = start + Duration::hours(3);
        let from = start + Duration::hours(1);
        list(&app, &m.buyer, seller_lease, from).await;

        // Once the listed time has come, an on-demand order ending just
        // before the window does buys it; the minute left is too short to
        // stay listed, so the slice looks free from there on.
        app.advance_clock((from - app.market_now() + Duration::seconds(10)).to_std().unwrap());
        let now = app.market_now();
        let duration_s = (window_end - now).num_seconds() - 60;
        let r = app.order(&other, json!({"mode": "on_demand", "region": "eu-west", "duration_s": duration_s,
                                          "resources": slice()})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let order = id(&r.body["id"]);
        let bought = id(&r.body["lease_id"]);
        let fills = app.get(&format!("/v1/orders/{order}/fills"), Some(&other)).await;
        assert_eq!(fills.body[0]["report"]["source"], "resale", "{}", fills.body);
        let r = fleet::report(&app, &node, bought,
            json!({"at": app.market_now(), "status": "provisioned", "device": "GPU-0"})).await;
        assert!(r.status.is_success(), "{}", r.body);
        fleet::eventually(20, "the bought lease running", || async {
            fleet::lease(&app, &other, bought).await["state"] == "running"
        }).await;
        let before = fleet::lease(&app, &other, bought).await;

        // Reserved past the seller's window: refused, and nothing changed.
        let next_hour = (app.market_now() + Duration::hours(1)).duration_trunc(Duration::hours(1)).unwrap()
            + Duration::hours(1);
        assert!(next_hour >= window_end, "{next_hour} inside the window ending {window_end}");
        let r = app.post(&format!("/v1/leases/{bought}/convert"), Some(&other),
            json!({"to": "reserved", "from": next_hour, "until": next_hour + Duration::hours(1)})).await;
        r.assert_code(409, "resale_window");
        let after = fleet::lease(&app, &other, bought).await;
        assert_eq!(after["ends_at"], before["ends_at"]);
        assert_eq!(after["price_per_hour"], before["price_per_hour"]);
        assert_eq!(after["conversions"], json!([]));
        assert!(time(&after["ends_at"]).unwrap() <= window_end, "{after}");
    }

    async fn the_sellers_lease_shows_vacate_at_and_a_cancel_that_lost_to_a_sale_is_a_conflict(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[H100]).await;
        let (other, _) = app.buyer_with(&m.admin, "1000").await;
        let start = window_start(&app);
        let r = app.order(&m.buyer, reserved(start, 3)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let seller_lease = id(&r.body["lease_id"]);
        let window_end = start + Duration::hours(3);
        let view = fleet::lease(&app, &m.buyer, seller_lease).await;
        assert_eq!(view["vacate_at"], Value::Null, "{view}");

        // Listed: the lease says when it gives the slice up; its window, still owed, is unchanged.
        let from = start + Duration::hours(1);
        let listing = list(&app, &m.buyer, seller_lease, from).await;
        let view = fleet::lease(&app, &m.buyer, seller_lease).await;
        assert_eq!(time(&view["vacate_at"]), Some(from), "{view}");
        assert_eq!(time(&view["ends_at"]), Some(window_end), "{view}");
        let page = app.get("/v1/leases", Some(&m.buyer)).await;
        let listed = page.body["items"].as_array().unwrap().iter()
            .find(|l| l["id"] == seller_lease.to_string().as_str()).cloned().unwrap();
        assert_eq!(time(&listed["vacate_at"]), Some(from), "{listed}");
        // Cancelled: it runs on to its window's end again.
        let r = cancel(&app, &m.buyer, listing).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let view = fleet::lease(&app, &m.buyer, seller_lease).await;
        assert_eq!(view["vacate_at"], Value::Null, "{view}");

        // Listed again and sold whole to a reserved order.
        let listing = list(&app, &m.buyer, seller_lease, from).await;
        let r = app.order(&other, reserved(from, 2)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let view = fleet::lease(&app, &m.buyer, seller_lease).await;
        assert_eq!(time(&view["vacate_at"]), Some(from), "{view}");
        // The cancel read the row while it was still open and reached the
        // engine after the sale: the interleaving the race produces, pinned
        // by putting the row back as that request saw it.
        app.execute("UPDATE resale_listings SET state = 'open' WHERE id = $1", listing).await;
        cancel(&app, &m.buyer, listing).await.assert_code(409, "listing_closed");
        // A listing that never existed is still 404.
        cancel(&app, &m.buyer, Uuid::now_v7()).await.assert_code(404, "not_found");
    }
}
