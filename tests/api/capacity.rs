//! The capacity profile (`GET /v1/billing/profile`) and the TCO calculator
//! (`POST /v1/tco`) on a small history whose figures are worked out by hand.

use crate::helpers::{on_both_databases, TestApp};
use gpuex::billing::scenario::{self, LeaseSpec, JAN_31};
use gpuex::db::{Db, Money};
use gpuex::engine::Mode;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde_json::{json, Value};
use std::str::FromStr;
use uuid::Uuid;

fn d(v: &Value) -> Decimal {
    Decimal::from_str(
        v.as_str()
            .unwrap_or_else(|| panic!("not a decimal string: {v}")),
    )
    .unwrap_or_else(|_| panic!("not a decimal: {v}"))
}

struct History {
    buyer: String,
    db: Db,
    /// Leases A (on-demand), B (spot), C (on-demand).
    leases: [Uuid; 3],
}

/// Three leases on H100s in eu-west, from `t0`:
/// - A: on-demand, `team=ml`, 100 TFLOPS + 2 VRAM units, t0 → t0+2 h (7,200 s);
/// - B: spot, `team=ml`, 300 TFLOPS + 6 VRAM units, t0+1 h → t0+1.5 h (1,800 s);
/// - C: on-demand, untagged, 100 TFLOPS + 2 VRAM units, t0+2.5 h → t0+2.75 h (900 s).
async fn history(app: &TestApp, t0: i64) -> History {
    let (buyer, buyer_id) = app.user("buyer").await;
    let (_, provider_id) = app.user("provider").await;
    let db = Db::connect(&app.database_url).await.expect("db");
    scenario::fund(&db, buyer_id, dec!(10000))
        .await
        .expect("fund");
    let spec = |mode: Mode, from: i64, to: i64, tflops: Decimal, vram: Decimal, tags: Value| {
        let mut s = LeaseSpec::on_demand(t0 + from, t0 + to);
        s.mode = mode;
        s.multiplier = if mode == Mode::Spot {
            dec!(0.6)
        } else {
            dec!(1.8)
        };
        s.tflops_units = tflops;
        s.vram_units = vram;
        s.tags = tags;
        s
    };
    let mut leases = [Uuid::nil(); 3];
    for (i, s) in [
        spec(
            Mode::OnDemand,
            0,
            7200,
            dec!(100),
            dec!(2),
            json!({"team": "ml"}),
        ),
        spec(
            Mode::Spot,
            3600,
            5400,
            dec!(300),
            dec!(6),
            json!({"team": "ml"}),
        ),
        spec(Mode::OnDemand, 9000, 9900, dec!(100), dec!(2), json!({})),
    ]
    .iter()
    .enumerate()
    {
        let (lease, outcome) = scenario::lease(&db, buyer_id, provider_id, s)
            .await
            .expect("lease");
        assert_eq!(outcome.billed_until, s.to, "the history is billed whole");
        leases[i] = lease;
    }
    History { buyer, db, leases }
}

/// An agent's usage record for `lease`, as `/v1/agent/usage` stores it.
async fn usage(db: &Db, lease: Uuid, start: i64, end: i64, tflops_s: Decimal, u: Option<Decimal>) {
    let at = |t: i64| chrono::DateTime::from_timestamp(t, 0).expect("time");
    gpuex::db::dispatch!(db, pool => {
        sqlx::query(
            "INSERT INTO usage_records (agent_id, seq, lease_id, interval_start, interval_end, \
             tflops_s, vram_gb_s, mean_utilization) VALUES ($1, 1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(Uuid::now_v7()).bind(lease).bind(at(start)).bind(at(end))
        .bind(Money(tflops_s)).bind(Money(Decimal::ZERO)).bind(u.map(Money))
        .execute(pool).await.expect("usage record");
    });
}

fn group<'a>(list: &'a Value, key: &str) -> &'a Value {
    list.as_array()
        .and_then(|l| l.iter().find(|g| g["key"] == key))
        .unwrap_or_else(|| panic!("no group {key} in {list}"))
}

const WINDOW: &str = "from=2026-01-31T00:00:00Z&to=2026-01-31T04:00:00Z";

on_both_databases! {
    async fn the_profile_of_a_small_history_has_the_figures_worked_out_by_hand(app) {
        let h = history(&app, JAN_31).await;
        let [a, b, _] = h.leases;
        // A's first hour measured at 50 %, its second not measured; B at 90 %.
        usage(&h.db, a, JAN_31, JAN_31 + 3600, dec!(360000), Some(dec!(0.5))).await;
        usage(&h.db, a, JAN_31 + 3600, JAN_31 + 7200, dec!(360000), None).await;
        usage(&h.db, b, JAN_31 + 3600, JAN_31 + 5400, dec!(540000), Some(dec!(0.9))).await;
        // Outside the window: not counted.
        usage(&h.db, b, JAN_31 + 20000, JAN_31 + 20010, dec!(3000), Some(dec!(1))).await;

        let r = app.get(&format!("/v1/billing/profile?{WINDOW}"), Some(&h.buyer)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let p = &r.body;
        assert_eq!(p["elapsed_s"], 14400);
        // TFLOPS held: 100 over 0–1 h, 400 over 1–1.5 h, 100 over 1.5–2 h,
        // none over 2–2.5 h, 100 over 2.5–2.75 h, none to 4 h.
        let t = &p["total"]["tflops_units"];
        assert_eq!(d(&t["peak"]), dec!(400));
        // 100 × 7,200 + 300 × 1,800 + 100 × 900 = 1,350,000 unit-seconds.
        assert_eq!(d(&t["unit_hours"]), dec!(375));
        // 1,350,000 ÷ 14,400 s.
        assert_eq!(d(&t["mean"]), dec!(93.75));
        // 400 is held 1,800 s and 100 or more 8,100 s, at least half of 14,400.
        assert_eq!(d(&t["baseline"]), dec!(100));
        // 300 above it for 1,800 s: 540,000 ÷ 14,400.
        assert_eq!(d(&t["mean_above_baseline"]), dec!(37.5));
        let v = &p["total"]["vram_units"];
        // 2 + 6 at once; (2 × 7,200 + 6 × 1,800 + 2 × 900) ÷ 14,400 = 1.875.
        assert_eq!((d(&v["peak"]), d(&v["mean"]), d(&v["baseline"])), (dec!(8), dec!(1.875), dec!(2)));
        assert_eq!((d(&v["mean_above_baseline"]), d(&v["unit_hours"])), (dec!(0.75), dec!(7.5)));
        // Spot held 540,000 of 1,350,000 TFLOPS-seconds.
        assert_eq!(d(&p["spot_share"]), dec!(0.4));
        // Durations 900, 1,800, 7,200 s: nearest rank p50 = the 2nd, p90 = the 3rd.
        let du = &p["total"]["durations"];
        assert_eq!(du["leases"], 3);
        assert_eq!((du["p50_s"].as_i64(), du["p90_s"].as_i64(), du["p99_s"].as_i64(), du["max_s"].as_i64()),
            (Some(1800), Some(7200), Some(7200), Some(7200)));
        assert_eq!(d(&du["mean_s"]), dec!(3300));
        // Measured: A's first hour (100 TFLOPS-h at 0.5) and B (150 at 0.9):
        // 50 + 135 = 185 used of 250.
        let u = &p["total"]["utilization"];
        assert_eq!((d(&u["measured_tflops_h"]), d(&u["used_tflops_h"]), d(&u["fraction"])), (dec!(250), dec!(185), dec!(0.74)));

        // By mode: on-demand is A and C, spot is B.
        let od = group(&p["by_mode"], "on_demand");
        // (720,000 + 90,000) ÷ 14,400 = 56.25; 100 is held 8,100 s.
        assert_eq!(d(&od["tflops_units"]["mean"]), dec!(56.25));
        assert_eq!((d(&od["tflops_units"]["peak"]), d(&od["tflops_units"]["baseline"])), (dec!(100), dec!(100)));
        assert_eq!(d(&od["tflops_units"]["mean_above_baseline"]), Decimal::ZERO);
        assert_eq!(d(&od["utilization"]["fraction"]), dec!(0.5));
        let spot = group(&p["by_mode"], "spot");
        assert_eq!((d(&spot["tflops_units"]["peak"]), d(&spot["tflops_units"]["mean"])), (dec!(300), dec!(37.5)));
        assert_eq!(d(&spot["tflops_units"]["baseline"]), Decimal::ZERO, "held only 1,800 s of 14,400");
        assert_eq!(d(&spot["utilization"]["fraction"]), dec!(0.9));
        assert_eq!(spot["durations"]["max_s"], 1800);
        // By tag: A and B are team=ml; C is untagged and reported no usage.
        let ml = group(&p["by_tag"], "team=ml");
        assert_eq!(d(&ml["tflops_units"]["peak"]), dec!(400));
        assert_eq!(ml["durations"]["leases"], 2);
        let untagged = group(&p["by_tag"], "(untagged)");
        assert_eq!(d(&untagged["tflops_units"]["unit_hours"]), dec!(25));
        assert!(untagged["utilization"]["fraction"].is_null(), "{untagged}");
        let h100 = group(&p["by_gpu_model"], "H100-SXM5-80GB");
        assert_eq!(h100["tflops_units"], p["total"]["tflops_units"]);

        // Half the window cuts A at 2 h and leaves out B's later usage.
        let r = app
            .get("/v1/billing/profile?from=2026-01-31T01:00:00Z&to=2026-01-31T02:00:00Z", Some(&h.buyer))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let t = &r.body["total"]["tflops_units"];
        // 400 for 1,800 s, 100 for 1,800 s of 3,600: mean 250; 400 is held
        // exactly half the time, which is "at least half": baseline 400.
        assert_eq!((d(&t["peak"]), d(&t["mean"]), d(&t["baseline"])), (dec!(400), dec!(250), dec!(400)));
        assert_eq!(r.body["total"]["durations"]["max_s"], 3600, "A counts its part inside the window");
    }

    async fn a_profile_without_history_is_empty_and_bad_windows_are_refused(app) {
        let (buyer, _) = app.user("buyer").await;
        let r = app.get(&format!("/v1/billing/profile?{WINDOW}"), Some(&buyer)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(d(&r.body["total"]["tflops_units"]["peak"]), Decimal::ZERO);
        assert!(r.body["total"]["durations"]["p50_s"].is_null());
        assert!(r.body["total"]["utilization"]["fraction"].is_null());
        assert_eq!(r.body["by_mode"], json!([]));
        // This month by default.
        let r = app.get("/v1/billing/profile", Some(&buyer)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        app.get("/v1/billing/profile?from=2026-01-31T04:00:00Z&to=2026-01-31T00:00:00Z", Some(&buyer))
            .await.assert_problem(422, Some("query.to"));
        app.get("/v1/billing/profile?from=yesterday", Some(&buyer))
            .await.assert_problem(422, Some("query.from"));
        app.get("/v1/billing/profile?colour=red", Some(&buyer)).await.assert_problem(422, None);
        app.get("/v1/billing/profile", None).await.assert_problem(401, None);
    }

    async fn tco_prices_a_given_profile_in_the_cheapest_mix_as_worked_out_by_hand(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.user("buyer").await;
        let body = json!({
            "node_price_per_hour": "20",
            "gpu_model": "H100-SXM5-80GB",
            "region": "eu-west",
            "profile": {
                "tflops_units": {"peak": "4000", "mean": "2000", "baseline": "1500"},
                "vram_units": {"peak": 80, "mean": 40, "baseline": 30},
                "spot_share": "0.25"
            }
        });
        let r = app.post("/v1/tco", Some(&buyer), body.clone()).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let t = &r.body;
        let a = &t["assumptions"];
        assert_eq!((a["months"].as_u64(), a["hours_per_month"].as_u64()), (Some(36), Some(730)));
        assert_eq!(a["profile_source"], "body");
        // No spot auction has cleared: 0.6 × list, and 10 % redone work.
        assert_eq!(a["spot_index_source"], "default_discount");
        assert_eq!((d(&a["spot_index"]), d(&a["spot_preemption_overhead"])), (dec!(0.6), dec!(0.1)));
        // eu-west H100 lists 0.0021 per TFLOPS-hour and 0.05 per VRAM-unit-hour.
        let tp = &a["prices"][0];
        assert_eq!(tp["unit"], "tflops_h");
        assert_eq!((d(&tp["list"]), d(&tp["reserved"]), d(&tp["on_demand"]), d(&tp["spot"])),
            (dec!(0.0021), dec!(0.001785), dec!(0.00378), dec!(0.00126)));
        // mean_above_baseline defaults to mean − baseline.
        assert_eq!(d(&a["profile"]["tflops_units"]["mean_above_baseline"]), dec!(500));
        // TFLOPS: spot 0.25 × 2,000 × 1.1 = 550 × 0.00126 = 0.693;
        // reserved 0.75 × 1,500 = 1,125 × 0.001785 = 2.008125;
        // on-demand 0.75 × 500 = 375 × 0.00378 = 1.4175.
        // VRAM: spot 0.25 × 40 × 1.1 = 11 × 0.03 = 0.33; reserved 22.5 × 0.0425
        // = 0.95625; on-demand 7.5 × 0.09 = 0.675.
        let mix: Vec<(String, String, Decimal, Decimal)> = t["gpuex"]["mix"].as_array().unwrap().iter()
            .map(|l| (l["unit"].as_str().unwrap().to_owned(), l["mode"].as_str().unwrap().to_owned(), d(&l["units"]), d(&l["per_hour"])))
            .collect();
        let want = |u: &str, m: &str, units: Decimal, cost: Decimal| (u.to_owned(), m.to_owned(), units, cost);
        assert_eq!(mix, vec![
            want("tflops_h", "spot", dec!(550), dec!(0.693)),
            want("tflops_h", "reserved", dec!(1125), dec!(2.008125)),
            want("tflops_h", "on_demand", dec!(375), dec!(1.4175)),
            want("vram_h", "spot", dec!(11), dec!(0.33)),
            want("vram_h", "reserved", dec!(22.5), dec!(0.95625)),
            want("vram_h", "on_demand", dec!(7.5), dec!(0.675)),
        ]);
        // 4.118625 + 1.96125 = 6.079875 an hour; × 730 = 4,438.30875; × 36 = 159,779.115.
        let g = &t["gpuex"];
        assert_eq!((d(&g["per_hour"]), d(&g["per_month"]), d(&g["total"])), (dec!(6.079875), dec!(4438.30875), dec!(159779.115)));
        // The peak needs 4,000 ÷ 989 = 4.04 GPUs: one node at 20/h, 14,600 a
        // month, 525,600 over 36 months; the mean's 2.0222 GPUs keep 25.28 % of it busy.
        let w = &t["whole_node"];
        assert_eq!(w["nodes"], 1);
        assert_eq!((d(&w["per_month"]), d(&w["total"])), (dec!(14600), dec!(525600)));
        assert_eq!(a["utilization_source"], "sized_to_peak");
        assert_eq!(d(&a["utilization"]), dec!(0.252781));
        // 525,600 − 159,779.115 = 365,820.885, 0.69600625 of it.
        assert_eq!((d(&t["saving"]["amount"]), d(&t["saving"]["fraction"])), (dec!(365820.885), dec!(0.696)));

        // At 20 % utilization the mean needs ⌈2.0222 ÷ 1.6⌉ = 2 nodes; 12 months.
        let mut at_20 = body.clone();
        at_20["utilization"] = json!("0.2");
        at_20["months"] = json!(12);
        let r = app.post("/v1/tco", Some(&buyer), at_20.clone()).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["whole_node"]["nodes"], 2);
        // 2 × 20 × 730 × 12 and 4,438.30875 × 12.
        assert_eq!(d(&r.body["whole_node"]["total"]), dec!(350400));
        assert_eq!(d(&r.body["gpuex"]["total"]), dec!(53259.705));
        assert_eq!(r.body["assumptions"]["utilization_source"], "given");
        // The same body and prices give the same answer.
        let again = app.post("/v1/tco", Some(&buyer), at_20).await;
        assert_eq!(again.body, r.body);

        // A flat load is all reserved; a spiky one (never near its baseline)
        // is cheaper all on-demand.
        let flat = json!({"node_price_per_hour": "20", "region": "eu-west", "profile": {
            "tflops_units": {"peak": "100", "mean": "100", "baseline": "100"},
            "vram_units": {"peak": "2", "mean": "2", "baseline": "2"}}});
        let r = app.post("/v1/tco", Some(&buyer), flat).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let modes: Vec<&str> = r.body["gpuex"]["mix"].as_array().unwrap().iter().map(|l| l["mode"].as_str().unwrap()).collect();
        assert_eq!(modes, ["reserved", "reserved"]);
        // 100 × 0.001785 + 2 × 0.0425 = 0.2635 an hour.
        assert_eq!(d(&r.body["gpuex"]["per_hour"]), dec!(0.2635));
        let spiky = json!({"node_price_per_hour": "20", "region": "eu-west", "profile": {
            "tflops_units": {"peak": "1000", "mean": "100", "baseline": "100", "mean_above_baseline": "100"},
            "vram_units": {"peak": "2", "mean": "2"}}});
        let r = app.post("/v1/tco", Some(&buyer), spiky).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let modes: Vec<&str> = r.body["gpuex"]["mix"].as_array().unwrap().iter().map(|l| l["mode"].as_str().unwrap()).collect();
        // TFLOPS: reserved 100 × 0.001785 + 100 × 0.00378 > 100 × 0.00378. VRAM: no baseline.
        assert_eq!(modes, ["on_demand", "on_demand"]);
    }

    async fn tco_without_a_profile_prices_the_callers_last_30_days(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let now = app.market_now().timestamp();
        let h = history(&app, now - now % 3600 - 10 * 3600).await;
        let r = app.post("/v1/tco", Some(&h.buyer), json!({"node_price_per_hour": "10"})).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let a = &r.body["assumptions"];
        assert_eq!(a["profile_source"], "history");
        assert!(a["history_from"].is_string() && a["history_to"].is_string());
        // The history's model; us-east lists an H100 cheapest
        // (0.0020 × 989 + 0.05 × 20 = 2.978 against eu-west's 3.0769).
        assert_eq!((a["gpu_model"].as_str(), a["region"].as_str()), (Some("H100-SXM5-80GB"), Some("us-east")));
        // 1,350,000 TFLOPS-seconds over 30 days (2,592,000 s): a mean of
        // 0.520833 with no baseline; VRAM 27,000 ÷ 2,592,000 = 0.010417; spot 0.4.
        let p = &a["profile"];
        assert_eq!((d(&p["tflops_units"]["mean"]), d(&p["tflops_units"]["peak"])), (dec!(0.520833), dec!(400)));
        assert_eq!((d(&p["vram_units"]["mean"]), d(&p["spot_share"])), (dec!(0.010417), dec!(0.4)));
        assert_eq!(d(&p["tflops_units"]["baseline"]), Decimal::ZERO);
        // Nothing to reserve: spot 0.4 × 0.520833 × 1.1 × 0.0012 and on-demand
        // 0.6 × 0.520833 × 0.0036 = 0.001399999104 for TFLOPS; 0.4 × 0.010417 ×
        // 1.1 × 0.03 + 0.6 × 0.010417 × 0.09 = 0.0007000224 for VRAM.
        // 0.002100021504 an hour: 1.533016 a month, 55.188565 over 36.
        let g = &r.body["gpuex"];
        assert_eq!((d(&g["per_month"]), d(&g["total"])), (dec!(1.533016), dec!(55.188565)));
        assert!(g["mix"].as_array().unwrap().iter().all(|l| l["mode"] != "reserved"));
        // One node (the 400 TFLOPS peak is 0.4 GPU) at 10/h for 36 months.
        assert_eq!(d(&r.body["whole_node"]["total"]), dec!(262800));
        assert_eq!(d(&r.body["saving"]["amount"]), dec!(262744.811435));
        assert_eq!(d(&r.body["saving"]["fraction"]), dec!(0.9998));
    }

    async fn tco_names_the_field_of_every_bad_input(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.user("buyer").await;
        let profile = json!({"tflops_units": {"peak": "100", "mean": "50"}, "vram_units": {"peak": "2", "mean": "1"}});
        let with = |patch: Value| {
            let mut body = json!({"node_price_per_hour": "20", "profile": profile.clone()});
            for (k, v) in patch.as_object().unwrap() {
                body[k] = v.clone();
            }
            body
        };
        let shaped = |unit: &str, shape: Value| {
            let mut p = profile.clone();
            p[unit] = shape;
            with(json!({"profile": p}))
        };
        let cases: Vec<(Value, &str)> = vec![
            (with(json!({"months": 0})), "months"),
            (with(json!({"months": 121})), "months"),
            (with(json!({"months": "ten"})), "months"),
            (with(json!({"node_price_per_hour": "0"})), "node_price_per_hour"),
            (with(json!({"node_price_per_hour": "-5"})), "node_price_per_hour"),
            (with(json!({"node_price_per_hour": "1.0000001"})), "node_price_per_hour"),
            (with(json!({"node_price_per_hour": "1000000"})), "node_price_per_hour"),
            (with(json!({"utilization": "0"})), "utilization"),
            (with(json!({"utilization": 1.5})), "utilization"),
            (with(json!({"gpu_model": "RTX-9090"})), "gpu_model"),
            (with(json!({"region": "mars-north"})), "region"),
            (with(json!({"gpu_model": "V100-SXM2-32GB"})), "gpu_model"),
            (with(json!({"colour": "red"})), "colour"),
            (shaped("tflops_units", json!({"peak": "100", "mean": "150"})), "profile.tflops_units.mean"),
            (shaped("tflops_units", json!({"peak": "100", "mean": "50", "baseline": "120"})), "profile.tflops_units.baseline"),
            (shaped("vram_units", json!({"peak": "2", "mean": "1", "baseline": "0.5", "mean_above_baseline": "0.1"})), "profile.vram_units.mean_above_baseline"),
            (shaped("vram_units", json!({"peak": "-2", "mean": "1"})), "profile.vram_units.peak"),
            (shaped("vram_units", json!({"peak": "2", "mean": "1.0000001"})), "profile.vram_units.mean"),
            (shaped("vram_units", json!({"peak": "2"})), "profile.vram_units.mean"),
            (with(json!({"profile": {"tflops_units": {"peak": "1", "mean": "1"}, "vram_units": {"peak": "1", "mean": "1"}, "spot_share": "1.5"}})), "profile.spot_share"),
        ];
        for (body, field) in cases {
            let r = app.post("/v1/tco", Some(&buyer), body.clone()).await;
            assert!(r.status == 422 || r.status == 400, "{body}: {} {}", r.status, r.body);
            r.assert_problem(r.status.as_u16(), Some(field));
        }
        app.post("/v1/tco", Some(&buyer), json!({"profile": profile})).await.assert_problem(422, Some("node_price_per_hour"));
        // No history in the last 30 days and no profile.
        app.post("/v1/tco", Some(&buyer), json!({"node_price_per_hour": "20"})).await.assert_problem(422, Some("profile"));
        app.post("/v1/tco", None, with(json!({}))).await.assert_problem(401, None);
        let r = app.raw(reqwest::Method::POST, "/v1/tco", Some(&buyer), "{not json").await;
        r.assert_problem(400, None);
    }
}
