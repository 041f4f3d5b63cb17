//! Issue 34 items 5, 6, 8 (and the `qos` part of 7): a quote and the order
//! placed after it agree. `max_price` binds on every mode, the quote prices
//! what the order will hold, and a reserved window starts on a whole hour.

use crate::fleet::{self, eventually};
use crate::helpers::on_both_databases;
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde_json::{json, Value};

/// 10 TFLOPS and 4 GB on a shared eu-west H100: exactly what is asked is held.
fn small(mode: &str, max_price: &str) -> Value {
    json!({"mode": mode, "region": "eu-west", "duration_s": 3600, "max_price": max_price,
           "resources": {"tflops": 10, "vram_gb": 4}})
}

/// The first whole hour at least two hours after the market's now.
fn whole_hour_ahead(app: &crate::helpers::TestApp) -> DateTime<Utc> {
    (app.market_now() + Duration::hours(2))
        .duration_trunc(Duration::hours(1))
        .unwrap()
}

on_both_databases! {
    async fn max_price_binds_on_demand_reserved_and_pooled_orders(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let start = whole_hour_ahead(&app);
        // Below every mode's price: on-demand 0.1278, pooled 0.071, reserved 0.06035.
        for (mode, price) in [("on_demand", "0.1278"), ("pooled", "0.071"), ("reserved", "0.06035")] {
            let mut body = small(mode, "0.05");
            if mode == "reserved" {
                body["start_at"] = json!(start);
            }
            let quote = app.post("/v1/quotes", None, body.clone()).await;
            assert_eq!(quote.status, 200, "{}", quote.body);
            assert_eq!(quote.body["slice"]["price_per_hour"], price, "{mode}: {}", quote.body);
            assert_eq!(quote.body["slice"]["max_price_binds"], true, "{mode}: {}", quote.body);
            let refused = app.order(&m.buyer, body).await;
            refused.assert_code(422, "max_price_exceeded");
            let detail = refused.body["detail"].as_str().unwrap();
            assert!(detail.ends_with(&format!(": the price is {price} per hour, above max_price 0.05")),
                    "{mode}: the problem names the current price: {detail}");
        }
        let leases = app.get("/v1/leases", Some(&m.buyer)).await;
        assert_eq!(leases.body["items"], json!([]), "nothing was filled above max_price: {}", leases.body);
        // At exactly the price it binds not: filled, at that price.
        let at_price = small("on_demand", "0.1278");
        let quote = app.post("/v1/quotes", None, at_price.clone()).await;
        assert_eq!(quote.body["slice"]["max_price_binds"], false, "{}", quote.body);
        let lease = fleet::place(&app, &m.buyer, at_price).await;
        assert_eq!(fleet::lease(&app, &m.buyer, lease).await["price_per_hour"], "0.1278");
    }

    async fn an_order_over_max_price_waits_within_max_wait_s_and_fills_when_the_price_drops(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let mut body = small("on_demand", "0.1");
        body["max_wait_s"] = json!(600);
        let r = app.order(&m.buyer, body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "open", "it waits instead of filling at 0.1278: {}", r.body);
        let order = r.body["id"].as_str().unwrap().to_owned();
        // The list price of VRAM drops from 0.05 to 0.03: on-demand is now
        // 10 × 0.00378 + 1 × 0.054 = 0.0918, under max_price.
        let cheaper = json!([{"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.03"}]);
        let put = app.put("/v1/admin/prices", Some(&m.admin), cheaper).await;
        assert_eq!(put.status, 200, "{}", put.body);
        eventually(10, "the waiting order to fill", || async {
            app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body["state"] == "filled"
        })
        .await;
        let view = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
        let lease = view["lease_id"].as_str().unwrap().parse().unwrap();
        assert_eq!(fleet::lease(&app, &m.buyer, lease).await["price_per_hour"], "0.0918");
    }

    async fn an_order_over_max_price_expires_when_its_wait_runs_out(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let mut body = small("pooled", "0.05");
        body["max_wait_s"] = json!(60);
        let r = app.order(&m.buyer, body).await;
        assert_eq!(r.body["state"], "open", "{}", r.body);
        let order = r.body["id"].as_str().unwrap().to_owned();
        app.advance_clock(std::time::Duration::from_secs(61));
        eventually(10, "the order to expire", || async {
            app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body["state"] == "expired"
        })
        .await;
        let leases = app.get("/v1/leases", Some(&m.buyer)).await;
        assert_eq!(leases.body["items"], json!([]), "{}", leases.body);
    }

    async fn an_orders_fill_price_equals_its_quote_on_a_mig_slice(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "mig")]).await;
        let body = json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
                          "resources": {"tflops": 100, "vram_gb": 16}});
        let quote = app.post("/v1/quotes", None, body.clone()).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        let slice = quote.body["slice"].clone();
        // The slice holds more than asked (a whole MIG profile), and is priced on that.
        assert_ne!(slice["units"]["held"], slice["units"]["asked"], "{slice}");
        let lease = fleet::place(&app, &m.buyer, body).await;
        let lease = fleet::lease(&app, &m.buyer, lease).await;
        assert_eq!(lease["price_per_hour"], slice["price_per_hour"], "quote {slice} vs lease {lease}");
        assert_eq!(lease["units"], slice["units"]["held"], "quote {slice} vs lease {lease}");
        assert_eq!(slice["total"], slice["price_per_hour"].as_str().map(|p| {
            let p: rust_decimal::Decimal = p.parse().unwrap();
            p.round_dp_with_strategy(6, rust_decimal::RoundingStrategy::MidpointNearestEven).to_string()
        }).unwrap(), "one hour's total is the hour's price: {slice}");
    }

    async fn a_reserved_start_off_the_whole_hour_is_refused_naming_start_at(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let hour = whole_hour_ahead(&app);
        let reserved = |start: DateTime<Utc>| json!({"mode": "reserved", "region": "eu-west",
            "start_at": start, "duration_s": 3600, "resources": {"tflops": 100, "vram_gb": 16}});
        for off in [hour + Duration::minutes(17), hour + Duration::seconds(1), hour + Duration::milliseconds(1)] {
            app.post("/v1/quotes", None, reserved(off)).await.assert_problem(422, Some("start_at"));
            app.order(&m.buyer, reserved(off)).await.assert_problem(422, Some("start_at"));
        }
        let quote = app.post("/v1/quotes", None, reserved(hour)).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        assert_eq!(quote.body["start_at"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), hour);
        let lease = fleet::place(&app, &m.buyer, reserved(hour)).await;
        let lease = fleet::lease(&app, &m.buyer, lease).await;
        assert_eq!(lease["starts_at"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), hour, "{lease}");
    }

    async fn the_quote_takes_qos_as_the_order_does(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let mut body = small("pooled", "1");
        body["qos"] = json!("realtime");
        let quote = app.post("/v1/quotes", None, body.clone()).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        assert_eq!(quote.body["slice"]["price_per_hour"], "0.071", "{}", quote.body);
        let lease = fleet::place(&app, &m.buyer, body).await;
        assert_eq!(fleet::lease(&app, &m.buyer, lease).await["price_per_hour"], quote.body["slice"]["price_per_hour"]);
    }
}

on_both_databases! {
    async fn tco_prices_a_model_where_it_is_supplied(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.user("buyer").await;
        let body = json!({
            "node_price_per_hour": "20",
            "gpu_model": "H100-SXM5-80GB",
            "profile": {
                "tflops_units": {"peak": "4000", "mean": "2000", "baseline": "1500"},
                "vram_units": {"peak": 80, "mean": 40, "baseline": 30}
            }
        });
        // With no supply anywhere, the cheapest list: us-east lists an H100 at 0.0020.
        let r = app.post("/v1/tco", Some(&buyer), body.clone()).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["assumptions"]["region"], "us-east", "{}", r.body);
        // H100s are only supplied in eu-west: TCO prices them there, not where none is.
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let r = app.post("/v1/tco", Some(&buyer), body).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["assumptions"]["region"], "eu-west", "{}", r.body);
    }
}

on_both_databases! {
    async fn a_quote_offers_only_what_a_node_could_serve(app) {
        let m = fleet::market(&app).await;
        let whole_pair = json!({"mode": "on_demand", "duration_s": 3600,
            "resources": {"tflops": 100, "vram_gb": 40, "gpus": 2, "interconnect": "nvlink"}});
        let one_share = json!({"mode": "on_demand", "duration_s": 3600,
            "resources": {"tflops": 10, "vram_gb": 4}});
        // Prices alone serve nothing: four (model, region) pairs are priced, no node is up.
        // Refused as an order would be: no node anywhere holds it.
        let none = app.post("/v1/quotes", None, one_share.clone()).await;
        none.assert_code(422, "unsatisfiable_resources");
        app.order(&m.buyer, one_share.clone()).await.assert_code(422, "unsatisfiable_resources");
        // One shared eu-west H100: only that pair is offered.
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let one = app.post("/v1/quotes", None, one_share.clone()).await;
        assert_eq!(one.status, 200, "{}", one.body);
        let offered: Vec<(&str, &str)> = one.body["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["gpu_model"].as_str().unwrap(), o["region"].as_str().unwrap()))
            .collect();
        assert_eq!(offered, vec![("H100-SXM5-80GB", "eu-west")], "{}", one.body);
        // Two L40S in us-east without NVLink cannot serve an NVLink pair:
        // neither quoted nor filled.
        app.node("us-east", &[("L40S-48GB", "whole"), ("L40S-48GB", "whole")]).await;
        // The quote refuses it with the order's own reason.
        let unlinked = app.post("/v1/quotes", None, whole_pair.clone()).await;
        unlinked.assert_code(422, "unsatisfiable_resources");
        app.order(&m.buyer, whole_pair.clone()).await.assert_code(422, "unsatisfiable_resources");
        // Without NVLink asked, the same two GPUs serve the pair.
        let mut any_pair = whole_pair.clone();
        any_pair["resources"]
            .as_object_mut()
            .unwrap()
            .remove("interconnect");
        let linked_not_needed = app.post("/v1/quotes", None, any_pair).await;
        assert_eq!(linked_not_needed.status, 200, "{}", linked_not_needed.body);
        assert_eq!(linked_not_needed.body["options"][0]["gpu_model"], "L40S-48GB", "{}", linked_not_needed.body);
        // Two H100s linked to each other in eu-west serve it, and only there.
        let r = app.post("/v1/nodes", Some(&m.provider), json!({
            "name": "nvlinked", "region": "eu-west", "cpu_milli": 64000, "memory_mib": 512000,
            "gpus": [{"index": 0, "model": "H100-SXM5-80GB", "mode": "whole", "nvlink": [1]},
                     {"index": 1, "model": "H100-SXM5-80GB", "mode": "whole", "nvlink": [0]}]})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        app.mark_simulated(r.body["id"].as_str().unwrap().parse().unwrap()).await;
        let linked = app.post("/v1/quotes", None, whole_pair).await;
        assert_eq!(linked.status, 200, "{}", linked.body);
        let offered: Vec<&str> = linked.body["options"].as_array().unwrap().iter()
            .map(|o| o["region"].as_str().unwrap()).collect();
        assert_eq!(offered, vec!["eu-west"], "{}", linked.body);
    }
}
