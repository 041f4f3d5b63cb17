//! HTTP benchmarks, each against a baseline run in the same process:
//! order placement (`POST /v1/orders` on SQLite: validation, the engine task,
//! the hold and the commit) and `GET /v1/prices`, against a bare axum handler
//! that parses and echoes the same JSON. 32 requests in flight throughout:
//! each one that finishes starts the next.
//!
//! `cargo bench --bench http -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

const IN_FLIGHT: usize = 32;
/// Nodes of 8 shared H100s: each holds 160 of the benchmark's orders, so
/// 500 nodes take 80,000, more than a run at today's rates places.
const NODES: usize = 500;

struct Bench {
    base: String,
    client: reqwest::Client,
    buyer: String,
    bare: String,
    _dir: tempfile::TempDir,
}

async fn post(client: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> Value {
    let mut req = client.post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send()
        .await
        .expect("request")
        .json()
        .await
        .unwrap_or(Value::Null)
}

async fn setup() -> Bench {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut settings = gpuex::config::Settings::with_database(format!(
        "sqlite://{}/bench.db",
        dir.path().display()
    ));
    settings.admin_email = Some("admin@bench.test".into());
    settings.admin_password = Some("bench-password-1".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(gpuex::serve(listener, settings, std::future::pending()));
    let bare_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let bare = format!("http://{}/echo", bare_listener.local_addr().expect("addr"));
    let app = axum::Router::new().route(
        "/echo",
        axum::routing::post(|axum::Json(v): axum::Json<Value>| async move {
            (axum::http::StatusCode::CREATED, axum::Json(v))
        }),
    );
    tokio::spawn(async move { axum::serve(bare_listener, app).await });
    let client = reqwest::Client::new();
    for _ in 0..200 {
        if client
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let login = |email: &'static str, password: &'static str| {
        let client = client.clone();
        let base = base.clone();
        async move {
            let r = post(
                &client,
                &format!("{base}/v1/auth/login"),
                None,
                &json!({"email": email, "password": password}),
            )
            .await;
            r["access_token"].as_str().expect("token").to_owned()
        }
    };
    let admin = login("admin@bench.test", "bench-password-1").await;
    client
        .put(format!("{base}/v1/admin/regions/eu-west"))
        .bearer_auth(&admin)
        .json(&json!({"timezone": "UTC"}))
        .send()
        .await
        .expect("region");
    client
        .put(format!("{base}/v1/admin/prices"))
        .bearer_auth(&admin)
        .json(&json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "0.002"},
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.05"}
        ]))
        .send()
        .await
        .expect("prices");
    for (email, role) in [("p@bench.test", "provider"), ("b@bench.test", "buyer")] {
        post(
            &client,
            &format!("{base}/v1/auth/register"),
            None,
            &json!({"email": email, "password": "bench-password-1", "name": "b", "role": role}),
        )
        .await;
    }
    let provider = login("p@bench.test", "bench-password-1").await;
    let buyer = login("b@bench.test", "bench-password-1").await;
    let gpus: Vec<Value> = (0..8)
        .map(|i| json!({"index": i, "model": "H100-SXM5-80GB", "mode": "shared"}))
        .collect();
    for n in 0..NODES {
        post(&client, &format!("{base}/v1/nodes"), Some(&provider),
            &json!({"name": format!("n{n}"), "region": "eu-west", "gpus": gpus, "cpu_milli": 1_000_000, "memory_mib": 100_000_000})).await;
    }
    let me: Value = client
        .get(format!("{base}/v1/me"))
        .bearer_auth(&buyer)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    post(
        &client,
        &format!("{base}/v1/admin/credits"),
        Some(&admin),
        &json!({"user_id": me["id"], "amount": "100000000"}),
    )
    .await;
    Bench {
        base,
        client,
        buyer,
        bare,
        _dir: dir,
    }
}

fn order() -> Value {
    json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 2, "vram_gb": 4}})
}

/// Sends `n` requests, keeping `IN_FLIGHT` of them in flight (a new one
/// starts as soon as any finishes), and returns the elapsed time.
async fn run(n: u64, send: impl Fn() -> futures::future::BoxFuture<'static, ()>) -> Duration {
    let started = Instant::now();
    futures::stream::iter((0..n).map(|_| send()))
        .buffer_unordered(IN_FLIGHT)
        .for_each(|()| async {})
        .await;
    started.elapsed()
}

fn http(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let bench = rt.block_on(setup());
    let mut group = c.benchmark_group("http");
    group.throughput(Throughput::Elements(1));
    group.bench_function("bare_axum_json_echo", |b| {
        b.to_async(&rt).iter_custom(|n| {
            let (client, url) = (bench.client.clone(), bench.bare.clone());
            run(n, move || {
                let (client, url) = (client.clone(), url.clone());
                Box::pin(async move {
                    let r = client.post(&url).json(&order()).send().await.expect("echo");
                    assert_eq!(r.status(), 201);
                })
            })
        })
    });
    group.bench_function("post_orders_sqlite", |b| {
        b.to_async(&rt).iter_custom(|n| {
            let (client, base, buyer) = (
                bench.client.clone(),
                bench.base.clone(),
                bench.buyer.clone(),
            );
            run(n, move || {
                let (client, base, buyer) = (client.clone(), base.clone(), buyer.clone());
                Box::pin(async move {
                    let r = client
                        .post(format!("{base}/v1/orders"))
                        .bearer_auth(&buyer)
                        .json(&order())
                        .send()
                        .await
                        .expect("order");
                    assert_eq!(r.status(), 201);
                })
            })
        })
    });
    group.bench_function("get_prices_sqlite", |b| {
        b.to_async(&rt).iter_custom(|n| {
            let (client, base) = (bench.client.clone(), bench.base.clone());
            run(n, move || {
                let (client, base) = (client.clone(), base.clone());
                Box::pin(async move {
                    let r = client
                        .get(format!("{base}/v1/prices"))
                        .send()
                        .await
                        .expect("prices");
                    assert_eq!(r.status(), 200);
                })
            })
        })
    });
    group.finish();
}

criterion_group!(benches, http);
criterion_main!(benches);
