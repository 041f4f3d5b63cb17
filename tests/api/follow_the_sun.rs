//! Follow-the-sun over HTTP (ARCHITECTURE.md §6): `region: any` goes to the region in
//! its local off-peak hours among slices within 5 % of the cheapest, the
//! quote makes the same choice, the fill report says so; a known region with
//! no nodes answers `no_capacity`.
//!
//! Time is real here: the two regions get fixed-offset zones picked from the
//! current UTC hour, one at 02:00 local (off-peak for six hours either way),
//! the other at 14:00 (peak for six hours either way).

use crate::helpers::on_both_databases;
use chrono::{Timelike, Utc};
use serde_json::{json, Value};

/// The fixed-offset IANA zone whose local hour is `local_hour` now. IANA's
/// `Etc/GMT-3` is UTC+3: the sign is inverted.
fn zone_at_local_hour(local_hour: i32) -> String {
    let utc_hour = i32::try_from(Utc::now().hour()).expect("an hour");
    let mut offset = (local_hour - utc_hour).rem_euclid(24);
    if offset > 12 {
        offset -= 24;
    }
    match offset {
        0 => "Etc/GMT".to_owned(),
        o if o > 0 => format!("Etc/GMT-{o}"),
        o => format!("Etc/GMT+{}", -o),
    }
}

fn any_region_order() -> Value {
    json!({"mode": "on_demand", "region": "any", "duration_s": 3600,
           "resources": {"tflops": 100, "vram_gb": 8, "gpu_model": "H100-SXM5-80GB"}})
}

on_both_databases! {
    async fn region_any_goes_to_the_off_peak_region_within_five_percent_and_the_fill_says_so(app) {
        let admin = app.admin().await;
        let night = zone_at_local_hour(2);
        let day = zone_at_local_hour(14);
        for (region, zone) in [("night", night.as_str()), ("day", day.as_str()), ("empty", "Asia/Tokyo")] {
            let r = app.put(&format!("/v1/admin/regions/{region}"), Some(&admin), json!({"timezone": zone})).await;
            assert!(r.status.is_success(), "{}", r.body);
        }
        // 100 TFLOPS and 8 GB list at 0.31 an hour at night, 0.30 by day: 3.3 % apart.
        let mut prices = Vec::new();
        for (region, tflops) in [("night", "0.0021"), ("day", "0.0020"), ("empty", "0.0019")] {
            prices.push(json!({"region": region, "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": tflops}));
            prices.push(json!({"region": region, "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.05"}));
        }
        let r = app.put("/v1/admin/prices", Some(&admin), Value::Array(prices)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let night_node = app.node("night", &[("H100-SXM5-80GB", "shared")]).await;
        app.node("day", &[("H100-SXM5-80GB", "shared")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;

        let quote = app.post("/v1/quotes", None, any_region_order()).await;
        assert_eq!(quote.status, 200, "{}", quote.body);
        assert_eq!(quote.body["slice"]["region"], "night", "{}", quote.body);

        let r = app.order(&buyer, any_region_order()).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let lease_id = r.body["lease_id"].as_str().expect("a lease").to_owned();
        let lease = app.get(&format!("/v1/leases/{lease_id}"), Some(&buyer)).await;
        assert_eq!(lease.body["region"], "night", "{}", lease.body);
        assert_eq!(lease.body["node_id"], night_node.id.to_string());
        // 100 × 0.0021 × 1.8 + 2 × 0.05 × 1.8: the off-peak price, not the cheaper one.
        assert_eq!(lease.body["price_per_hour"], "0.558");

        let order_id = r.body["id"].as_str().expect("an order id");
        let fills = app.get(&format!("/v1/orders/{order_id}/fills"), Some(&buyer)).await;
        assert_eq!(fills.status, 200, "{}", fills.body);
        let report = &fills.body[0]["report"];
        assert_eq!(report["why_slice"]["offpeak"], true, "{report}");
        let passed_over: rust_decimal::Decimal = report["why_slice"]["offpeak_over"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("the cheaper slice's list value");
        assert_eq!(passed_over, rust_decimal_macros::dec!(0.30), "{report}");
        let explanation = report["explanation"].as_str().expect("an explanation");
        // 02:xx local, or 03:xx if the UTC hour turned since the zones were picked.
        assert!(explanation.contains("night is off-peak (0"), "{explanation}");
        assert!(explanation.contains("listed at 0.3/h") && explanation.contains("follow-the-sun"), "{explanation}");

        // A region named by an order, known but without nodes, has no capacity.
        let mut empty = any_region_order();
        empty["region"] = json!("empty");
        // The quote offers nothing there, and says why as the order does.
        app.post("/v1/quotes", None, empty.clone()).await.assert_code(422, "no_capacity");
        app.order(&buyer, empty).await.assert_code(422, "no_capacity");
    }
}
