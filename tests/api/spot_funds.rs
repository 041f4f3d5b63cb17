//! Spot bids that win the auction but whose wallet can no longer cover their
//! hold end in one clear state (issue 15, item 13).

use crate::fleet::on_both_databases_fast;
use serde_json::json;
use std::time::Duration;

on_both_databases_fast! {
    async fn bids_that_win_without_funds_end_rejected_for_insufficient_funds_and_never_filled(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"), ("H100-SXM5-80GB", "whole"),
                               ("H100-SXM5-80GB", "whole"), ("H100-SXM5-80GB", "whole")]).await;
        // Each bid holds its max_price for an hour: the wallet covers one.
        let (buyer, _) = app.buyer_with(&admin, "5").await;
        let bid = json!({"mode": "spot", "region": "eu-west", "max_price": "4",
                         "resources": {"tflops": 989, "vram_gb": 80, "isolation": "whole"}});
        let mut orders = Vec::new();
        for _ in 0..4 {
            let r = app.order(&buyer, bid.clone()).await;
            assert_eq!(r.status, 201, "{}", r.body);
            orders.push(format!("/v1/orders/{}", r.body["id"].as_str().expect("id")));
        }
        let mut states = Vec::new();
        for _ in 0..60 {
            states.clear();
            for order in &orders {
                let o = app.get(order, Some(&buyer)).await.body;
                states.push((o["state"].as_str().unwrap_or_default().to_owned(), o["reject_reason"].clone()));
            }
            if states.iter().all(|(s, _)| s != "open") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let filled: Vec<_> = states.iter().filter(|(s, _)| s == "filled").collect();
        let rejected: Vec<_> = states.iter().filter(|(s, _)| s == "rejected").collect();
        assert_eq!(filled.len(), 1, "{states:?}");
        assert!(filled[0].1.is_null(), "a filled order has no reject reason: {states:?}");
        assert_eq!(rejected.len(), 3, "{states:?}");
        assert!(rejected.iter().all(|(_, r)| r == "insufficient_funds"), "{states:?}");
        let book = app.get("/v1/market/stats", None).await.body;
        assert_eq!(book["open_orders"], 0, "{book}");
        let w = app.get("/v1/wallet", Some(&buyer)).await.body;
        assert_eq!(w["held"], "4", "one hold, the winner's: {w}");
    }
}
