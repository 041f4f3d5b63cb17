//! Billing over HTTP: FOCUS exports that tie out to the ledger, invoices,
//! cost by tag, budgets and provider earnings; a proptest of random charge,
//! credit and release sequences against the ledger's invariants.
//!
//! Charge lines are written through the billing functions at chosen times
//! (`gpuex::billing::scenario`), so periods cross an hour, a midnight and a
//! month end deterministically.

use crate::helpers::{on_both_databases, TestApp};
use gpuex::billing::export::{self, Format};
use gpuex::billing::lines::{self, Scope};
use gpuex::billing::scenario::{self, Parties, JAN_31};
use gpuex::db::Db;
use gpuex::pricing::round_money;
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::str::FromStr;
use uuid::Uuid;

/// Parses CSV with quoted fields (RFC 4180) into maps by header.
pub(crate) fn parse_csv(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let (mut field, mut record) = (String::new(), Vec::new());
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    let header = records.remove(0);
    records
        .into_iter()
        .map(|r| header.iter().cloned().zip(r).collect())
        .collect()
}

fn dec(row: &BTreeMap<String, String>, col: &str) -> Option<Decimal> {
    let v = &row[col];
    (!v.is_empty()).then(|| Decimal::from_str(v).unwrap_or_else(|e| panic!("{col}={v}: {e}")))
}

/// A GET's status, content type and body as text.
pub(crate) async fn text(app: &TestApp, path: &str, token: &str) -> (u16, String, String) {
    let r = app
        .client
        .request(Method::GET, format!("{}{}", app.address, path))
        .bearer_auth(token)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, ct, r.text().await.unwrap_or_default())
}

struct World {
    db: Db,
    parties: Parties,
    buyer: String,
    other: String,
    provider: String,
    admin: String,
}

/// The scenario for users who can log in.
async fn world(app: &TestApp) -> World {
    let admin = app.admin().await;
    let (buyer, buyer_id) = app.user("buyer").await;
    let (other, other_id) = app.user("buyer").await;
    let (provider, provider_id) = app.user("provider").await;
    let db = Db::connect(&app.database_url).await.expect("db");
    let parties = scenario::build_for(&db, buyer_id, other_id, provider_id)
        .await
        .expect("scenario");
    World {
        db,
        parties,
        buyer,
        other,
        provider,
        admin,
    }
}

const RANGE: &str = "from=2026-01-31T00:00:00Z&to=2026-02-02T00:00:00Z";

on_both_databases! {
    async fn a_focus_export_keeps_focus_invariants_and_ties_out_to_the_ledger(app) {
        let w = world(&app).await;
        let (status, ct, body) =
            text(&app, &format!("/v1/billing/export?format=focus-csv&{RANGE}"), &w.buyer).await;
        assert_eq!(status, 200, "{body}");
        assert!(ct.starts_with("text/csv"), "{ct}");
        let rows = parse_csv(&body);
        assert!(rows.len() > 40, "{}", rows.len());
        // FOCUS's columns are ASCII; only the custom exact description is not.
        for row in &rows {
            for (column, value) in row.iter().filter(|(c, _)| *c != "x_ChargeDescription") {
                assert!(value.is_ascii(), "{column}: {value}");
            }
        }
        assert!(rows.iter().any(|r| r["x_ChargeDescription"].contains("café")));
        let mut billed = Decimal::ZERO;
        let mut categories = std::collections::BTreeSet::new();
        for row in &rows {
            assert_eq!(row["BillingAccountId"], w.parties.buyer.to_string());
            billed += dec(row, "BilledCost").unwrap();
            if let (Some(p), Some(q)) = (dec(row, "ListUnitPrice"), dec(row, "PricingQuantity")) {
                assert_eq!(dec(row, "ListCost").unwrap(), round_money(p * q), "{row:?}");
                let c = dec(row, "ContractedUnitPrice").unwrap();
                assert_eq!(dec(row, "ContractedCost").unwrap(), round_money(c * q), "{row:?}");
                assert!(p >= Decimal::ZERO && c >= Decimal::ZERO);
            }
            assert!(row["ChargePeriodEnd"] > row["ChargePeriodStart"], "{row:?}");
            assert!(row["BillingPeriodEnd"] > row["BillingPeriodStart"]);
            let tags: Value = serde_json::from_str(&row["Tags"]).expect("Tags is JSON");
            assert!(tags.is_object());
            assert!(row["InvoiceId"].starts_with("GPUEX-2026"));
            let expected = match (row["ChargeCategory"].as_str(), row["SkuPriceId"].rsplit(':').next()) {
                ("Credit", _) => "",
                (_, Some("spot")) => "Dynamic",
                (_, Some("reserved")) => "Committed",
                _ => "Standard",
            };
            assert_eq!(row["PricingCategory"], expected, "{row:?}");
            categories.insert((row["ChargeCategory"].clone(), row["CommitmentDiscountStatus"].clone()));
        }
        // On-demand, spot, pooled usage; a reserved purchase with used and unused parts; credits.
        for want in [("Usage", ""), ("Purchase", ""), ("Usage", "Used"), ("Usage", "Unused"), ("Credit", "")] {
            assert!(categories.contains(&(want.0.to_owned(), want.1.to_owned())), "{want:?} missing: {categories:?}");
        }
        let ledger = lines::ledger_total(&w.db, w.parties.buyer, w.parties.from, w.parties.to).await.unwrap();
        assert_eq!(billed, ledger);
        assert!(ledger > Decimal::ZERO);
        // The JSON form has the same rows.
        let (status, ct, json_body) =
            text(&app, &format!("/v1/billing/export?format=focus-json&{RANGE}"), &w.buyer).await;
        assert_eq!(status, 200);
        assert!(ct.starts_with("application/json"));
        let parsed: Vec<Value> = serde_json::from_str(&json_body).expect("a JSON array");
        assert_eq!(parsed.len(), rows.len());
        // The plain CSV has one row per line.
        let (status, _, plain) = text(&app, &format!("/v1/billing/export?format=csv&{RANGE}"), &w.buyer).await;
        assert_eq!(status, 200);
        let plain = parse_csv(&plain);
        let sum: Decimal = plain.iter().map(|r| dec(r, "amount").unwrap()).sum();
        assert_eq!(sum, ledger);
    }

    async fn the_scenarios_resale_is_resale_rows_for_the_buyer_and_proceeds_credits_for_the_seller(app) {
        let w = world(&app).await;
        let path = format!("/v1/billing/export?format=focus-csv&{RANGE}");
        let listing = w.parties.listing.to_string();
        let (_, _, mine) = text(&app, &path, &w.buyer).await;
        let mine = parse_csv(&mine);
        let resold: Vec<_> = mine.iter().filter(|r| r["x_Source"] == "resale").collect();
        // One reserved hour, two units: a purchase and an amortized usage row each.
        assert_eq!(resold.len(), 4, "{resold:?}");
        assert!(resold.iter().all(|r| r["x_ListingId"] == listing && r["PricingCategory"] == "Committed"));
        assert!(mine.iter().filter(|r| r["x_Source"] != "resale").all(|r| r["x_Source"] == "primary" && r["x_ListingId"].is_empty()));
        let paid: Decimal = resold.iter().map(|r| dec(r, "BilledCost").unwrap()).sum();
        let (_, _, theirs) = text(&app, &path, &w.other).await;
        let theirs = parse_csv(&theirs);
        let proceeds: Vec<_> = theirs.iter().filter(|r| r["x_Source"] == "resale").collect();
        assert_eq!(proceeds.len(), 1, "{proceeds:?}");
        assert_eq!(proceeds[0]["ChargeCategory"], "Credit");
        assert_eq!(proceeds[0]["x_ListingId"], listing);
        let credited = dec(proceeds[0], "BilledCost").unwrap();
        assert_eq!(-credited, paid - gpuex::billing::ledger::platform_fee(paid, scenario::FEE));
        // Each side ties out to its own ledger movements.
        let billed: Decimal = theirs.iter().map(|r| dec(r, "BilledCost").unwrap()).sum();
        let ledger = lines::ledger_total(&w.db, w.parties.other_buyer, w.parties.from, w.parties.to).await.unwrap();
        assert_eq!(billed, ledger);
    }

    async fn a_gzip_client_gets_every_export_whole_byte_for_byte_the_identity_answer(app) {
        let w = world(&app).await;
        let gzip = reqwest::Client::builder().gzip(true).build().expect("client");
        let identity = reqwest::Client::builder().no_gzip().build().expect("client");
        let empty = "from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z";
        for format in ["focus-csv", "focus-json", "csv"] {
            for range in [RANGE, empty] {
                let url = format!("{}/v1/billing/export?format={format}&{range}", app.address);
                let plain = identity.get(&url).bearer_auth(&w.buyer).send().await.expect("identity");
                assert_eq!(plain.status(), 200);
                let plain = plain.bytes().await.expect("identity body");
                // Asked for gzip without decoding: the answer is compressed.
                let raw = identity
                    .get(&url)
                    .bearer_auth(&w.buyer)
                    .header("accept-encoding", "gzip")
                    .send()
                    .await
                    .expect("raw gzip");
                assert_eq!(raw.headers()["content-encoding"], "gzip", "{format}");
                let decoded = gzip.get(&url).bearer_auth(&w.buyer).send().await.expect("gzip");
                assert_eq!(decoded.status(), 200);
                let decoded = decoded.bytes().await.expect("a whole gzip stream");
                assert_eq!(decoded, plain, "{format} {range}");
                assert!(!plain.is_empty(), "even an empty export has its header");
            }
        }
    }

    async fn the_same_export_asked_twice_is_identical_and_other_buyers_never_appear(app) {
        let w = world(&app).await;
        let path = format!("/v1/billing/export?format=focus-csv&{RANGE}");
        let (_, _, first) = text(&app, &path, &w.buyer).await;
        let (_, _, second) = text(&app, &path, &w.buyer).await;
        assert_eq!(first, second);
        assert!(!first.contains(&w.parties.other_buyer.to_string()));
        assert!(!first.contains("secret-project"));
        let (_, _, theirs) = text(&app, &path, &w.other).await;
        assert!(!theirs.contains(&w.parties.buyer.to_string()));
        assert!(theirs.contains("secret-project"));
        // The admin sees everyone's.
        let (_, _, all) = text(&app, &path, &w.admin).await;
        assert!(all.contains(&w.parties.buyer.to_string()) && all.contains(&w.parties.other_buyer.to_string()));
        let r = app.get("/v1/billing/export?format=xml", Some(&w.buyer)).await;
        r.assert_problem(422, None);
        let r = app.get("/v1/billing/export?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", Some(&w.buyer)).await;
        r.assert_problem(422, Some("query.to"));
        app.get("/v1/billing/export", None).await.assert_problem(401, None);
    }

    async fn lines_split_at_hours_and_the_month_end_and_exports_cut_at_from(app) {
        let w = world(&app).await;
        let (_, _, body) = text(&app, &format!("/v1/billing/export?format=focus-csv&{RANGE}"), &w.buyer).await;
        let rows = parse_csv(&body);
        for row in &rows {
            let start = chrono::DateTime::parse_from_rfc3339(&row["ChargePeriodStart"]).unwrap().timestamp();
            let end = chrono::DateTime::parse_from_rfc3339(&row["ChargePeriodEnd"]).unwrap().timestamp();
            // Never across a clock hour.
            assert_eq!(start.div_euclid(3600), (end - 1).div_euclid(3600), "{row:?}");
            let month = &row["ChargePeriodStart"][..7];
            assert_eq!(&row["BillingPeriodStart"][..7], month);
        }
        // The on-demand lease 22:40 → 01:15 is billed in both months.
        let od: Vec<_> = rows.iter().filter(|r| r["SkuPriceId"].ends_with("eu-west:on_demand")).collect();
        assert!(od.iter().any(|r| r["BillingPeriodStart"].starts_with("2026-01")));
        assert!(od.iter().any(|r| r["BillingPeriodStart"].starts_with("2026-02")));
        assert!(od.iter().any(|r| r["ChargePeriodStart"] == "2026-02-01T00:00:00Z"));
        assert!(od.iter().any(|r| r["ChargePeriodEnd"] == "2026-02-01T00:00:00Z"));
        // `from` cuts at a line's start.
        let (_, _, feb) = text(&app, "/v1/billing/export?format=focus-csv&from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z", &w.buyer).await;
        let feb = parse_csv(&feb);
        assert!(!feb.is_empty() && feb.len() < rows.len());
        assert!(feb.iter().all(|r| r["ChargePeriodStart"].as_str() >= "2026-02-01"));
        // The two monthly invoices add up to the whole.
        let jan = app.get("/v1/billing/invoices/2026-01", Some(&w.buyer)).await;
        let febi = app.get("/v1/billing/invoices/2026-02", Some(&w.buyer)).await;
        let total = |r: &crate::helpers::Reply| Decimal::from_str(r.body["total"].as_str().unwrap()).unwrap();
        let ledger = lines::ledger_total(&w.db, w.parties.buyer, w.parties.from, w.parties.to).await.unwrap();
        assert_eq!(total(&jan) + total(&febi), ledger);
    }

    async fn invoices_list_months_show_items_and_equal_the_ledger(app) {
        let w = world(&app).await;
        let list = app.get("/v1/billing/invoices", Some(&w.buyer)).await;
        assert_eq!(list.status, 200, "{}", list.body);
        let ids: Vec<&str> = list.body.as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ids, vec!["2026-02", "2026-01"]);
        let inv = app.get("/v1/billing/invoices/2026-01", Some(&w.buyer)).await;
        assert_eq!(inv.status, 200, "{}", inv.body);
        let d = |v: &Value| Decimal::from_str(v.as_str().unwrap()).unwrap();
        assert_eq!(d(&inv.body["total"]), d(&inv.body["ledger_total"]));
        let items = inv.body["items"].as_array().unwrap();
        assert!(items.iter().any(|i| i["kind"] == "reserved_unused"));
        assert!(items.iter().any(|i| i["kind"] == "reserved_used"));
        assert!(items.iter().any(|i| i["kind"] == "credit" && i["memo"] == "goodwill adjustment — café outage"));
        assert!(items.iter().any(|i| i["tags"]["business_line"] == "ads" && i["sku"] == "H100-SXM5-80GB:tflops_h"));
        let sum: Decimal = items.iter().map(|i| Decimal::from_str(i["amount"].as_str().unwrap()).unwrap()).sum();
        assert_eq!(sum, Decimal::from_str(inv.body["total"].as_str().unwrap()).unwrap());
        // On demand for any period.
        let od = app.get(&format!("/v1/billing/invoices/on-demand?{RANGE}"), Some(&w.buyer)).await;
        assert_eq!(od.status, 200, "{}", od.body);
        let ledger = lines::ledger_total(&w.db, w.parties.buyer, w.parties.from, w.parties.to).await.unwrap();
        assert_eq!(Decimal::from_str(od.body["total"].as_str().unwrap()).unwrap(), ledger);
        // Printable.
        let (status, ct, html) = text(&app, "/v1/billing/invoices/2026-01?format=html", &w.buyer).await;
        assert_eq!(status, 200);
        assert!(ct.starts_with("text/html"));
        assert!(html.contains("GPUEX-202601-") && html.contains("</table>"));
        app.get("/v1/billing/invoices/2026-13", Some(&w.buyer)).await.assert_problem(404, None);
        app.get("/v1/billing/invoices/on-demand", Some(&w.buyer)).await.assert_problem(422, None);
        // Another buyer's invoice for the month holds only their own lines.
        let theirs = app.get("/v1/billing/invoices/2026-01", Some(&w.other)).await;
        assert!(theirs.body["items"].as_array().unwrap().iter().all(|i| i["tags"]["business_line"] == "secret-project"));
    }

    async fn usage_groups_cost_and_units_by_tag_mode_model_region_and_day(app) {
        let w = world(&app).await;
        let ledger = lines::ledger_total(&w.db, w.parties.buyer, w.parties.from, w.parties.to).await.unwrap();
        for group_by in ["tag:business_line", "mode", "gpu_model", "region", "day"] {
            let r = app.get(&format!("/v1/billing/usage?group_by={group_by}&{RANGE}"), Some(&w.buyer)).await;
            assert_eq!(r.status, 200, "{group_by}: {}", r.body);
            assert_eq!(Decimal::from_str(r.body["total"].as_str().unwrap()).unwrap(), ledger, "{group_by}");
        }
        let r = app.get(&format!("/v1/billing/usage?group_by=tag:business_line&{RANGE}"), Some(&w.buyer)).await;
        let keys: Vec<&str> = r.body["groups"].as_array().unwrap().iter().map(|g| g["key"].as_str().unwrap()).collect();
        assert_eq!(keys, vec!["(untagged)", "ads", "search"]);
        let ads = &r.body["groups"][1];
        assert!(ads["units"]["tflops_h"].is_string() && ads["units"]["vram_h"].is_string(), "{ads}");
        let r = app.get(&format!("/v1/billing/usage?group_by=mode&{RANGE}"), Some(&w.buyer)).await;
        let keys: Vec<&str> = r.body["groups"].as_array().unwrap().iter().map(|g| g["key"].as_str().unwrap()).collect();
        assert_eq!(keys, vec!["credit", "on_demand", "pooled", "reserved", "spot"]);
        let r = app.get(&format!("/v1/billing/usage?group_by=day&{RANGE}"), Some(&w.buyer)).await;
        let keys: Vec<&str> = r.body["groups"].as_array().unwrap().iter().map(|g| g["key"].as_str().unwrap()).collect();
        assert_eq!(keys, vec!["2026-01-31", "2026-02-01"]);
        app.get("/v1/billing/usage?group_by=colour", Some(&w.buyer)).await.assert_problem(422, Some("query.group_by"));
    }

    async fn provider_earnings_show_the_fee_and_the_payable_balance(app) {
        let w = world(&app).await;
        let r = app.get(&format!("/v1/provider/earnings?{RANGE}"), Some(&w.provider)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let d = |v: &Value| Decimal::from_str(v.as_str().unwrap()).unwrap();
        let (gross, fee, net) = (d(&r.body["gross"]), d(&r.body["platform_fee"]), d(&r.body["net"]));
        assert!(gross > Decimal::ZERO && fee > Decimal::ZERO);
        assert_eq!(gross - fee, net);
        // 5 % of each hour's capture, rounded once per capture.
        assert!((fee - gross * scenario::FEE).abs() < Decimal::new(1, 4), "{fee} vs {gross}");
        // Everything the provider earned is still payable.
        assert_eq!(d(&r.body["payable_balance"]), net);
        let groups = r.body["groups"].as_array().unwrap();
        assert!(groups.iter().any(|g| g["mode"] == "reserved" && g["gpu_model"] == "A100-SXM4-80GB" && g["period"] == "2026-01"));
        let daily = app.get(&format!("/v1/provider/earnings?period=day&{RANGE}"), Some(&w.provider)).await;
        assert!(daily.body["groups"].as_array().unwrap().iter().any(|g| g["period"] == "2026-02-01"));
        app.get("/v1/provider/earnings", Some(&w.buyer)).await.assert_problem(403, None);
    }

    async fn an_order_that_would_exceed_its_tags_budget_is_refused_with_a_reason(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.buyer_with(&admin, "1000").await;
        let r = app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "business_line", "tag_value": "ads", "monthly_limit": "0.10"})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["monthly_limit"], "0.10");
        assert_eq!(r.body["spent"], "0");
        let order = json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
            "resources": {"tflops": 100, "vram_gb": 8}, "tags": {"business_line": "ads"}});
        let r = app.order(&buyer, order.clone()).await;
        r.assert_code(422, "budget_exceeded");
        assert_eq!(r.content_type, "application/problem+json");
        let detail = r.body["detail"].as_str().unwrap();
        assert!(detail.contains("business_line=ads") && detail.contains("0.1"), "{detail}");
        // Another tag value is not held to it.
        let mut other = order.clone();
        other["tags"] = json!({"business_line": "search"});
        let r = app.order(&buyer, other).await;
        assert_ne!(r.body["code"], "budget_exceeded", "{}", r.body);
        // A reserved window counts whole: 10 h at the reserved price exceeds a 1.00 budget.
        app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "business_line", "tag_value": "ads", "monthly_limit": "1.00"})).await;
        // Reserved windows start on a whole hour.
        let start = chrono::DurationRound::duration_trunc(chrono::Utc::now() + chrono::Duration::hours(2), chrono::Duration::hours(1)).unwrap().to_rfc3339();
        let reserved = json!({"mode": "reserved", "region": "eu-west", "start_at": start, "duration_s": 36000,
            "resources": {"tflops": 100, "vram_gb": 8}, "tags": {"business_line": "ads"}});
        app.order(&buyer, reserved).await.assert_code(422, "budget_exceeded");
        // Removing the budget lifts the limit.
        let r = app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "business_line", "tag_value": "ads", "monthly_limit": "0"})).await;
        assert_eq!(r.status, 200);
        let r = app.order(&buyer, order).await;
        assert_ne!(r.body["code"], "budget_exceeded", "{}", r.body);
        let list = app.get("/v1/budgets", Some(&buyer)).await;
        assert_eq!(list.body.as_array().unwrap().len(), 0);
        // Invalid budgets.
        app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "", "tag_value": "ads", "monthly_limit": "1"})).await.assert_problem(422, Some("tag_key"));
        app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "k", "tag_value": "v", "monthly_limit": "-1"})).await.assert_problem(422, Some("monthly_limit"));
    }

    async fn budgets_count_charges_and_give_running_leases_notice_but_never_reserved(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, buyer_id) = app.buyer_with(&admin, "100").await;
        let (_, provider_id) = app.user("provider").await;
        let db = Db::connect(&app.database_url).await.unwrap();
        let now = chrono::Utc::now().timestamp();
        let on_demand = live_lease(&db, buyer_id, provider_id, "on_demand", now - 600, r#"{"business_line":"ads"}"#).await;
        let reserved = live_lease(&db, buyer_id, provider_id, "reserved", now - 600, r#"{"business_line":"ads"}"#).await;
        let untagged = live_lease(&db, buyer_id, provider_id, "on_demand", now - 600, r#"{"business_line":"search"}"#).await;
        // Under the limit: nobody is noticed.
        app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "business_line", "tag_value": "ads", "monthly_limit": "50"})).await;
        assert!(gpuex::billing::budgets::leases_to_notice(&db, 120, now).await.unwrap().is_empty());
        let spent = gpuex::billing::budgets::spent(&db, buyer_id, "business_line", "ads", now).await.unwrap();
        // 600 s unbilled at 3.6/h on the on-demand lease, plus the reserved window (2 h at 3.6/h) at booking.
        assert_eq!(spent, Decimal::new(600_000, 6) + Decimal::new(7_200_000, 6));
        // Within one notice period of the limit: the tagged on-demand lease gets notice; reserved never.
        app.put("/v1/budgets", Some(&buyer), json!({"tag_key": "business_line", "tag_value": "ads", "monthly_limit": "7.9"})).await;
        let due = gpuex::billing::budgets::leases_to_notice(&db, 120, now).await.unwrap();
        assert_eq!(due, vec![on_demand]);
        assert!(!due.contains(&reserved) && !due.contains(&untagged));
        let view = app.get("/v1/budgets", Some(&buyer)).await;
        // 7.9 − 7.8, less what the on-demand lease accrued since `now` (seconds).
        let remaining = Decimal::from_str(view.body[0]["remaining"].as_str().unwrap()).unwrap();
        assert!(remaining <= Decimal::new(1, 1) && remaining > Decimal::new(9, 2), "{remaining}");
        // Charged lines count once: charges of the tag add to what is spent.
        // Inside this month, which may have begun less than two hours ago.
        let month_start = chrono::Datelike::with_day(&chrono::Utc::now().date_naive(), 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap()
            .and_utc()
            .timestamp();
        let from = (now - 7200).max(month_start);
        let mut spec = scenario::LeaseSpec::on_demand(from, from + (now - from) / 2);
        spec.tags = json!({"business_line": "ads"});
        scenario::lease(&db, buyer_id, provider_id, &spec).await.unwrap();
        let after = gpuex::billing::budgets::spent(&db, buyer_id, "business_line", "ads", now).await.unwrap();
        assert!(after > spent);
    }
}

/// A lease row as the market would keep it (3.6/h, billed until `billed_until`).
async fn live_lease(
    db: &Db,
    buyer: Uuid,
    provider: Uuid,
    mode: &str,
    billed_until: i64,
    tags: &str,
) -> Uuid {
    let (node, order, lease) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let now = chrono::Utc::now();
    let (starts, ends) = if mode == "reserved" {
        (billed_until, Some(billed_until + 7200))
    } else {
        (billed_until, None)
    };
    gpuex::db::dispatch!(db, pool => {
        sqlx::query(
            "INSERT INTO nodes (id, provider_id, name, region, token_hash, status, spec_json, created_at) \
             VALUES ($1, $2, $3, 'eu-west', $4, 'online', '{}', $5)",
        )
        .bind(node).bind(provider).bind(format!("n-{node}")).bind(format!("h-{node}")).bind(now)
        .execute(pool).await.unwrap();
        sqlx::query(
            "INSERT INTO orders (id, buyer_id, mode, state, region, request_json, tags_json, created_at, updated_at) \
             VALUES ($1, $2, $3, 'filled', 'eu-west', '{}', $4, $5, $5)",
        )
        .bind(order).bind(buyer).bind(mode).bind(tags).bind(now)
        .execute(pool).await.unwrap();
        sqlx::query(
            "INSERT INTO leases (id, order_id, buyer_id, node_id, mode, state, gpu_model, region, price_per_hour, \
             billed_until, starts_at, ends_at, record_json, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, 'running', 'H100-SXM5-80GB', 'eu-west', $6, $7, $8, $9, '{}', $10, $10)",
        )
        .bind(lease).bind(order).bind(buyer).bind(node).bind(mode)
        .bind(gpuex::db::Money(Decimal::new(36, 1))).bind(billed_until).bind(starts).bind(ends).bind(now)
        .execute(pool).await.unwrap();
    });
    lease
}

mod ledger;
mod real_leases;
