//! `GET /v1/admin/audit`: every admin change is readable, newest first, by admins only.

use crate::helpers::{on_both_databases, ADMIN_EMAIL};

on_both_databases! {
    async fn the_audit_log_pages_every_admin_change_newest_first(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, buyer_id) = app.user("buyer").await;
        app.credit(&admin, buyer_id, "25").await;

        let all = app.get("/v1/admin/audit?limit=500", Some(&admin)).await;
        assert_eq!(all.status, 200, "{}", all.body);
        let items = all.body["items"].as_array().unwrap();
        assert!(all.body["next_cursor"].is_null());
        let newest = &items[0];
        assert_eq!(newest["action"], "credit");
        assert_eq!(newest["target"], format!("user:{buyer_id}"));
        assert_eq!(newest["details"]["amount"], "25");
        assert_eq!(newest["actor_email"], ADMIN_EMAIL);
        let earlier: Vec<&str> = items.iter().skip(1).map(|e| e["action"].as_str().unwrap()).collect();
        assert!(earlier.contains(&"put_region") && earlier.contains(&"set_price"), "{earlier:?}");
        let ids: Vec<i64> = items.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");

        // Paging visits every entry once.
        let mut seen = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = app.get(&format!("/v1/admin/audit?limit=3{cursor}"), Some(&admin)).await;
            assert_eq!(page.status, 200, "{}", page.body);
            seen.extend(page.body["items"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()));
            match page.body["next_cursor"].as_i64() {
                Some(next) => cursor = format!("&cursor={next}"),
                None => break,
            }
        }
        assert_eq!(seen, ids);

        let credits = app.get("/v1/admin/audit?action=credit", Some(&admin)).await;
        assert_eq!(credits.body["items"].as_array().unwrap().len(), 1);

        app.get("/v1/admin/audit", Some(&buyer)).await.assert_problem(403, None);
        app.get("/v1/admin/audit", None).await.assert_problem(401, None);
        app.get("/v1/admin/audit?action=delete_everything", Some(&admin)).await.assert_problem(422, Some("query.action"));
        app.get("/v1/admin/audit?limit=501", Some(&admin)).await.assert_problem(422, Some("query.limit"));
        app.get("/v1/admin/audit?cursor=0", Some(&admin)).await.assert_problem(422, Some("query.cursor"));
        app.get("/v1/admin/audit?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", Some(&admin))
            .await
            .assert_problem(422, Some("query.to"));
    }
}
