use crate::helpers::on_both_databases;
use chrono::{Duration, DurationRound, Utc};
use serde_json::json;

on_both_databases! {
    async fn every_price_derives_exactly_from_the_list_price(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let r = app.get("/v1/prices?region=eu-west&gpu_model=H100-SXM5-80GB", None).await;
        assert_eq!(r.status, 200);
        let prices = r.body.as_array().unwrap();
        assert_eq!(prices.len(), 2);
        let tflops = prices.iter().find(|p| p["unit"] == "tflops_h").unwrap();
        assert_eq!(tflops["list"], "0.0021");
        assert_eq!(tflops["on_demand"], "0.00378");
        assert_eq!(tflops["reserved"], "0.001785");
        assert_eq!(tflops["spot_floor"], "0.00105");
        assert_eq!(tflops["spot_cap"], "0.00147");
        assert_eq!(tflops["resale_cap"], "0.003402");
        assert_eq!(tflops["resale_cap_reserved"], "0.0016065");
        let vram = prices.iter().find(|p| p["unit"] == "vram_h").unwrap();
        assert_eq!(vram["on_demand"], "0.09");
        assert_eq!(vram["reserved"], "0.0425");
        assert_eq!(vram["currency"], "USD");
        assert_eq!(app.get("/v1/prices", None).await.body.as_array().unwrap().len(), 8);
    }

    async fn every_price_change_is_recorded(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let r = app.put("/v1/admin/prices", Some(&admin), json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "0.0030"}
        ])).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let h = app.get("/v1/prices/history?region=eu-west&gpu_model=H100-SXM5-80GB&unit=tflops_h", None).await;
        let changes = h.body.as_array().unwrap();
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[0]["list_price"], "0.003");
        assert_eq!(changes[0]["previous_price"], "0.0021");
        assert!(changes[1]["previous_price"].is_null());
        app.get("/v1/prices/history?limit=0", None).await.assert_problem(422, Some("query.limit"));
        app.get("/v1/prices/history?unit=gallons", None).await.assert_problem(422, Some("query.unit"));
    }

    async fn a_price_batch_with_a_bad_entry_changes_nothing(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let r = app.put("/v1/admin/prices", Some(&admin), json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "9"},
            {"region": "mars", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "1"},
            {"region": "eu-west", "gpu_model": "GTX-480", "unit": "vram_h", "list_price": "-1"}
        ])).await;
        r.assert_problem(422, Some("[1].region"));
        r.assert_problem(422, Some("[2].gpu_model"));
        r.assert_problem(422, Some("[2].list_price"));
        let p = app.get("/v1/prices?region=eu-west&gpu_model=H100-SXM5-80GB", None).await;
        assert!(p.body.as_array().unwrap().iter().all(|p| p["list"] != "9"));
        app.put("/v1/admin/prices", Some(&admin), json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "watts", "list_price": "1"}
        ])).await.assert_problem(422, Some("[0].unit"));
    }

    async fn a_quote_prices_each_unit_for_the_window(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let r = app.post("/v1/quotes", None, json!({
            "mode": "on_demand", "region": "eu-west", "duration_s": 5400,
            "resources": {"tflops": "100", "vram_gb": 16, "gpu_model": "H100-SXM5-80GB"}
        })).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let option = &r.body["options"][0];
        assert_eq!(option["standard_tflops"], "100");
        // 100 × 0.00378 × 1.5 h = 0.567; 4 × 0.09 × 1.5 = 0.54
        assert_eq!(option["breakdown"][0]["amount"], "0.567000");
        assert_eq!(option["breakdown"][1]["amount"], "0.540000");
        assert_eq!(option["total"], "1.107000");
        assert_eq!(r.body["rule"], "on_demand: 1.8 × list price");
    }

    async fn a_quote_converts_precisions_to_standard_tflops(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        // A quote offers only what some node could serve.
        app.node("us-east", &[("H100-SXM5-80GB", "shared"), ("L40S-48GB", "shared")]).await;
        let r = app.post("/v1/quotes", None, json!({
            "mode": "reserved", "region": "us-east", "duration_s": 3600,
            // Reserved windows start on a whole hour.
            "start_at": (Utc::now() + Duration::hours(2)).duration_trunc(Duration::hours(1)).unwrap(),
            "resources": {"tflops": 100, "vram_gb": 8, "precision": "fp8"}
        })).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let options = r.body["options"].as_array().unwrap();
        let h100 = options.iter().find(|o| o["gpu_model"] == "H100-SXM5-80GB").unwrap();
        // 100 × 989 / 1979 = 49.9747…, held to 3 decimals.
        assert_eq!(h100["standard_tflops"], "49.975");
        let l40s = options.iter().find(|o| o["gpu_model"] == "L40S-48GB").unwrap();
        assert_eq!(l40s["standard_tflops"], "49.386");
        let totals: Vec<f64> = options.iter().map(|o| o["total"].as_str().unwrap().parse().unwrap()).collect();
        assert!(totals.windows(2).all(|w| w[0] <= w[1]), "cheapest first: {totals:?}");
    }

    async fn a_reserved_quote_under_an_hour_ahead_is_refused_with_the_reason(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let r = app.post("/v1/quotes", None, json!({
            "mode": "reserved", "start_at": Utc::now() + Duration::minutes(30), "duration_s": 7200,
            "resources": {"tflops": 10, "vram_gb": 8}
        })).await;
        r.assert_code(422, "reserved_too_soon");
        app.post("/v1/quotes", None, json!({
            "mode": "reserved", "start_at": Utc::now() + Duration::hours(3),
            "resources": {"tflops": 10, "vram_gb": 8}
        })).await.assert_problem(422, Some("duration_s"));
    }

    async fn a_quote_no_gpu_can_hold_is_refused(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.post("/v1/quotes", None, json!({
            "mode": "on_demand", "resources": {"tflops": 5000, "vram_gb": 8}
        })).await.assert_code(422, "unsatisfiable_resources");
        app.post("/v1/quotes", None, json!({
            "mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 8, "precision": "fp8", "gpu_model": "A100-SXM4-80GB"}
        })).await.assert_code(422, "unsatisfiable_resources");
        app.post("/v1/quotes", None, json!({
            "mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 8, "gpu_model": "T4-16GB"}
        })).await.assert_code(422, "no_price");
    }
}
