//! Charge lines from real leases and adjustments, and what every export makes of them.

use super::*;

on_both_databases! {
    async fn a_real_lease_becomes_charge_lines_with_its_order_mode_sku_region_and_tags(app) {
        let m = crate::fleet::market(&app).await;
        let node = crate::fleet::create_node(&app, &m.provider, crate::fleet::h100_node(1, "mig")).await;
        crate::fleet::register(&app, &node, &[("H100-SXM5-80GB", true)]).await;
        let mut body = crate::fleet::order("on_demand");
        body["tags"] = json!({"business_line": "ads", "team": "ml"});
        let lease_id = crate::fleet::place(&app, &m.buyer, body).await;
        crate::fleet::report(&app, &node, lease_id, crate::fleet::provisioned("MIG-abc")).await;
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        let r = app.post(&format!("/v1/leases/{lease_id}/release"), Some(&m.buyer), json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let (status, _, body) = text(&app, "/v1/billing/export?format=focus-csv", &m.buyer).await;
        assert_eq!(status, 200, "{body}");
        let rows = parse_csv(&body);
        let mine: Vec<_> = rows.iter().filter(|r| r["ResourceId"] == lease_id.to_string()).collect();
        assert!(!mine.is_empty(), "{body}");
        let mut units = std::collections::BTreeSet::new();
        for row in &mine {
            assert_eq!(row["ChargeCategory"], "Usage");
            assert_eq!(row["PricingCategory"], "Standard");
            assert_eq!(row["RegionId"], "eu-west");
            assert!(row["SkuId"].starts_with("H100-SXM5-80GB:"), "{row:?}");
            let tags: Value = serde_json::from_str(&row["Tags"]).unwrap();
            assert_eq!(tags, json!({"business_line": "ads", "team": "ml"}));
            let (list, contracted) = (dec(row, "ListUnitPrice").unwrap(), dec(row, "ContractedUnitPrice").unwrap());
            assert_eq!(contracted, list * Decimal::new(18, 1), "{row:?}");
            units.insert(row["PricingUnit"].clone());
        }
        assert_eq!(units.into_iter().collect::<Vec<_>>(), vec!["GB-Hours", "TFLOPS-Hours"]);
        let billed: Decimal = rows.iter().map(|r| dec(r, "BilledCost").unwrap()).sum();
        let buyer_id: Uuid = app.get("/v1/me", Some(&m.buyer)).await.body["id"].as_str().unwrap().parse().unwrap();
        let db = Db::connect(&app.database_url).await.unwrap();
        assert_eq!(billed, lines::ledger_total(&db, buyer_id, 0, i64::MAX / 4).await.unwrap());
        assert!(billed > Decimal::ZERO);
        // The provider sees it by node, model and mode, less the fee.
        let e = app.get("/v1/provider/earnings", Some(&m.provider)).await;
        assert_eq!(e.status, 200, "{}", e.body);
        let g = &e.body["groups"][0];
        assert_eq!(g["node_id"], node.id.to_string());
        assert_eq!(g["gpu_model"], "H100-SXM5-80GB");
        assert_eq!(g["mode"], "on_demand");
        assert_eq!(Decimal::from_str(g["gross"].as_str().unwrap()).unwrap(), billed);
    }

    async fn a_line_written_before_resale_existed_is_primary_in_every_export(app) {
        let (buyer, buyer_id) = app.user("buyer").await;
        let db = Db::connect(&app.database_url).await.unwrap();
        // The columns a line had before migration 0011, and no more.
        let (zero, amount) = (gpuex::db::Money(Decimal::ZERO), gpuex::db::Money(Decimal::new(-75, 2)));
        gpuex::db::dispatch!(db, pool => {
            sqlx::query(
                "INSERT INTO charges (buyer_id, kind, memo, period_start, period_end, tflops_units, \
                 vram_units, amount, fee, entry_id, created_at) \
                 VALUES ($1, 'credit', 'old goodwill', $2, $3, $4, $4, $5, $4, $6, $7)",
            )
            .bind(buyer_id)
            .bind(JAN_31)
            .bind(JAN_31 + 3600)
            .bind(zero)
            .bind(amount)
            .bind(Uuid::now_v7())
            .bind(chrono::Utc::now())
            .execute(pool)
            .await
            .map(|_| ())
        })
        .unwrap();
        let (_, _, body) = text(&app, &format!("/v1/billing/export?format=focus-csv&{RANGE}"), &buyer).await;
        let rows = parse_csv(&body);
        assert_eq!(rows.len(), 1, "{body}");
        assert_eq!((rows[0]["x_Source"].as_str(), rows[0]["x_ListingId"].as_str()), ("primary", ""));
        let (_, _, plain) = text(&app, &format!("/v1/billing/export?format=csv&{RANGE}"), &buyer).await;
        let plain = parse_csv(&plain);
        assert_eq!((plain[0]["source"].as_str(), plain[0]["listing_id"].as_str()), ("primary", ""));
        db.close().await;
    }

    async fn an_admin_adjustment_is_a_credit_line_with_its_reason(app) {
        let admin = app.admin().await;
        let (buyer, buyer_id) = app.buyer_with(&admin, "10").await;
        let r = app.post("/v1/admin/billing/adjustments", Some(&admin), json!({
            "user_id": buyer_id, "amount": "2.50", "reason": "SLA breach in November",
            "period_start": "2026-11-01T00:00:00Z", "period_end": "2026-11-02T00:00:00Z",
            "tags": {"business_line": "ads"}})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let w = app.get("/v1/wallet", Some(&buyer)).await;
        assert_eq!(Decimal::from_str(w.body["available"].as_str().unwrap()).unwrap(), Decimal::new(125, 1));
        let (_, _, body) = text(&app, "/v1/billing/export?format=focus-csv", &buyer).await;
        let rows = parse_csv(&body);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["ChargeCategory"], "Credit");
        assert_eq!(rows[0]["BilledCost"], "-2.5");
        assert_eq!(rows[0]["ChargeDescription"], "Credit: SLA breach in November");
        let inv = app.get("/v1/billing/invoices/2026-11", Some(&buyer)).await;
        assert_eq!(inv.body["items"][0]["memo"], "SLA breach in November");
        assert_eq!(inv.body["total"], inv.body["ledger_total"]);
        app.post("/v1/admin/billing/adjustments", Some(&buyer), json!({"user_id": buyer_id, "amount": "1", "reason": "x"}))
            .await.assert_problem(403, None);
        app.post("/v1/admin/billing/adjustments", Some(&admin), json!({"user_id": buyer_id, "amount": "1", "reason": " "}))
            .await.assert_problem(422, Some("reason"));
        app.post("/v1/admin/billing/adjustments", Some(&admin), json!({"user_id": Uuid::now_v7(), "amount": "1", "reason": "x"}))
            .await.assert_problem(422, Some("user_id"));
    }

    async fn text_beyond_ascii_survives_every_export_exactly(app) {
        let admin = app.admin().await;
        let (buyer, buyer_id) = app.buyer_with(&admin, "10").await;
        let memo = "SLA credit — café outage";
        let r = app.post("/v1/admin/billing/adjustments", Some(&admin), json!({
            "user_id": buyer_id, "amount": "1", "reason": memo})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let (_, content_type, body) = text(&app, "/v1/billing/export?format=focus-csv", &buyer).await;
        assert!(content_type.contains("charset=utf-8"), "{content_type}");
        let rows = parse_csv(&body);
        assert_eq!(rows[0]["x_ChargeDescription"], format!("Credit: {memo}"));
        // FOCUS's own column stays ASCII, as its StringHandling rule requires,
        // transliterated rather than blanked out.
        assert_eq!(rows[0]["ChargeDescription"], "Credit: SLA credit -- cafe outage");
        let (_, _, json_body) = text(&app, "/v1/billing/export?format=focus-json", &buyer).await;
        let parsed: Value = serde_json::from_str(&json_body).expect("JSON");
        assert_eq!(parsed[0]["x_ChargeDescription"], format!("Credit: {memo}"));
        let (_, _, plain) = text(&app, "/v1/billing/export?format=csv", &buyer).await;
        assert_eq!(parse_csv(&plain)[0]["memo"], memo);
    }

    async fn a_running_lease_gets_notice_when_its_budget_is_nearly_spent(app) {
        let m = crate::fleet::market(&app).await;
        let node = crate::fleet::create_node(&app, &m.provider, crate::fleet::h100_node(1, "mig")).await;
        crate::fleet::register(&app, &node, &[("H100-SXM5-80GB", true)]).await;
        let mut body = crate::fleet::order("on_demand");
        body["tags"] = json!({"business_line": "ads"});
        let lease_id = crate::fleet::place(&app, &m.buyer, body).await;
        crate::fleet::report(&app, &node, lease_id, crate::fleet::provisioned("MIG-abc")).await;
        // A limit below the cost of one notice period: the watcher gives notice.
        let r = app.put("/v1/budgets", Some(&m.buyer), json!({"tag_key": "business_line", "tag_value": "ads", "monthly_limit": "0.000001"})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        crate::fleet::eventually(40, "the budget notice", || async {
            let l = crate::fleet::lease(&app, &m.buyer, lease_id).await;
            l["state"] == "preempting"
        })
        .await;
    }
}
