//! Issue 40 item 2, DESIGN §22: trials through a real server and the real
//! agent (simulated backend, real processes). The simulated backend stands a
//! slice's GPU memory in with an address-space limit of the same size, so a
//! workload that maps more than its slice fails there, by the limit (it reads
//! nothing of its environment), and passes on a larger shape.

use crate::agent_process::Agent;
use crate::fleet::{self, create_node, eventually, node_view};
use crate::helpers::{on_both_databases, on_both_databases_with, TestApp};
use serde_json::{json, Value};

/// Maps 12 GB (more than a 1g.10gb slice, less than 3g.40gb), touches
/// 200 MB of it, so the agent measures a peak, and holds it 3 s, so the
/// agent samples the slice's utilization.
const MAPS_12_GB: &str = "python3 -c 'import mmap, time; m = mmap.mmap(-1, 12 * 10**9); \
    m[:2 * 10**8] = bytes(2 * 10**8); time.sleep(3)'";

async fn trial(app: &TestApp, buyer: &str, id: &str) -> Value {
    let r = app.get(&format!("/v1/trials/{id}"), Some(buyer)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// Heartbeats every second, so the agent samples a 3 s workload's slice.
fn beating_each_second(settings: &mut gpuex::config::Settings) {
    settings.heartbeat_interval_s = 1;
}

on_both_databases_with! { beating_each_second =>
    async fn a_workload_larger_than_a_1g_slice_fails_there_and_passes_on_a_larger_shape(app) {
        let m = fleet::market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let _agent = Agent::start(&app, &node.token, spool.path()).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let body = json!({"command": MAPS_12_GB, "gpu_model": "H100-SXM5-80GB", "region": "eu-west",
                          "shapes": ["mig-1g.10gb", "mig-3g.40gb", "whole"], "duration_s": 120});
        let r = app.post("/v1/trials", Some(&m.buyer), body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let id = r.body["id"].as_str().unwrap().to_owned();
        eventually(60, "every shape to finish", || async {
            trial(&app, &m.buyer, &id).await["state"] == "done"
        })
        .await;
        let t = trial(&app, &m.buyer, &id).await;
        let runs = t["runs"].as_array().unwrap();
        let by_shape = |shape: &str| runs.iter().find(|r| r["shape"] == shape).unwrap().clone();
        let small = by_shape("mig-1g.10gb");
        assert_eq!((small["state"].as_str(), small["placed"].as_str()), (Some("failed"), Some("mig 1g.10gb")), "{t}");
        assert_ne!(small["exit_code"], 0, "{t}");
        let mid = by_shape("mig-3g.40gb");
        assert_eq!((mid["state"].as_str(), mid["placed"].as_str(), mid["exit_code"].as_i64()),
                   (Some("passed"), Some("mig 3g.40gb"), Some(0)), "{t}");
        let peak = mid["peak_vram_mb"].as_u64().unwrap_or_else(|| panic!("a measured peak: {t}"));
        assert!((200..12_000).contains(&peak), "the touched 200 MB, not the 12 GB mapped: {t}");
        let util: f64 = mid["gpu_util_p50"].as_str().expect("utilization sampled").parse().unwrap();
        assert!(util > 0.0 && util <= 1.0, "{t}");
        let whole = by_shape("whole");
        assert_eq!(whole["state"], "passed", "{t}");
        // The cheapest that passed, at its on-demand price.
        assert_eq!(t["smallest_passed"]["shape"], "mig-3g.40gb", "{t}");
        assert_eq!(t["smallest_passed"]["price_per_hour"], mid["price_per_hour"], "{t}");
        let lease = fleet::lease(&app, &m.buyer, mid["lease_id"].as_str().unwrap().parse().unwrap()).await;
        assert_eq!(lease["mode"], "on_demand", "{lease}");
        // Listed, and another buyer's id is 404.
        let list = app.get("/v1/trials", Some(&m.buyer)).await;
        assert_eq!(list.body["trials"][0]["id"], id.as_str(), "{}", list.body);
        let (other, _) = app.user("buyer").await;
        app.get(&format!("/v1/trials/{id}"), Some(&other)).await.assert_problem(404, None);
    }
}

on_both_databases! {
    async fn trial_fields_are_checked_before_anything_is_placed(app) {
        let m = fleet::market(&app).await;
        app.node("eu-west", &[("H100-SXM5-80GB", "mig")]).await;
        let base = json!({"command": "true", "gpu_model": "H100-SXM5-80GB", "shapes": ["mig-1g.10gb"]});
        let with = |k: &str, v: Value| { let mut b = base.clone(); b[k] = v; b };
        for (body, field) in [
            (with("gpu_model", json!("TPU-v5")), "gpu_model"),
            (with("shapes", json!(["mig-9g.99gb"])), "shapes[0]"),
            (with("shapes", json!(["whole", "whole"])), "shapes[1]"),
            (with("shapes", json!(["half"])), "shapes[0]"),
            (with("shapes", json!([])), "shapes"),
            (with("duration_s", json!(601)), "duration_s"),
            (with("command", json!(" ")), "command"),
            (with("env", json!({"LD_PRELOAD": "x"})), "env.LD_PRELOAD"),
        ] {
            app.post("/v1/trials", Some(&m.buyer), body).await.assert_problem(422, Some(field));
        }
        let orders = app.get("/v1/orders", Some(&m.buyer)).await;
        assert_eq!(orders.body["items"], json!([]), "nothing placed: {}", orders.body);
        // A shape no node has is refused alone, with the market's reason.
        let r = app.post("/v1/trials", Some(&m.buyer), with("shapes", json!(["mig-1g.10gb", "whole"]))).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["runs"][1]["state"], "refused", "{}", r.body);
        assert_eq!(r.body["runs"][1]["reason"], "unsatisfiable_resources", "{}", r.body);
        assert_eq!(r.body["runs"][0]["placed"], "mig 1g.10gb", "{}", r.body);
        assert_ne!(r.body["runs"][0]["state"], "refused", "{}", r.body);
    }
}

on_both_databases_with! { beating_each_second =>
    async fn gpuex_trial_waits_and_names_the_smallest_shape_that_passed(app) {
        use crate::cli::{gpuex, SimMarket, PASSWORD};
        let sim = SimMarket::start(&app).await;
        let config = tempfile::tempdir().unwrap();
        let (s, cfg) = (app.address.as_str(), config.path());
        gpuex(s, cfg, &["login", "--email", &sim.buyer_email, "--password-stdin"], PASSWORD).await.ok();
        let trial = ["trial", "--gpu-model", "H100-SXM5-80GB", "--shape", "mig-1g.10gb", "--shape", "mig-3g.40gb",
                     "--region", "eu-west", "--duration-s", "120", "--command", MAPS_12_GB, "--wait"];
        let text = gpuex(s, cfg, &trial, "").await;
        text.ok();
        for shown in ["failed", "passed", "smallest that passed: mig-3g.40gb at"] {
            assert!(text.stdout.contains(shown), "`{shown}` missing from:\n{}", text.stdout);
        }
        let listed = gpuex(s, cfg, &["trials", "--output", "json"], "").await.json();
        let id = listed["trials"][0]["id"].as_str().unwrap().to_owned();
        let one = gpuex(s, cfg, &["trials", &id, "--output", "json"], "").await.json();
        assert_eq!(one["smallest_passed"]["shape"], "mig-3g.40gb", "{one}");
        gpuex(s, cfg, &["trial", "--gpu-model", "H100-SXM5-80GB", "--shape", "half", "--command", "true"], "")
            .await
            .fails(6, "shapes[0]");
        gpuex(s, cfg, &["trial", "--gpu-model", "H100-SXM5-80GB", "--command", "true"], "").await.fails(2, "--shape");
    }
}
