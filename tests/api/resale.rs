//! Resale over HTTP (DESIGN §6): a seller lists the tail of its reservation,
//! another buyer's reserved order takes part of it at the ask, what is left
//! stays listed, and every refusal has its code.

use crate::fleet::{self, create_node, h100_node, on_both_databases_fast, register};
use crate::helpers::*;
use chrono::{DateTime, Duration, DurationRound, Utc};
use gpuex::db::{dispatch, Db, Money};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::str::FromStr;
use uuid::Uuid;

const H100: (&str, bool) = ("H100-SXM5-80GB", false);

/// The first whole hour at least two hours from now.
fn window_start() -> DateTime<Utc> {
    (Utc::now() + Duration::hours(2))
        .duration_trunc(Duration::hours(1))
        .unwrap()
        + Duration::hours(1)
}

fn reserved(start: DateTime<Utc>, hours: i64) -> Value {
    json!({"mode": "reserved", "region": "eu-west", "start_at": start, "duration_s": hours * 3600,
           "resources": {"tflops": 100, "vram_gb": 16, "isolation": "whole"}})
}

fn decimal(v: &Value) -> Decimal {
    Decimal::from_str(v.as_str().unwrap_or_else(|| panic!("not a decimal: {v}"))).unwrap()
}

/// Every ledger entry sums to zero.
async fn assert_ledger_balances(app: &TestApp) {
    let db = Db::connect(&app.database_url).await.unwrap();
    let postings: Vec<(Uuid, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT entry_id, amount FROM postings").fetch_all(pool).await
    })
    .unwrap();
    let mut per_entry = std::collections::HashMap::<Uuid, Decimal>::new();
    for (entry, amount) in postings {
        *per_entry.entry(entry).or_default() += amount.0;
    }
    assert!(per_entry.values().all(|sum| sum.is_zero()), "{per_entry:?}");
    db.close().await;
}

on_both_databases_fast! {
    async fn a_listed_tail_sells_to_a_reserved_order_at_the_ask_and_the_rest_stays_listed(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[H100]).await;
        let (other, _) = app.buyer_with(&m.admin, "1000").await;
        let start = window_start();
        let r = app.order(&m.buyer, reserved(start, 4)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let seller_lease = r.body["lease_id"].as_str().unwrap().to_owned();
        let reserved_price = decimal(&app.get(&format!("/v1/leases/{seller_lease}"), Some(&m.buyer)).await.body["price_per_hour"]);
        let ask = (reserved_price * Decimal::from_str("0.8").unwrap()).round_dp(6);
        let from = start + Duration::hours(2);

        // Refusals first: each with its code.
        let listing = |from: DateTime<Utc>, ask: Decimal| json!({"lease_id": seller_lease, "from": from, "ask_per_hour": ask.to_string()});
        let cap = reserved_price * Decimal::from_str("0.9").unwrap();
        app.post("/v1/resale-listings", Some(&m.buyer), listing(from, cap.round_dp(6) + Decimal::new(1, 3))).await.assert_code(422, "ask_too_high");
        app.post("/v1/resale-listings", Some(&m.buyer), listing(from + Duration::minutes(30), ask)).await.assert_problem(422, Some("from"));
        app.post("/v1/resale-listings", Some(&m.buyer), listing(start + Duration::hours(4), ask)).await.assert_code(422, "listing_outside_window");
        app.post("/v1/resale-listings", Some(&other), listing(from, ask)).await.assert_code(404, "not_found");
        let r = app.post("/v1/resale-listings", Some(&m.buyer), json!({"lease_id": seller_lease, "from": from, "ask_per_hour": "-1"})).await;
        r.assert_problem(422, Some("ask_per_hour"));

        let r = app.post("/v1/resale-listings", Some(&m.buyer), listing(from, ask)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "open");
        let listing_id = r.body["id"].as_str().unwrap().to_owned();
        app.post("/v1/resale-listings", Some(&m.buyer), listing(from, ask)).await.assert_code(409, "already_listed");
        // The seller's lease now gives the slice up at `from`.
        let offers = app.get("/v1/market/resale", None).await;
        assert_eq!(offers.status, 200);
        let offer = &offers.body.as_array().unwrap()[0];
        assert_eq!(offer["id"], listing_id.as_str());
        assert_eq!(decimal(&offer["ask_per_hour"]), ask);
        assert!(offer.get("seller").is_none() && offer.get("seller_id").is_none(), "{offer}");
        // The book shows it as a resale ask of its pool.
        let book = app.get("/v1/market/book", None).await;
        let pool = book.body.as_array().unwrap().iter()
            .find(|p| p["gpu_model"] == "H100-SXM5-80GB" && p["region"] == "eu-west").unwrap();
        assert_eq!(pool["resale_asks"][0]["id"], listing_id.as_str(), "{pool}");
        assert_ledger_balances(&app).await;

        // The quote names the listing before the buyer commits.
        let q = app.post("/v1/quotes", Some(&other), reserved(from, 1)).await;
        assert_eq!(q.status, 200, "{}", q.body);
        assert_eq!(q.body["slice"]["source"], "resale", "{}", q.body);
        assert_eq!(q.body["slice"]["listing_id"], listing_id.as_str(), "{}", q.body);
        // Another buyer's hour inside it is filled from the listing, at the ask.
        let r = app.order(&other, reserved(from, 1)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let order_id = r.body["id"].as_str().unwrap().to_owned();
        let bought = r.body["lease_id"].as_str().unwrap().to_owned();
        let lease = app.get(&format!("/v1/leases/{bought}"), Some(&other)).await;
        let price = decimal(&lease.body["price_per_hour"]);
        assert!(price <= ask && ask - price < Decimal::new(1, 6), "{price} vs {ask}");
        assert_eq!(lease.body["node_id"], node.id.to_string());
        let fills = app.get(&format!("/v1/orders/{order_id}/fills"), Some(&other)).await;
        let report = &fills.body.as_array().unwrap()[0]["report"];
        assert_eq!(report["source"], "resale", "{report}");
        assert_eq!(report["listing_id"], listing_id.as_str(), "{report}");

        // Sold: the hour after it stays listed, as a listing of its own.
        let mine = app.get("/v1/resale-listings", Some(&m.buyer)).await;
        let items = mine.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 2, "{}", mine.body);
        let sold = items.iter().find(|l| l["id"] == listing_id.as_str()).unwrap();
        assert_eq!(sold["state"], "sold");
        assert_eq!(sold["sold_from"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), from);
        let rest = items.iter().find(|l| l["state"] == "open").unwrap();
        assert_eq!(rest["parent_id"], listing_id.as_str());
        assert_eq!(rest["from"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), from + Duration::hours(1));
        app.request(reqwest::Method::DELETE, &format!("/v1/resale-listings/{listing_id}"), Some(&m.buyer), None)
            .await
            .assert_code(409, "listing_closed");
        // The rest can be cancelled (it is hours ahead); it was not contiguous
        // with the seller's lease, so that lease still ends at `from`.
        let rest_id = rest["id"].as_str().unwrap();
        let r = app.request(reqwest::Method::DELETE, &format!("/v1/resale-listings/{rest_id}"), Some(&m.buyer), None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["state"], "cancelled");
        assert_eq!(app.get("/v1/market/resale", None).await.body, json!([]));

        // Events tell the seller.
        let events = app.get("/v1/events", Some(&m.buyer)).await;
        let kinds: Vec<&str> = events.body["items"].as_array().unwrap().iter().filter_map(|e| e["type"].as_str()).collect();
        for kind in ["listing.created", "listing.sold", "listing.cancelled"] {
            assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
        }
        assert_ledger_balances(&app).await;
    }

    async fn an_on_demand_lease_cannot_be_listed_and_an_ended_one_is_refused(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[H100]).await;
        let lease = fleet::place(&app, &m.buyer, fleet::order("on_demand")).await;
        let from = window_start();
        let body = json!({"lease_id": lease, "from": from, "ask_per_hour": "0.5"});
        app.post("/v1/resale-listings", Some(&m.buyer), body.clone()).await.assert_code(422, "not_reserved");
        let r = app.post(&format!("/v1/leases/{lease}/release"), Some(&m.buyer), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        app.post("/v1/resale-listings", Some(&m.buyer), body).await.assert_code(409, "lease_ended");
        app.post("/v1/resale-listings", Some(&m.buyer), json!({"lease_id": lease, "from": from})).await.assert_problem(422, None);
    }
}
