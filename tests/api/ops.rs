use crate::helpers::{on_both_databases, Backend, TestApp};
use serde_json::json;

on_both_databases! {
    async fn health_readiness_and_metrics_answer(app) {
        assert_eq!(app.get("/healthz", None).await.body, json!({"status": "ok"}));
        // A single server leads its market, on either database.
        let ready = app.get("/readyz", None).await.body;
        assert_eq!((&ready["status"], &ready["role"]), (&json!("ok"), &json!("leader")), "{ready}");
        // Where it stands in its journal: caught up, as the leader always is.
        assert!(ready["applied_seq"].as_i64() >= Some(0), "{ready}");
        assert_eq!(ready["lag_ms"], 0, "{ready}");
        app.get("/v1/catalog/gpus", None).await;
        let text = app.metrics_text().await;
        assert!(text.contains("gpuex_leader 1"), "{text}");
        for journal in ["gpuex_journal_applied_seq ", "gpuex_replica_lag_seconds 0", "gpuex_journal_restores_total 1", "gpuex_journal_digest_mismatches_total 0"] {
            assert!(text.contains(journal), "{journal}: {text}");
        }
        assert!(text.contains(r#"gpuex_http_requests_total{method="GET",route="/v1/catalog/gpus",status="200"} 1"#), "{text}");
        assert!(text.contains("gpuex_http_request_duration_seconds_bucket"));
    }

    async fn every_response_carries_a_request_id(app) {
        let r = app.client.get(format!("{}/healthz", app.address)).send().await.unwrap();
        assert!(r.headers().get("x-request-id").is_some());
        let r = app.client.get(format!("{}/healthz", app.address)).header("x-request-id", "abc-123").send().await.unwrap();
        assert_eq!(r.headers()["x-request-id"], "abc-123");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_routes_and_methods_answer_problem_json() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    app.get("/v1/nope", None)
        .await
        .assert_code(404, "not_found");
    app.request(reqwest::Method::DELETE, "/v1/quotes", None, None)
        .await
        .assert_code(405, "method_not_allowed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_allows_only_configured_origins() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.cors_origins = vec!["https://dash.example".into()]
    })
    .await;
    let preflight = |origin: &'static str| {
        app.client
            .request(
                reqwest::Method::OPTIONS,
                format!("{}/v1/quotes", app.address),
            )
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
    };
    let ok = preflight("https://dash.example").await.unwrap();
    assert_eq!(
        ok.headers()["access-control-allow-origin"],
        "https://dash.example"
    );
    let other = preflight("https://evil.example").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_are_refused_with_413() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| s.body_limit = 1024).await;
    let big = format!(
        r#"{{"email":"{}@x.io","password":"p","name":"n","role":"buyer"}}"#,
        "a".repeat(4000)
    );
    app.raw(reqwest::Method::POST, "/v1/auth/register", None, &big)
        .await
        .assert_code(413, "payload_too_large");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_page_loads_nothing_from_the_internet() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let r = app
        .client
        .get(format!("{}/docs/", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let html = r.text().await.unwrap();
    assert!(html.contains("swagger"), "{html}");
    for attr in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "//cdn",
        "unpkg",
        "jsdelivr",
    ] {
        assert!(
            !html.contains(attr),
            "the docs page references the internet: {attr}"
        );
    }
    let init = app
        .client
        .get(format!("{}/docs/swagger-initializer.js", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    assert!(init.text().await.unwrap().contains("/openapi.json"));
    for asset in ["swagger-ui.css", "swagger-ui-bundle.js"] {
        let r = app
            .client
            .get(format!("{}/docs/{asset}", app.address))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{asset} is served locally");
    }
}

/// The committed `openapi/openapi.json` is what the code generates. Set
/// `GPUEX_UPDATE_OPENAPI=1` to rewrite it.
#[tokio::test]
async fn the_committed_openapi_document_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let generated = gpuex::api::openapi_json();
    if std::env::var("GPUEX_UPDATE_OPENAPI").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi")).unwrap();
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/openapi.json is stale: run `GPUEX_UPDATE_OPENAPI=1 cargo test --test api openapi` and commit it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_openapi_document_is_3_1_and_documents_every_error() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let doc = app.get("/openapi.json", None).await.body;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in paths {
        for (method, op) in methods.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            assert!(
                !responses.is_empty(),
                "{method} {path} documents no response"
            );
            let takes_input = op.get("requestBody").is_some()
                || op["parameters"].as_array().is_some_and(|p| !p.is_empty())
                || op.get("security").is_some();
            if takes_input {
                assert!(
                    responses.keys().any(|k| k.starts_with('4')),
                    "{method} {path} takes input but documents no 4xx problem"
                );
            }
        }
    }
    for endpoint in [
        "/v1/auth/register",
        "/v1/auth/login",
        "/v1/api-keys",
        "/v1/me",
        "/v1/wallet",
        "/v1/ledger",
        "/v1/admin/credits",
        "/v1/catalog/gpus",
        "/v1/regions",
        "/v1/admin/regions/{name}",
        "/v1/prices",
        "/v1/prices/history",
        "/v1/quotes",
        "/v1/admin/prices",
        "/v1/nodes",
        "/v1/nodes/{id}",
        "/v1/nodes/{id}/cordon",
        "/v1/agent/register",
        "/v1/agent/heartbeat",
        "/v1/agent/assignments/{lease_id}/status",
        "/v1/agent/assignments/{lease_id}/logs",
        "/v1/agent/usage",
        "/v1/leases/{id}/logs",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(paths.contains_key(endpoint), "{endpoint} is not documented");
    }
}

on_both_databases! {
    async fn metrics_need_the_metrics_token(app) {
        let url = format!("{}/metrics", app.address);
        let anonymous = app.client.get(&url).send().await.unwrap();
        TestApp::reply(anonymous).await.assert_code(401, "unauthorized");
        let admin = app.admin().await;
        let wrong = app.client.get(&url).bearer_auth(admin).send().await.unwrap();
        TestApp::reply(wrong).await.assert_code(401, "unauthorized");
        assert!(app.metrics_text().await.contains("gpuex_http_requests_total"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_off_without_a_metrics_token() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| s.metrics_token = None).await;
    app.get("/metrics", None)
        .await
        .assert_code(404, "not_found");
}

on_both_databases! {
    async fn an_admin_lists_the_replicas_with_where_each_stands_and_no_one_else_may(app) {
        let admin = app.admin().await;
        let r = app.get("/v1/admin/replicas", Some(&admin)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let list = r.body.as_array().expect("a list");
        assert_eq!(list.len(), 1, "one process serves: {}", r.body);
        let me = &list[0];
        assert_eq!((&me["role"], &me["answering"], &me["silent"]), (&json!("leader"), &json!(true), &json!(false)), "{me}");
        assert_eq!(me["url"], app.address, "{me}");
        assert!(me["applied_seq"].as_i64() >= Some(0) && me["lag_ms"] == 0, "{me}");
        let (buyer, _) = app.user("buyer").await;
        app.get("/v1/admin/replicas", Some(&buyer)).await.assert_code(403, "forbidden");
        assert_eq!(app.get("/v1/admin/replicas", None).await.status, 401);
    }
}
