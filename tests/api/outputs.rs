//! Leases' outputs and disk quotas through the real server and the real
//! agent (ARCHITECTURE.md §21): what a workload leaves in `$GPUEX_OUTPUTS` is sent
//! while it runs and when it ends, listed and downloaded by its owner alone
//! (the API, `gpuex outputs`), never through a link the workload planted;
//! a workload that fills its disk ends `disk_quota`.

use crate::agent_process::Agent;
use crate::fleet::{self, create_node, eventually, lease, market, node_view, place};
use crate::helpers::{Backend, TestApp};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Writes a known result, a 3 MiB file in a folder, and a link to a host
/// file; a progress file first, which is sent while the lease still runs.
const WRITES_OUTPUTS: &str = "set -e; cd \"$GPUEX_OUTPUTS\"; echo step1 > progress.txt; sleep 3; \
    printf 'the answer is 42\\n' > result.txt; mkdir -p model; \
    head -c 3145728 /dev/urandom > model/weights.bin; ln -s /etc/hostname stolen; \
    ln -s / root; echo done";

async fn outputs(app: &TestApp, token: &str, lease: &str) -> Value {
    let r = app
        .get(&format!("/v1/leases/{lease}/outputs"), Some(token))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

fn names(listed: &Value) -> Vec<String> {
    listed["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn download(app: &TestApp, token: &str, lease: &str, name: &str) -> (u16, Vec<u8>, String) {
    let encoded = name.replace('/', "%2F");
    let r = reqwest::Client::new()
        .get(format!(
            "{}/v1/leases/{lease}/outputs/{encoded}",
            app.address
        ))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let sha = r
        .headers()
        .get("x-checksum-sha256")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, r.bytes().await.unwrap().to_vec(), sha)
}

async fn run(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| {
        crate::fleet::fast(s);
        s.outputs_max_bytes = 8 << 20;
    })
    .await;
    let m = market(&app).await;
    let node = create_node(
        &app,
        &m.provider,
        json!({"name": "sim", "region": "eu-west"}),
    )
    .await;
    let spool = tempfile::tempdir().unwrap();
    let _agent = Agent::start_args(
        &app,
        &node.token,
        spool.path(),
        &["--outputs-interval", "1s"],
    )
    .await;
    eventually(20, "the agent to register", || async {
        node_view(&app, &m.provider, node.id).await["status"] == "online"
    })
    .await;
    let mut body = fleet::order("on_demand");
    body["command"] = json!(WRITES_OUTPUTS);
    let id = place(&app, &m.buyer, body).await.to_string();

    // Sent while it runs: the periodic round.
    eventually(20, "progress.txt while the lease runs", || async {
        names(&outputs(&app, &m.buyer, &id).await).contains(&"progress.txt".to_owned())
    })
    .await;
    assert_eq!(
        lease(&app, &m.buyer, id.parse().unwrap()).await["state"],
        "running"
    );

    // And the rest when it ends.
    eventually(30, "the lease to end", || async {
        lease(&app, &m.buyer, id.parse().unwrap()).await["state"] == "ended"
    })
    .await;
    eventually(20, "the last outputs", || async {
        names(&outputs(&app, &m.buyer, &id).await).len() == 3
    })
    .await;
    let listed = outputs(&app, &m.buyer, &id).await;
    assert_eq!(
        names(&listed),
        ["model/weights.bin", "progress.txt", "result.txt"],
        "{listed}"
    );
    assert_eq!(listed["retention_days"], 30);
    assert_eq!(listed["storage_price_per_gb_month"], "0");
    let result = &listed["outputs"][2];
    assert_eq!(result["size"], 17);
    let expected = hex::encode(Sha256::digest(b"the answer is 42\n"));
    assert_eq!(result["sha256"], expected);
    let (status, bytes, sha) = download(&app, &m.buyer, &id, "result.txt").await;
    assert_eq!(
        (status, bytes.as_slice(), sha.as_str()),
        (200, &b"the answer is 42\n"[..], expected.as_str())
    );
    let (status, weights, sha) = download(&app, &m.buyer, &id, "model/weights.bin").await;
    assert_eq!((status, weights.len()), (200, 3 << 20));
    assert_eq!(sha, hex::encode(Sha256::digest(&weights)));
    assert_eq!(listed["outputs"][0]["sha256"], sha);

    // The owner's alone: another buyer, the provider, the admin get nothing.
    let (other, _) = app.user("buyer").await;
    assert_eq!(
        app.get(&format!("/v1/leases/{id}/outputs"), Some(&other))
            .await
            .status,
        404
    );
    assert_eq!(download(&app, &other, &id, "result.txt").await.0, 404);
    assert_eq!(download(&app, &m.admin, &id, "result.txt").await.0, 404);
    assert_eq!(
        app.get(&format!("/v1/leases/{id}/outputs"), Some(&m.provider))
            .await
            .status,
        403
    );
    assert_eq!(download(&app, &m.buyer, &id, "nothing.txt").await.0, 404);

    // What a node may send: names inside /outputs, within the cap, while
    // the lease is fresh.
    let put = |name: &'static str, bytes: Vec<u8>| {
        let (url, token) = (
            format!("{}/v1/agent/assignments/{id}/outputs/{name}", app.address),
            node.token.clone(),
        );
        async move {
            let r = reqwest::Client::new()
                .put(url)
                .bearer_auth(token)
                .body(bytes)
                .send()
                .await
                .unwrap();
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let (status, problem) = put("..%2Fescape", b"x".to_vec()).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "path.name", "{problem}");
    let (status, problem) = put("big.bin", vec![0u8; 6 << 20]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (413, Some("outputs_quota")),
        "{problem}"
    );
    assert!(!names(&outputs(&app, &m.buyer, &id).await).contains(&"big.bin".to_owned()));
    let other_node =
        create_node(&app, &m.provider, json!({"name": "b", "region": "eu-west"})).await;
    let r = reqwest::Client::new()
        .put(format!(
            "{}/v1/agent/assignments/{id}/outputs/x.txt",
            app.address
        ))
        .bearer_auth(&other_node.token)
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404, "another node's lease");
    app.advance_clock(std::time::Duration::from_secs(2 * 3600));
    let (status, _) = put("late.txt", b"x".to_vec()).await;
    assert_eq!(status, 409, "outputs are final an hour after the end");

    // The CLI lists and downloads, checking the sha256.
    let dir = tempfile::tempdir().unwrap();
    let cli = |args: Vec<String>| {
        let (server, token) = (app.address.clone(), m.buyer.clone());
        let cwd = dir.path().to_path_buf();
        async move {
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
                .args(&args)
                .env("GPUEX_SERVER", server)
                .env("GPUEX_TOKEN", token)
                .env("GPUEX_CONFIG_DIR", &cwd)
                .current_dir(&cwd)
                .output()
                .await
                .unwrap();
            assert!(
                out.status.success(),
                "gpuex {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    };
    let table = cli(vec!["outputs".into(), id.clone()]).await;
    assert!(
        table.contains("model/weights.bin") && table.contains(&expected),
        "{table}"
    );
    cli(vec![
        "outputs".into(),
        id.clone(),
        "--get".into(),
        "model/weights.bin".into(),
    ])
    .await;
    assert_eq!(
        std::fs::read(dir.path().join("weights.bin")).unwrap(),
        weights
    );
    let piped = cli(vec![
        "outputs".into(),
        id.clone(),
        "--get".into(),
        "result.txt".into(),
        "--out".into(),
        "-".into(),
    ])
    .await;
    assert_eq!(piped, "the answer is 42\n");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outputs_come_back_to_their_owner_alone_on_sqlite() {
    run(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outputs_come_back_to_their_owner_alone_on_postgres() {
    let Some(()) = crate::require::require("PostgreSQL", crate::require::postgres().map(|_| ()))
    else {
        return;
    };
    run(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_workload_that_fills_its_disk_ends_disk_quota_and_keeps_what_it_wrote() {
    let Some(()) = crate::require::require("root", crate::require::root()) else {
        return;
    };
    let app = TestApp::spawn_with(Backend::Sqlite, crate::fleet::fast).await;
    let m = market(&app).await;
    let node = create_node(
        &app,
        &m.provider,
        json!({"name": "sim", "region": "eu-west"}),
    )
    .await;
    let spool = tempfile::tempdir().unwrap();
    let _agent =
        Agent::start_args(&app, &node.token, spool.path(), &["--disk-quota-mib", "16"]).await;
    eventually(20, "the agent to register", || async {
        node_view(&app, &m.provider, node.id).await["status"] == "online"
    })
    .await;
    let mut body = fleet::order("on_demand");
    // Past 16 MiB the kernel refuses the write; the workload goes on, the
    // agent ends it.
    body["command"] = json!(
        "echo kept > \"$GPUEX_OUTPUTS/note.txt\"; \
        head -c 67108864 /dev/zero > \"$GPUEX_CHECKPOINT/fill\"; echo \"head: $?\"; sleep 60"
    );
    let id = place(&app, &m.buyer, body).await;
    eventually(30, "the lease to end", || async {
        lease(&app, &m.buyer, id).await["state"] == "ended"
    })
    .await;
    let ended = lease(&app, &m.buyer, id).await;
    assert_eq!(ended["end_reason"], "disk_quota", "{ended}");
    let logs = app
        .get(&format!("/v1/leases/{id}/logs"), Some(&m.buyer))
        .await;
    eventually(10, "the final logs", || async {
        let logs = app
            .get(&format!("/v1/leases/{id}/logs"), Some(&m.buyer))
            .await;
        logs.body["tail"].as_str().unwrap_or("").contains("head: 1")
    })
    .await;
    drop(logs);
    eventually(20, "what it wrote before", || async {
        names(&outputs(&app, &m.buyer, &id.to_string()).await) == ["note.txt"]
    })
    .await;
    app.stop().await;
}
