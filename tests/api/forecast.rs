//! `GET /v1/market/forecast` and `gpuex_forecast_units`: the demand forecast
//! fitted from the orders the market took (ARCHITECTURE.md §17).

use crate::helpers::{on_both_databases_with, TestApp};
use gpuex::config::Settings;
use serde_json::{json, Value};
use std::time::Duration;

fn every_second(settings: &mut Settings) {
    settings.forecast_interval_s = 1;
}

fn on_demand(tflops: u32) -> Value {
    json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
           "resources": {"tflops": tflops, "vram_gb": 8}})
}

/// Waits for a refresh that holds the market, and returns its entry.
async fn forecast_of(app: &TestApp, gpu_model: &str, region: &str) -> Value {
    let path = format!("/v1/market/forecast?gpu_model={gpu_model}&region={region}");
    for _ in 0..100 {
        let r = app.get(&path, None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        if let Some(market) = r.body["markets"].as_array().and_then(|m| m.first()) {
            return market.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no forecast for {gpu_model} in {region} within 10 s");
}

on_both_databases_with! { every_second =>
    async fn the_orders_a_market_took_are_forecast_with_the_spot_holdback_they_call_for(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"), ("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        for tflops in [100, 200, 150] {
            let r = app.order(&buyer, on_demand(tflops)).await;
            assert_eq!(r.body["state"], "filled", "{}", r.body);
        }

        // The orders arrived this minute; the forecast counts whole minutes,
        // so it sees them once the clock passes into the next.
        app.advance_clock(Duration::from_secs(60));
        let market = forecast_of(&app, "H100-SXM5-80GB", "eu-west").await;
        assert_eq!(market["method"], "recent_mean", "{market}");
        assert_eq!(market["history_minutes"], 360);
        let points = market["points"].as_array().unwrap();
        assert_eq!(points.len(), 15);
        // 450 TFLOPS in the last of 30 minutes: a mean of 15 per minute,
        // and the 120 s notice covers two of them.
        assert_eq!(points[0]["tflops"], 15.0);
        assert_eq!(market["spot_holdback_tflops"], "30");
        assert!(points.iter().all(|p| p["lower"].as_f64() <= p["tflops"].as_f64()
            && p["upper"].as_f64() >= p["tflops"].as_f64()));

        let metrics = app.metrics_text().await;
        assert!(
            metrics.contains("gpuex_forecast_units{gpu_model=\"H100-SXM5-80GB\",region=\"eu-west\"} 15"),
            "{metrics}"
        );
        // Filters that match nothing, and bad ones.
        let none = app.get("/v1/market/forecast?region=us-east", None).await;
        assert_eq!(none.body["markets"], json!([]));
        assert_eq!(none.body["horizon_minutes"], 15);
        app.get("/v1/market/forecast?region=", None).await.assert_problem(422, Some("query.region"));
        let long = "x".repeat(65);
        app.get(&format!("/v1/market/forecast?gpu_model={long}"), None).await.assert_problem(422, Some("query.gpu_model"));
        let unknown = app.get("/v1/market/forecast?horizon=30", None).await;
        assert!(unknown.status == 400 || unknown.status == 422, "{}", unknown.body);
    }
}

fn every_second_and_a_long_notice(settings: &mut Settings) {
    settings.forecast_interval_s = 1;
    // The forecast's whole horizon is within the notice: 15 minutes.
    settings.preempt_notice_s = 900;
}

fn mig(tflops: u32, vram_gb: u32) -> Value {
    json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
           "resources": {"tflops": tflops, "vram_gb": vram_gb, "isolation": "mig"}})
}

on_both_databases_with! { every_second_and_a_long_notice =>
    async fn the_mig_instances_a_market_took_are_forecast_by_profile(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "mig"), ("H100-SXM5-80GB", "mig")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let mut profiles = Vec::new();
        for (tflops, vram) in [(100, 8); 6].into_iter().chain([(300, 40); 2]) {
            let r = app.order(&buyer, mig(tflops, vram)).await;
            assert_eq!(r.body["state"], "filled", "{}", r.body);
            let lease = app.get(&format!("/v1/leases/{}", r.body["lease_id"].as_str().unwrap()), Some(&buyer)).await;
            profiles.push(lease.body["placement"]["gpus"][0]["slot"]["profile"].as_str().unwrap().to_owned());
        }
        assert_eq!(profiles.iter().filter(|p| *p == "1g.10gb").count(), 6, "{profiles:?}");
        assert_eq!(profiles.iter().filter(|p| *p == "3g.40gb").count(), 2, "{profiles:?}");

        app.advance_clock(Duration::from_secs(60));
        let market = forecast_of(&app, "H100-SXM5-80GB", "eu-west").await;
        // 1,200 TFLOPS in the last of 30 minutes: 40 a minute, 600 over the
        // 15-minute notice, half of what the history asked; so half of its
        // instances of each profile.
        assert_eq!(market["points"][0]["tflops"], 40.0, "{market}");
        assert_eq!(market["spot_holdback_tflops"], "600", "{market}");
        assert_eq!(
            market["mig_instances"],
            json!([{"profile": "1g.10gb", "instances": 3}, {"profile": "3g.40gb", "instances": 1}]),
            "{market}"
        );
    }
}
