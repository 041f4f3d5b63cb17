//! Issue 34, item 13 (ARCHITECTURE.md §19): `Idempotency-Key` on every creating POST.
//! For each endpoint: the same key and body answer the first result again
//! (same status, same body) and create nothing more; the same key with
//! another body is 422 `idempotency_key_reused`.

use crate::fleet::{self, create_node, h100_node, register};
use crate::helpers::*;
use crate::webhooks::Receiver;
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde_json::{json, Value};
use uuid::Uuid;

const H100: (&str, bool) = ("H100-SXM5-80GB", false);

/// Fast ticks; nodes that stay up without heartbeats.
fn fast_without_heartbeats(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.node_timeout_s = 3600;
}

async fn post_keyed(app: &TestApp, path: &str, token: &str, key: &str, body: &Value) -> Reply {
    let response = app
        .client
        .post(format!("{}{}", app.address, path))
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .expect("request");
    TestApp::reply(response).await
}

/// How a row counts what its endpoint created.
enum Count {
    Sql(&'static str),
    /// The lease's recorded conversions.
    Conversions(Uuid),
}

async fn count(app: &TestApp, token: &str, what: &Count) -> i64 {
    match what {
        Count::Sql(sql) => fleet::scalar(app, sql).await,
        Count::Conversions(lease) => fleet::lease(app, token, *lease).await["conversions"]
            .as_array()
            .map_or(0, |c| c.len() as i64),
    }
}

/// The first whole hour at least `hours` ahead of the market's clock.
fn hour_ahead(app: &TestApp, hours: i64) -> DateTime<Utc> {
    (app.market_now() + Duration::hours(hours))
        .duration_trunc(Duration::hours(1))
        .unwrap()
        + Duration::hours(1)
}

fn id(v: &Value) -> Uuid {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an id: {v}"))
}

on_both_databases_with! { fast_without_heartbeats =>
    async fn every_creating_post_honours_its_idempotency_key(app) {
        let m = fleet::market(&app).await;
        let (_, buyer_id) = app.user("buyer").await;
        let mut nodes = Vec::new();
        for _ in 0..2 {
            let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
            register(&app, &node, &[H100]).await;
            nodes.push(node);
        }
        let receiver = Receiver::start().await;

        // A running on-demand lease to convert, then a reservation to list.
        let whole = json!({"tflops": 100, "vram_gb": 16, "isolation": "whole"});
        // With a duration it never overlaps the reservation, wherever each lands.
        let r = app.order(&m.buyer, json!({"mode": "on_demand", "region": "eu-west", "duration_s": 1800,
                                           "resources": whole})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let on_demand = id(&r.body["lease_id"]);
        let node_id = id(&fleet::lease(&app, &m.buyer, on_demand).await["node_id"]);
        let node = nodes.iter().find(|n| n.id == node_id).expect("one of the test's nodes");
        let r = fleet::report(&app, node, on_demand,
            json!({"at": app.market_now(), "status": "provisioned", "device": "GPU-0"})).await;
        assert!(r.status.is_success(), "{}", r.body);
        fleet::eventually(20, "the on-demand lease running", || async {
            fleet::lease(&app, &m.buyer, on_demand).await["state"] == "running"
        }).await;
        let from = hour_ahead(&app, 1);
        let start = hour_ahead(&app, 4);
        let r = app.order(&m.buyer, json!({"mode": "reserved", "region": "eu-west", "start_at": start,
                                           "duration_s": 3 * 3600, "resources": whole})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let reserved = id(&r.body["lease_id"]);

        let convert = format!("/v1/leases/{on_demand}/convert");
        let listing = |ask: &str| json!({"lease_id": reserved, "from": start + Duration::hours(1), "ask_per_hour": ask});
        let rows: Vec<(&str, String, &str, Value, Value, Count)> = vec![
            ("API key", "/v1/api-keys".into(), &m.buyer,
             json!({"name": "ci"}), json!({"name": "ci-2"}), Count::Sql("SELECT COUNT(*) FROM api_keys")),
            ("webhook", "/v1/webhooks".into(), &m.buyer,
             json!({"url": receiver.url}), json!({"url": receiver.url, "events": ["order.filled"]}),
             Count::Sql("SELECT COUNT(*) FROM webhooks")),
            ("node", "/v1/nodes".into(), &m.provider,
             h100_node(1, "whole"), h100_node(2, "whole"), Count::Sql("SELECT COUNT(*) FROM nodes")),
            ("adjustment", "/v1/admin/billing/adjustments".into(), &m.admin,
             json!({"user_id": buyer_id, "amount": "5.00", "reason": "outage"}),
             json!({"user_id": buyer_id, "amount": "6.00", "reason": "outage"}),
             Count::Sql("SELECT COUNT(*) FROM charges WHERE kind = 'credit'")),
            ("conversion", convert, &m.buyer,
             json!({"to": "reserved", "from": from, "until": from + Duration::hours(1)}),
             json!({"to": "reserved", "from": from, "until": from + Duration::hours(2)}),
             Count::Conversions(on_demand)),
            ("resale listing", "/v1/resale-listings".into(), &m.buyer,
             listing("0.50"), listing("0.40"), Count::Sql("SELECT COUNT(*) FROM resale_listings")),
        ];
        for (name, path, token, body, other, counted) in rows {
            let key = format!("key-{}", Uuid::new_v4());
            let before = count(&app, token, &counted).await;
            let first = post_keyed(&app, &path, token, &key, &body).await;
            assert!(first.status.is_success(), "{name}: {} {}", first.status, first.body);
            let again = post_keyed(&app, &path, token, &key, &body).await;
            assert_eq!(again.status, first.status, "{name}: {}", again.body);
            assert_eq!(again.body, first.body, "{name}");
            assert!(again.content_type.starts_with("application/json"), "{name}: {}", again.content_type);
            assert_eq!(count(&app, token, &counted).await, before + 1, "{name}: created once");
            post_keyed(&app, &path, token, &key, &other).await.assert_code(422, "idempotency_key_reused");
            assert_eq!(count(&app, token, &counted).await, before + 1, "{name}: nothing more");
            // Without the key, each request is its own (nothing is replayed).
            let fresh = post_keyed(&app, &path, token, &format!("other-{key}"), &other).await;
            assert_ne!(fresh.body, first.body, "{name}");
        }

        // A refused request gives its key up: the same request runs again once it can.
        let key = "refused-then-fine";
        let bad = json!({"user_id": Uuid::new_v4(), "amount": "1.00", "reason": "x"});
        let r = post_keyed(&app, "/v1/admin/billing/adjustments", &m.admin, key, &bad).await;
        assert_eq!(r.status, 422, "{}", r.body);
        let r = post_keyed(&app, "/v1/admin/billing/adjustments", &m.admin, key, &bad).await;
        assert_eq!(r.status, 422, "refused again, not answered as in use: {}", r.body);
        let good = json!({"user_id": buyer_id, "amount": "1.00", "reason": "x"});
        let r = post_keyed(&app, "/v1/admin/billing/adjustments", &m.admin, "fine-after-all", &good).await;
        assert_eq!(r.status, 201, "{}", r.body);
        // Keys are the caller's own: the buyer's key of the same name is its own.
        let r = post_keyed(&app, "/v1/api-keys", &m.buyer, "fine-after-all", &json!({"name": "mine"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        // A key the header cannot carry is named.
        post_keyed(&app, "/v1/api-keys", &m.buyer, &"k".repeat(256), &json!({"name": "x"})).await
            .assert_problem(422, Some("header.Idempotency-Key"));
    }
}

on_both_databases! {
    async fn a_claim_whose_answer_was_never_kept_is_given_up_once_stale(app) {
        let (buyer, buyer_id) = app.user("buyer").await;
        let body = json!({"name": "stale"});
        let first = post_keyed(&app, "/v1/api-keys", &buyer, "crashed", &body).await;
        assert_eq!(first.status, 201, "{}", first.body);
        // As if the server had stopped after the work, before keeping its answer.
        app.execute("UPDATE idempotency_keys SET status = 0, body = '' WHERE user_id = $1", buyer_id)
            .await;
        post_keyed(&app, "/v1/api-keys", &buyer, "crashed", &body).await
            .assert_code(409, "idempotency_key_in_use");
        let stale = gpuex::api::STALE_CLAIM_S.unsigned_abs() + 1;
        app.advance_clock(std::time::Duration::from_secs(stale));
        // Given up: the retry runs, as it would under a fresh key, and is kept.
        let retried = post_keyed(&app, "/v1/api-keys", &buyer, "crashed", &body).await;
        assert_eq!(retried.status, 201, "{}", retried.body);
        assert_ne!(retried.body["id"], first.body["id"]);
        let again = post_keyed(&app, "/v1/api-keys", &buyer, "crashed", &body).await;
        assert_eq!((again.status, &again.body), (retried.status, &retried.body));
    }
}
