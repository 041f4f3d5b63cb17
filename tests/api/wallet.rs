use crate::helpers::on_both_databases;
use serde_json::json;

on_both_databases! {
    async fn a_credit_shows_in_the_wallet_and_the_ledger(app) {
        let admin = app.admin().await;
        let (buyer, id) = app.user("buyer").await;
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body, json!({"currency": "USD", "balance": "0", "held": "0", "available": "0"}));
        let r = app.credit(&admin, id, "125.50").await;
        assert_eq!(r.status, 201, "{}", r.body);
        app.credit(&admin, id, "0.000001").await;
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["available"], "125.500001");
        assert_eq!(w.body["balance"], "125.500001");
        let ledger = app.get("/v1/ledger", Some(&buyer)).await;
        let items = ledger.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0]["amount"], "0.000001");
        assert_eq!(items[0]["balance_after"], "125.500001");
        assert_eq!(items[1]["kind"], "credit");
        assert_eq!(items[1]["account"], "wallet");
    }

    async fn a_retried_credit_with_the_same_key_is_applied_once(app) {
        let admin = app.admin().await;
        let (buyer, id) = app.user("buyer").await;
        let send = |amount: &'static str| {
            app.client
                .post(format!("{}/v1/admin/credits", app.address))
                .bearer_auth(&admin)
                .header("Idempotency-Key", "top-up-42")
                .json(&json!({"user_id": id, "amount": amount}))
                .send()
        };
        let first = crate::helpers::TestApp::reply(send("40").await.unwrap()).await;
        let again = crate::helpers::TestApp::reply(send("40").await.unwrap()).await;
        assert_eq!(first.status, 201);
        assert_eq!(again.status, 201);
        assert_eq!(first.body, again.body);
        let other = crate::helpers::TestApp::reply(send("41").await.unwrap()).await;
        other.assert_code(422, "idempotency_key_reused");
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["available"], "40");
    }

    async fn invalid_credits_name_the_field_and_move_no_money(app) {
        let admin = app.admin().await;
        let (buyer, id) = app.user("buyer").await;
        for amount in [json!("0"), json!("-5"), json!("1.0000001"), json!("2000000000")] {
            app.post("/v1/admin/credits", Some(&admin), json!({"user_id": id, "amount": amount}))
                .await
                .assert_problem(422, Some("amount"));
        }
        app.post("/v1/admin/credits", Some(&admin), json!({"user_id": id, "amount": "ten"}))
            .await
            .assert_problem(422, Some("amount"));
        app.post("/v1/admin/credits", Some(&admin), json!({"user_id": id}))
            .await
            .assert_problem(422, Some("amount"));
        app.post("/v1/admin/credits", Some(&admin), json!({"user_id": "not-a-uuid", "amount": "1"}))
            .await
            .assert_problem(422, Some("user_id"));
        app.post("/v1/admin/credits", Some(&admin), json!({"user_id": uuid::Uuid::new_v4(), "amount": "1"}))
            .await
            .assert_problem(422, Some("user_id"));
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(w.body["available"], "0");
    }

    async fn the_ledger_pages_with_a_cursor_and_filters_by_time(app) {
        let admin = app.admin().await;
        let (buyer, id) = app.user("buyer").await;
        for i in 1..=5 {
            app.credit(&admin, id, &i.to_string()).await;
        }
        let page1 = app.get("/v1/ledger?limit=2", Some(&buyer)).await;
        let items = page1.body["items"].as_array().unwrap();
        assert_eq!(items.iter().map(|i| i["amount"].as_str().unwrap()).collect::<Vec<_>>(), ["5", "4"]);
        let cursor = page1.body["next_cursor"].as_i64().unwrap();
        let page2 = app.get(&format!("/v1/ledger?limit=2&cursor={cursor}"), Some(&buyer)).await;
        let items = page2.body["items"].as_array().unwrap();
        assert_eq!(items.iter().map(|i| i["amount"].as_str().unwrap()).collect::<Vec<_>>(), ["3", "2"]);
        let page3 = app.get(&format!("/v1/ledger?limit=2&cursor={}", page2.body["next_cursor"]), Some(&buyer)).await;
        assert_eq!(page3.body["items"].as_array().unwrap().len(), 1);
        assert!(page3.body["next_cursor"].is_null());
        let future = app.get("/v1/ledger?from=2999-01-01T00:00:00Z", Some(&buyer)).await;
        assert_eq!(future.body["items"].as_array().unwrap().len(), 0);
        let past = app.get("/v1/ledger?to=2000-01-01T00:00:00Z", Some(&buyer)).await;
        assert_eq!(past.body["items"].as_array().unwrap().len(), 0);
        let all = app.get("/v1/ledger?from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z", Some(&buyer)).await;
        assert_eq!(all.body["items"].as_array().unwrap().len(), 5);
        app.get("/v1/ledger?limit=501", Some(&buyer)).await.assert_problem(422, Some("query.limit"));
        app.get("/v1/ledger?from=yesterday", Some(&buyer)).await.assert_problem(422, Some("query.from"));
        app.get("/v1/ledger?from=2020-01-02T00:00:00Z&to=2020-01-01T00:00:00Z", Some(&buyer)).await.assert_problem(422, Some("query.to"));
    }

    async fn a_user_sees_only_their_own_money(app) {
        let admin = app.admin().await;
        let (alice, alice_id) = app.user("buyer").await;
        let (bob, _) = app.user("buyer").await;
        app.credit(&admin, alice_id, "99").await;
        let w = app.get("/v1/wallet", Some(&bob)).await;
        assert_eq!(w.body["available"], "0");
        assert_eq!(app.get("/v1/ledger", Some(&bob)).await.body["items"].as_array().unwrap().len(), 0);
        assert_eq!(app.get("/v1/ledger", Some(&alice)).await.body["items"].as_array().unwrap().len(), 1);
    }
}
