//! Job-history imports (`POST /v1/profile/imports`): the repository's sample
//! of each format, through the real server, with figures worked out by hand
//! (the catalog's H100 is 989 TFLOPS and 20 VRAM units, an A100 312 and 10
//! or 20, an L40S 362 and 12).

use crate::helpers::{on_both_databases, on_both_databases_with, Reply, TestApp};
use futures::StreamExt;
use gpuex::config::Settings;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde_json::{json, Value};

const SACCT: &str = include_str!("../../data/imports/sacct.txt");
const PODS: &str = include_str!("../../data/imports/pods.json");
const CSV: &str = include_str!("../../data/imports/jobs.csv");

fn d(v: &Value) -> Decimal {
    v.as_str()
        .unwrap_or_else(|| panic!("not a decimal string: {v}"))
        .parse()
        .unwrap()
}

async fn upload(
    app: &TestApp,
    token: &str,
    query: &str,
    body: impl Into<reqwest::Body>,
    key: Option<&str>,
) -> Reply {
    let mut req = app
        .client
        .post(format!("{}/v1/profile/imports?{query}", app.address))
        .bearer_auth(token)
        .header("content-type", "text/plain")
        .body(body);
    if let Some(key) = key {
        req = req.header("idempotency-key", key);
    }
    TestApp::reply(req.send().await.expect("upload")).await
}

fn rejected_lines(r: &Reply) -> Vec<u64> {
    r.body["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["line"].as_u64().unwrap())
        .collect()
}

fn group<'a>(list: &'a Value, key: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == key)
        .unwrap_or_else(|| panic!("no group {key} in {list}"))
}

on_both_databases! {
    async fn a_slurm_history_becomes_a_profile_and_prices_in_the_tco(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (buyer, _) = app.user("buyer").await;
        let r = upload(&app, &buyer, "format=slurm", SACCT, None).await;
        assert_eq!(r.status, 201, "{}", r.body);
        // Jobs 1001, 1002 and 1007; skipped: two steps of 1001, the CPU-only
        // 1003 and 1004, which never started; refused: 1005 (still running,
        // line 8) and 1006 (hour 25, line 9).
        assert_eq!((r.body["rows"].as_u64(), r.body["skipped"].as_u64()), (Some(3), Some(4)));
        assert_eq!(r.body["rejected_count"], 2);
        assert_eq!(rejected_lines(&r), vec![8, 9]);
        assert!(r.body["rejected"][0]["reason"].as_str().unwrap().contains("still running"), "{}", r.body);
        // 1007 names no GPU type: priced as the default model.
        assert_eq!((r.body["defaulted_model_rows"].as_u64(), r.body["default_gpu_model"].as_str()), (Some(1), Some("H100-SXM5-80GB")));
        assert_eq!((r.body["from"].as_str(), r.body["to"].as_str()), (Some("2026-11-02T00:00:00Z"), Some("2026-11-02T05:00:00Z")));
        let id = r.body["id"].as_str().unwrap().to_owned();

        let detail = app.get(&format!("/v1/profile/imports/{id}"), Some(&buyer)).await;
        assert_eq!(detail.status, 200, "{}", detail.body);
        let p = &detail.body["profile"];
        // TFLOPS held: 624 (2 × A100) over 0–4 h, 3,956 (4 × H100) over 2–3 h,
        // 989 (1 × H100) over 1–5 h: levels 624, 1,613, 5,569, 1,613, 989.
        let t = &p["total"]["tflops_units"];
        assert_eq!((d(&t["peak"]), d(&t["unit_hours"]), d(&t["mean"])), (dec!(5569), dec!(10408), dec!(2081.6)));
        // 1,613 or more is held 3 of the 5 hours: the baseline.
        assert_eq!(d(&t["baseline"]), dec!(1613));
        let v = &p["total"]["vram_units"];
        assert_eq!((d(&v["peak"]), d(&v["unit_hours"])), (dec!(120), dec!(240)));
        assert_eq!(p["total"]["durations"]["leases"], 3);
        assert_eq!((p["total"]["durations"]["p50_s"].as_i64(), p["total"]["durations"]["max_s"].as_i64()), (Some(14400), Some(14400)));
        assert_eq!(d(&group(&p["by_gpu_model"], "A100-SXM4-40GB")["tflops_units"]["unit_hours"]), dec!(2496));
        assert_eq!(d(&group(&p["by_gpu_model"], "H100-SXM5-80GB")["tflops_units"]["unit_hours"]), dec!(7912));
        assert_eq!(d(&group(&p["by_tag"], "account=risk")["tflops_units"]["peak"]), dec!(4580));
        assert_eq!(d(&group(&p["by_tag"], "account=ads")["tflops_units"]["unit_hours"]), dec!(3956));
        // 240 stretches of 75 s: 2 GPUs at first, 7 at the peak.
        let series = detail.body["concurrency"].as_array().unwrap();
        assert_eq!(series.len(), 240);
        assert_eq!(d(&series[0]["mean_gpus"]), dec!(2));
        assert_eq!(series.iter().map(|s| d(&s["peak_gpus"])).max(), Some(dec!(7)));

        // The profile route answers the same profile.
        let same = app.get(&format!("/v1/billing/profile?import_id={id}"), Some(&buyer)).await;
        assert_eq!(same.status, 200, "{}", same.body);
        assert_eq!(same.body, *p);
        app.get(&format!("/v1/billing/profile?import_id={id}&from=2026-11-01T00:00:00Z"), Some(&buyer))
            .await.assert_problem(422, Some("query.import_id"));

        // The TCO prices it, on the model it used most.
        let tco = app.post("/v1/tco", Some(&buyer), json!({"node_price_per_hour": "20", "import_id": id})).await;
        assert_eq!(tco.status, 200, "{}", tco.body);
        let a = &tco.body["assumptions"];
        assert_eq!((a["profile_source"].as_str(), a["import_id"].as_str()), (Some("import"), Some(id.as_str())));
        assert_eq!(a["gpu_model"], "H100-SXM5-80GB");
        assert_eq!(d(&a["profile"]["tflops_units"]["peak"]), dec!(5569));
        assert_eq!(a["history_from"], "2026-11-02T00:00:00Z");
        let both = app.post("/v1/tco", Some(&buyer), json!({"node_price_per_hour": "20", "import_id": id,
            "profile": {"tflops_units": {"peak": 1, "mean": 1}, "vram_units": {"peak": 1, "mean": 1}}})).await;
        both.assert_problem(422, Some("import_id"));

        // Listed, another buyer's is 404 everywhere, and deleting it removes it.
        let list = app.get("/v1/profile/imports", Some(&buyer)).await;
        assert_eq!(list.body["imports"][0]["id"].as_str(), Some(id.as_str()));
        let (stranger, _) = app.user("buyer").await;
        app.get(&format!("/v1/profile/imports/{id}"), Some(&stranger)).await.assert_problem(404, None);
        app.get(&format!("/v1/billing/profile?import_id={id}"), Some(&stranger)).await.assert_problem(404, None);
        app.post("/v1/tco", Some(&stranger), json!({"node_price_per_hour": "20", "import_id": id})).await.assert_problem(404, None);
        assert_eq!(app.get("/v1/profile/imports", Some(&stranger)).await.body["imports"], json!([]));
        let gone = app.request(reqwest::Method::DELETE, &format!("/v1/profile/imports/{id}"), Some(&stranger), None).await;
        gone.assert_problem(404, None);
        let gone = app.request(reqwest::Method::DELETE, &format!("/v1/profile/imports/{id}"), Some(&buyer), None).await;
        assert_eq!(gone.status, 204);
        app.get(&format!("/v1/profile/imports/{id}"), Some(&buyer)).await.assert_problem(404, None);
        app.get("/v1/profile/imports/not-an-id", Some(&buyer)).await.assert_problem(404, None);
    }

    async fn kubernetes_pods_and_the_csv_import_with_exact_figures(app) {
        let (buyer, _) = app.user("buyer").await;
        let r = upload(&app, &buyer, "format=k8s", PODS, None).await;
        assert_eq!(r.status, 201, "{}", r.body);
        // train-0 (2 × A100 80GB by its node selector) and infer-0 (1 GPU, no
        // product: the default model); web holds no GPU and queued-0 never
        // started; notebook-0, the 4th pod, is still running.
        assert_eq!((r.body["rows"].as_u64(), r.body["skipped"].as_u64(), r.body["defaulted_model_rows"].as_u64()), (Some(2), Some(2), Some(1)));
        assert_eq!(rejected_lines(&r), vec![4]);
        assert!(r.body["rejected"][0]["reason"].as_str().unwrap().contains("notebook-0"), "{}", r.body);
        let detail = app.get(&format!("/v1/profile/imports/{}", r.body["id"].as_str().unwrap()), Some(&buyer)).await;
        let p = &detail.body["profile"];
        // 624 over 0–2 h, 989 over 0:30–2:30 (the pod's first start to its last finish).
        let t = &p["total"]["tflops_units"];
        assert_eq!((d(&t["peak"]), d(&t["unit_hours"])), (dec!(1613), dec!(3226)));
        assert_eq!(p["elapsed_s"], 9000);
        assert_eq!(d(&group(&p["by_tag"], "namespace=serving")["tflops_units"]["unit_hours"]), dec!(1978));
        assert_eq!(d(&group(&p["by_gpu_model"], "A100-SXM4-80GB")["vram_units"]["peak"]), dec!(40));

        let r = upload(&app, &buyer, "format=csv", CSV, None).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!((r.body["rows"].as_u64(), r.body["skipped"].as_u64(), r.body["defaulted_model_rows"].as_u64()), (Some(3), Some(0), Some(0)));
        assert_eq!(rejected_lines(&r), vec![4, 6]);
        let detail = app.get(&format!("/v1/profile/imports/{}", r.body["id"].as_str().unwrap()), Some(&buyer)).await;
        let p = &detail.body["profile"];
        // 7,912 (8 × H100) over 0–1 h, 181 (half an L40S) over 0:30–1:30,
        // 624 (2 × A100 80GB, from `a100_80g`) over 2–3 h.
        let t = &p["total"]["tflops_units"];
        assert_eq!((d(&t["peak"]), d(&t["unit_hours"])), (dec!(8093), dec!(8717)));
        assert_eq!(d(&group(&p["by_tag"], "tag=research")["vram_units"]["peak"]), dec!(40));
        assert_eq!(d(&group(&p["by_tag"], "team=nlp")["vram_units"]["unit_hours"]), dec!(6));
    }

    async fn a_file_not_of_its_format_is_refused_and_leaves_nothing(app) {
        let (buyer, _) = app.user("buyer").await;
        upload(&app, &buyer, "format=slurm", "no|header|here\n1|2|3\n", None).await.assert_problem(422, Some("body"));
        upload(&app, &buyer, "format=k8s", "{\"items\": [", None).await.assert_problem(422, Some("body"));
        upload(&app, &buyer, "format=k8s", "[1, 2]", None).await.assert_problem(422, Some("body"));
        upload(&app, &buyer, "format=csv", "when,gpus\n", None).await.assert_problem(422, Some("body"));
        upload(&app, &buyer, "format=xml", CSV, None).await.assert_problem(422, Some("query.format"));
        upload(&app, &buyer, "format=csv&gpu_model=GTX-1080", CSV, None).await.assert_problem(422, Some("query.gpu_model"));
        upload(&app, &buyer, "format=csv", CSV, Some("")).await.assert_problem(422, Some("header.Idempotency-Key"));
        assert_eq!(app.get("/v1/profile/imports", Some(&buyer)).await.body["imports"], json!([]));
        let r = upload(&app, &buyer, "format=csv", "start,end,gpus\n", None).await;
        assert_eq!((r.status.as_u16(), r.body["rows"].as_u64()), (201, Some(0)));
        app.get(&format!("/v1/billing/profile?import_id={}", r.body["id"].as_str().unwrap()), Some(&buyer))
            .await.assert_problem(422, Some("query.import_id"));
    }

    async fn an_idempotency_key_answers_the_first_import_of_the_same_file(app) {
        let (buyer, _) = app.user("buyer").await;
        let first = upload(&app, &buyer, "format=csv", CSV, Some("import-1")).await;
        assert_eq!(first.status, 201, "{}", first.body);
        let again = upload(&app, &buyer, "format=csv", CSV, Some("import-1")).await;
        assert_eq!(again.status, 201);
        assert_eq!(again.body, first.body);
        let other = upload(&app, &buyer, "format=slurm", SACCT, Some("import-1")).await;
        other.assert_code(422, "idempotency_key_reused");
        assert_eq!(app.get("/v1/profile/imports", Some(&buyer)).await.body["imports"].as_array().unwrap().len(), 1);
    }
}

fn small_imports(settings: &mut Settings) {
    settings.import_body_limit = 64 * 1024;
}

on_both_databases_with! { small_imports =>
    async fn a_file_over_the_import_limit_is_refused_as_it_streams(app) {
        let (buyer, _) = app.user("buyer").await;
        // Over the API's 1 MiB limit is fine up to the route's own: here 64 KiB.
        let row = "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,1\n";
        let fits = format!("start,end,gpus\n{}", row.repeat(60 * 1024 / row.len()));
        let r = upload(&app, &buyer, "format=csv", fits, None).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let over = format!("start,end,gpus\n{}", row.repeat(80 * 1024 / row.len()));
        upload(&app, &buyer, "format=csv", over, None).await.assert_code(413, "import_too_large");
        assert_eq!(app.get("/v1/profile/imports", Some(&buyer)).await.body["imports"].as_array().unwrap().len(), 1);
    }
}

fn slow_requests_time_out(settings: &mut Settings) {
    settings.request_timeout_s = 1;
    settings.import_timeout_s = 30;
}

on_both_databases_with! { slow_requests_time_out =>
    async fn an_import_has_its_own_time_limit_in_place_of_the_request_timeout(app) {
        let (buyer, _) = app.user("buyer").await;
        // The file arrives over 2 s, twice the request timeout: an import
        // may take that long, as a large file does.
        let rows: Vec<Result<String, std::io::Error>> = std::iter::once("start,end,gpus\n".to_owned())
            .chain((0..4).map(|_| "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,1\n".to_owned()))
            .map(Ok)
            .collect();
        let slow = futures::stream::iter(rows).then(|row| async move {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            row
        });
        let r = upload(&app, &buyer, "format=csv", reqwest::Body::wrap_stream(slow), None).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["rows"], 4);
    }
}
