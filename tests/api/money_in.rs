//! Money in is a decimal string only (ARCHITECTURE.md §19, issue 34 item 4): a JSON
//! number, an exponent or more decimals than the field's scale get a 422
//! naming the field, and what is accepted is kept and answered at the
//! field's scale, never echoed with the digits it was sent with.

use crate::helpers::on_both_databases;
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

/// Twenty-six zeros after `5.`: accepted (they are zeros), never echoed.
const FIVE_LONG: &str = "5.00000000000000000000000000";

on_both_databases! {
    async fn money_sent_as_a_json_number_or_an_exponent_gets_a_422_naming_the_field(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, buyer_id) = app.buyer_with(&admin, "100").await;
        // Written exactly as a client would: numbers, in and out of exponent form.
        let cases: [(Method, &str, &str, String, &str); 10] = [
            (Method::POST, "/v1/admin/credits", &admin, format!(r#"{{"user_id": "{buyer_id}", "amount": 5}}"#), "amount"),
            (Method::POST, "/v1/admin/credits", &admin, format!(r#"{{"user_id": "{buyer_id}", "amount": 1E-2}}"#), "amount"),
            (Method::POST, "/v1/admin/credits", &admin,
                format!(r#"{{"user_id": "{buyer_id}", "amount": 100.00000000000000000000000001}}"#), "amount"),
            (Method::POST, "/v1/admin/billing/adjustments", &admin,
                format!(r#"{{"user_id": "{buyer_id}", "amount": 12.5, "reason": "SLA"}}"#), "amount"),
            (Method::PUT, "/v1/budgets", &buyer,
                r#"{"tag_key": "team", "tag_value": "ads", "monthly_limit": 500}"#.to_owned(), "monthly_limit"),
            (Method::PUT, "/v1/admin/prices", &admin,
                r#"[{"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": 0.0021}]"#.to_owned(),
                "[0].list_price"),
            (Method::POST, "/v1/quotes", &buyer,
                r#"{"mode": "spot", "max_price": 1E+1, "resources": {"tflops": 10, "vram_gb": 8}}"#.to_owned(), "max_price"),
            (Method::POST, "/v1/orders", &buyer,
                r#"{"mode": "spot", "max_price": 1E+1, "resources": {"tflops": 10, "vram_gb": 8}}"#.to_owned(), "max_price"),
            (Method::POST, "/v1/resale-listings", &buyer,
                format!(r#"{{"lease_id": "{}", "from": "2030-01-01T00:00:00Z", "ask_per_hour": 1}}"#, Uuid::nil()),
                "ask_per_hour"),
            (Method::POST, "/v1/tco", &buyer, r#"{"node_price_per_hour": 10}"#.to_owned(), "node_price_per_hour"),
        ];
        for (method, path, token, body, field) in cases {
            let r = app.raw(method, path, Some(token), &body).await;
            r.assert_problem(422, Some(field));
            assert!(r.body.to_string().contains("decimal string"), "{path} {body}: {}", r.body);
        }
        // Exponents in a string are no better.
        for text in ["1E+1", "1e-2", "1E1"] {
            app.credit(&admin, buyer_id, text).await.assert_problem(422, Some("amount"));
            let bid = json!({"mode": "spot", "max_price": text, "resources": {"tflops": 10, "vram_gb": 8}});
            app.post("/v1/quotes", None, bid.clone()).await.assert_problem(422, Some("max_price"));
            app.order(&buyer, bid).await.assert_problem(422, Some("max_price"));
        }
        // More decimals than the scale, including beyond what a decimal holds
        // (parsing would round it to 100): refused, not rounded.
        for text in ["100.0000001", "100.00000000000000000000000001", "100.000000000000000000000000001"] {
            app.credit(&admin, buyer_id, text).await.assert_problem(422, Some("amount"));
        }
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["available"], "100", "no refused credit moved money: {}", w.body);
    }

    async fn accepted_money_is_answered_at_its_scale_not_as_sent(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, buyer_id) = app.user("buyer").await;
        let r = app.credit(&admin, buyer_id, FIVE_LONG).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["amount"], "5.000000", "{}", r.body);
        assert_eq!(r.body["available"], "5", "{}", r.body);
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["available"], "5", "{}", w.body);
        let ledger = app.get("/v1/ledger", Some(&buyer)).await;
        assert_eq!(ledger.status, 200, "{}", ledger.body);
        assert!(!ledger.body.to_string().contains("5.0000000"), "{}", ledger.body);

        let adjust = json!({"user_id": buyer_id, "amount": FIVE_LONG, "reason": "SLA"});
        let r = app.post("/v1/admin/billing/adjustments", Some(&admin), adjust).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["amount"], "5.000000", "{}", r.body);

        let budget = json!({"tag_key": "team", "tag_value": "ads", "monthly_limit": FIVE_LONG});
        let r = app.put("/v1/budgets", Some(&buyer), budget).await;
        assert!(r.status.is_success(), "{}", r.body);
        assert_eq!(r.body["monthly_limit"], "5.000000", "{}", r.body);
        // What is within the scale is kept as sent.
        let budget = json!({"tag_key": "team", "tag_value": "ads", "monthly_limit": "0.10"});
        assert_eq!(app.put("/v1/budgets", Some(&buyer), budget).await.body["monthly_limit"], "0.10");

        let price = json!([{"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h",
                            "list_price": "0.00210000000000"}]);
        let r = app.put("/v1/admin/prices", Some(&admin), price).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body[0]["list"], "0.0021", "{}", r.body);
    }

    async fn the_openapi_document_says_money_is_a_string_with_its_scale(app) {
        let doc = app.get("/openapi.json", None).await.body;
        let schemas = &doc["components"]["schemas"];
        for name in ["Amount", "PricePerHour", "ListPrice", "BudgetLimit"] {
            let s = &schemas[name];
            assert!(s.get("oneOf").is_none(), "{name} still takes a JSON number: {s}");
            // One plain string schema, which every client generator reads as a string.
            assert!(s.get("allOf").is_none(), "{name}: {s}");
            let text = s;
            assert_eq!(text["type"], "string", "{name}: {s}");
            assert!(text["pattern"].as_str().is_some_and(|p| p.contains("[0-9]{1,6}")), "{name}: {s}");
            let described: &Value = &s["description"];
            assert!(described.as_str().is_some_and(|d| d.contains("6 decimals")), "{name}: {s}");
        }
        // Quantities still take a number too.
        assert!(schemas["Tflops"]["oneOf"].is_array());
    }
}
