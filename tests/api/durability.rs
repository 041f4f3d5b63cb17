//! The real `gpuex` process killed with SIGKILL mid-flight: every order it
//! acknowledged, and its lease, is found again after a restart, and the
//! engine rebuilt from the database agrees with the leases it holds.

use crate::helpers::{postgres_base_url, ADMIN_EMAIL, ADMIN_PASSWORD};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Server {
    pub child: Child,
    pub base: String,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub async fn start(database_url: &str, port: u16) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--database-url",
            database_url,
        ])
        .env("GPUEX_ADMIN_EMAIL", ADMIN_EMAIL)
        .env("GPUEX_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("GPUEX_JWT_SECRET", crate::helpers::JWT_SECRET)
        .env("GPUEX_RATE_LIMIT_RPS", "1000000")
        .env("GPUEX_RATE_LIMIT_BURST", "1000000")
        .env("GPUEX_RATE_LIMIT_ADDRESS_RPS", "1000000")
        .env("GPUEX_RATE_LIMIT_ADDRESS_BURST", "1000000")
        .env("GPUEX_REGISTER_PER_HOUR", "1000000")
        // The webhook tests' receivers listen on 127.0.0.1.
        .env("GPUEX_WEBHOOK_ALLOW_PRIVATE", "true")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gpuex");
    let base = format!("http://127.0.0.1:{port}");
    if wait_ready(&base).await {
        return Server { child, base };
    }
    child.kill().ok();
    child.wait().ok();
    panic!("gpuex did not start");
}

/// Whether the server at `base` answers `/readyz` within 15 s.
pub async fn wait_ready(base: &str) -> bool {
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if client
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

pub async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = client.request(method, url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    match req.send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        }
        Err(_) => (0, Value::Null),
    }
}

/// Logs the admin in and prices H100s in eu-west; the admin's token.
pub async fn priced_admin(c: &reqwest::Client, b: &str) -> String {
    use reqwest::Method;
    let (_, login) = call(
        c,
        Method::POST,
        format!("{b}/v1/auth/login"),
        None,
        Some(json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})),
    )
    .await;
    let admin = login["access_token"].as_str().unwrap().to_owned();
    call(
        c,
        Method::PUT,
        format!("{b}/v1/admin/regions/eu-west"),
        Some(&admin),
        Some(json!({"timezone": "UTC"})),
    )
    .await;
    call(c, Method::PUT, format!("{b}/v1/admin/prices"), Some(&admin), Some(json!([
        {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "0.002"},
        {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.05"}]))).await;
    admin
}

async fn scenario(database_url: String) {
    use reqwest::Method;
    let port = free_port();
    let mut server = start(&database_url, port).await;
    let c = reqwest::Client::new();
    let b = server.base.clone();
    let admin = priced_admin(&c, &b).await;
    for (email, role) in [("p@kill.test", "provider"), ("b@kill.test", "buyer")] {
        call(
            &c,
            Method::POST,
            format!("{b}/v1/auth/register"),
            None,
            Some(json!({"email": email, "password": "a long password", "name": "x", "role": role})),
        )
        .await;
    }
    let token = |email: &'static str| {
        let c = c.clone();
        let b = b.clone();
        async move {
            let (_, r) = call(
                &c,
                Method::POST,
                format!("{b}/v1/auth/login"),
                None,
                Some(json!({"email": email, "password": "a long password"})),
            )
            .await;
            r["access_token"].as_str().unwrap().to_owned()
        }
    };
    let provider = token("p@kill.test").await;
    let buyer = token("b@kill.test").await;
    let gpus: Vec<Value> = (0..8)
        .map(|i| json!({"index": i, "model": "H100-SXM5-80GB", "mode": "shared", "nvlink": []}))
        .collect();
    let (status, _) = call(&c, Method::POST, format!("{b}/v1/nodes"), Some(&provider),
        Some(json!({"name": "n", "region": "eu-west", "gpus": gpus, "cpu_milli": 128000, "memory_mib": 1000000}))).await;
    assert_eq!(status, 201);
    let (_, me) = call(&c, Method::GET, format!("{b}/v1/me"), Some(&buyer), None).await;
    call(
        &c,
        Method::POST,
        format!("{b}/v1/admin/credits"),
        Some(&admin),
        Some(json!({"user_id": me["id"], "amount": "100000"})),
    )
    .await;

    // Orders acknowledged before the crash, then more in flight when it comes.
    let order = json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 50, "vram_gb": 4}});
    let mut acknowledged = Vec::new();
    for _ in 0..5 {
        let (status, body) = call(
            &c,
            Method::POST,
            format!("{b}/v1/orders"),
            Some(&buyer),
            Some(order.clone()),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        acknowledged.push((
            body["id"].as_str().unwrap().to_owned(),
            body["lease_id"].as_str().unwrap().to_owned(),
        ));
    }
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (c, b, buyer, order) = (c.clone(), b.clone(), buyer.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(i * 5)).await;
            call(
                &c,
                Method::POST,
                format!("{b}/v1/orders"),
                Some(&buyer),
                Some(order),
            )
            .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.child.kill().expect("SIGKILL");
    server.child.wait().ok();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        if status == 201 {
            acknowledged.push((
                body["id"].as_str().unwrap().to_owned(),
                body["lease_id"].as_str().unwrap().to_owned(),
            ));
        }
    }

    let server = start(&database_url, free_port()).await;
    let b = server.base.clone();
    let buyer = {
        let (_, r) = call(
            &c,
            Method::POST,
            format!("{b}/v1/auth/login"),
            None,
            Some(json!({"email": "b@kill.test", "password": "a long password"})),
        )
        .await;
        r["access_token"].as_str().unwrap().to_owned()
    };
    for (order, lease) in &acknowledged {
        let (status, o) = call(
            &c,
            Method::GET,
            format!("{b}/v1/orders/{order}"),
            Some(&buyer),
            None,
        )
        .await;
        assert_eq!(status, 200, "acknowledged order {order} is lost");
        assert_eq!(o["state"], "filled");
        let (status, l) = call(
            &c,
            Method::GET,
            format!("{b}/v1/leases/{lease}"),
            Some(&buyer),
            None,
        )
        .await;
        assert_eq!(status, 200, "lease {lease} is lost");
        assert_eq!(l["state"], "provisioning");
    }
    // The rebuilt engine holds exactly the leases the database has.
    let (_, leases) = call(
        &c,
        Method::GET,
        format!("{b}/v1/leases?limit=500&state=provisioning"),
        Some(&buyer),
        None,
    )
    .await;
    let held: u64 = leases["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["placement"]["gpus"][0]["slot"]["milli"].as_u64().unwrap())
        .sum();
    let (_, stats) = call(&c, Method::GET, format!("{b}/v1/market/stats"), None, None).await;
    assert_eq!(stats["pools"][0]["allocated_milli"].as_u64().unwrap(), held);
    // And it keeps working.
    let (status, _) = call(
        &c,
        Method::POST,
        format!("{b}/v1/orders"),
        Some(&buyer),
        Some(json!({
        "mode": "on_demand", "region": "eu-west", "resources": {"tflops": 50, "vram_gb": 4}})),
    )
    .await;
    assert_eq!(status, 201);
    let mut server = server;
    server.child.kill().ok();
    server.child.wait().ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_server_loses_no_acknowledged_order_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    scenario(format!("sqlite://{}/kill.db", dir.path().display())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_server_loses_no_acknowledged_order_on_postgres() {
    let Some(base) = postgres_base_url() else {
        return;
    };
    use sqlx::Connection;
    let name = format!("gpuex_t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let (prefix, _) = base.rsplit_once('/').unwrap();
    scenario(format!("{prefix}/{name}")).await;
}
