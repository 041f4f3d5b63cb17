//! Webhooks over HTTP: receivers on 127.0.0.1 get an order's events, signed
//! and in id order, through a registered webhook and through the order's
//! `webhook_url`; a failing receiver gets the event again after it
//! recovers; another tenant hears and sees nothing; the example Python
//! receiver verifies a real delivery.

use crate::fleet::eventually;
use crate::helpers::{on_both_databases, TestApp};
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// One request a receiver got, and what it answered.
#[derive(Debug, Clone)]
pub struct Received {
    pub signature: String,
    pub event_id: String,
    pub event_type: String,
    pub content_type: String,
    pub body: String,
    pub answered: u16,
}

/// An HTTP receiver in the test process: records every POST and answers
/// 500 for the first `fail_first`, then `status`.
pub struct Receiver {
    pub url: String,
    got: Arc<Mutex<Vec<Received>>>,
    pub fail_first: Arc<AtomicU32>,
    pub status: Arc<AtomicU16>,
    _server: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Shared {
    got: Arc<Mutex<Vec<Received>>>,
    fail_first: Arc<AtomicU32>,
    status: Arc<AtomicU16>,
}

async fn record(
    axum::extract::State(shared): axum::extract::State<Shared>,
    headers: axum::http::HeaderMap,
    body: String,
) -> axum::http::StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let failing = shared
        .fail_first
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    let answered = if failing {
        500
    } else {
        shared.status.load(Ordering::SeqCst)
    };
    shared.got.lock().unwrap().push(Received {
        signature: header("gpuex-signature"),
        event_id: header("gpuex-event-id"),
        event_type: header("gpuex-event-type"),
        content_type: header("content-type"),
        body,
        answered,
    });
    axum::http::StatusCode::from_u16(answered).unwrap()
}

impl Receiver {
    pub async fn start() -> Receiver {
        let shared = Shared {
            got: Default::default(),
            fail_first: Default::default(),
            status: Arc::new(AtomicU16::new(200)),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(record))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Receiver {
            url,
            got: shared.got,
            fail_first: shared.fail_first,
            status: shared.status,
            _server: server,
        }
    }

    /// Every request so far.
    pub fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The requests it answered with a 2xx.
    pub fn accepted(&self) -> Vec<Received> {
        self.got()
            .into_iter()
            .filter(|r| (200..300).contains(&r.answered))
            .collect()
    }
}

/// Checks `Gpuex-Signature` as a receiver would: `v1` is the HMAC-SHA256
/// of `"<t>.<body>"` keyed with the secret, and `t` is recent.
#[track_caller]
pub fn assert_signed(secret: &str, r: &Received) {
    let (t, v1) = r
        .signature
        .split_once(",v1=")
        .and_then(|(t, v1)| Some((t.strip_prefix("t=")?, v1)))
        .unwrap_or_else(|| panic!("bad signature header `{}`", r.signature));
    let t: i64 = t.parse().unwrap();
    assert!(
        (chrono::Utc::now().timestamp() - t).abs() < 300,
        "stale t={t}"
    );
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", r.body).as_bytes());
    assert_eq!(
        v1,
        hex::encode(mac.finalize().into_bytes()),
        "signature of {}",
        r.body
    );
    assert_eq!(r.content_type, "application/json");
    let body: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(body["id"].to_string(), r.event_id);
    assert_eq!(body["type"], r.event_type);
}

/// An order that waits for capacity (there is none), so it is accepted.
pub fn waiting_order(webhook_url: Option<&str>) -> Value {
    let mut order = json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
                           "max_wait_s": 600, "resources": {"tflops": 100, "vram_gb": 8}});
    if let Some(url) = webhook_url {
        order["webhook_url"] = json!(url);
    }
    order
}

/// Places a waiting order and cancels it: `order.accepted`, then
/// `order.cancelled`. Returns the order id.
pub async fn accept_and_cancel(app: &TestApp, buyer: &str, webhook_url: Option<&str>) -> String {
    let r = app.order(buyer, waiting_order(webhook_url)).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_str().unwrap().to_owned();
    let r = app
        .request(
            Method::DELETE,
            &format!("/v1/orders/{id}"),
            Some(buyer),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    id
}

/// Registers a webhook to `url`, returning its id and secret.
pub async fn register(app: &TestApp, token: &str, body: Value) -> (String, String) {
    let r = app.post("/v1/webhooks", Some(token), body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    (
        r.body["id"].as_str().unwrap().to_owned(),
        r.body["secret"].as_str().unwrap().to_owned(),
    )
}

fn types(got: &[Received]) -> Vec<&str> {
    got.iter().map(|r| r.event_type.as_str()).collect()
}

fn ids(got: &[Received]) -> Vec<i64> {
    got.iter().map(|r| r.event_id.parse().unwrap()).collect()
}

on_both_databases! {
    async fn an_order_s_events_reach_its_webhook_and_its_webhook_url_signed_and_in_id_order(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let (hook, order_hook) = (Receiver::start().await, Receiver::start().await);
        let (hook_id, secret) = register(&app, &buyer, json!({"url": hook.url})).await;
        assert!(secret.starts_with("whsec_"), "{secret}");

        // No default secret yet: nothing could sign what the URL would get.
        let r = app.order(&buyer, waiting_order(Some(&order_hook.url))).await;
        r.assert_problem(422, Some("webhook_url"));
        assert!(r.body.to_string().contains("POST /v1/webhooks/secret"), "{}", r.body);
        let r = app.post("/v1/webhooks/secret", Some(&buyer), json!({})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let default_secret = r.body["secret"].as_str().unwrap().to_owned();
        assert!(default_secret.starts_with("whsec_") && default_secret != secret);

        let order = accept_and_cancel(&app, &buyer, Some(&order_hook.url)).await;
        eventually(30, "both receivers get both events", || async {
            hook.accepted().len() >= 2 && order_hook.accepted().len() >= 2
        }).await;
        for (receiver, secret) in [(&hook, &secret), (&order_hook, &default_secret)] {
            let got = receiver.accepted();
            assert_eq!(types(&got), ["order.accepted", "order.cancelled"]);
            let ids = ids(&got);
            assert!(ids[0] < ids[1], "{ids:?}");
            for r in &got {
                assert_signed(secret, r);
                let body: Value = serde_json::from_str(&r.body).unwrap();
                assert_eq!(body["order_id"], order.as_str());
            }
        }
        // The body is the event as `GET /v1/events` shows it.
        let page = app.get("/v1/events", Some(&buyer)).await;
        let first: Value = serde_json::from_str(&hook.accepted()[0].body).unwrap();
        assert_eq!(page.body["items"][0], first);

        let listed = app.get("/v1/webhooks", Some(&buyer)).await;
        assert_eq!(listed.status, 200);
        assert_eq!(listed.body[0]["id"], hook_id.as_str());
        assert_eq!(listed.body[0]["url"], hook.url.as_str());
        assert!(listed.body[0].get("secret").is_none(), "{}", listed.body);
        let page = app.get(&format!("/v1/webhooks/{hook_id}/deliveries"), Some(&buyer)).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let items = page.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        // Newest first.
        assert_eq!(items[0]["event_type"], "order.cancelled");
        for d in items {
            assert_eq!(d["state"], "delivered");
            assert_eq!(d["attempts"][0]["status"], 200);
        }
    }

    async fn a_receiver_that_fails_three_times_gets_the_event_once_it_recovers(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let receiver = Receiver::start().await;
        receiver.fail_first.store(3, Ordering::SeqCst);
        let (hook_id, secret) =
            register(&app, &buyer, json!({"url": receiver.url, "events": ["order.cancelled"]})).await;
        accept_and_cancel(&app, &buyer, None).await;
        let deliveries = format!("/v1/webhooks/{hook_id}/deliveries");
        eventually(60, "the fourth attempt delivers", || async {
            app.get(&deliveries, Some(&buyer)).await.body["items"][0]["state"] == "delivered"
        }).await;
        let page = app.get(&deliveries, Some(&buyer)).await;
        let items = page.body["items"].as_array().unwrap();
        // Only the type asked for.
        assert_eq!(items.len(), 1, "{}", page.body);
        let statuses: Vec<&Value> = items[0]["attempts"].as_array().unwrap().iter().map(|a| &a["status"]).collect();
        assert_eq!(statuses, [&json!(500), &json!(500), &json!(500), &json!(200)], "{}", page.body);
        let got = receiver.got();
        assert_eq!(got.len(), 4);
        assert!(got.iter().all(|r| r.event_id == got[0].event_id && r.event_type == "order.cancelled"));
        let accepted = receiver.accepted();
        assert_eq!(accepted.len(), 1);
        assert_signed(&secret, &accepted[0]);
        let metrics = app.metrics_text().await;
        assert!(metrics.contains("gpuex_webhook_deliveries_total{outcome=\"retried\"} 3"), "{metrics}");
        assert!(metrics.contains("gpuex_webhook_deliveries_total{outcome=\"delivered\"} 1"), "{metrics}");
    }

    async fn another_tenant_neither_hears_nor_sees_a_tenant_s_webhooks(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (alice, _) = app.buyer_with(&admin, "100").await;
        let (bob, _) = app.buyer_with(&admin, "100").await;
        let (to_alice, to_bob) = (Receiver::start().await, Receiver::start().await);
        let (alice_hook, _) = register(&app, &alice, json!({"url": to_alice.url})).await;
        let (bob_hook, _) = register(&app, &bob, json!({"url": to_bob.url})).await;
        accept_and_cancel(&app, &alice, None).await;
        let alice_deliveries = format!("/v1/webhooks/{alice_hook}/deliveries");
        eventually(30, "alice's events are delivered", || async {
            let page = app.get(&alice_deliveries, Some(&alice)).await;
            page.body["items"].as_array().is_some_and(|i| i.len() == 2 && i.iter().all(|d| d["state"] == "delivered"))
        }).await;
        assert_eq!(to_alice.accepted().len(), 2);
        assert!(to_bob.got().is_empty(), "{:?}", to_bob.got());
        let bob_page = app.get(&format!("/v1/webhooks/{bob_hook}/deliveries"), Some(&bob)).await;
        assert_eq!(bob_page.body["items"], json!([]));

        app.get(&alice_deliveries, Some(&bob)).await.assert_problem(404, None);
        let listed = app.get("/v1/webhooks", Some(&bob)).await;
        assert_eq!(listed.body.as_array().unwrap().len(), 1);
        assert_eq!(listed.body[0]["id"], bob_hook.as_str());
        let delete = |token: &str, id: &str| {
            let path = format!("/v1/webhooks/{id}");
            let token = token.to_owned();
            let app = &app;
            async move { app.request(Method::DELETE, &path, Some(&token), None).await }
        };
        delete(&bob, &alice_hook).await.assert_problem(404, None);
        delete(&bob, "not-an-id").await.assert_problem(404, None);
        assert_eq!(delete(&alice, &alice_hook).await.status, 204);
        delete(&alice, &alice_hook).await.assert_problem(404, None);
        app.get(&alice_deliveries, Some(&alice)).await.assert_problem(404, None);
        // A deleted webhook hears nothing more.
        accept_and_cancel(&app, &alice, None).await;
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        assert_eq!(to_alice.got().len(), 2);
    }

    async fn the_example_python_receiver_verifies_a_real_delivery(app) {
        if crate::require::require("python3", crate::require::program("python3")).is_none() {
            return;
        }
        let python = "python3";
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/webhook_receiver.py");
        // A free port can be taken between its pick and the receiver's bind
        // (tests run side by side): the receiver says when it listens, and
        // one that could not bind is tried again on another port.
        let mut tries = 0;
        let (port, secret, mut child, mut lines) = loop {
            tries += 1;
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let (hook, secret) = register(&app, &buyer,
                json!({"url": format!("http://127.0.0.1:{port}/"), "events": ["order.accepted"]})).await;
            let mut child = tokio::process::Command::new(python)
                .arg(script)
                .arg(port.to_string())
                .env("WEBHOOK_SECRET", &secret)
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .unwrap();
            let stdout = child.stdout.take().unwrap();
            let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
            let first = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line()).await;
            if matches!(&first, Ok(Ok(Some(line))) if *line == format!("listening on port {port}")) {
                break (port, secret, child, lines);
            }
            child.kill().await.ok();
            let gone = app.request(Method::DELETE, &format!("/v1/webhooks/{hook}"), Some(&buyer), None).await;
            assert_eq!(gone.status, 204);
            assert!(tries < 5, "the receiver never listened: {first:?}");
        };
        let order = accept_and_cancel(&app, &buyer, None).await;
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the receiver printed a verified event")
            .unwrap()
            .unwrap();
        let events = app.get("/v1/events", Some(&buyer)).await;
        let accepted = events.body["items"].as_array().unwrap().iter()
            .find(|e| e["type"] == "order.accepted" && e["order_id"] == order.as_str())
            .unwrap()
            .clone();
        assert_eq!(line, format!("verified {} order.accepted", accepted["id"]));
        // A forged signature, and a genuine one five minutes old, are refused.
        let body = accepted.to_string();
        let stale = chrono::Utc::now().timestamp() - 301;
        let stale_signature = gpuex::events::webhooks::sign::signature(&secret, stale, &body);
        for signature in ["t=1,v1=00".to_owned(), stale_signature] {
            let r = app.client.post(format!("http://127.0.0.1:{port}/"))
                .header("Gpuex-Signature", signature)
                .body(body.clone())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 400);
        }
        child.kill().await.ok();
    }
}
