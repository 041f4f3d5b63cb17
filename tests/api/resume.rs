//! Leases that survive their node (ARCHITECTURE.md §21): an order with a checkpoint
//! and `on_interrupt: resume` whose agent is killed is placed again on the
//! other agent, in the other zone, with its last checkpoint in place: the
//! count goes on from where it was sent, not from 0; each lease is billed
//! for its own stretch, never the same second twice.

use crate::agent_process::{intervals, Agent};
use crate::fleet::{
    self, create_node, eventually, lease, market, node_view, on_both_databases_fast,
};
use serde_json::json;
use uuid::Uuid;

/// Counts on from its checkpoint, writing it after every step.
const COUNTING: &str = "n=$(cat \"$GPUEX_CHECKPOINT/count\" 2>/dev/null || echo 0); \
    echo \"start at $n\"; while true; do n=$((n+1)); echo \"count $n\"; \
    echo $n > \"$GPUEX_CHECKPOINT/count.tmp\"; mv \"$GPUEX_CHECKPOINT/count.tmp\" \"$GPUEX_CHECKPOINT/count\"; \
    sleep 0.3; done";

async fn logs(app: &crate::helpers::TestApp, buyer: &str, lease: &str) -> String {
    let r = app
        .get(&format!("/v1/leases/{lease}/logs"), Some(buyer))
        .await;
    r.body["tail"].as_str().unwrap_or("").to_owned()
}

on_both_databases_fast! {
    async fn a_resumed_order_counts_on_from_its_checkpoint_in_the_other_zone(app) {
        let m = market(&app).await;
        let nodes = [
            create_node(&app, &m.provider, json!({"name": "a", "region": "eu-west", "zone": "z1"})).await,
            create_node(&app, &m.provider, json!({"name": "b", "region": "eu-west", "zone": "z2"})).await,
        ];
        let spools = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let mut agents = Vec::new();
        for (i, (node, spool)) in nodes.iter().zip(&spools).enumerate() {
            let host = format!("resume-{i}");
            agents.push(Some(Agent::start_args(&app, &node.token, spool.path(), &["--hostname", &host]).await));
        }
        for node in &nodes {
            eventually(20, "the agents to register", || async {
                node_view(&app, &m.provider, node.id).await["status"] == "online"
            })
            .await;
        }
        assert_eq!(node_view(&app, &m.provider, nodes[1].id).await["zone"], "z2");

        let mut body = fleet::order("on_demand");
        body["command"] = json!(COUNTING);
        body["checkpoint"] = json!({"every_s": 1});
        body["on_interrupt"] = json!("resume");
        let first = fleet::place(&app, &m.buyer, body).await;
        let order = lease(&app, &m.buyer, first).await["order_id"].as_str().unwrap().to_owned();
        let on = lease(&app, &m.buyer, first).await["node_id"].as_str().unwrap().to_owned();
        let (lost, other) = if on == nodes[0].id.to_string() { (0, 1) } else { (1, 0) };
        eventually(20, "a few counts and a checkpoint", || async {
            logs(&app, &m.buyer, &first.to_string()).await.contains("count 6")
                && fleet::scalar(&app, "SELECT COUNT(*) FROM order_checkpoints").await > 0
        })
        .await;
        assert!(logs(&app, &m.buyer, &first.to_string()).await.contains("start at 0"));

        // Killed: the node is lost, and the order goes to the other zone's node.
        agents[lost].take().unwrap().kill().await;
        eventually(30, "the order placed again", || async {
            let o = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
            o["attempts"].as_array().is_some_and(|a| a.len() == 2)
        })
        .await;
        let o = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
        assert_eq!(o["attempts"][0], first.to_string(), "{o}");
        let second: Uuid = o["attempts"][1].as_str().unwrap().parse().unwrap();
        assert_eq!(lease(&app, &m.buyer, first).await["end_reason"], "node_lost");
        let moved = lease(&app, &m.buyer, second).await;
        assert_eq!(moved["node_id"], nodes[other].id.to_string(), "{moved}");
        eventually(20, "the resumed count", || async {
            logs(&app, &m.buyer, &second.to_string()).await.contains("count")
        })
        .await;
        let resumed = logs(&app, &m.buyer, &second.to_string()).await;
        let start: u64 = resumed
            .lines()
            .find_map(|l| l.strip_prefix("start at "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no start line: {resumed}"));
        assert!(start >= 1, "it resumed from its checkpoint, not from 0: {resumed}");
        assert!(resumed.contains(&format!("count {}", start + 1)), "{resumed}");
        let o = app.get(&format!("/v1/orders/{order}"), Some(&m.buyer)).await.body;
        assert_eq!(o["resumed_from"]["lease_id"], second.to_string(), "{o}");
        assert!(o["resumed_from"]["seq"].as_i64().unwrap() >= 1, "{o}");

        // The CLI shows both attempts and where the second resumed from.
        let shown = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
            .args(["orders", &order])
            .env("GPUEX_SERVER", &app.address)
            .env("GPUEX_TOKEN", &m.buyer)
            .env("GPUEX_CONFIG_DIR", spools[0].path())
            .output()
            .await
            .unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
        assert!(shown.contains(&second.to_string()) && shown.contains("resumed_from"), "{shown}");

        // Each second is billed once: the lost lease's metering stops before
        // the new one's begins.
        eventually(20, "the new lease's usage", || async { !intervals(&app, second).await.is_empty() }).await;
        let before = intervals(&app, first).await;
        let after = intervals(&app, second).await;
        let lost_until = before.iter().map(|(_, end)| *end).max().unwrap();
        let resumed_from = after.iter().map(|(start, _)| *start).min().unwrap();
        assert!(lost_until <= resumed_from, "{before:?} overlaps {after:?}");

        // The killed agent, started again, ends what it left running.
        let spool = spools[lost].path();
        let host = format!("resume-{lost}");
        let again = Agent::start_args(&app, &nodes[lost].token, spool, &["--hostname", &host]).await;
        eventually(20, "the killed agent back", || async {
            node_view(&app, &m.provider, nodes[lost].id).await["status"] == "online"
        })
        .await;
        drop(again);
        drop(agents);
    }
}

crate::helpers::on_both_databases! {
    async fn a_checkpoint_needs_a_command_a_sane_path_and_resume_needs_a_checkpoint(app) {
        let m = market(&app).await;
        let mut cases = Vec::new();
        let mut body = fleet::order("on_demand");
        body.as_object_mut().unwrap().remove("command");
        body["checkpoint"] = json!({"every_s": 60});
        cases.push((body, "checkpoint"));
        let mut body = fleet::order("on_demand");
        body["command"] = json!("true");
        body["checkpoint"] = json!({"every_s": 0});
        cases.push((body, "checkpoint.every_s"));
        for path in ["relative", "/work", "/outputs/x", "/a/../b", "/proc/self", "/.gpuex-launch.sh"] {
            let mut body = fleet::order("on_demand");
            body["command"] = json!("true");
            body["checkpoint"] = json!({"every_s": 60, "path": path});
            cases.push((body, "checkpoint.path"));
        }
        let mut body = fleet::order("on_demand");
        body["command"] = json!("true");
        body["on_interrupt"] = json!("resume");
        cases.push((body, "on_interrupt"));
        let mut body = fleet::order("on_demand");
        body["command"] = json!("true");
        body["checkpoint"] = json!({"every_s": 60, "paht": "/x"});
        cases.push((body, "checkpoint"));
        for (body, field) in cases {
            let r = app.post("/v1/orders", Some(&m.buyer), body.clone()).await;
            assert!(r.status == 422 || r.status == 400, "{body}: {}", r.body);
            assert!(r.body.to_string().contains(field), "{body}: {} lacks {field}", r.body);
        }
    }
}
