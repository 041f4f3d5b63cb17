//! Bad input on every endpoint that takes a body: malformed JSON, the wrong
//! content type, missing and out-of-range fields. Each answer is a 4xx
//! problem+json naming the field.

use crate::helpers::on_both_databases;
use reqwest::Method;
use serde_json::{json, Value};

/// A field to break: (field, replacement or None to drop it, the field the problem must name).
type BadField = (&'static str, Option<Value>, &'static str);
/// An endpoint: (method, path, a valid body, fields to break).
type Endpoint = (Method, &'static str, Value, Vec<BadField>);

fn endpoints(user: &str) -> Vec<Endpoint> {
    vec![
        (
            Method::POST,
            "/v1/auth/register",
            json!({"email": "new@example.com", "password": "long enough password", "name": "N", "role": "buyer"}),
            vec![
                ("email", None, "email"),
                ("email", Some(json!("not-an-email")), "email"),
                ("password", Some(json!("short")), "password"),
                ("password", Some(json!(12)), "password"),
                ("name", Some(json!("")), "name"),
                ("role", Some(json!("root")), "role"),
            ],
        ),
        (
            Method::POST,
            "/v1/auth/login",
            json!({"email": "a@b.io", "password": "x"}),
            vec![
                ("email", None, "email"),
                ("password", None, "password"),
                ("password", Some(json!("")), "password"),
            ],
        ),
        (
            Method::POST,
            "/v1/api-keys",
            json!({"name": "k"}),
            vec![
                ("name", None, "name"),
                ("name", Some(json!("")), "name"),
                ("name", Some(json!(["x"])), "name"),
            ],
        ),
        (
            Method::POST,
            "/v1/admin/credits",
            json!({"user_id": user, "amount": "1"}),
            vec![
                ("user_id", None, "user_id"),
                ("amount", Some(json!(-1)), "amount"),
                ("amount", Some(json!(true)), "amount"),
            ],
        ),
        (
            Method::PUT,
            "/v1/admin/regions/eu",
            json!({"timezone": "UTC"}),
            vec![
                ("timezone", None, "timezone"),
                ("timezone", Some(json!("Nowhere/City")), "timezone"),
            ],
        ),
        (
            Method::POST,
            "/v1/quotes",
            json!({"mode": "on_demand", "resources": {"tflops": 1, "vram_gb": 4}}),
            vec![
                ("mode", None, "mode"),
                ("mode", Some(json!("forever")), "mode"),
                ("resources", Some(json!({"vram_gb": 4})), "resources.tflops"),
                (
                    "resources",
                    Some(json!({"tflops": 0, "vram_gb": 4})),
                    "resources.tflops",
                ),
                (
                    "resources",
                    Some(json!({"tflops": 1, "vram_gb": 5})),
                    "resources.vram_gb",
                ),
                (
                    "resources",
                    Some(json!({"tflops": 1, "vram_gb": -4})),
                    "resources.vram_gb",
                ),
                (
                    "resources",
                    Some(json!({"tflops": 1, "vram_gb": 4, "gpus": 9})),
                    "resources.gpus",
                ),
                (
                    "resources",
                    Some(json!({"tflops": 1, "vram_gb": 4, "precision": "fp64"})),
                    "resources.precision",
                ),
                (
                    "resources",
                    Some(json!({"tflops": 1, "vram_gb": 4, "gpu_model": "GTX-480"})),
                    "resources.gpu_model",
                ),
                ("duration_s", Some(json!(10)), "duration_s"),
                ("region", Some(json!("atlantis")), "region"),
            ],
        ),
    ]
}

on_both_databases! {
    async fn every_body_endpoint_answers_bad_input_with_a_problem_naming_the_field(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (_, user) = app.user("buyer").await;
        for (method, path, valid, cases) in endpoints(&user.to_string()) {
            let token = Some(admin.as_str());
            let r = app.raw(method.clone(), path, token, "{,}").await;
            r.assert_problem(400, Some("body"));
            let r = app.raw(method.clone(), path, token, "not json").await;
            r.assert_problem(400, Some("body"));
            let r = app.client.request(method.clone(), format!("{}{}", app.address, path))
                .bearer_auth(&admin).header("content-type", "text/plain").body(valid.to_string()).send().await.unwrap();
            crate::helpers::TestApp::reply(r).await.assert_code(415, "unsupported_media_type");
            let mut unknown = valid.clone();
            unknown["surprise"] = json!(1);
            let r = app.request(method.clone(), path, token, Some(&unknown)).await;
            assert!(r.status.is_client_error(), "{path} accepted an unknown field");
            for (field, replacement, expected) in cases {
                let mut body = valid.clone();
                match replacement {
                    Some(v) => body[field] = v,
                    None => { body.as_object_mut().unwrap().remove(field); }
                }
                let r = app.request(method.clone(), path, token, Some(&body)).await;
                assert!(r.status.is_client_error(), "{method} {path} with bad {field}: {}", r.body);
                assert_eq!(r.content_type, "application/problem+json");
                let errors = r.body["errors"].as_array().cloned().unwrap_or_default();
                assert!(errors.iter().any(|e| e["field"] == expected),
                    "{method} {path}: expected an error naming `{expected}`, got {}", r.body);
            }
        }
    }

    async fn text_with_a_nul_character_is_refused_naming_the_field(app) {
        // PostgreSQL's text cannot hold U+0000: both backends refuse it up front.
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.user("buyer").await;
        let (provider, _) = app.user("provider").await;
        let order = |tags: Value| json!({
            "mode": "on_demand", "region": "eu-west", "duration_s": 3600,
            "resources": {"tflops": 10, "vram_gb": 8}, "tags": tags,
        });
        app.post("/v1/orders", Some(&buyer), order(json!({"team": "a\u{0}b"}))).await
            .assert_problem(422, Some("tags.team"));
        app.post("/v1/orders", Some(&buyer), order(json!({"te\u{0}am": "a"}))).await
            .assert_problem(422, Some("tags"));
        app.post("/v1/nodes", Some(&provider), json!({
            "name": "n", "region": "eu-west",
            "gpus": [{"model": "H100-SXM5-80GB", "mode": "whole"}, {"model": "H100\u{0}", "mode": "whole"}],
        })).await.assert_problem(422, Some("gpus[1].model"));
        app.get("/v1/prices?region=eu%00west", None).await.assert_problem(422, Some("query.region"));
        app.get("/v1/orders?state=open&mode=%00", Some(&buyer)).await.assert_problem(422, Some("query.mode"));
        // Nothing was stored: the buyer has no orders and the provider no nodes.
        assert_eq!(app.get("/v1/orders", Some(&buyer)).await.body["items"], json!([]));
        assert_eq!(app.get("/v1/nodes", Some(&provider)).await.body, json!([]));
        // A backslash followed by `u0000` is ordinary text: the order gets
        // past its fields, to the market (whose region has no GPUs here).
        app.post("/v1/orders", Some(&buyer), order(json!({"path": "C:\\u0000"}))).await
            .assert_code(422, "no_capacity");
    }

    async fn a_price_list_that_is_not_a_list_is_refused(app) {
        let admin = app.admin().await;
        app.put("/v1/admin/prices", Some(&admin), json!({"region": "x"})).await.assert_problem(422, Some("body"));
        app.put("/v1/admin/prices", Some(&admin), json!([])).await.assert_problem(422, Some("body"));
        app.put("/v1/admin/prices", Some(&admin), json!([{"region": "x", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h"}]))
            .await.assert_problem(422, Some("[0].list_price"));
    }
}
