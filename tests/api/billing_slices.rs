//! Billing a fleet in slices: a batch bills at most 200 running leases, and
//! a pass goes on over the next batches until every lease due is charged
//! (src/market/task/billing_passes.rs). Orders never wait behind billing
//! the whole fleet at once.

use crate::fleet::{self, on_both_databases_fast, Node};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use uuid::Uuid;

/// More than one billing slice (200 leases).
const LEASES: usize = 230;

const H100: (&str, bool) = ("H100-SXM5-80GB", false);

/// Beats `node` with `leases` running, and returns the leases it is told to start.
async fn beat(app: &crate::helpers::TestApp, node: &Node, leases: &[Uuid]) -> Vec<Uuid> {
    let running: Vec<(Uuid, &str)> = leases.iter().map(|l| (*l, "running")).collect();
    fleet::beat(app, node, &running)
        .await
        .iter()
        .filter(|a| a["action"] == "start")
        .filter_map(|a| a["lease_id"].as_str()?.parse().ok())
        .collect()
}

on_both_databases_fast! {
    async fn a_billing_pass_over_more_leases_than_one_slice_charges_every_one(app) {
        let m = fleet::market(&app).await;
        let mut nodes = Vec::new();
        for _ in 0..2 {
            let node = fleet::create_node(&app, &m.provider, fleet::h100_node(8, "shared")).await;
            fleet::register(&app, &node, &[H100; 8]).await;
            nodes.push(node);
        }
        let order = json!({"mode": "on_demand", "region": "eu-west",
                           "resources": {"tflops": 1, "vram_gb": 4}});
        for placed in 0..LEASES {
            fleet::place(&app, &m.buyer, order.clone()).await;
            // The fast settings declare a node lost 3 s after its last beat,
            // and placing every order takes longer than that on a busy machine.
            if placed % 20 == 0 {
                for node in &nodes {
                    beat(&app, node, &[]).await;
                }
            }
        }
        // Each node's agent is told to start its leases, and reports them running.
        let mut running: BTreeMap<usize, Vec<Uuid>> = BTreeMap::new();
        for (i, node) in nodes.iter().enumerate() {
            for lease in beat(&app, node, &[]).await {
                let r = fleet::report(&app, node, lease, fleet::provisioned("GPU-0")).await;
                assert_eq!(r.status, 204, "{}", r.body);
                running.entry(i).or_default().push(lease);
                // As above: 230 reports outlast the node timeout on a busy
                // machine, so both nodes keep beating with what runs so far.
                if running.values().map(Vec::len).sum::<usize>() % 20 == 0 {
                    for (j, other) in nodes.iter().enumerate() {
                        let so_far = running.get(&j).cloned().unwrap_or_default();
                        beat(&app, other, &so_far).await;
                    }
                }
            }
        }
        assert_eq!(running.values().map(Vec::len).sum::<usize>(), LEASES);
        let started = fleet::scalar(&app, "SELECT max(running_at) FROM leases").await;

        // Billing runs every second; charges reach a node's last heartbeat.
        let billed = format!("SELECT count(*) FROM leases WHERE billed_until > {started}");
        let mut charged = 0;
        for _ in 0..40 {
            for (i, node) in nodes.iter().enumerate() {
                beat(&app, node, &running[&i]).await;
            }
            charged = fleet::scalar(&app, &billed).await;
            if charged == LEASES as i64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert_eq!(charged, LEASES as i64, "every running lease is charged past its start");
        let charges = fleet::scalar(&app, "SELECT count(DISTINCT lease_id) FROM charges").await;
        assert_eq!(charges, LEASES as i64, "a charge row for every lease");
    }
}
