//! Resale over HTTP (ARCHITECTURE.md §6): a seller lists the tail of its reservation,
//! another buyer's reserved order takes part of it at the ask, what is left
//! stays listed, and every refusal has its code; the resold hours show in
//! both parties' FOCUS exports.

use crate::billing::{parse_csv, text};
use crate::fleet::{self, create_node, h100_node, on_both_databases_fast, register};
use crate::helpers::*;
use crate::sse::SseStream;
use crate::webhooks::{assert_signed, Receiver};
use chrono::{DateTime, Duration, DurationRound, Utc};
use gpuex::billing::{ledger, lines, Account};
use gpuex::db::{dispatch, Db, Money};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::str::FromStr;
use uuid::Uuid;

const H100: (&str, bool) = ("H100-SXM5-80GB", false);
/// Every line, whenever its hours fall.
const WHOLE: &str = "from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z";

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
        // The seller hears of its listings on every channel: a signed webhook
        // and the event stream, as well as the page.
        let receiver = Receiver::start().await;
        let hook = app.post("/v1/webhooks", Some(&m.buyer), json!({"url": receiver.url})).await;
        assert_eq!(hook.status, 201, "{}", hook.body);
        let secret = hook.body["secret"].as_str().unwrap().to_owned();
        let mut stream = SseStream::open(&app.client, &format!("{}/v1/events/stream", app.address), Some(&m.buyer), None).await;
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
        let listing_kinds = ["listing.created", "listing.sold", "listing.cancelled"];
        for kind in listing_kinds {
            assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
        }
        let streamed: Vec<String> = stream.drain(std::time::Duration::from_secs(2)).await.into_iter().filter_map(|e| e.event).collect();
        for kind in listing_kinds {
            assert!(streamed.iter().any(|k| k == kind), "{kind} missing from the stream: {streamed:?}");
            let mut delivered = None;
            for _ in 0..100 {
                delivered = receiver.accepted().into_iter().find(|r| r.event_type == kind);
                if delivered.is_some() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let delivered = delivered.unwrap_or_else(|| panic!("no {kind} reached the webhook"));
            assert_signed(&secret, &delivered);
        }
        assert_ledger_balances(&app).await;
    }

    async fn an_unsold_listing_expires_with_its_window_and_tells_the_seller_on_every_channel(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[H100]).await;
        let receiver = Receiver::start().await;
        let hook = app.post("/v1/webhooks", Some(&m.buyer), json!({"url": receiver.url})).await;
        assert_eq!(hook.status, 201, "{}", hook.body);
        let secret = hook.body["secret"].as_str().unwrap().to_owned();
        let start = window_start();
        let r = app.order(&m.buyer, reserved(start, 3)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let lease = r.body["lease_id"].as_str().unwrap().to_owned();
        let body = json!({"lease_id": lease, "from": start + Duration::hours(1), "ask_per_hour": "0.01"});
        let r = app.post("/v1/resale-listings", Some(&m.buyer), body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let listing_id = r.body["id"].as_str().unwrap().to_owned();
        let mut stream = SseStream::open(&app.client, &format!("{}/v1/events/stream", app.address), Some(&m.buyer), None).await;

        // Nobody buys it; the lease's window closes, and the listing with it.
        let until = start + Duration::hours(3);
        app.advance_clock((until - app.market_now() + Duration::seconds(5)).to_std().unwrap());
        let mut expired = None;
        for _ in 0..200 {
            let events = app.get("/v1/events?limit=500", Some(&m.buyer)).await.body;
            expired = events["items"].as_array().unwrap().iter().find(|e| e["type"] == "listing.expired").cloned();
            if expired.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let expired = expired.expect("listing.expired on the page");
        assert_eq!(expired["data"]["listing_id"], listing_id.as_str(), "{expired}");
        assert_eq!(expired["data"]["reason"], "expired", "{expired}");
        let streamed = stream.drain(std::time::Duration::from_secs(2)).await;
        assert!(streamed.iter().any(|e| e.event.as_deref() == Some("listing.expired")), "{streamed:?}");
        let mut delivered = None;
        for _ in 0..100 {
            delivered = receiver.accepted().into_iter().find(|r| r.event_type == "listing.expired");
            if delivered.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_signed(&secret, &delivered.expect("listing.expired reached the webhook"));
        let mine = app.get("/v1/resale-listings", Some(&m.buyer)).await;
        assert_eq!(mine.body["items"][0]["state"], "expired", "{}", mine.body);
        assert_eq!(app.get("/v1/market/resale", None).await.body, json!([]));
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

/// Postings to `account` in the ledger's capture entries: what the resold
/// hours paid into a seller's wallet, read from the ledger alone.
async fn captured_into(db: &Db, account: Account) -> Decimal {
    let amounts: Vec<Money> = dispatch!(db, pool => {
        sqlx::query_scalar(
            "SELECT p.amount FROM postings p JOIN journal_entries e ON e.id = p.entry_id \
             WHERE p.account = $1 AND e.kind = 'capture'",
        )
        .bind(account)
        .fetch_all(pool)
        .await
    })
    .unwrap();
    amounts.into_iter().map(|m| m.0).sum()
}

fn cost(row: &BTreeMap<String, String>, column: &str) -> Decimal {
    Decimal::from_str(&row[column]).unwrap_or_else(|e| panic!("{column}={}: {e}", row[column]))
}

on_both_databases_fast! {
    async fn a_resold_hour_is_resale_in_the_buyers_focus_export_and_proceeds_credits_in_the_sellers(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[H100]).await;
        let (buyer, buyer_id) = app.buyer_with(&m.admin, "1000").await;
        let seller = &m.buyer;
        let seller_id: Uuid = app.get("/v1/me", Some(seller)).await.body["id"].as_str().unwrap().parse().unwrap();
        let start = window_start();
        let mut order = reserved(start, 4);
        order["tags"] = json!({"business_line": "resold-capacity"});
        let r = app.order(seller, order).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let seller_lease = r.body["lease_id"].as_str().unwrap().to_owned();
        let reserved_price = decimal(&app.get(&format!("/v1/leases/{seller_lease}"), Some(seller)).await.body["price_per_hour"]);
        let ask = (reserved_price * Decimal::from_str("0.8").unwrap()).round_dp(6);
        let from = start + Duration::hours(2);
        let r = app.post("/v1/resale-listings", Some(seller), json!({"lease_id": seller_lease, "from": from, "ask_per_hour": ask.to_string()})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let listing_id = r.body["id"].as_str().unwrap().to_owned();
        let r = app.order(&buyer, reserved(from, 1)).await;
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let bought = r.body["lease_id"].as_str().unwrap().to_owned();

        let db = Db::connect(&app.database_url).await.unwrap();
        let earnings = || async { app.get(&format!("/v1/provider/earnings?{WHOLE}"), Some(&m.provider)).await.body };
        let earned_before = earnings().await;
        let wallet_before = captured_into(&db, Account::Wallet(seller_id)).await;
        // A reserved window is owed whole: released before it begins, the
        // buyer's hour is charged now, and the charge pays the seller.
        let r = app.post(&format!("/v1/leases/{bought}/release"), Some(&buyer), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let charged = decimal(&app.get(&format!("/v1/leases/{bought}"), Some(&buyer)).await.body["usage"]["charged"]);
        assert!(charged > Decimal::ZERO && charged <= ask, "{charged} vs {ask}");
        let seller_gain = captured_into(&db, Account::Wallet(seller_id)).await - wallet_before;
        assert_eq!(seller_gain, charged - ledger::platform_fee(charged, Decimal::new(5, 2)));

        // The buyer's export: every row of the resold lease says resale and
        // names the listing; CSV and JSON agree; the seller never appears.
        let (status, _, csv) = text(&app, &format!("/v1/billing/export?format=focus-csv&{WHOLE}"), &buyer).await;
        assert_eq!(status, 200, "{csv}");
        assert!(!csv.contains(&seller_id.to_string()) && !csv.contains(&seller_lease));
        let rows = parse_csv(&csv);
        let resold: Vec<_> = rows.iter().filter(|r| r["ResourceId"] == bought).collect();
        assert!(!resold.is_empty(), "{csv}");
        for row in &resold {
            assert_eq!(row["x_Source"], "resale", "{row:?}");
            assert_eq!(row["x_ListingId"], listing_id, "{row:?}");
            assert_ne!(row["ChargeCategory"], "Credit", "{row:?}");
        }
        assert_eq!(resold.iter().map(|r| cost(r, "BilledCost")).sum::<Decimal>(), charged);
        let billed: Decimal = rows.iter().map(|r| cost(r, "BilledCost")).sum();
        assert_eq!(billed, lines::ledger_total(&db, buyer_id, 0, i64::MAX / 4).await.unwrap());
        let (_, _, json_body) = text(&app, &format!("/v1/billing/export?format=focus-json&{WHOLE}"), &buyer).await;
        let json_rows: Vec<Value> = serde_json::from_str(&json_body).unwrap();
        let json_resold: Vec<_> = json_rows.iter().filter(|r| r["ResourceId"] == bought.as_str()).collect();
        assert_eq!(json_resold.len(), resold.len());
        assert!(json_resold.iter().all(|r| r["x_Source"] == "resale" && r["x_ListingId"] == listing_id.as_str()));

        // The seller's export: its proceeds are Credit rows, negative, for
        // exactly what its wallet got, on its own lease and tags.
        let (_, _, csv) = text(&app, &format!("/v1/billing/export?format=focus-csv&{WHOLE}"), seller).await;
        assert!(!csv.contains(&buyer_id.to_string()) && !csv.contains(&bought), "{csv}");
        let rows = parse_csv(&csv);
        let proceeds: Vec<_> = rows.iter().filter(|r| r["x_Source"] == "resale").collect();
        assert!(!proceeds.is_empty(), "{csv}");
        for row in &proceeds {
            assert_eq!(row["ChargeCategory"], "Credit", "{row:?}");
            assert_eq!(row["BillingAccountId"], seller_id.to_string());
            assert_eq!(row["ResourceId"], seller_lease);
            assert_eq!(row["x_ListingId"], listing_id);
            assert_eq!(cost(row, "BilledCost"), cost(row, "EffectiveCost"));
            assert!(cost(row, "BilledCost") < Decimal::ZERO, "{row:?}");
            let tags: Value = serde_json::from_str(&row["Tags"]).unwrap();
            assert_eq!(tags["business_line"], "resold-capacity");
        }
        let credited: Decimal = proceeds.iter().map(|r| cost(r, "BilledCost")).sum();
        assert_eq!(-credited, seller_gain);
        // The seller's own reservation stays primary.
        assert!(rows.iter().filter(|r| r["x_Source"] != "resale").all(|r| r["x_Source"] == "primary"));
        let billed: Decimal = rows.iter().map(|r| cost(r, "BilledCost")).sum();
        assert_eq!(billed, lines::ledger_total(&db, seller_id, 0, i64::MAX / 4).await.unwrap());
        let (_, _, json_body) = text(&app, &format!("/v1/billing/export?format=focus-json&{WHOLE}"), seller).await;
        let json_rows: Vec<Value> = serde_json::from_str(&json_body).unwrap();
        let json_credited: Decimal = json_rows
            .iter()
            .filter(|r| r["x_Source"] == "resale" && r["ChargeCategory"] == "Credit")
            .map(|r| Decimal::from_str(&r["BilledCost"].to_string()).unwrap())
            .sum();
        assert_eq!(json_credited, credited);
        // Proceeds are income, not a charge of the seller's lease.
        let seller_view = app.get(&format!("/v1/leases/{seller_lease}"), Some(seller)).await;
        assert!(decimal(&seller_view.body["usage"]["charged"]) >= Decimal::ZERO, "{}", seller_view.body);

        // The provider was paid by the seller's reservation: the resale
        // changes neither its earnings nor its payable balance.
        assert_eq!(earnings().await, earned_before);
        assert_ledger_balances(&app).await;
        db.close().await;
    }
}
