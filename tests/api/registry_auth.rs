//! Private images (ARCHITECTURE.md §21): a registry on 127.0.0.1 that lets only one
//! user pull. The buyer's credentials go with the order, are kept sealed
//! apart from it and reach only the agent that pulls; without them, or with
//! wrong ones, the lease fails unbilled, even once the host has the image.

use crate::fleet::{self, eventually, lease, market};
use crate::helpers::{Backend, TestApp};
use crate::registry_pull::{
    container_agent, insecure_registries, push_only, registry_tools, run, start_registry,
};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::process::Command;
use uuid::Uuid;

const USER: &str = "gpuex-ci";
const PASSWORD: &str = "pull-s3cret-3f9a";

/// Places an order for `image` with `auth` and waits until its lease runs
/// or fails: the lease as its buyer sees it.
async fn order(app: &TestApp, buyer: &str, image: &str, auth: Option<Value>) -> Value {
    let mut body = fleet::order("on_demand");
    body["resources"]["isolation"] = json!("whole");
    body["image"] = json!(image);
    body["command"] = json!("echo private-ran; sleep 1");
    if let Some(auth) = auth {
        body["registry_auth"] = auth;
    }
    let r = app.post("/v1/orders", Some(buyer), body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let lease_id: Uuid = r.body["lease_id"].as_str().unwrap().parse().unwrap();
    eventually(90, "the lease to run or fail", || async {
        let state = lease(app, buyer, lease_id).await["state"].clone();
        ["running", "ended", "failed"].contains(&state.as_str().unwrap_or(""))
    })
    .await;
    lease(app, buyer, lease_id).await
}

/// `gpuex order --registry-user U --registry-password-stdin` for `image`,
/// as the buyer: the order's id.
async fn order_by_cli(app: &TestApp, buyer: &str, image: &str) -> Uuid {
    use tokio::io::AsyncWriteExt;
    let config = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args([
            "order",
            "--mode",
            "on_demand",
            "--region",
            "eu-west",
            "--tflops",
            "100",
            "--vram-gb",
            "16",
            "--isolation",
            "whole",
            "--duration-s",
            "3600",
            "--command",
            "echo private-ran; sleep 1",
            "--image",
            image,
            "--registry-user",
            USER,
            "--registry-password-stdin",
            "--output",
            "json",
        ])
        .env("GPUEX_SERVER", &app.address)
        .env("GPUEX_CONFIG_DIR", config.path())
        .env("GPUEX_TOKEN", buyer)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{PASSWORD}\n").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains(PASSWORD), "{stdout}");
    let order: Value = serde_json::from_str(&stdout).unwrap();
    order["id"].as_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_private_image_pulls_only_with_its_buyers_credentials_which_nothing_shows() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(podman) = registry_tools(scratch.path()) else {
        return;
    };
    let (_registry, address) = start_registry(scratch.path(), Some((USER, PASSWORD))).await;
    let port = address.rsplit(':').next().unwrap().to_owned();
    let remote = format!("{address}/private/busybox:{port}");
    push_only(&podman.image, &remote, Some(&format!("{USER}:{PASSWORD}")));
    let registries = insecure_registries(scratch.path(), &address);

    let app = TestApp::spawn_with(Backend::Sqlite, fleet::fast).await;
    let m = market(&app).await;
    let spool = tempfile::tempdir().unwrap();
    let _agent = container_agent(&app, &m, &address, &registries, spool.path(), &[]).await;

    // The API names a misplaced or malformed credential.
    let mut body = fleet::order("on_demand");
    body["registry_auth"] = json!({"username": USER, "password": PASSWORD});
    let r = app.post("/v1/orders", Some(&m.buyer), body.clone()).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.body["errors"][0]["field"], "registry_auth", "{}", r.body);
    body["image"] = json!(remote);
    body["registry_auth"]["username"] = json!("a:b");
    let r = app.post("/v1/orders", Some(&m.buyer), body).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.body["errors"][0]["field"], "registry_auth.username");

    // Without credentials, or with wrong ones, the registry refuses the pull.
    for auth in [None, Some(json!({"username": USER, "password": "guess"}))] {
        let failed = order(&app, &m.buyer, &remote, auth).await;
        assert_eq!(failed["state"], "failed", "{failed}");
        let why = failed["failure"].as_str().unwrap_or("");
        assert!(why.contains("cannot pull"), "{failed}");
        assert!(!why.contains(PASSWORD), "{failed}");
    }

    // With the buyer's own, given to the CLI on stdin, it runs, by the ID
    // it pulled.
    let order_id = order_by_cli(&app, &m.buyer, &remote).await;
    let lease_id: Uuid = app
        .get(&format!("/v1/orders/{order_id}"), Some(&m.buyer))
        .await
        .body["lease_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    eventually(90, "the lease to run or fail", || async {
        let state = lease(&app, &m.buyer, lease_id).await["state"].clone();
        ["running", "ended", "failed"].contains(&state.as_str().unwrap_or(""))
    })
    .await;
    let ran = lease(&app, &m.buyer, lease_id).await;
    assert_ne!(ran["state"], "failed", "{ran}");
    eventually(60, "the private image's output", || async {
        let r = app
            .get(&format!("/v1/leases/{lease_id}/logs"), Some(&m.buyer))
            .await;
        r.body["tail"]
            .as_str()
            .unwrap_or("")
            .contains("private-ran")
    })
    .await;
    let pulled =
        run(Command::new("podman").args(["image", "inspect", "--format", "{{.Id}}", &remote]))
            .expect("the image was pulled onto the host");
    assert_eq!(ran["image_id"], json!(format!("sha256:{pulled}")));

    // Nothing shows the password: the order, the order list, the stored
    // request; the kept row is sealed; the agent's auth file is gone.
    for path in [format!("/v1/orders/{order_id}"), "/v1/orders".to_string()] {
        let r = app.get(&path, Some(&m.buyer)).await;
        assert_eq!(r.status, StatusCode::OK);
        let shown = r.body.to_string();
        assert!(
            !shown.contains(PASSWORD) && !shown.contains("registry_auth"),
            "{shown}"
        );
    }
    let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
    let (request, sealed): (String, String) = gpuex::db::dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT o.request_json, s.sealed FROM orders o \
             JOIN order_pull_secrets s ON s.order_id = o.id WHERE o.id = $1",
        )
        .bind(order_id)
        .fetch_one(pool)
        .await
    })
    .unwrap();
    db.close().await;
    assert!(
        !request.contains(PASSWORD) && !request.contains(USER),
        "{request}"
    );
    assert!(!sealed.contains(PASSWORD) && !sealed.contains(USER));
    let left: Vec<_> = std::fs::read_dir(spool.path().join("registry-auth"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "auth files left behind: {left:?}");

    // The host now has the image; an order without credentials still fails.
    eventually(30, "the private lease to end", || async {
        lease(&app, &m.buyer, lease_id).await["state"] == "ended"
    })
    .await;
    let cached = order(&app, &m.buyer, &remote, None).await;
    assert_eq!(cached["state"], "failed", "{cached}");
    let why = cached["failure"].as_str().unwrap_or("");
    assert!(why.contains("private here"), "{cached}");

    let _ = run(Command::new("podman").args(["rmi", "--force", &remote]));
    app.stop().await;
}

/// How many sealed credentials the server keeps.
async fn kept(app: &TestApp) -> i64 {
    let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
    let n: i64 = gpuex::db::dispatch!(db, pool => {
        sqlx::query_scalar("SELECT COUNT(*) FROM order_pull_secrets")
            .fetch_one(pool)
            .await
    })
    .unwrap();
    db.close().await;
    n
}

crate::helpers::on_both_databases! {
    async fn credentials_live_as_long_as_their_order_can_start_a_lease(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let body = |wait: u64| {
            json!({"mode": "on_demand", "region": "eu-west", "duration_s": 900,
                   "resources": {"tflops": 100, "vram_gb": 80, "isolation": "whole"},
                   "max_wait_s": wait, "command": "true", "image": "registry.example.com/m:1",
                   "registry_auth": {"username": USER, "password": PASSWORD}})
        };
        // A filled order keeps them: its lease pulls with them.
        let filled = app.order(&buyer, body(0)).await;
        assert_eq!(filled.body["state"], "filled", "{}", filled.body);
        assert_eq!(kept(&app).await, 1);
        // A refused one (no room left, no wait) does not.
        let refused = app.order(&buyer, body(0)).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
        assert_eq!(kept(&app).await, 1);
        // A retry under the same key is the same order, its credentials
        // kept once; other credentials under that key are another request.
        let send = |body: Value| {
            app.client.post(format!("{}/v1/orders", app.address)).bearer_auth(&buyer)
                .header("Idempotency-Key", "private-1").json(&body).send()
        };
        let first = TestApp::reply(send(body(600)).await.unwrap()).await;
        let again = TestApp::reply(send(body(600)).await.unwrap()).await;
        assert_eq!(first.body["id"], again.body["id"], "{}", again.body);
        assert_eq!(kept(&app).await, 2);
        let mut other = body(600);
        other["registry_auth"]["password"] = json!("another-password");
        TestApp::reply(send(other).await.unwrap()).await.assert_code(422, "idempotency_key_reused");
        let id = first.body["id"].as_str().unwrap();
        let r = app.request(reqwest::Method::DELETE, &format!("/v1/orders/{id}"), Some(&buyer), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        // A waiting one does, until it is cancelled and the pass runs.
        let waiting = app.order(&buyer, body(600)).await;
        assert_eq!(waiting.body["state"], "open", "{}", waiting.body);
        assert_eq!(kept(&app).await, 3);
        let id = waiting.body["id"].as_str().unwrap();
        let r = app.request(reqwest::Method::DELETE, &format!("/v1/orders/{id}"), Some(&buyer), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
        let later = chrono::Utc::now() + chrono::Duration::hours(2);
        // The filled order's lease still runs: only the cancelled ones go.
        assert_eq!(gpuex::market::pull_secrets::prune(&db, later).await.unwrap(), 2);
        db.close().await;
        assert_eq!(kept(&app).await, 1);
    }
}
