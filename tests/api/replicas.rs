//! Followers follow the journal (ARCHITECTURE.md §20), on PostgreSQL: a follower's
//! engine applies the leader's rows as they commit, never rebuilding, and
//! matches the leader's state digest; when the leader dies the follower is
//! promoted with the engine it has (no restore) and the journal goes on
//! without a gap or a repeat.

use crate::fleet::{eventually, market};
use crate::helpers::TestApp;
use crate::scale_out::{leader, replicas_on_a_fresh_database, Replica};
use serde_json::{json, Value};

/// A metric's value in `/metrics` text.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} is not in /metrics"))
}

async fn readiness(client: &reqwest::Client, replica: &Replica) -> Value {
    let r = client
        .get(format!("{}/readyz", replica.address))
        .send()
        .await
        .expect("readyz");
    r.json().await.expect("readyz json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_applies_the_journal_matches_the_leader_and_is_promoted_without_a_restore() {
    let Some((client, database_url, mut replicas)) = replicas_on_a_fresh_database(2).await else {
        return;
    };
    let first = leader(&client, &replicas, 10).await;
    let other = 1 - first;
    let apps: Vec<TestApp> = replicas
        .iter()
        .map(|r| TestApp::external(&r.address, &database_url))
        .collect();
    // Everything through the follower: it forwards each command, and
    // applies the row the leader wrote for it.
    let follower = &apps[other];
    let m = market(follower).await;
    follower
        .node_of(&m.provider, "eu-west", &[("H100-SXM5-80GB", "shared"); 4])
        .await;
    let order = json!({"mode": "on_demand", "resources": {"tflops": 10, "vram_gb": 4},
                       "region": "eu-west", "duration_s": 3600});
    let mut orders = Vec::new();
    for _ in 0..40 {
        let r = follower.order(&m.buyer, order.clone()).await;
        assert_eq!(r.status, 201, "{}", r.body);
        orders.push(r.body["id"].as_str().expect("order id").to_owned());
    }
    let leader_seq = readiness(&client, &replicas[first]).await["applied_seq"]
        .as_i64()
        .expect("applied_seq");
    assert!(
        leader_seq >= 40,
        "one row per forwarded order at least: {leader_seq}"
    );
    eventually(10, "the follower to apply the leader's rows", || async {
        readiness(&client, &replicas[other]).await["applied_seq"].as_i64() >= Some(leader_seq)
    })
    .await;
    let ready = readiness(&client, &replicas[other]).await;
    assert_eq!(ready["role"], "follower", "{ready}");
    assert!(ready["epoch"].as_i64() >= Some(1), "{ready}");
    // The leader hashes its engine at row 32 after committing it; the
    // follower compares its own with it at a later commit (billing's, at
    // the latest).
    eventually(
        20,
        "the follower to check a digest of the leader's",
        || async {
            metric(
                &follower.metrics_text().await,
                "gpuex_journal_digests_checked_total",
            ) >= 1.0
        },
    )
    .await;
    let text = follower.metrics_text().await;
    assert_eq!(
        metric(&text, "gpuex_journal_restores_total"),
        1.0,
        "restored once, at start: it followed the journal after that"
    );
    assert_eq!(metric(&text, "gpuex_journal_digest_mismatches_total"), 0.0);
    assert!(metric(&text, "gpuex_journal_applied_seq") >= 40.0);
    // Every row it applied was timed from the leader's batch.
    assert!(
        metric(&text, "gpuex_journal_row_lag_seconds_count") >= 40.0,
        "{text}"
    );
    // The admin's list has both, the leader first, and says which answered.
    let listed = follower.get("/v1/admin/replicas", Some(&m.admin)).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let roles: Vec<(&str, bool)> = listed
        .body
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| (r["role"].as_str().unwrap_or(""), r["answering"] == true))
        .collect();
    assert_eq!(
        roles,
        [("leader", false), ("follower", true)],
        "{}",
        listed.body
    );

    // The leader dies: the follower leads with the engine it has.
    replicas[first].kill().await;
    eventually(30, "the follower to lead", || async {
        replicas[other].role(&client).await.as_deref() == Some("leader")
    })
    .await;
    let text = follower.metrics_text().await;
    assert_eq!(
        metric(&text, "gpuex_journal_restores_total"),
        1.0,
        "promoted, not restored"
    );
    for _ in 0..3 {
        let r = follower.order(&m.buyer, order.clone()).await;
        assert_eq!(r.status, 201, "{}", r.body);
        orders.push(r.body["id"].as_str().expect("order id").to_owned());
    }
    // The killed one is still listed, and goes silent.
    eventually(30, "the killed replica to go silent", || async {
        let listed = follower.get("/v1/admin/replicas", Some(&m.admin)).await;
        listed.body.as_array().is_some_and(|list| {
            list.len() == 2
                && list[0]["role"] == "leader"
                && list[0]["answering"] == true
                && list[1]["silent"] == true
        })
    })
    .await;
    let rows = crate::fleet::scalar(follower, "SELECT COUNT(*) FROM journal").await;
    let last = crate::fleet::scalar(follower, "SELECT MAX(seq) FROM journal").await;
    assert_eq!(
        rows, last,
        "the journal runs on from 1 without a gap or a repeat"
    );
    for id in &orders {
        let r = follower
            .get(&format!("/v1/orders/{id}"), Some(&m.buyer))
            .await;
        assert_eq!(r.status, 200, "order {id} is lost: {}", r.body);
    }
    // What the promoted leader holds is what its rows restore.
    let db = gpuex::db::Db::connect(&database_url)
        .await
        .expect("database");
    let restored = gpuex::market::restore::load(&db, gpuex::engine::EngineConfig::default())
        .await
        .expect("the rows restore");
    restored.validate().expect("no slice is promised twice");
    db.close().await;
    for r in &mut replicas {
        r.kill().await;
    }
}
