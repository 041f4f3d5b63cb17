//! A spot clearing in steps goes on by itself (ARCHITECTURE.md "A clearing
//! in steps"): with nothing queued, the market task ticks again at once
//! while a clearing is under way, so its later steps do not wait for the
//! engine's clock.

use crate::fleet::eventually;
use crate::helpers::on_both_databases_with;
use reqwest::Method;
use serde_json::json;

/// Two bids a step; a clock that never ticks during the test, and no
/// clearing on the interval: only a change in capacity begins one.
fn steps_of_two(settings: &mut gpuex::config::Settings) {
    crate::fleet::fast(settings);
    settings.clearing_step_bids = 2;
    settings.tick_ms = 600_000;
    settings.spot_interval_s = 86_400;
}

on_both_databases_with! { steps_of_two =>
    async fn a_clearing_in_steps_finishes_without_the_clock(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"), ("H100-SXM5-80GB", "whole")]).await;
        let whole = |gpus: u32| json!({"tflops": 989 * gpus, "vram_gb": 80 * gpus, "isolation": "whole", "gpus": gpus});
        // Another buyer holds both GPUs while the bids queue.
        let (other, _) = app.buyer_with(&admin, "1000").await;
        let mut held = Vec::new();
        for _ in 0..2 {
            let r = app.order(&other, json!({"mode": "on_demand", "region": "eu-west", "resources": whole(1)})).await;
            assert_eq!(r.body["state"], "filled", "{}", r.body);
            held.push(r.body["lease_id"].as_str().expect("lease").to_owned());
        }
        // Four bids for two GPUs rank first; the one-GPU bids after them.
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let mut bids = Vec::new();
        for (gpus, max_price) in [(2, "9.0"), (2, "8.9"), (2, "8.8"), (2, "8.7"), (1, "4.0"), (1, "3.9")] {
            let r = app.order(&buyer, json!({"mode": "spot", "region": "eu-west",
                "max_price": max_price, "resources": whole(gpus)})).await;
            assert_eq!(r.status, 201, "{}", r.body);
            assert_eq!(r.body["state"], "open", "{}", r.body);
            bids.push(r.body["id"].as_str().expect("id").to_owned());
        }
        // One GPU frees: the next batch's tick begins a clearing of the six
        // bids, and tries the first two (they need two GPUs: no room).
        let r = app.post(&format!("/v1/leases/{}/release", held[0]), Some(&other), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let poke = app.request(Method::DELETE, &format!("/v1/orders/{}", bids[5]), Some(&buyer), None).await;
        assert_eq!(poke.status, 200, "{}", poke.body);
        // Its third step gives the first one-GPU bid the free GPU, with no
        // batch and no clock tick after the cancel.
        let first_single = format!("/v1/orders/{}", bids[4]);
        eventually(10, "the clearing's third step", || async {
            app.get(&first_single, Some(&buyer)).await.body["state"] == "filled"
        })
        .await;
        for id in &bids[..4] {
            let r = app.get(&format!("/v1/orders/{id}"), Some(&buyer)).await;
            assert_eq!(r.body["state"], "open", "a two-GPU bid found no room: {}", r.body);
        }
    }
}
