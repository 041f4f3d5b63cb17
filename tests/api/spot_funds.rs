//! Spot bids that win the auction but whose wallet can no longer cover their
//! hold end in one clear state (issue 15, item 13).

use crate::fleet::{eventually, on_both_databases_fast};
use serde_json::json;

on_both_databases_fast! {
    async fn bids_that_win_without_funds_end_rejected_for_insufficient_funds_and_never_filled(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        // Each bid holds its max_price for an hour: the wallet covers one.
        let (buyer, _) = app.buyer_with(&admin, "5").await;
        let bid = json!({"mode": "spot", "region": "eu-west", "max_price": "4",
                         "resources": {"tflops": 989, "vram_gb": 80, "isolation": "whole"}});
        app.node("eu-west", &[("H100-SXM5-80GB", "whole"), ("H100-SXM5-80GB", "whole"),
                               ("H100-SXM5-80GB", "whole"), ("H100-SXM5-80GB", "whole")]).await;
        // Another buyer holds every GPU while the bids arrive, so no clearing
        // can decide one bid before the next is placed (a bid that had won
        // would hold the wallet, and the next one's placement would be
        // refused instead): all four wait, then meet the wallet together.
        let (other, _) = app.buyer_with(&admin, "1000").await;
        let mut held = Vec::new();
        for _ in 0..4 {
            let r = app.order(&other, json!({"mode": "on_demand", "region": "eu-west",
                "resources": {"tflops": 989, "vram_gb": 80, "isolation": "whole"}})).await;
            assert_eq!(r.body["state"], "filled", "{}", r.body);
            held.push(r.body["lease_id"].as_str().expect("lease").to_owned());
        }
        let mut orders = Vec::new();
        for _ in 0..4 {
            let r = app.order(&buyer, bid.clone()).await;
            assert_eq!(r.status, 201, "{}", r.body);
            assert_eq!(r.body["state"], "open", "{}", r.body);
            orders.push(format!("/v1/orders/{}", r.body["id"].as_str().expect("id")));
        }
        for lease in held {
            let r = app.post(&format!("/v1/leases/{lease}/release"), Some(&other), json!({})).await;
            assert_eq!(r.status, 200, "{}", r.body);
        }
        let states = || async {
            let mut states = Vec::new();
            for order in &orders {
                let o = app.get(order, Some(&buyer)).await.body;
                states.push((o["state"].as_str().unwrap_or_default().to_owned(), o["reject_reason"].clone()));
            }
            states
        };
        // The wallet decides, in whichever clearings the bids win: it covers
        // one hold. Clearings run on the market's own timer, so this waits
        // for them with a hang guard (it used to give up after 6 s, which a
        // loaded machine could pass before the first clearing).
        eventually(60, "every bid to be decided", || async {
            states().await.iter().all(|(s, _)| s != "open")
        })
        .await;
        let states = states().await;
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
