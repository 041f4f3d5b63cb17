//! Orders over HTTP: each mode, each reject reason, cancel, idempotency,
//! isolation between tenants, fills and holds.

use crate::helpers::on_both_databases;
use chrono::{Duration, DurationRound, Utc};
use reqwest::Method;
use serde_json::json;

fn on_demand(tflops: u32, vram_gb: u32) -> serde_json::Value {
    json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
           "resources": {"tflops": tflops, "vram_gb": vram_gb}})
}

on_both_databases! {
    async fn an_on_demand_order_is_filled_on_a_concrete_slice_with_funds_held(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let node = app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let r = app.order(&buyer, on_demand(100, 8)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "filled");
        let lease_id = r.body["lease_id"].as_str().unwrap().to_owned();
        let lease = app.get(&format!("/v1/leases/{lease_id}"), Some(&buyer)).await;
        assert_eq!(lease.status, 200);
        assert_eq!(lease.body["node_id"], node.id.to_string());
        assert_eq!(lease.body["gpu_model"], "H100-SXM5-80GB");
        assert_eq!(lease.body["units"]["tflops_h"], "100");
        assert_eq!(lease.body["units"]["vram_h"], "2");
        // 100 × 0.00378 + 2 × 0.09 per hour
        assert_eq!(lease.body["price_per_hour"], "0.558");
        assert_eq!(lease.body["placement"]["gpus"][0]["slot"]["kind"], "shared");
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["held"], "0.558");
        assert_eq!(w.body["available"], "99.442");
        let fills = app.get(&format!("/v1/orders/{}/fills", r.body["id"].as_str().unwrap()), Some(&buyer)).await;
        assert_eq!(fills.body.as_array().unwrap().len(), 1);
        assert!(fills.body[0]["report"]["explanation"].is_string(), "{}", fills.body);
        assert!(fills.body[0]["report"]["why_slice"].is_object());
    }

    async fn a_credit_between_two_orders_is_seen_by_the_second_and_every_balance_stays_exact(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        // An hour of this order holds 0.558: one fits, two do not.
        let (buyer, buyer_id) = app.buyer_with(&admin, "1").await;
        assert_eq!(app.order(&buyer, on_demand(100, 8)).await.body["state"], "filled");
        app.order(&buyer, on_demand(100, 8)).await.assert_code(422, "insufficient_funds");
        // The market remembers the balances its last batch left; a credit
        // committed since must not be missed, nor overwritten.
        assert_eq!(app.credit(&admin, buyer_id, "0.6").await.status, 201);
        let r = app.order(&buyer, on_demand(100, 8)).await;
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        app.order(&buyer, on_demand(100, 8)).await.assert_code(422, "insufficient_funds");
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["balance"], "1.600");
        assert_eq!(w.body["held"], "1.116");
        assert_eq!(w.body["available"], "0.484");
        // Newest first: each posting's balance follows from the one before.
        let ledger = app.get("/v1/ledger", Some(&buyer)).await;
        let items = ledger.body["items"].as_array().unwrap();
        let after: Vec<&str> = items
            .iter()
            .filter(|p| p["account"] == "wallet")
            .map(|p| p["balance_after"].as_str().unwrap())
            .collect();
        assert_eq!(after, ["0.484", "1.042", "0.442", "1"], "{}", ledger.body);
    }

    async fn concurrent_orders_and_credits_leave_every_balance_exact(app) {
        use rust_decimal::Decimal;
        use std::str::FromStr;
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"); 8]).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"); 8]).await;
        // Each order holds 0.558; 5 covers eight of them, and three more
        // credits of 1 arrive while the orders do. The market remembers the
        // balances each batch leaves: a credit landing between two batches
        // must be seen, never lost or overwritten.
        let mut buyers = Vec::new();
        for _ in 0..3 {
            buyers.push(app.buyer_with(&admin, "5").await);
        }
        let app = &app;
        let orders = buyers
            .iter()
            .flat_map(|(token, _)| (0..20).map(move |_| token.clone()));
        let order_replies = futures::future::join_all(
            orders.map(|token| async move { app.order(&token, on_demand(100, 8)).await }),
        );
        let credits = buyers.iter().flat_map(|(_, id)| (0..3).map(move |_| *id));
        let credit_replies = futures::future::join_all(
            credits.map(|id| { let admin = admin.clone(); async move { app.credit(&admin, id, "1").await } }),
        );
        let (order_replies, credit_replies) = tokio::join!(order_replies, credit_replies);
        assert!(credit_replies.iter().all(|r| r.status == 201));
        for r in &order_replies {
            assert!(r.status == 201 || (r.status == 422 && r.body["code"] == "insufficient_funds"), "{} {}", r.status, r.body);
        }
        let hold = Decimal::from_str("0.558").unwrap();
        let dec = |v: &serde_json::Value| Decimal::from_str(v.as_str().unwrap()).unwrap();
        for (token, _) in &buyers {
            let filled = order_replies.iter().zip(buyers.iter().flat_map(|(t, _)| std::iter::repeat_n(t, 20)))
                .filter(|(r, t)| *t == token && r.status == 201)
                .count();
            assert!(filled >= 8, "{filled}");
            let w = app.get("/v1/wallet", Some(token)).await;
            assert_eq!(dec(&w.body["balance"]), Decimal::from(8), "{}", w.body);
            assert_eq!(dec(&w.body["held"]), hold * Decimal::from(filled as u64), "{}", w.body);
            assert_eq!(dec(&w.body["available"]), Decimal::from(8) - hold * Decimal::from(filled as u64));
            // Oldest first, each wallet posting follows from the one before.
            let ledger = app.get("/v1/ledger?limit=500", Some(token)).await;
            let mut postings: Vec<&serde_json::Value> = ledger.body["items"].as_array().unwrap()
                .iter().filter(|p| p["account"] == "wallet").collect();
            postings.reverse();
            let mut balance = Decimal::ZERO;
            for p in &postings {
                balance += dec(&p["amount"]);
                assert_eq!(dec(&p["balance_after"]), balance, "{}", ledger.body);
            }
            assert_eq!(balance, dec(&w.body["available"]));
        }
        let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
        assert_eq!(gpuex::billing::ledger::trial_balance(&db).await.unwrap(), Decimal::ZERO);
    }

    async fn releasing_a_lease_returns_its_hold(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let r = app.order(&buyer, on_demand(100, 8)).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let lease_id = r.body["lease_id"].as_str().unwrap().to_owned();
        let lease = app.get(&format!("/v1/leases/{lease_id}"), Some(&buyer)).await;
        // A whole GPU holds its whole units: 989 TFLOPS and 20 vram_h.
        assert_eq!(lease.body["units"]["tflops_h"], "989");
        let released = app.post(&format!("/v1/leases/{lease_id}/release"), Some(&buyer), json!({})).await;
        assert_eq!(released.status, 200, "{}", released.body);
        assert_eq!(released.body["state"], "ended");
        assert_eq!(released.body["end_reason"], "released");
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["held"], "0");
        assert_eq!(w.body["available"], "1000");
        app.post(&format!("/v1/leases/{lease_id}/release"), Some(&buyer), json!({})).await.assert_code(409, "lease_ended");
    }

    async fn each_reject_reason_has_its_code(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("A100-SXM4-80GB", "whole")]).await;
        let l40s = app.node("us-east", &[("L40S-48GB", "whole")]).await;
        // The only capacity is a whole A100: 2.844 per hour on demand.
        let (poor, _) = app.buyer_with(&admin, "0.01").await;
        app.order(&poor, on_demand(10, 4)).await.assert_code(422, "insufficient_funds");
        let (rich, _) = app.buyer_with(&admin, "10000").await;
        let whole_a100 = json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 300, "vram_gb": 80}});
        assert_eq!(app.order(&rich, whole_a100.clone()).await.body["state"], "filled");
        app.order(&rich, whole_a100).await.assert_code(422, "no_capacity");
        app.order(&rich, json!({"mode": "on_demand", "region": "us-east", "resources": {"tflops": 100, "vram_gb": 8, "gpu_model": "H100-SXM5-80GB"}}))
            .await.assert_code(422, "unsatisfiable_resources");
        app.order(&rich, json!({"mode": "spot", "region": "eu-west", "max_price": "0.0001",
            "resources": {"tflops": 100, "vram_gb": 8}})).await.assert_code(422, "below_floor");
        app.order(&rich, json!({"mode": "reserved", "region": "eu-west", "start_at": Utc::now() + Duration::minutes(10),
            "duration_s": 3600, "resources": {"tflops": 100, "vram_gb": 8}})).await.assert_code(422, "reserved_too_soon");
        app.order(&rich, json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 8, "gpu_model": "GTX-480"}}))
            .await.assert_code(422, "unknown_model");
        app.order(&rich, json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 8, "precision": "fp8", "gpu_model": "A100-SXM4-80GB"}}))
            .await.assert_code(422, "unknown_precision");
        app.order(&rich, json!({"mode": "on_demand", "resources": {"tflops": 50000, "vram_gb": 8}}))
            .await.assert_code(422, "unsatisfiable_resources");
        let r = app.post(&format!("/v1/nodes/{}/cordon", l40s.id), Some(&l40s.provider), json!({"cordoned": true})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        app.order(&rich, json!({"mode": "on_demand", "region": "us-east", "resources": {"tflops": 10, "vram_gb": 8, "gpu_model": "L40S-48GB"}}))
            .await.assert_code(422, "node_cordoned");
        let orders = app.get("/v1/orders?state=rejected", Some(&rich)).await;
        let reasons: Vec<&str> = orders.body["items"].as_array().unwrap().iter().map(|o| o["reject_reason"].as_str().unwrap()).collect();
        assert!(reasons.contains(&"no_capacity") && reasons.contains(&"node_cordoned"), "{reasons:?}");
    }

    async fn a_waiting_order_can_be_cancelled(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let first = app.order(&buyer, on_demand(900, 80)).await;
        assert_eq!(first.body["state"], "filled", "{}", first.body);
        let mut waiting = on_demand(900, 80);
        waiting["max_wait_s"] = json!(600);
        let r = app.order(&buyer, waiting).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "open");
        let id = r.body["id"].as_str().unwrap();
        let cancelled = app.request(Method::DELETE, &format!("/v1/orders/{id}"), Some(&buyer), None).await;
        assert_eq!(cancelled.status, 200, "{}", cancelled.body);
        assert_eq!(cancelled.body["state"], "cancelled");
        app.request(Method::DELETE, &format!("/v1/orders/{id}"), Some(&buyer), None).await.assert_code(409, "not_cancellable");
        let filled = first.body["id"].as_str().unwrap();
        app.request(Method::DELETE, &format!("/v1/orders/{filled}"), Some(&buyer), None).await.assert_code(409, "not_cancellable");
    }

    async fn a_retry_with_the_same_idempotency_key_places_one_order(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let send = |body: serde_json::Value| {
            app.client.post(format!("{}/v1/orders", app.address)).bearer_auth(&buyer)
                .header("Idempotency-Key", "order-7").json(&body).send()
        };
        let first = crate::helpers::TestApp::reply(send(on_demand(100, 8)).await.unwrap()).await;
        let again = crate::helpers::TestApp::reply(send(on_demand(100, 8)).await.unwrap()).await;
        assert_eq!(first.status, 201);
        assert_eq!(again.status, 201);
        assert_eq!(first.body["id"], again.body["id"]);
        let other = crate::helpers::TestApp::reply(send(on_demand(50, 8)).await.unwrap()).await;
        other.assert_code(422, "idempotency_key_reused");
        let orders = app.get("/v1/orders", Some(&buyer)).await;
        assert_eq!(orders.body["items"].as_array().unwrap().len(), 1);
        let leases = app.get("/v1/leases", Some(&buyer)).await;
        assert_eq!(leases.body["items"].as_array().unwrap().len(), 1);
    }

    async fn a_client_order_id_is_unique_per_buyer(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        let (other, _) = app.buyer_with(&admin, "100").await;
        let mut body = on_demand(10, 4);
        body["client_order_id"] = json!("job-1");
        assert_eq!(app.order(&buyer, body.clone()).await.status, 201);
        app.order(&buyer, body.clone()).await.assert_code(409, "duplicate_client_order_id");
        assert_eq!(app.order(&other, body).await.status, 201);
    }

    async fn another_tenants_orders_and_leases_are_404(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let (alice, _) = app.buyer_with(&admin, "100").await;
        let (mallory, _) = app.buyer_with(&admin, "100").await;
        let r = app.order(&alice, on_demand(10, 4)).await;
        let order = r.body["id"].as_str().unwrap();
        let lease = r.body["lease_id"].as_str().unwrap();
        app.get(&format!("/v1/orders/{order}"), Some(&mallory)).await.assert_problem(404, None);
        app.get(&format!("/v1/orders/{order}/fills"), Some(&mallory)).await.assert_problem(404, None);
        app.request(Method::DELETE, &format!("/v1/orders/{order}"), Some(&mallory), None).await.assert_problem(404, None);
        app.get(&format!("/v1/leases/{lease}"), Some(&mallory)).await.assert_problem(404, None);
        app.post(&format!("/v1/leases/{lease}/release"), Some(&mallory), json!({})).await.assert_problem(404, None);
        assert_eq!(app.get("/v1/orders", Some(&mallory)).await.body["items"], json!([]));
        assert_eq!(app.get(&format!("/v1/leases/{lease}"), Some(&alice)).await.body["state"], "provisioning");
    }

    async fn a_provider_or_node_token_cannot_place_orders(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let node = app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        app.order(&node.provider, on_demand(10, 4)).await.assert_problem(403, None);
        app.order(&node.token, on_demand(10, 4)).await.assert_problem(403, None);
        app.get("/v1/leases", Some(&node.token)).await.assert_problem(403, None);
    }

    async fn a_reserved_window_is_booked_ahead_and_a_spot_bid_wins_idle_capacity(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"), ("H100-SXM5-80GB", "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "10000").await;
        // Reserved windows start on a whole hour.
        let start = (Utc::now() + Duration::hours(2)).duration_trunc(Duration::hours(1)).unwrap();
        let reserved = app.order(&buyer, json!({"mode": "reserved", "region": "eu-west", "start_at": start,
            "duration_s": 7200, "resources": {"tflops": 900, "vram_gb": 80}})).await;
        assert_eq!(reserved.status, 201, "{}", reserved.body);
        assert_eq!(reserved.body["state"], "filled");
        let lease = app.get(&format!("/v1/leases/{}", reserved.body["lease_id"].as_str().unwrap()), Some(&buyer)).await;
        assert_eq!(lease.body["mode"], "reserved");
        // 0.85 × list: 989 × 0.0021 × 0.85 + 20 × 0.05 × 0.85
        let price: rust_decimal::Decimal = lease.body["price_per_hour"].as_str().unwrap().parse().unwrap();
        assert_eq!(price, rust_decimal_macros::dec!(2.615365));
        let spot = app.order(&buyer, json!({"mode": "spot", "region": "eu-west", "max_price": "10",
            "resources": {"tflops": 900, "vram_gb": 80}})).await;
        assert_eq!(spot.status, 201, "{}", spot.body);
        let book = app.get("/v1/market/book?depth=5", None).await;
        assert_eq!(book.status, 200);
        let stats = app.get("/v1/market/stats", None).await;
        assert_eq!(stats.body["pools"][0]["gpus"], 2);
        app.get("/v1/market/book?depth=0", None).await.assert_problem(422, Some("query.depth"));
    }

    async fn a_quote_names_the_slice_and_units_it_would_hold(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let node = app.node("eu-west", &[("H100-SXM5-80GB", "mig")]).await;
        let r = app.post("/v1/quotes", None, json!({"mode": "on_demand", "region": "eu-west",
            "resources": {"tflops": 100, "vram_gb": 8, "isolation": "mig"}})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let slice = &r.body["slice"];
        assert_eq!(slice["node_id"], node.id.to_string());
        assert_eq!(slice["placement"]["gpus"][0]["slot"]["kind"], "mig");
        assert_eq!(slice["placement"]["gpus"][0]["slot"]["profile"], "1g.10gb");
        assert_eq!(slice["units"]["held"]["tflops_h"], "141.286");
        assert_eq!(slice["units"]["held"]["vram_h"], "2.5");
    }
}

on_both_databases! {
    /// Orders arriving together share one commit: funds are checked against
    /// what earlier orders of the same batch held, a `client_order_id` used
    /// twice in one batch is refused once, and each answer is its row as stored.
    async fn concurrent_orders_share_a_commit_and_each_answer_is_its_row(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"), ("H100-SXM5-80GB", "shared")]).await;
        // 10 TFLOPS and 4 GB cost 0.1278 an hour, held for the hour: funds for four.
        let (buyer, _) = app.buyer_with(&admin, "0.6").await;
        let bodies: Vec<serde_json::Value> = (0..10)
            .map(|i| {
                let mut body = on_demand(10, 4);
                body["client_order_id"] = json!(format!("job-{}", i.min(7)));
                body
            })
            .collect();
        let replies = futures::future::join_all(bodies.into_iter().map(|b| app.order(&buyer, b))).await;
        let placed: Vec<_> = replies.iter().filter(|r| r.status == 201).collect();
        let duplicates = replies.iter().filter(|r| r.status == 409).count();
        let unfunded = replies
            .iter()
            .filter(|r| r.status == 422 && r.body["code"] == "insufficient_funds")
            .count();
        assert_eq!(placed.len(), 4, "{replies:?}");
        // job-7 was sent three times; a refused order keeps its id too.
        assert_eq!(duplicates, 2, "{replies:?}");
        assert_eq!(unfunded, 4, "{replies:?}");
        for r in &placed {
            assert_eq!(r.body["state"], "filled");
            let id = r.body["id"].as_str().unwrap();
            let stored = app.get(&format!("/v1/orders/{id}"), Some(&buyer)).await;
            assert_eq!(stored.body, r.body, "the answer differs from the stored order");
        }
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["held"], "0.5112");
        assert_eq!(w.body["available"], "0.0888");
        let leases = app.get("/v1/leases", Some(&buyer)).await;
        assert_eq!(leases.body["items"].as_array().unwrap().len(), 4);
    }
}

on_both_databases! {
    /// The engine's demand mix (what placement scores fragmentation against)
    /// is appended to `demand_log` per commit and read back in order at start.
    async fn the_demand_mix_is_logged_and_restored_in_order(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "shared"), ("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        for (tflops, vram_gb) in [(10, 4), (400, 40), (10, 4)] {
            let r = app.order(&buyer, on_demand(tflops, vram_gb)).await;
            assert_eq!(r.status, 201, "{}", r.body);
        }
        let mut app = app;
        app.halt().await;
        let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
        let engine = gpuex::market::restore::load(&db, gpuex::engine::EngineConfig::default())
            .await
            .unwrap();
        let mix: Vec<_> = engine.demand_mix().recent().copied().collect();
        assert_eq!(mix.len(), 3, "{mix:?}");
        assert_eq!(mix[0], mix[2]);
        assert!(mix[1].milli > mix[0].milli, "{mix:?}");
        db.close().await;
        app.resume().await;
        assert_eq!(app.order(&buyer, on_demand(10, 4)).await.status, 201);
    }
}
