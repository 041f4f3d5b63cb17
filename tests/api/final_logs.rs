//! An ended lease's output is fixed (ARCHITECTURE.md §19, "Logs of an ended lease"):
//! the server ends a lease before its agent has sent the last tail, so one
//! final, complete upload is taken within a short grace after the end, and
//! nothing after it. A node could otherwise rewrite what the buyer reads
//! about a finished job whenever it liked.

use crate::fleet::{create_node, eventually, h100_node, lease, market, order, place, register};
use crate::helpers::{on_both_databases, TestApp};
use reqwest::StatusCode;
use serde_json::json;
use uuid::Uuid;

const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);

async fn upload(
    app: &TestApp,
    token: &str,
    lease: Uuid,
    tail: &str,
    complete: bool,
) -> crate::helpers::Reply {
    app.post(
        &format!("/v1/agent/assignments/{lease}/logs"),
        Some(token),
        json!({"at": chrono::Utc::now(), "tail": tail, "total_bytes": tail.len(), "complete": complete}),
    )
    .await
}

async fn release(app: &TestApp, buyer: &str, id: Uuid) {
    let r = app
        .post(&format!("/v1/leases/{id}/release"), Some(buyer), json!({}))
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    eventually(10, "the lease to end", || async {
        lease(app, buyer, id).await["state"] == "ended"
    })
    .await;
}

/// A lease whose node sent `tail` while it ran, then ended by its buyer:
/// the buyer's token, the node's token and the lease.
async fn ended_lease_that_logged(app: &TestApp, tail: &str) -> (String, String, Uuid) {
    let m = market(app).await;
    let node = create_node(app, &m.provider, h100_node(1, "mig")).await;
    register(app, &node, &[H100_MIG]).await;
    let id = place(app, &m.buyer, order("on_demand")).await;
    let r = upload(app, &node.token, id, tail, false).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    release(app, &m.buyer, id).await;
    (m.buyer, node.token, id)
}

on_both_databases! {
    async fn an_ended_lease_takes_one_final_complete_upload_and_nothing_after_it(app) {
        let (buyer, node, id) = ended_lease_that_logged(&app, "step 1\n").await;

        // After the end, a tail that is not final is refused...
        upload(&app, &node, id, "step 1\nforged\n", false).await.assert_code(409, "conflict");
        // ...the final one is taken once...
        let r = upload(&app, &node, id, "step 1\nstep 2\n", true).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        // ...and it cannot be rewritten, not even by another final one.
        upload(&app, &node, id, "rewritten\n", true).await.assert_code(409, "conflict");

        let logs = app.get(&format!("/v1/leases/{id}/logs"), Some(&buyer)).await;
        assert_eq!(logs.body["tail"], "step 1\nstep 2\n");
        assert_eq!(logs.body["complete"], true);
    }

    async fn the_final_upload_of_an_ended_lease_is_refused_after_the_grace(app) {
        let (buyer, node, id) = ended_lease_that_logged(&app, "running\n").await;

        let grace = u64::try_from(gpuex::nodes::FINAL_LOGS_GRACE_S).expect("a positive grace");
        app.advance_clock(std::time::Duration::from_secs(grace + 1));
        upload(&app, &node, id, "late\n", true).await.assert_code(409, "conflict");
        let logs = app.get(&format!("/v1/leases/{id}/logs"), Some(&buyer)).await;
        assert_eq!(logs.body["tail"], "running\n");
        assert_eq!(logs.body["complete"], false);
    }
}
