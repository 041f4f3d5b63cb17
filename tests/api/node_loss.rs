//! Node loss and early ends (ARCHITECTURE.md §7, §19 "Credits are never larger than
//! charges"): what was charged for time not delivered is refunded by
//! reversing its charges, holds are released, nothing else is credited; an
//! order whose lease was lost with no room elsewhere waits again
//! (`order.requeued`, `max_wait_s` from then) and then expires.

use crate::fleet::{self, create_node, eventually, h100_node, lease, market, register, report};
use crate::helpers::{on_both_databases_with, TestApp};
use gpuex::db::{dispatch, Db, Money};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::time::Duration;
use uuid::Uuid;

pub const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);

/// Short billing and engine intervals; a node is lost only when the
/// market's clock is moved past its timeout (never while a slow machine
/// runs the test).
pub fn watched(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.node_timeout_s = 600;
}

/// The start of the whole hour at least `hours` after the market's now.
pub fn whole_hour_after(app: &TestApp, hours: i64) -> chrono::DateTime<chrono::Utc> {
    let now = app.market_now().timestamp();
    let next = (now / 3600 + 1) * 3600;
    chrono::DateTime::from_timestamp(next + hours * 3600, 0).expect("time")
}

/// Moves the market's clock on by `secs`.
pub fn pass(app: &TestApp, secs: i64) {
    app.advance_clock(Duration::from_secs(secs.max(0).unsigned_abs()));
}

pub fn decimal(v: &Value) -> Decimal {
    v.as_str()
        .unwrap_or_else(|| panic!("not a decimal: {v}"))
        .parse()
        .expect("decimal")
}

/// The money figures the checks compare, read from the test's database.
pub struct Books {
    db: Db,
}

impl Books {
    pub async fn open(app: &TestApp) -> Books {
        Books {
            db: Db::connect(&app.database_url).await.expect("connect"),
        }
    }

    pub async fn close(self) {
        self.db.close().await;
    }

    pub async fn balance(&self, code: &str) -> Decimal {
        let b: Option<Money> = dispatch!(self.db, pool => {
            sqlx::query_scalar("SELECT balance FROM accounts WHERE code = $1")
                .bind(code)
                .fetch_optional(pool)
                .await
        })
        .expect("balance");
        b.map_or(Decimal::ZERO, |m| m.0)
    }

    /// `(kind, amount, fee, period_start, period_end)` of every line of `column` = `id`.
    pub async fn lines(&self, column: &str, id: Uuid) -> Vec<(String, Decimal, Decimal, i64, i64)> {
        let sql = format!(
            "SELECT kind, amount, fee, period_start, period_end FROM charges WHERE {column} = $1"
        );
        let rows: Vec<(String, Money, Money, i64, i64)> = dispatch!(self.db, pool => {
            sqlx::query_as(&sql).bind(id).fetch_all(pool).await
        })
        .expect("lines");
        rows.into_iter()
            .map(|(k, a, f, s, e)| (k, a.0, f.0, s, e))
            .collect()
    }

    /// Every account's balance summed (zero), and every entry's postings (each zero).
    pub async fn assert_balanced(&self) {
        let balances: Vec<Money> = dispatch!(self.db, pool => {
            sqlx::query_scalar("SELECT balance FROM accounts").fetch_all(pool).await
        })
        .expect("balances");
        let total: Decimal = balances.iter().map(|m| m.0).sum();
        assert_eq!(total, Decimal::ZERO, "the ledger sums to zero");
        let postings: Vec<(Uuid, Money)> = dispatch!(self.db, pool => {
            sqlx::query_as("SELECT entry_id, amount FROM postings").fetch_all(pool).await
        })
        .expect("postings");
        let mut per_entry = std::collections::HashMap::<Uuid, Decimal>::new();
        for (entry, amount) in postings {
            *per_entry.entry(entry).or_default() += amount.0;
        }
        assert!(
            per_entry.values().all(Decimal::is_zero),
            "every entry balances"
        );
    }

    /// Sets a node's last sign of life back to `at`: as if the billing pass
    /// had charged past it before the loss was seen.
    pub async fn last_seen(&self, node: Uuid, at: chrono::DateTime<chrono::Utc>) {
        dispatch!(self.db, pool => {
            sqlx::query("UPDATE nodes SET last_heartbeat_at = $1, registered_at = $1 WHERE id = $2")
                .bind(at)
                .bind(node)
                .execute(pool)
                .await
                .map(|_| ())
        })
        .expect("update node");
    }
}

/// Sums `(charges, refunds)` of lines: refunds are the credit lines, as a positive figure.
pub fn charges_and_refunds(lines: &[(String, Decimal, Decimal, i64, i64)]) -> (Decimal, Decimal) {
    lines
        .iter()
        .fold((Decimal::ZERO, Decimal::ZERO), |(c, r), l| {
            if l.0 == "credit" {
                (c, r - l.1)
            } else {
                (c + l.1, r)
            }
        })
}

async fn order_of(app: &TestApp, buyer: &str, id: &str) -> Value {
    let r = app.get(&format!("/v1/orders/{id}"), Some(buyer)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// The buyer's first event of `kind` for `order`.
async fn event_of(app: &TestApp, buyer: &str, kind: &str, order: &str) -> Option<Value> {
    let r = app.get("/v1/events?after=0&limit=500", Some(buyer)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .find(|e| e["type"] == kind && e["order_id"] == order)
}

fn at_of(event: &Value) -> i64 {
    event["at"]
        .as_str()
        .and_then(|s| s.parse::<chrono::DateTime<chrono::Utc>>().ok())
        .map(|t| t.timestamp())
        .unwrap_or_else(|| panic!("no time: {event}"))
}

on_both_databases_with! { watched =>
    async fn a_reserved_lease_whose_node_is_lost_before_its_window_gets_no_credit_for_hours_only_held(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let start = whole_hour_after(&app, 2);
        let r = app.order(&m.buyer, json!({"mode": "reserved", "region": "eu-west", "start_at": start,
            "duration_s": 4 * 3600, "resources": {"tflops": 100, "vram_gb": 16}, "command": "echo hi"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let order_id = r.body["id"].as_str().expect("id").to_owned();
        let lease_id: Uuid = r.body["lease_id"].as_str().expect("lease").parse().expect("uuid");
        let books = Books::open(&app).await;
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        assert!(decimal(&wallet["held"]) > Decimal::ZERO, "the window's first week is held: {wallet}");
        // The node falls silent for longer than its timeout, an hour before the window.
        pass(&app, 601);
        eventually(20, "the lease to end", || async {
            lease(&app, &m.buyer, lease_id).await["state"] == "ended"
        })
        .await;
        let ended = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(ended["end_reason"], "node_lost", "{ended}");
        // Nothing was charged, so nothing is refunded and nothing credited:
        // the held hours were never paid; their hold is released.
        let lines = books.lines("lease_id", lease_id).await;
        assert!(lines.is_empty(), "{lines:?}");
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        assert_eq!((decimal(&wallet["balance"]), decimal(&wallet["held"])), (Decimal::new(1000, 0), Decimal::ZERO), "{wallet}");
        assert_eq!(books.balance("platform:revenue").await, Decimal::ZERO);
        // No other node had room for the window: the order waited and, with no `max_wait_s`, expired.
        eventually(10, "the order to expire", || async {
            order_of(&app, &m.buyer, &order_id).await["state"] == "expired"
        })
        .await;
        assert!(event_of(&app, &m.buyer, "order.requeued", &order_id).await.is_some());
        books.assert_balanced().await;
        books.close().await;
    }

    async fn a_running_reserved_lease_on_a_lost_node_is_refunded_what_was_charged_past_its_last_heartbeat(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let start = whole_hour_after(&app, 1);
        let r = app.order(&m.buyer, json!({"mode": "reserved", "region": "eu-west", "start_at": start,
            "duration_s": 4 * 3600, "resources": {"tflops": 100, "vram_gb": 16}, "command": "echo hi"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let lease_id: Uuid = r.body["lease_id"].as_str().expect("lease").parse().expect("uuid");
        pass(&app, (start - app.market_now()).num_seconds() + 5);
        fleet::beat(&app, &node, &[]).await;
        eventually(20, "the window to start", || async {
            lease(&app, &m.buyer, lease_id).await["state"] == "provisioning"
        })
        .await;
        report(&app, &node, lease_id, fleet::provisioned("MIG-abc")).await;
        // 40 minutes of the window, heartbeats all along, charged as it goes.
        pass(&app, 2400);
        fleet::beat(&app, &node, &[(lease_id, "running")]).await;
        let seen = app.market_now().timestamp() - 1;
        eventually(20, "the billing pass to charge up to the heartbeat", || async {
            let l = lease(&app, &m.buyer, lease_id).await;
            l["usage"]["billed_until"].as_str().and_then(|s| s.parse::<chrono::DateTime<chrono::Utc>>().ok())
                .is_some_and(|t| t.timestamp() >= seen)
        })
        .await;
        let books = Books::open(&app).await;
        let charged_before: Decimal = charges_and_refunds(&books.lines("lease_id", lease_id).await).0;
        assert!(charged_before > Decimal::ZERO);
        // The node was in fact last heard of 10 minutes ago (the billing pass
        // ran on before the loss was seen); it is lost now.
        let last = chrono::DateTime::from_timestamp(seen - 600, 0).expect("time");
        books.last_seen(node.id, last).await;
        pass(&app, 601);
        eventually(20, "the lease to end", || async {
            lease(&app, &m.buyer, lease_id).await["state"] == "ended"
        })
        .await;
        let lines = books.lines("lease_id", lease_id).await;
        let (charges, refunds) = charges_and_refunds(&lines);
        assert!(refunds > Decimal::ZERO, "{lines:?}");
        assert!(refunds <= charges, "a refund never exceeds what was charged: {lines:?}");
        // Refunds cover only time after the last sign of life.
        assert!(lines.iter().filter(|l| l.0 == "credit").all(|l| l.3 >= last.timestamp()), "{lines:?}");
        // The buyer's balance changed by exactly charges minus refunds; its holds are released.
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        assert_eq!(decimal(&wallet["held"]), Decimal::ZERO, "{wallet}");
        assert_eq!(Decimal::new(1000, 0) - decimal(&wallet["balance"]), charges - refunds, "{wallet} {lines:?}");
        let ended = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(decimal(&ended["usage"]["charged"]), charges - refunds, "{ended}");
        // The provider gives back its share and the platform its fee, never going below zero.
        let fees: Decimal = lines.iter().map(|l| l.2).sum();
        assert!(books.balance("platform:revenue").await >= Decimal::ZERO);
        assert_eq!(books.balance("platform:revenue").await, fees);
        books.assert_balanced().await;
        books.close().await;
    }

    async fn an_order_whose_node_is_lost_with_no_room_left_waits_again_from_the_loss_then_expires(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let mut body = fleet::order("on_demand");
        body["max_wait_s"] = json!(900);
        let r = app.order(&m.buyer, body).await;
        assert_eq!((r.status.as_u16(), &r.body["state"]), (201, &json!("filled")), "{}", r.body);
        let order_id = r.body["id"].as_str().expect("id").to_owned();
        let lease_id: Uuid = r.body["lease_id"].as_str().expect("lease").parse().expect("uuid");
        report(&app, &node, lease_id, fleet::provisioned("MIG-abc")).await;
        fleet::beat(&app, &node, &[(lease_id, "running")]).await;
        // Silent for longer than the timeout, and longer than `max_wait_s`
        // after the order was placed: the wait counts from the loss.
        pass(&app, 1000);
        eventually(20, "the order to wait again", || async {
            event_of(&app, &m.buyer, "order.requeued", &order_id).await.is_some()
        })
        .await;
        let requeued = event_of(&app, &m.buyer, "order.requeued", &order_id).await.expect("requeued");
        assert_eq!(lease(&app, &m.buyer, lease_id).await["end_reason"], "node_lost");
        let order = order_of(&app, &m.buyer, &order_id).await;
        assert_eq!(order["state"], "open", "{order}");
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        assert_eq!(decimal(&wallet["held"]), Decimal::ZERO, "the lost lease's hold is released: {wallet}");
        // Ten seconds short of the wait: still open.
        let requeued_at = at_of(&requeued);
        pass(&app, requeued_at + 890 - app.market_now().timestamp());
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(order_of(&app, &m.buyer, &order_id).await["state"], "open");
        pass(&app, 20);
        eventually(20, "the order to expire", || async {
            order_of(&app, &m.buyer, &order_id).await["state"] == "expired"
        })
        .await;
        let expired = event_of(&app, &m.buyer, "order.expired", &order_id).await.expect("expired");
        assert_eq!(at_of(&expired) - requeued_at, 900, "{requeued} {expired}");
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        assert_eq!(decimal(&wallet["held"]), Decimal::ZERO, "{wallet}");
    }

    async fn a_requeued_order_is_filled_when_a_node_comes(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let mut body = fleet::order("on_demand");
        body["max_wait_s"] = json!(3600);
        let r = app.order(&m.buyer, body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let order_id = r.body["id"].as_str().expect("id").to_owned();
        pass(&app, 601);
        eventually(20, "the order to wait again", || async {
            order_of(&app, &m.buyer, &order_id).await["state"] == "open"
        })
        .await;
        let other = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &other, &[H100_MIG]).await;
        eventually(20, "the order to be filled again", || async {
            order_of(&app, &m.buyer, &order_id).await["state"] == "filled"
        })
        .await;
        let order = order_of(&app, &m.buyer, &order_id).await;
        let again: Uuid = order["lease_id"].as_str().expect("lease").parse().expect("uuid");
        assert_eq!(lease(&app, &m.buyer, again).await["node_id"], other.id.to_string(), "{order}");
    }
}
