//! Every money and quantity field has an upper bound, checked at the edge
//! and published in the OpenAPI document, so no input reaches arithmetic
//! that could overflow (issue 15, item 1).

use crate::helpers::on_both_databases;
use serde_json::json;

/// `Decimal::MAX`: the `max_price` whose price index once panicked the engine task.
const DECIMAL_MAX: &str = "79228162514264337593543950335";

fn on_demand() -> serde_json::Value {
    json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
           "resources": {"tflops": 100, "vram_gb": 8}})
}

on_both_databases! {
    async fn the_quote_that_stopped_the_market_is_refused_and_orders_are_still_filled(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let bid = json!({"mode": "spot", "max_price": DECIMAL_MAX,
                         "resources": {"tflops": 10, "vram_gb": 8}});
        app.post("/v1/quotes", None, bid.clone()).await.assert_problem(422, Some("max_price"));
        app.order(&buyer, bid).await.assert_problem(422, Some("max_price"));
        assert_eq!(app.get("/readyz", None).await.status, 200);
        let quote = app.post("/v1/quotes", None, on_demand()).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        let order = app.order(&buyer, on_demand()).await;
        assert_eq!(order.status, 201, "{}", order.body);
        assert_eq!(order.body["state"], "filled");
    }

    async fn each_money_and_quantity_field_beyond_its_bound_gets_a_422_naming_it(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, buyer_id) = app.buyer_with(&admin, "100").await;
        app.credit(&admin, buyer_id, "1000000000").await.assert_problem(422, Some("amount"));
        app.credit(&admin, buyer_id, "0.0000001").await.assert_problem(422, Some("amount"));
        app.credit(&admin, buyer_id, " 5").await.assert_problem(422, Some("amount"));
        let adjust = |amount: &str| json!({"user_id": buyer_id, "amount": amount, "reason": "SLA"});
        app.post("/v1/admin/billing/adjustments", Some(&admin), adjust(DECIMAL_MAX))
            .await
            .assert_problem(422, Some("amount"));
        // The next adjustment is an ordinary one: nothing of the refused one stuck.
        let r = app.post("/v1/admin/billing/adjustments", Some(&admin), adjust("999999999")).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let r = app.post("/v1/admin/billing/adjustments", Some(&admin), adjust("12.5")).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let price = json!([{"region": "eu-west", "gpu_model": "H100-SXM5-80GB",
                            "unit": "tflops_h", "list_price": "1000000"}]);
        app.put("/v1/admin/prices", Some(&admin), price).await.assert_problem(422, Some("[0].list_price"));
        let budget = json!({"tag_key": "team", "tag_value": "ads", "monthly_limit": DECIMAL_MAX});
        app.put("/v1/budgets", Some(&buyer), budget).await.assert_problem(422, Some("monthly_limit"));
        for tflops in [json!("100000"), json!("0.0004"), json!(1e-28), json!(1e300)] {
            let body = json!({"mode": "on_demand", "resources": {"tflops": tflops, "vram_gb": 8}});
            app.order(&buyer, body.clone()).await.assert_problem(422, Some("resources.tflops"));
            app.post("/v1/quotes", None, body).await.assert_problem(422, Some("resources.tflops"));
        }
        let long = json!({"mode": "on_demand", "duration_s": 1_000_000_000_000u64,
                          "resources": {"tflops": 10, "vram_gb": 8}});
        app.order(&buyer, long).await.assert_problem(422, Some("duration_s"));
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["balance"], "1000000111.5", "{}", w.body);
    }

    async fn a_share_below_one_milli_gpu_holds_and_is_billed_for_the_milli_it_takes(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let tiny = json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
                          "resources": {"tflops": "0.001", "vram_gb": 4}});
        let quote = app.post("/v1/quotes", None, tiny.clone()).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        assert_eq!(quote.body["slice"]["units"]["held"]["tflops_h"], "0.989", "{}", quote.body);
        let order = app.order(&buyer, tiny).await;
        assert_eq!(order.body["state"], "filled", "{}", order.body);
        let lease = app.get(&format!("/v1/leases/{}", order.body["lease_id"].as_str().unwrap()), Some(&buyer)).await;
        // One milli-GPU of an H100 is 0.989 standard TFLOPS: 0.989 × 0.00378 + 1 × 0.09.
        assert_eq!(lease.body["units"]["tflops_h"], "0.989", "{}", lease.body);
        assert_eq!(lease.body["placement"]["gpus"][0]["slot"]["milli"], 1, "{}", lease.body);
        assert_eq!(lease.body["price_per_hour"], "0.09373842", "{}", lease.body);
    }

    async fn an_agent_reporting_more_memory_than_any_machine_gets_a_422_naming_the_field(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let node = app.node("eu-west", &[("H100-SXM5-80GB", "mig")]).await;
        let mut body = crate::fleet::registration(&[("H100-SXM5-80GB", true)]);
        body["host"]["memory_mib"] = json!(1u64 << 41);
        body["gpus"][0]["memory_mib"] = json!(u64::MAX);
        let r = app.post("/v1/agent/register", Some(&node.token), body).await;
        r.assert_problem(422, Some("host.memory_mib"));
        r.assert_problem(422, Some("gpus[0].memory_mib"));
    }

    async fn the_openapi_document_publishes_each_bound(app) {
        let doc = app.get("/openapi.json", None).await.body;
        let schemas = &doc["components"]["schemas"];
        // Money is a string only (issue 34); quantities take a number too.
        // One plain string schema per kind (a client generator reads an
        // allOf of strings as an object): a whole part that is not zero, or
        // a fraction with a digit that is not zero, at most 6 places.
        assert_eq!(schemas["Amount"]["type"], "string");
        assert_eq!(
            schemas["Amount"]["pattern"],
            r"^0*([1-9][0-9]{0,8}(\.[0-9]{1,6}0*)?|0\.(0{0}[1-9][0-9]{0,5}|0{1}[1-9][0-9]{0,4}|0{2}[1-9][0-9]{0,3}|0{3}[1-9][0-9]{0,2}|0{4}[1-9][0-9]{0,1}|0{5}[1-9][0-9]{0,0})0*)$"
        );
        assert_eq!(schemas["CreditRequest"]["properties"]["amount"]["$ref"], "#/components/schemas/Amount");
        assert_eq!(schemas["Resources"]["properties"]["tflops"]["$ref"], "#/components/schemas/Tflops");
        assert_eq!(schemas["Tflops"]["oneOf"][1]["maximum"], 99999.999);
        assert_eq!(schemas["PricePerHour"]["type"], "string");
        assert_eq!(schemas["ListPrice"]["type"], "string");
        assert_eq!(schemas["BudgetLimit"]["type"], "string");
    }
}
