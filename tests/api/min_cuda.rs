//! `resources.min_cuda` over HTTP: the CUDA version an agent reports for its
//! driver decides where an order may run; a node that reported none, or an
//! older one, is never chosen for it.

use crate::fleet::registration;
use crate::helpers::{on_both_databases, TestApp, TestNode};
use serde_json::{json, Value};

/// A whole H100 in eu-west whose agent registered with a driver for `cuda`.
async fn registered(app: &TestApp, cuda: &str) -> TestNode {
    let node = app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
    let mut body = registration(&[("H100-SXM5-80GB", false)]);
    body["gpus"][0]["cuda_version"] = json!(cuda);
    let r = app
        .post("/v1/agent/register", Some(&node.token), body)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    node
}

fn needing(cuda: &str) -> Value {
    json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
           "resources": {"tflops": 100, "vram_gb": 8, "min_cuda": cuda}})
}

async fn node_of_order(app: &TestApp, buyer: &str, order: Value) -> String {
    let r = app.order(buyer, order).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let lease = r.body["lease_id"].as_str().expect("filled");
    let lease = app.get(&format!("/v1/leases/{lease}"), Some(buyer)).await;
    lease.body["node_id"].as_str().expect("a node").to_owned()
}

on_both_databases! {
    async fn an_order_runs_only_where_the_driver_supports_its_cuda_version(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let older = registered(&app, "12.2").await;
        let newer = registered(&app, "12.10").await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        // 12.10 is above 12.4: compared as numbers, not as text.
        assert_eq!(node_of_order(&app, &buyer, needing("12.4")).await, newer.id.to_string());
        app.order(&buyer, needing("12.4")).await.assert_code(422, "no_capacity");
        app.order(&buyer, needing("13")).await.assert_code(422, "unsatisfiable_resources");
        assert_eq!(node_of_order(&app, &buyer, needing("12.2")).await, older.id.to_string());
        app.order(&buyer, needing("12.x")).await.assert_problem(422, Some("resources.min_cuda"));
    }

    async fn a_node_whose_agent_reports_no_cuda_version_takes_no_order_that_names_one(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        registered(&app, "N/A").await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        app.order(&buyer, needing("11")).await.assert_code(422, "unsatisfiable_resources");
        let mut anything = needing("11");
        anything["resources"]["min_cuda"] = Value::Null;
        assert_eq!(app.order(&buyer, anything).await.status, 201);
    }
}
