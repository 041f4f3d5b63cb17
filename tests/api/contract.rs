//! The API keeps its own contract: errors below the handlers are problem+json
//! too, and the OpenAPI document is one a client generator can trust.
//! `scripts/contract-check` runs schemathesis on top of these.

use crate::helpers::{on_both_databases, Backend, TestApp};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn document() -> Value {
    serde_json::to_value(gpuex::api::openapi()).expect("the document serializes")
}

/// Every (method, path, operation) of the document.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            ops.push((method.to_uppercase(), path.clone(), op.clone()));
        }
    }
    ops
}

/// What `#/components/…` names, or the value itself when it is no reference.
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value["$ref"].as_str() {
        Some(pointer) => doc
            .pointer(pointer.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{pointer} names nothing")),
        None => value,
    }
}

on_both_databases! {
    async fn a_path_id_that_is_not_utf8_is_a_problem_naming_the_parameter(app) {
        let admin = app.admin().await;
        let doc = app.get("/openapi.json", None).await.body;
        let mut tried = 0;
        for (method, path, op) in operations(&doc) {
            let params: Vec<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .filter_map(|p| p["name"].as_str())
                .collect();
            let Some(first) = params.first() else { continue };
            let mut url = path.clone();
            for name in &params {
                url = url.replace(&format!("{{{name}}}"), "%FF");
            }
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let reply = app.raw(method.clone(), &url, Some(&admin), "{}").await;
            reply.assert_problem(400, Some(&format!("path.{first}")));
            tried += 1;
        }
        assert!(tried >= 13, "only {tried} operations take a path parameter");
    }

    async fn a_malformed_id_in_any_path_is_404_not_found_as_an_unknown_one_is(app) {
        let admin = app.admin().await;
        let doc = app.get("/openapi.json", None).await.body;
        let mut tried = Vec::new();
        for (method, path, op) in operations(&doc) {
            let params: Vec<&Value> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .collect();
            let is_uuid = |p: &Value| resolve(&doc, &p["schema"])["format"] == "uuid";
            if !params.iter().any(|p| is_uuid(p)) {
                continue;
            }
            let mut url = path.clone();
            for p in &params {
                let name = p["name"].as_str().expect("a parameter name");
                let value = if is_uuid(p) { "not-a-uuid" } else { "x" };
                url = url.replace(&format!("{{{name}}}"), value);
            }
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let reply = app.raw(method.clone(), &url, Some(&admin), "{}").await;
            assert_eq!(reply.status, 404, "{method} {url}: {}", reply.body);
            assert_eq!(reply.body["code"], "not_found", "{method} {url}: {}", reply.body);
            assert!(reply.body["detail"].as_str().is_some_and(|d| d.starts_with("no such ")), "{method} {url}: {}", reply.body);
            tried.push(url);
        }
        assert!(tried.len() >= 20, "only {} operations take an id in their path: {tried:?}", tried.len());
    }

    async fn json_media_types_are_matched_without_regard_to_case(app) {
        let register = |email: &str| {
            json!({"email": email, "password": "a long passphrase", "name": "Ada", "role": "buyer"})
                .to_string()
        };
        for (i, media_type) in ["APPLICATION/JSON", "Application/Json; Charset=UTF-8", "application/merge-patch+JSON"]
            .into_iter()
            .enumerate()
        {
            let r = app
                .client
                .post(format!("{}/v1/auth/register", app.address))
                .header("content-type", media_type)
                .body(register(&format!("case-{i}@example.com")))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 201, "{media_type}: {}", r.text().await.unwrap());
        }
        for media_type in ["text/plain", "application/jsonx", "application/x-www-form-urlencoded"] {
            let r = app
                .client
                .post(format!("{}/v1/auth/register", app.address))
                .header("content-type", media_type)
                .body(register("other@example.com"))
                .send()
                .await
                .unwrap();
            TestApp::reply(r).await.assert_code(415, "unsupported_media_type");
        }
    }

    async fn an_integral_float_is_read_as_the_integer_it_is(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let quote = |vram: Value, duration: Value| {
            json!({"mode": "on_demand", "region": "any", "duration_s": duration,
                   "resources": {"tflops": 100, "vram_gb": vram}})
        };
        let exact = app.post("/v1/quotes", None, quote(json!(16), json!(3600))).await;
        assert_eq!(exact.status, 200, "{}", exact.body);
        let floats = app.post("/v1/quotes", None, quote(json!(16.0), json!(3600.0))).await;
        assert_eq!(floats.status, 200, "{}", floats.body);
        assert_eq!(floats.body["options"], exact.body["options"]);
        app.post("/v1/quotes", None, quote(json!(16.5), json!(3600)))
            .await
            .assert_problem(422, Some("resources.vram_gb"));
    }

    async fn a_gzip_compressed_export_streams_to_its_end(app) {
        let (buyer, _) = app.user("buyer").await;
        // A client that shows the compressed bytes rather than decoding them.
        let client = reqwest::Client::builder().no_gzip().build().expect("client");
        for format in ["focus-csv", "focus-json", "csv"] {
            let r = client
                .get(format!("{}/v1/billing/export?format={format}", app.address))
                .bearer_auth(&buyer)
                .header("accept-encoding", "gzip")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{format}");
            assert_eq!(r.headers()["content-encoding"], "gzip", "{format}");
            let body = r.bytes().await.unwrap_or_else(|e| panic!("{format}: the stream broke: {e}"));
            assert_eq!(&body[..2], &[0x1f, 0x8b], "{format}: a gzip stream");
        }
        // The server is still there for the next request.
        assert_eq!(app.get("/healthz", None).await.status, 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_slower_than_the_timeout_answers_408_problem_json() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| s.request_timeout_s = 1).await;
    let address = app.address.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    // Half a body: the handler waits for the rest until the timeout.
    let head = format!(
        "POST /v1/auth/login HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         content-length: 100\r\nconnection: close\r\n\r\n{{\"email\":"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        socket.read_to_end(&mut answer),
    )
    .await
    .expect("an answer within 10 s")
    .unwrap();
    let answer = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{answer}"
    );
    // The body may be chunked: the problem is the JSON object inside it.
    let json = &body[body.find('{').expect("a JSON body")..=body.rfind('}').unwrap()];
    let problem: Value = serde_json::from_str(json).unwrap();
    assert_eq!(problem["status"], 408);
    assert_eq!(problem["code"], "request_timeout");
}

#[test]
fn the_openapi_document_has_unique_operation_ids_and_every_reference_resolves() {
    let doc = document();
    let mut ids = BTreeSet::new();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"].as_str().unwrap_or_default().to_owned();
        assert!(!id.is_empty(), "{method} {path} has no operationId");
        assert!(ids.insert(id.clone()), "operationId `{id}` is used twice");
    }
    fn walk(doc: &Value, value: &Value) {
        match value {
            Value::Object(fields) => {
                if let Some(pointer) = fields.get("$ref").and_then(Value::as_str) {
                    assert!(
                        doc.pointer(pointer.trim_start_matches('#')).is_some(),
                        "{pointer} names nothing"
                    );
                }
                fields.values().for_each(|v| walk(doc, v));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(doc, v)),
            _ => {}
        }
    }
    walk(&doc, &doc);
}

#[test]
fn every_operation_documents_the_errors_of_the_middleware_and_has_an_example() {
    let doc = document();
    for (method, path, op) in operations(&doc) {
        let responses = op["responses"].as_object().expect("responses");
        let mut expected = vec!["405", "408", "429"];
        if op.get("requestBody").is_some() {
            expected.extend(["413", "415", "400"]);
        }
        for status in expected {
            let response = responses
                .get(status)
                .unwrap_or_else(|| panic!("{method} {path} does not document {status}"));
            let problem = &resolve(&doc, response)["content"]["application/problem+json"];
            assert_eq!(
                problem["example"]["status"].as_u64(),
                Some(status.parse().unwrap())
            );
        }
        let has_example = responses.values().any(|r| {
            resolve(&doc, r)["content"]
                .as_object()
                .is_some_and(|c| c.values().any(|m| m.get("example").is_some()))
        });
        assert!(has_example, "{method} {path} has no example");
    }
}

#[test]
fn states_roles_modes_and_units_are_enums_and_sizes_are_bounded() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    let enum_of = |value: &Value| -> Vec<String> {
        let value = resolve(&doc, value);
        let value = match value.get("oneOf") {
            Some(Value::Array(options)) => options
                .iter()
                .map(|o| resolve(&doc, o))
                .find(|o| o["type"] != "null")
                .expect("a non-null option"),
            _ => value,
        };
        value["enum"]
            .as_array()
            .map(|e| {
                e.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let lease_states = [
        "pending",
        "provisioning",
        "running",
        "preempting",
        "ended",
        "failed",
    ];
    for (schema, field, values) in [
        (
            "OrderView",
            "state",
            &["open", "filled", "cancelled", "rejected", "expired"][..],
        ),
        (
            "OrderView",
            "mode",
            &["on_demand", "reserved", "spot", "pooled"][..],
        ),
        ("LeaseView", "state", &lease_states[..]),
        (
            "LeaseView",
            "mode",
            &["on_demand", "reserved", "spot", "pooled"][..],
        ),
        ("SliceView", "state", &lease_states[..]),
        ("SliceView", "kind", &["mig", "shared", "whole"][..]),
        (
            "NodeSummary",
            "status",
            &["declared", "online", "lost", "quarantined"][..],
        ),
        ("GpuView", "mode", &["mig", "shared", "whole"][..]),
        ("DeclaredGpu", "mode", &["mig", "shared", "whole"][..]),
        ("RegisterRequest", "role", &["buyer", "provider"][..]),
        (
            "UserView",
            "role",
            &["buyer", "provider", "admin", "agent"][..],
        ),
        ("PriceChangeView", "unit", &["tflops_h", "vram_h"][..]),
        ("PriceUpdate", "unit", &["tflops_h", "vram_h"][..]),
    ] {
        let property = &schemas[schema]["properties"][field];
        assert_eq!(enum_of(property), values, "{schema}.{field}: {property}");
    }
    let vram = &schemas["Resources"]["properties"]["vram_gb"];
    assert_eq!(vram["multipleOf"], 4, "{vram}");
    assert_eq!(vram["minimum"], 4, "{vram}");
    let parameter = |path: &str, name: &str| -> Value {
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == name))
            .map(|p| p["schema"].clone())
            .unwrap_or_else(|| panic!("GET {path} has no `{name}`"))
    };
    for path in ["/v1/orders", "/v1/leases", "/v1/ledger"] {
        let limit = parameter(path, "limit");
        assert_eq!(
            (limit["minimum"].as_u64(), limit["maximum"].as_u64()),
            (Some(1), Some(500)),
            "{path}: {limit}"
        );
    }
    assert_eq!(enum_of(&parameter("/v1/leases", "state")), lease_states);
    assert_eq!(
        enum_of(&parameter("/v1/billing/export", "format")),
        ["focus-csv", "focus-json", "csv"]
    );
    assert_eq!(
        enum_of(&parameter("/v1/provider/earnings", "period")),
        ["month", "day"]
    );
    // Each Rust integer type states its range, so no client sends a u8 300.
    let cpu = &schemas["Resources"]["properties"]["cpu_milli"];
    assert_eq!(
        (cpu["format"].as_str(), cpu["maximum"].as_u64()),
        (Some("uint32"), Some(u32::MAX.into())),
        "{cpu}"
    );
    let seq = &schemas["UsageBatch"]["properties"]["seq"];
    assert_eq!(
        (seq["minimum"].as_u64(), seq["maximum"].as_u64()),
        (Some(1), Some(i64::MAX as u64)),
        "{seq}"
    );
    let duration = &schemas["OrderRequest"]["properties"]["duration_s"];
    assert_eq!(
        (duration["minimum"].as_u64(), duration["maximum"].as_u64()),
        (Some(60), Some(366 * 86400)),
        "{duration}"
    );
    for (schema, field) in [
        ("LoginRequest", "password"),
        ("CreateApiKeyRequest", "name"),
        ("BudgetRequest", "tag_key"),
    ] {
        let property = &schemas[schema]["properties"][field];
        assert_eq!(property["minLength"], 1, "{schema}.{field}: {property}");
    }
}

#[test]
fn the_agent_protocol_bodies_have_schemas_with_the_readmes_examples() {
    let doc = document();
    for (path, request, answer) in [
        (
            "/v1/agent/register",
            "AgentRegisterRequest",
            Some("AgentRegisterResponse"),
        ),
        (
            "/v1/agent/heartbeat",
            "HeartbeatRequest",
            Some("HeartbeatResponse"),
        ),
        (
            "/v1/agent/assignments/{lease_id}/status",
            "StatusReport",
            None,
        ),
        ("/v1/agent/assignments/{lease_id}/logs", "LogsUpload", None),
        ("/v1/agent/usage", "UsageBatch", Some("UsageAck")),
    ] {
        let op = &doc["paths"][path]["post"];
        let body = &op["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(
            body["$ref"],
            format!("#/components/schemas/{request}"),
            "{path}"
        );
        let schema = resolve(&doc, body);
        assert!(
            schema["properties"]
                .as_object()
                .is_some_and(|p| !p.is_empty())
                || schema["oneOf"].as_array().is_some_and(|v| {
                    // A tagged union: every variant a whole object with its fields.
                    v.iter().all(|v| {
                        resolve(&doc, v)["properties"]
                            .as_object()
                            .is_some_and(|p| !p.is_empty())
                    })
                }),
            "{path}: {schema}"
        );
        if let Some(answer) = answer {
            let ok = &op["responses"]["200"]["content"]["application/json"];
            assert_eq!(
                ok["schema"]["$ref"],
                format!("#/components/schemas/{answer}"),
                "{path}"
            );
            assert!(ok["example"].is_object(), "{path} has no example answer");
        }
    }
}
