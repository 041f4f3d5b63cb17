//! Helpers for the node and agent tests: a priced market with a credited
//! buyer, nodes and their tokens, the agent's requests, and a peek into the
//! database for what the API does not show.

use crate::helpers::{Backend, Reply, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;

/// The parties of a market test.
pub struct Market {
    pub admin: String,
    pub provider: String,
    pub buyer: String,
}

/// Regions and prices, a provider, and a buyer with 1000 in credit.
pub async fn market(app: &TestApp) -> Market {
    let admin = app.admin().await;
    app.seed_prices(&admin).await;
    let (provider, _) = app.user("provider").await;
    let (buyer, buyer_id) = app.user("buyer").await;
    let r = app.credit(&admin, buyer_id, "1000").await;
    assert!(r.status.is_success(), "{}", r.body);
    Market {
        admin,
        provider,
        buyer,
    }
}

/// A node and its token.
pub struct Node {
    pub id: Uuid,
    pub token: String,
}

/// Creates a node, asserting 201, and has the admin mark it simulated: the
/// tests' agents (this module's registrations, the real agent) run the
/// simulated backend, which no other node may register with.
pub async fn create_node(app: &TestApp, provider: &str, body: Value) -> Node {
    let r = app.post("/v1/nodes", Some(provider), body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let node = Node {
        id: r.body["id"].as_str().unwrap().parse().unwrap(),
        token: r.body["token"].as_str().unwrap().to_owned(),
    };
    app.mark_simulated(node.id).await;
    node
}

/// A node in eu-west declaring `count` H100s sold as `mode`.
pub fn h100_node(count: usize, mode: &str) -> Value {
    let gpus: Vec<Value> = (0..count)
        .map(|_| json!({"model": "H100-SXM5-80GB", "mode": mode}))
        .collect();
    json!({"name": "h100-box", "region": "eu-west", "gpus": gpus, "cpu_milli": 64000, "memory_mib": 524288})
}

/// An agent's registration: one GPU per `(model, mig_enabled)`.
pub fn registration(gpus: &[(&str, bool)]) -> Value {
    let gpus: Vec<Value> = gpus
        .iter()
        .enumerate()
        .map(|(i, (model, mig))| {
            json!({
                "index": i,
                "model": model,
                "product_name": model,
                "uuid": format!("GPU-{i:08}-0000-0000-0000-000000000000"),
                "memory_mib": 81559,
                "mig_capable": *mig,
                "mig_mode": if *mig { json!("enabled") } else { Value::Null },
                "driver_version": "550.54.15",
                "cuda_version": "12.4"
            })
        })
        .collect();
    json!({
        "agent_version": "0.1.0",
        "backend": "simulated",
        "hostname": "test-node",
        "host": {"cpu_milli": 64000, "memory_mib": 524288},
        "gpus": gpus
    })
}

/// A heartbeat listing `leases` as `(lease, state)`.
pub fn heartbeat(agent: Uuid, leases: &[(Uuid, &str)]) -> Value {
    let leases: Vec<Value> = leases
        .iter()
        .map(|(id, state)| json!({"lease_id": id, "state": state, "device": "MIG-test"}))
        .collect();
    json!({
        "agent_id": agent,
        "sent_at": chrono::Utc::now(),
        "gpus": [{"index": 0, "uuid": "GPU-00000000-0000-0000-0000-000000000000",
                  "fields": {"DCGM_FI_DEV_GPU_UTIL": 42.0, "DCGM_FI_DEV_GPU_TEMP": 40.0}}],
        "leases": leases
    })
}

/// The order body of the tests: 100 TFLOPS and 16 GB in eu-west for an hour.
pub fn order(mode: &str) -> Value {
    json!({"mode": mode, "resources": {"tflops": 100, "vram_gb": 16}, "region": "eu-west",
           "duration_s": 3600, "command": "echo hi", "env": {"K": "V"}})
}

/// Places an order and returns its lease id, asserting it was filled.
pub async fn place(app: &TestApp, buyer: &str, body: Value) -> Uuid {
    let r = app.post("/v1/orders", Some(buyer), body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["state"], "filled", "{}", r.body);
    r.body["lease_id"].as_str().unwrap().parse().unwrap()
}

/// Registers `node` with `gpus`, asserting 200.
pub async fn register(app: &TestApp, node: &Node, gpus: &[(&str, bool)]) -> Reply {
    let r = app
        .post("/v1/agent/register", Some(&node.token), registration(gpus))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r
}

/// Sends a heartbeat and returns its assignments.
pub async fn beat(app: &TestApp, node: &Node, leases: &[(Uuid, &str)]) -> Vec<Value> {
    let r = app
        .post(
            "/v1/agent/heartbeat",
            Some(&node.token),
            heartbeat(node.id, leases),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body["assignments"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Reports a status for `lease`.
pub async fn report(app: &TestApp, node: &Node, lease: Uuid, body: Value) -> Reply {
    app.post(
        &format!("/v1/agent/assignments/{lease}/status"),
        Some(&node.token),
        body,
    )
    .await
}

pub fn provisioned(device: &str) -> Value {
    json!({"at": chrono::Utc::now(), "status": "provisioned", "device": device})
}

pub fn ended(exit_code: i32) -> Value {
    json!({"at": chrono::Utc::now(), "status": "ended", "exit_code": exit_code, "reason": "exited"})
}

/// A lease as its buyer sees it.
pub async fn lease(app: &TestApp, buyer: &str, id: Uuid) -> Value {
    let r = app.get(&format!("/v1/leases/{id}"), Some(buyer)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

/// A node as its provider sees it.
pub async fn node_view(app: &TestApp, provider: &str, id: Uuid) -> Value {
    let r = app.get(&format!("/v1/nodes/{id}"), Some(provider)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

/// Polls `check` every 100 ms for up to `secs` seconds.
pub async fn eventually<F, Fut>(secs: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if check().await {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// One integer from the test's database (e.g. a `COUNT(*)`).
pub async fn scalar(app: &TestApp, sql: &str) -> i64 {
    use sqlx::Connection;
    match app.backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&app.database_url)
                .await
                .unwrap();
            sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&app.database_url)
                .await
                .unwrap();
            sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
        }
    }
}

/// Server settings with short intervals, for tests that wait on the clock.
pub fn fast(settings: &mut gpuex::config::Settings) {
    settings.heartbeat_interval_s = 1;
    settings.tick_ms = 200;
    settings.billing_interval_s = 1;
    settings.node_timeout_s = 3;
    settings.spot_interval_s = 1;
}

/// Like `on_both_databases!`, with [`fast`] settings.
macro_rules! on_both_databases_fast {
    ($($tests:tt)*) => {
        $crate::helpers::on_both_databases_with! { $crate::fleet::fast => $($tests)* }
    };
}
pub(crate) use on_both_databases_fast;
