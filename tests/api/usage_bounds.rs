//! Bounds on what nodes report (ARCHITECTURE.md §19, issue 34 item 3): a usage record
//! beyond what its lease holds times its interval is refused on its own, the
//! rest of its batch is stored, the node is marked for review, and no view
//! fails on stored figures, even ones stored before the bounds existed.

use crate::fleet::{
    self, create_node, h100_node, lease, market, node_view, order, place, provisioned, register,
    report,
};
use crate::helpers::on_both_databases;
use gpuex::db::{Db, Money};
use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use uuid::Uuid;

const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);
/// `Decimal::MAX`: the `tflops_s` that made every view of its lease fail.
const DECIMAL_MAX: &str = "79228162514264337593543950335";

/// What the agent meters for the 1g.20gb slice `order("on_demand")` holds
/// (141.286 TFLOPS, 20 GB) over 10.005 s, with `tflops_s` as given.
fn record(lease: Uuid, start_s: u32, tflops_s: &str) -> Value {
    json!({
        "lease_id": lease,
        "interval_start": format!("2026-11-30T05:00:{start_s:02}.120Z"),
        "interval_end": format!("2026-11-30T05:00:{:02}.125Z", start_s + 10),
        "tflops_s": tflops_s,
        "vram_gb_s": "200.100",
        "mean_utilization": "0.92"
    })
}

const METERED: &str = "1413.566430";

/// GETs `path` and asserts 200.
async fn ok(app: &crate::helpers::TestApp, token: &str, path: &str) -> Value {
    let r = app.get(path, Some(token)).await;
    assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    r.body
}

fn dec(v: &Value) -> Decimal {
    v.as_str()
        .unwrap_or_else(|| panic!("not a decimal string: {v}"))
        .parse()
        .unwrap()
}

on_both_databases! {
    async fn a_huge_usage_record_is_refused_alone_and_marks_the_node_for_review(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        let fresh = node_view(&app, &m.provider, node.id).await;
        assert_eq!(fresh["under_review"], false, "{fresh}");
        assert_eq!(fresh["review_reason"], Value::Null, "{fresh}");

        let batch = json!({"agent_id": node.id, "seq": 1, "records": [
            record(lease_id, 6, METERED),
            record(lease_id, 16, DECIMAL_MAX),
            record(lease_id, 26, METERED),
        ]});
        for duplicate in [false, true] {
            // 200, not 422: the agent drops a batch answered 422, honest records and all.
            let r = app.post("/v1/agent/usage", Some(&node.token), batch.clone()).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            assert_eq!(r.body["seq"], 1);
            assert_eq!(r.body["duplicate"], duplicate);
            let refused = r.body["refused"].as_array().expect("refused records named");
            assert_eq!(refused.len(), 1, "{}", r.body);
            assert_eq!(refused[0]["index"], 1);
            assert_eq!(refused[0]["lease_id"], lease_id.to_string());
            assert_eq!(refused[0]["field"], "records[1].tflops_s");
            assert!(refused[0]["reason"].as_str().unwrap().starts_with("must be at most "), "{}", r.body);
        }
        // The batch's other two records are stored, once.
        assert_eq!(fleet::scalar(&app, "SELECT COUNT(*) FROM usage_records").await, 2);
        let view = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(dec(&view["usage"]["tflops_s"]), "2827.13286".parse::<Decimal>().unwrap());
        assert_eq!(dec(&view["usage"]["vram_gb_s"]), "400.2".parse::<Decimal>().unwrap());
        ok(&app, &m.buyer, "/v1/leases").await;
        ok(&app, &m.buyer, "/v1/billing/profile").await;

        let node_now = node_view(&app, &m.provider, node.id).await;
        assert_eq!(node_now["under_review"], true, "{node_now}");
        let reason = node_now["review_reason"].as_str().unwrap();
        assert!(reason.contains(&lease_id.to_string()) && reason.contains("records[1].tflops_s"), "{reason}");
        let listed = ok(&app, &m.provider, "/v1/nodes").await;
        assert!(listed.to_string().contains("\"under_review\":true"), "{listed}");

        // A record within its bounds still goes through, and keeps the first reason.
        let honest = json!({"agent_id": node.id, "seq": 2, "records": [record(lease_id, 36, METERED)]});
        let r = app.post("/v1/agent/usage", Some(&node.token), honest).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body, json!({"seq": 2, "duplicate": false}));
        assert_eq!(node_view(&app, &m.provider, node.id).await["review_reason"], reason);
        // vram is bounded too.
        let mut greedy = record(lease_id, 46, METERED);
        greedy["vram_gb_s"] = json!("300");
        let r = app
            .post("/v1/agent/usage", Some(&node.token), json!({"agent_id": node.id, "seq": 3, "records": [greedy]}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["refused"][0]["field"], "records[0].vram_gb_s", "{}", r.body);
        assert_eq!(fleet::scalar(&app, "SELECT COUNT(*) FROM usage_records").await, 3);
    }

    async fn a_usage_record_holding_more_memory_than_its_slice_is_refused_alone(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        // The 1g.20gb slice: 20 GiB = 21 474.83648 MB, + 1 % = 21 689.58.
        let mut full = record(lease_id, 6, METERED);
        full["peak_memory_mb"] = json!(21_689);
        let mut over = record(lease_id, 16, METERED);
        over["peak_memory_mb"] = json!(21_690);
        let batch = json!({"agent_id": node.id, "seq": 1, "records": [full, over]});
        let r = app.post("/v1/agent/usage", Some(&node.token), batch).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let refused = r.body["refused"].as_array().expect("refused records named");
        assert_eq!(refused.len(), 1, "{}", r.body);
        assert_eq!(refused[0]["index"], 1);
        assert_eq!(refused[0]["field"], "records[1].peak_memory_mb");
        assert_eq!(fleet::scalar(&app, "SELECT COUNT(*) FROM usage_records").await, 1);
        assert_eq!(fleet::scalar(&app, "SELECT MAX(peak_memory_mb) FROM usage_records").await, 21_689);
        assert_eq!(node_view(&app, &m.provider, node.id).await["under_review"], true);
    }

    async fn a_leases_usage_summary_has_its_peak_memory_and_median_utilization(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        let db = Db::connect(&app.database_url).await.expect("db");
        let empty = gpuex::nodes::lease_usage_summary(&db, lease_id).await.expect("summary");
        assert_eq!(
            empty,
            gpuex::nodes::UsageSummary { peak_memory_mb: None, utilization_p50: None, records: 0 }
        );
        let mut records = Vec::new();
        for (i, (utilization, peak)) in
            [(json!("0.2"), json!(5_000)), (json!("0.9"), json!(12_000)), (Value::Null, Value::Null), (json!("0.5"), Value::Null)]
                .into_iter()
                .enumerate()
        {
            let mut r = record(lease_id, 6 + 10 * i as u32, METERED);
            r["mean_utilization"] = utilization;
            r["peak_memory_mb"] = peak;
            records.push(r);
        }
        let batch = json!({"agent_id": node.id, "seq": 1, "records": records});
        let r = app.post("/v1/agent/usage", Some(&node.token), batch).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body, json!({"seq": 1, "duplicate": false}));
        let summary = gpuex::nodes::lease_usage_summary(&db, lease_id).await.expect("summary");
        assert_eq!(
            summary,
            gpuex::nodes::UsageSummary {
                peak_memory_mb: Some(12_000),
                utilization_p50: Some("0.5".parse().unwrap()),
                records: 4,
            }
        );
    }

    async fn usage_stored_before_the_bounds_breaks_no_view(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        // What an agent could store before the bounds: two figures whose sum
        // overflows `Decimal` (the handlers panicked with "Addition overflowed").
        let db = Db::connect(&app.database_url).await.expect("db");
        let now = chrono::Utc::now();
        for seq in [1_i64, 2] {
            gpuex::db::dispatch!(&db, pool => {
                sqlx::query(
                    "INSERT INTO usage_records (agent_id, seq, lease_id, interval_start, interval_end, \
                     tflops_s, vram_gb_s, mean_utilization) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(node.id).bind(seq).bind(lease_id).bind(now).bind(now)
                .bind(Money(Decimal::MAX)).bind(Money(Decimal::MAX)).bind(Some(Money(Decimal::ONE)))
                .execute(pool).await.expect("usage record");
            });
        }
        let view = lease(&app, &m.buyer, lease_id).await;
        // The overflowing term is skipped (and logged), not the view.
        assert_eq!(dec(&view["usage"]["tflops_s"]), Decimal::MAX, "{view}");
        ok(&app, &m.buyer, "/v1/leases").await;
        ok(&app, &m.buyer, "/v1/billing/profile").await;
        ok(&app, &m.buyer, "/v1/billing/usage?group_by=mode").await;
    }
}
