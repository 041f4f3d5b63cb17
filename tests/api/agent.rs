//! The agent protocol, with the test playing the agent over HTTP: tokens,
//! registration, assignments, status, logs, usage exactly once, quarantine
//! and node loss.

use crate::fleet::{
    self, beat, create_node, ended, eventually, h100_node, lease, market, node_view,
    on_both_databases_fast, order, place, provisioned, register, report,
};
use crate::helpers::on_both_databases;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);

/// What the agent meters for the 1g.20gb slice `order("on_demand")` holds
/// (141.286 TFLOPS, 20 GB) over 10.005 s: more would be refused (ARCHITECTURE.md §19).
fn usage(agent: Uuid, seq: u64, lease: Uuid) -> Value {
    json!({"agent_id": agent, "seq": seq, "records": [{
        "lease_id": lease,
        "interval_start": "2026-11-30T05:00:06.120Z",
        "interval_end": "2026-11-30T05:00:16.125Z",
        "tflops_s": "1413.566430",
        "vram_gb_s": "200.100",
        "mean_utilization": "0.92"
    }]})
}

/// Bids for spot capacity and waits for the auction to fill the bid.
async fn filled_spot_lease(app: &crate::helpers::TestApp, buyer: &str) -> Uuid {
    let mut spot = order("spot");
    spot["max_price"] = json!("50");
    let r = app.post("/v1/orders", Some(buyer), spot).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let order_path = format!("/v1/orders/{}", r.body["id"].as_str().unwrap());
    for _ in 0..100 {
        let o = app.get(&order_path, Some(buyer)).await.body;
        if let Some(lease) = o["lease_id"].as_str().and_then(|s| s.parse::<Uuid>().ok()) {
            return lease;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the spot auction did not fill the bid");
}

on_both_databases! {
    async fn node_tokens_reach_only_the_agent_protocol_and_user_tokens_never_do(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        for path in ["/v1/wallet", "/v1/nodes", "/v1/me", "/v1/leases"] {
            app.get(path, Some(&node.token)).await.assert_code(403, "forbidden");
        }
        app.post("/v1/orders", Some(&node.token), order("on_demand")).await.assert_code(403, "forbidden");
        let hb = fleet::heartbeat(node.id, &[]);
        app.post("/v1/agent/heartbeat", Some(&m.buyer), hb.clone()).await.assert_code(403, "forbidden");
        app.post("/v1/agent/register", Some(&m.provider), fleet::registration(&[H100_MIG]))
            .await
            .assert_code(403, "forbidden");
        app.post("/v1/agent/usage", Some(&m.admin), usage(node.id, 1, Uuid::nil()))
            .await
            .assert_code(403, "forbidden");
        app.post("/v1/agent/heartbeat", Some("gpn_0000"), hb).await.assert_code(401, "unauthorized");
    }

    async fn an_assignment_goes_from_heartbeat_to_running_to_ended(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        // Heartbeats before registering are refused, so the agent registers.
        let r = app.post("/v1/agent/heartbeat", Some(&node.token), fleet::heartbeat(node.id, &[])).await;
        r.assert_code(409, "register_again");
        let reg = register(&app, &node, &[H100_MIG]).await;
        assert_eq!(reg.body["agent_id"], node.id.to_string());
        assert!(reg.body.get("last_usage_seq").is_none(), "{}", reg.body);
        assert!(reg.body.get("quarantined").is_none(), "{}", reg.body);
        assert_eq!(node_view(&app, &m.provider, node.id).await["status"], "online");

        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        let assignments = beat(&app, &node, &[]).await;
        assert_eq!(assignments.len(), 1, "{assignments:?}");
        let start = &assignments[0];
        assert_eq!(start["lease_id"], lease_id.to_string());
        assert_eq!(start["action"], "start");
        assert_eq!(start["placement"]["gpus"], json!([0]));
        assert_eq!(start["placement"]["partition"]["kind"], "mig");
        assert_eq!(start["command"], "echo hi");
        assert_eq!(start["env"], json!({"K": "V"}));
        assert!(start["end_at"].is_string() && start["held"]["tflops"].is_string(), "{start}");
        assert_eq!(lease(&app, &m.buyer, lease_id).await["state"], "provisioning");

        // An image ID is `sha256:` and 64 lower-case hex digits, or nothing.
        for bad in ["latest", "sha256:abc", &format!("sha256:{}", "A".repeat(64))] {
            let mut body = provisioned("MIG-abc");
            body["image_id"] = json!(bad);
            report(&app, &node, lease_id, body).await.assert_problem(422, Some("image_id"));
        }
        assert_eq!(lease(&app, &m.buyer, lease_id).await["state"], "provisioning");
        let r = report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        let running = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(running["state"], "running");
        assert_eq!(running["device"], "MIG-abc");
        assert_eq!(running["image_id"], Value::Null, "a command without an image");
        // Repeating the report changes nothing.
        let r = report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT);
        assert!(beat(&app, &node, &[(lease_id, "running")]).await.is_empty());

        let view = node_view(&app, &m.provider, node.id).await;
        let slices = view["gpus"][0]["slices"].as_array().unwrap().clone();
        assert_eq!(slices.len(), 1, "{view}");
        assert_eq!(slices[0]["lease_id"], lease_id.to_string());
        assert_eq!(slices[0]["kind"], "mig");
        assert_eq!(slices[0]["device"], "MIG-abc");
        assert_eq!(view["gpus"][0]["metrics"]["fields"]["DCGM_FI_DEV_GPU_UTIL"], 42.0);
        assert!(view["last_heartbeat_at"].is_string());

        let r = report(&app, &node, lease_id, ended(3)).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        let over = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(over["state"], "ended");
        assert_eq!(over["exit_code"], 3);
        // Idempotent: a repeated `ended` (its answer was lost) is accepted and changes nothing.
        let r = report(&app, &node, lease_id, ended(0)).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT);
        assert_eq!(lease(&app, &m.buyer, lease_id).await["exit_code"], 3);
        // An agent still running an ended lease is told to stop it; unknown leases too.
        let stray = Uuid::now_v7();
        let stops = beat(&app, &node, &[(lease_id, "running"), (stray, "running")]).await;
        let actions: Vec<(&str, &str)> = stops
            .iter()
            .map(|a| (a["lease_id"].as_str().unwrap(), a["action"].as_str().unwrap()))
            .collect();
        assert_eq!(actions, vec![(lease_id.to_string().as_str(), "stop"), (stray.to_string().as_str(), "stop")]);
        // A lease of another node is not this node's business.
        let other = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        report(&app, &other, lease_id, provisioned("MIG-x")).await.assert_code(404, "not_found");
        report(&app, &node, Uuid::now_v7(), provisioned("MIG-x")).await.assert_code(404, "not_found");
    }

    async fn a_failed_provisioning_fails_the_lease(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        let r = report(&app, &node, lease_id, json!({"at": chrono::Utc::now(), "status": "failed", "reason": "no MIG"})).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        assert_eq!(lease(&app, &m.buyer, lease_id).await["state"], "failed");
        report(&app, &node, lease_id, json!({"at": chrono::Utc::now(), "status": "exploded"}))
            .await
            .assert_problem(422, None);
    }

    async fn the_buyer_reads_the_logs_the_agent_uploads_and_no_one_else_does(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        let logs = format!("/v1/leases/{lease_id}/logs");
        let empty = app.get(&logs, Some(&m.buyer)).await;
        assert_eq!(empty.status, StatusCode::OK, "{}", empty.body);
        assert_eq!(empty.body["tail"], "");
        for (tail, complete) in [("hi\n", false), ("hi\nthere\n", true)] {
            let r = app
                .post(&format!("/v1/agent/assignments/{lease_id}/logs"), Some(&node.token),
                    json!({"at": chrono::Utc::now(), "tail": tail, "total_bytes": tail.len(), "complete": complete}))
                .await;
            assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        }
        let r = app.get(&logs, Some(&m.buyer)).await;
        assert_eq!(r.body["tail"], "hi\nthere\n");
        assert_eq!(r.body["total_bytes"], 9);
        assert_eq!(r.body["complete"], true);
        let (other, _) = app.user("buyer").await;
        app.get(&logs, Some(&other)).await.assert_code(404, "not_found");
        app.get(&logs, Some(&node.token)).await.assert_code(403, "forbidden");
        let stranger = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        app.post(&format!("/v1/agent/assignments/{lease_id}/logs"), Some(&stranger.token),
                json!({"at": chrono::Utc::now(), "tail": "x", "total_bytes": 1, "complete": false}))
            .await
            .assert_code(404, "not_found");
    }

    async fn a_usage_batch_sent_twice_is_applied_once(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        for duplicate in [false, true] {
            let r = app.post("/v1/agent/usage", Some(&node.token), usage(node.id, 1, lease_id)).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            assert_eq!(r.body, json!({"seq": 1, "duplicate": duplicate}));
        }
        let r = app.post("/v1/agent/usage", Some(&node.token), usage(node.id, 2, lease_id)).await;
        assert_eq!(r.body["duplicate"], false);
        assert_eq!(fleet::scalar(&app, "SELECT COUNT(*) FROM usage_records").await, 2);
        assert_eq!(fleet::scalar(&app, "SELECT COUNT(*) FROM usage_batches").await, 2);
        let metered = lease(&app, &m.buyer, lease_id).await["usage"]["tflops_s"].clone();
        let metered: rust_decimal::Decimal = metered.as_str().unwrap().parse().unwrap();
        assert_eq!(metered, "2827.13286".parse().unwrap());
        // The agent learns where to continue when it registers again.
        let reg = register(&app, &node, &[H100_MIG]).await;
        assert_eq!(reg.body["last_usage_seq"], 2);

        app.post("/v1/agent/usage", Some(&node.token), usage(node.id, 0, lease_id))
            .await
            .assert_problem(422, Some("seq"));
        app.post("/v1/agent/usage", Some(&node.token), usage(node.id, 3, Uuid::now_v7()))
            .await
            .assert_problem(422, Some("records[0].lease_id"));
        app.post("/v1/agent/usage", Some(&node.token), usage(Uuid::now_v7(), 3, lease_id))
            .await
            .assert_problem(422, Some("agent_id"));
        let mut bad = usage(node.id, 3, lease_id);
        bad["records"][0]["tflops_s"] = json!("lots");
        app.post("/v1/agent/usage", Some(&node.token), bad).await.assert_problem(422, Some("records[0].tflops_s"));
        assert_eq!(fleet::scalar(&app, "SELECT COUNT(*) FROM usage_batches").await, 2);
    }

    async fn a_node_whose_gpus_change_under_a_live_lease_is_quarantined(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(2, "mig")).await;
        register(&app, &node, &[H100_MIG, H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        let gpu = lease(&app, &m.buyer, lease_id).await["placement"]["gpus"][0]["index"].as_u64().unwrap();
        // The GPU the lease runs on comes back as another model.
        let mut gpus = vec![H100_MIG, H100_MIG];
        gpus[gpu as usize] = ("A100-SXM4-80GB", true);
        let reg = register(&app, &node, &gpus).await;
        assert!(reg.body["quarantined"].is_string(), "{}", reg.body);
        let view = node_view(&app, &m.provider, node.id).await;
        assert_eq!(view["status"], "quarantined");
        assert_eq!(view["cordoned"], true);
        let over = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(over["state"], "ended", "{over}");
        // Quarantined: no new leases, even on the GPU that did not change.
        let r = app.post("/v1/orders", Some(&m.buyer), order("on_demand")).await;
        r.assert_code(422, "node_cordoned");
        // Registering the same inventory again keeps it quarantined.
        let reg = register(&app, &node, &gpus).await;
        assert!(reg.body["quarantined"].is_string(), "{}", reg.body);
        // A model changed, so the node is also under review: the provider
        // cannot uncordon it until an admin accepts the new inventory.
        let cordon = format!("/v1/nodes/{}/cordon", node.id);
        app.post(&cordon, Some(&m.provider), json!({"cordoned": false})).await.assert_code(409, "node_under_review");
        let r = app.put(&format!("/v1/admin/nodes/{}", node.id), Some(&m.admin), json!({"review": "accept"})).await;
        assert_eq!(r.body["under_review"], false, "{}", r.body);
        assert_eq!(r.body["cordoned"], true, "still quarantined: {}", r.body);
        // The provider looks and uncordons: the quarantine is lifted.
        let r = app.post(&cordon, Some(&m.provider), json!({"cordoned": false})).await;
        assert_eq!(r.body["status"], "online", "{}", r.body);
        assert_eq!(r.body["quarantined"], false);
        place(&app, &m.buyer, order("on_demand")).await;
    }

    async fn registering_the_same_gpus_again_keeps_live_leases(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        let reg = register(&app, &node, &[H100_MIG]).await;
        assert!(reg.body.get("quarantined").is_none(), "{}", reg.body);
        assert_eq!(lease(&app, &m.buyer, lease_id).await["state"], "running");
        // An agent that restarted lists nothing: it is told to start the lease again.
        let assignments = beat(&app, &node, &[]).await;
        assert_eq!(assignments.len(), 1);
        assert_eq!(assignments[0]["action"], "start");
    }
}

on_both_databases_fast! {
    async fn a_silent_node_is_lost_and_comes_back_when_its_agent_registers(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        beat(&app, &node, &[(lease_id, "running")]).await;
        let metrics = app.metrics_text().await;
        assert!(metrics.contains("gpuex_agent_heartbeats_total 1"), "{metrics}");
        assert!(metrics.contains(&format!("gpuex_node_gpu_utilization_ratio{{gpu=\"0\",node=\"{}\"}} 0.42", node.id)), "{metrics}");
        // Silence for longer than node_timeout_s (3 s).
        eventually(10, "the node to be lost", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "lost"
        })
        .await;
        // The row says `lost` first; the engine ends the lease right after.
        eventually(5, "the lease to end", || async {
            lease(&app, &m.buyer, lease_id).await["state"] == "ended"
        })
        .await;
        assert_eq!(lease(&app, &m.buyer, lease_id).await["end_reason"], "node_lost");
        eventually(5, "the node gauge to count it lost", || async {
            app.metrics_text().await.contains("gpuex_nodes{status=\"lost\"} 1")
        })
        .await;
        // Its heartbeats are refused until it registers again.
        let r = app.post("/v1/agent/heartbeat", Some(&node.token), fleet::heartbeat(node.id, &[(lease_id, "running")])).await;
        r.assert_code(409, "register_again");
        register(&app, &node, &[H100_MIG]).await;
        assert_eq!(node_view(&app, &m.provider, node.id).await["status"], "online");
        let stops = beat(&app, &node, &[(lease_id, "running")]).await;
        assert_eq!(stops[0]["action"], "stop");
        // Back in the market.
        let again = place(&app, &m.buyer, order("on_demand")).await;
        let r = app.request(Method::GET, &format!("/v1/leases/{again}"), Some(&m.buyer), None).await;
        assert_eq!(r.body["node_id"], node.id.to_string());
    }

    async fn a_lost_nodes_lease_is_charged_up_to_its_last_heartbeat_and_not_a_second_more(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        for _ in 0..3 {
            beat(&app, &node, &[(lease_id, "running")]).await;
            tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        }
        let last_beat: chrono::DateTime<chrono::Utc> = node_view(&app, &m.provider, node.id).await
            ["last_heartbeat_at"].as_str().unwrap().parse().unwrap();
        // Silent from here: the billing pass (every second) keeps running
        // until the watchdog (3 s) notices.
        eventually(10, "the lease to end", || async {
            lease(&app, &m.buyer, lease_id).await["state"] == "ended"
        })
        .await;
        let ended = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(ended["end_reason"], "node_lost", "{ended}");
        let billed_until: chrono::DateTime<chrono::Utc> =
            ended["usage"]["billed_until"].as_str().unwrap().parse().unwrap();
        assert_eq!(billed_until.timestamp(), last_beat.timestamp(), "{ended}");
        // Nothing was charged past it (this is the only lease), so nothing
        // had to be credited back.
        let sql = format!(
            "SELECT COUNT(*) FROM charges WHERE period_end > {} OR kind = 'credit'",
            last_beat.timestamp()
        );
        assert_eq!(fleet::scalar(&app, &sql).await, 0);
        let charged: rust_decimal::Decimal = ended["usage"]["charged"].as_str().unwrap().parse().unwrap();
        assert!(charged > rust_decimal::Decimal::ZERO, "{ended}");
    }

    async fn a_lease_that_started_after_its_nodes_last_sign_of_life_costs_nothing_when_the_node_is_lost(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let registered: chrono::DateTime<chrono::Utc> = node_view(&app, &m.provider, node.id).await
            ["registered_at"].as_str().unwrap().parse().unwrap();
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        // Running (billing starts) a second after the registration, and no
        // heartbeat ever: the node was last seen alive before the lease ran.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        eventually(10, "the lease to end", || async {
            lease(&app, &m.buyer, lease_id).await["state"] == "ended"
        })
        .await;
        let ended = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(ended["end_reason"], "node_lost", "{ended}");
        // Without heartbeats the billing pass charged on; what it charged
        // past the node's last sign of life is credited back, and no more
        // (the charges' lines and the credit are each rounded once).
        let charged: rust_decimal::Decimal = ended["usage"]["charged"].as_str().unwrap().parse().unwrap();
        assert!(charged.abs() <= rust_decimal::Decimal::new(1, 5), "{ended} (registered at {registered})");
    }

    async fn a_preempted_spot_lease_is_told_to_stop_by_its_deadline(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[("H100-SXM5-80GB", false)]).await;
        let spot_lease = filled_spot_lease(&app, &m.buyer).await;
        report(&app, &node, spot_lease, provisioned("GPU-0")).await;
        assert_eq!(lease(&app, &m.buyer, spot_lease).await["state"], "running");
        // An on-demand order needs the whole GPU: the spot lease gets its notice.
        let on_demand = place(&app, &m.buyer, order("on_demand")).await;
        let waiting = lease(&app, &m.buyer, on_demand).await;
        assert_eq!(waiting["state"], "pending", "{waiting}");
        let noticed = lease(&app, &m.buyer, spot_lease).await;
        assert_eq!(noticed["state"], "preempting", "{noticed}");
        let assignments = beat(&app, &node, &[(spot_lease, "running")]).await;
        assert_eq!(assignments.len(), 1, "{assignments:?}");
        assert_eq!(assignments[0]["action"], "preempt");
        assert_eq!(assignments[0]["preempt_at"], noticed["preempt_at"]);
        // While it stops, nothing more is asked; the pending lease does not start yet.
        assert!(beat(&app, &node, &[(spot_lease, "stopping")]).await.is_empty());
    }

    async fn a_spot_lease_noticed_before_the_agent_started_it_is_started_then_told_its_deadline(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        register(&app, &node, &[("H100-SXM5-80GB", false)]).await;
        let spot_lease = filled_spot_lease(&app, &m.buyer).await;
        // Notice arrives before the agent has even started the lease.
        place(&app, &m.buyer, order("on_demand")).await;
        let noticed = lease(&app, &m.buyer, spot_lease).await;
        assert_eq!(noticed["state"], "provisioning", "{noticed}");
        assert!(noticed["preempt_at"].is_string(), "{noticed}");
        // It still runs until its deadline: the agent is told to start it.
        let assignments = beat(&app, &node, &[]).await;
        assert_eq!(assignments.len(), 1, "{assignments:?}");
        assert_eq!(assignments[0]["action"], "start");
        report(&app, &node, spot_lease, provisioned("GPU-0")).await;
        let running = lease(&app, &m.buyer, spot_lease).await;
        assert_eq!(running["state"], "preempting", "{running}");
        let assignments = beat(&app, &node, &[(spot_lease, "running")]).await;
        assert_eq!(assignments[0]["action"], "preempt", "{assignments:?}");
        assert_eq!(assignments[0]["preempt_at"], noticed["preempt_at"]);
        // Billed from when it ran, as any running lease.
        let billed = "SELECT COUNT(*) FROM leases WHERE state = 'preempting' AND running_at IS NOT NULL";
        assert_eq!(fleet::scalar(&app, billed).await, 1);
    }
}
